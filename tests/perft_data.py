"""Reader for the perft oracle files in ``tests/data`` (``id`` / ``sfen`` / ``perft d n`` / ``slow d n``)."""
from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

DATA = Path(__file__).parent / "data"


class PerftCase(NamedTuple):
    name: str
    sfen: str
    depth: int
    nodes: int
    slow: bool


def read_perft_file(name: str = "perft.txt") -> list[PerftCase]:
    cases, ident, sfen = [], None, None
    for raw in (DATA / name).read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        key, _, rest = line.partition(" ")
        if key == "id":
            ident = rest
        elif key == "sfen":
            sfen = rest
        elif key in ("perft", "slow"):
            depth, nodes = rest.split()
            cases.append(PerftCase(ident, sfen, int(depth), int(nodes), key == "slow"))
        else:
            raise ValueError(f"{name}: unknown line {raw!r}")
    return cases
