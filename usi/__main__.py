"""``python -m usi``: the USI engine loop (same as the ``fantasista`` console script)."""
import sys

from usi.cli import main

sys.exit(main())
