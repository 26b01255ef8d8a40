"""Search speed: ``search.Searcher`` to a fixed depth on ``search.bench_positions``."""
from __future__ import annotations

import time
from typing import Optional


def run(depth: int = 5) -> Optional[list[dict]]:
    """Rows of position, depth, nodes, seconds, nodes/s; ``None`` (with the reason printed) if search is missing."""
    try:
        from engine import Position
        from search import Limits, Searcher, bench_positions
    except Exception as exc:  # search/ is written separately: report and skip
        print(f"search benchmark skipped: search is not importable yet ({type(exc).__name__}: {exc})")
        return None
    searcher = Searcher(hash_mb=16)
    if hasattr(searcher, "warmup"):
        searcher.warmup()
    rows = []
    for i, sfen in enumerate(bench_positions):
        searcher.clear()
        t = time.perf_counter()
        result = searcher.search(Position.from_sfen(sfen), Limits(depth=depth))
        seconds = max(time.perf_counter() - t, 1e-9)
        rows.append({"position": f"bench-{i}", "sfen": sfen, "depth": result.depth, "nodes": result.nodes,
                     "seconds": seconds, "nps": result.nodes / seconds})
    return rows
