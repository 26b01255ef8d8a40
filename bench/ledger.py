"""The gauntlet ledger of :mod:`bench.strength` (``bench/strength/shogi-gauntlet.tsv``): its columns, reading and
appending. :mod:`bench.strength` writes it, :mod:`bench.history` draws it."""
from __future__ import annotations

import csv
from pathlib import Path
from typing import Sequence

LEDGER = Path(__file__).parent / "strength" / "shogi-gauntlet.tsv"
COLUMNS = ("date", "commit", "opponent", "control", "games", "wins", "draws", "losses", "pentanomial", "score",
           "elo", "elo_lower", "elo_upper", "depth_ours", "depth_opponent", "endings", "time_ours", "time_opponent",
           "command")


def append_ledger(path: Path, rows: Sequence[dict]) -> None:
    """Append rows (a header first when the file is new)."""
    new = not path.exists() or path.stat().st_size == 0
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, COLUMNS, delimiter="\t", lineterminator="\n")
        if new:
            w.writeheader()
        for row in rows:
            w.writerow(row)


def read_ledger(path: Path) -> list[dict]:
    if not path.exists():
        return []
    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    for n, row in enumerate(rows, 2):
        if set(row) != set(COLUMNS) or None in row.values():
            raise ValueError(f"{path}:{n}: not a ledger line ({len(COLUMNS)} tab-separated columns)")
    return rows
