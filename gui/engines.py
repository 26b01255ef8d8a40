"""The engines a GUI server may start: named on the server's own command line, never by a web page.

The page chooses a player among these names (``GET /api/engines``); a request that carries a command is refused.
Our engine (``python -m usi``) is always offered as ``fantasista``; Debian's ``/usr/games/fairy-stockfish``
(package ``fairy-stockfish``) and ``/usr/games/gpsusi`` (package ``gpsshogi``) are offered by their names when
installed; ``fantasista-gui --engine NAME=COMMAND`` adds (or replaces) one.
"""
from __future__ import annotations

import os
import re
import shlex
import sys
from typing import Iterable, Optional

from usi.client import DEBIAN_ENGINES

#: The name of our own engine; the one a record's ``builtin`` player and the plain player ``"engine"`` mean.
BUILTIN = "fantasista"
#: Debian's USI engines, offered when their program is installed.
SYSTEM_ENGINES = DEBIAN_ENGINES
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,39}$")


def builtin_command() -> list[str]:
    """``python -m usi`` with the interpreter running the server."""
    return [sys.executable, "-m", "usi"]


def parse_engine_arg(text: str) -> tuple[str, list[str]]:
    """``NAME=COMMAND`` (the ``--engine`` argument) as (name, argv); :class:`ValueError` says what is wrong."""
    name, sep, command = text.partition("=")
    name = name.strip()
    if not sep or not command.strip():
        raise ValueError(f"--engine wants NAME=COMMAND, not {text!r}")
    if not _NAME.match(name) or name in ("human", "engine"):
        raise ValueError(f"engine name {name!r}: letters, digits and _.+- (up to 40), not 'human' or 'engine'")
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise ValueError(f"engine {name}: bad command {command!r}: {exc}") from None
    if argv[0] == "python":
        argv[0] = sys.executable
    return name, argv


def engine_table(extra: Iterable[tuple[str, list[str]]] = (), system: bool = True) -> dict[str, list[str]]:
    """The engines on offer, name -> argv: ours, Debian's installed ones (``system``), then ``extra`` in order (a
    later name replaces an earlier one, so ``--engine fantasista=...`` can point at another build of ours)."""
    table = {BUILTIN: builtin_command()}
    if system:
        for name, path in SYSTEM_ENGINES.items():
            if os.access(path, os.X_OK):
                table[name] = [path]
    for name, argv in extra:
        table[name] = list(argv)
    return table


def describe(table: dict[str, list[str]], name: Optional[str] = None) -> list[dict]:
    """What the page may know of the engines: names only, ours marked ``builtin`` (never a command line)."""
    return [{"name": n, "builtin": n == BUILTIN} for n in table if name is None or n == name]
