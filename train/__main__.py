"""``python -m train gen|teach|relabel|fit|add-threats|losses|check|derive``: :func:`train.fit.main`."""
import sys

from .fit import main

sys.exit(main())
