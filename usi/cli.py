"""The ``fantasista`` command (and ``python -m usi``): the USI loop of :mod:`usi.engine` on stdin/stdout, or with
``--compile`` the kernel compile of :mod:`usi.compile`. Above both, so that neither imports the other's caller."""
from __future__ import annotations

import sys
import warnings

from .engine import UsiEngine, _route_errors, package_version


USAGE = """usage: fantasista [-h] [--version] [--compile [options]] [command ...]

The Fantasista USI engine: USI commands on stdin, answers on stdout (docs/usi.md).

positional arguments:
  command       USI commands run before stdin is read, e.g. fantasista bench, or fantasista "go perft 4" quit

options:
  -h, --help    show this help message and exit
  --version     show the version and exit
  --compile     compile every variant's kernels into the disk cache and exit (fantasista --compile --help)
"""


def main(argv: list[str] | None = None) -> int:
    """Console entry point: the USI loop on stdin/stdout. Extra arguments are run as commands first
    (``fantasista bench`` or ``fantasista "go perft 4" quit``); ``fantasista --compile [options]`` instead compiles
    every variant's kernels into the disk cache, with a line per step, and exits (:mod:`usi.compile`).
    ``--help`` and ``--version`` answer on stdout and exit 0; any other argument starting with ``-`` is a usage
    error (stderr, exit 2), as for every console script: no USI command starts with ``-``."""
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--compile":
        from .compile import main as compile_main  # the compile step's imports load only for --compile

        return compile_main(argv[1:])
    if any(arg in ("-h", "--help") for arg in argv):
        sys.stdout.write(USAGE)
        return 0
    if "--version" in argv:
        print(f"fantasista {package_version()}")
        return 0
    flags = [arg for arg in argv if arg.startswith("-")]
    if flags:
        sys.stderr.write(USAGE.split("\n\n")[0] + f"\nfantasista: error: unrecognized arguments: {' '.join(flags)}\n")
        return 2
    # GUIs pipe stderr and never read it: a warning flood could fill the pipe and block us.
    warnings.filterwarnings("ignore")
    for stream in (sys.stdin, sys.stdout):
        try:
            stream.reconfigure(errors="replace")
        except (AttributeError, ValueError):
            pass
    eng = UsiEngine()
    _route_errors(eng)
    for cmd in argv:
        if not eng.handle(cmd):
            eng._finish_search()
            return 0
    try:
        eng.loop(sys.stdin)
    except KeyboardInterrupt:
        pass
    return 0
