"""Search speed: ``search.Searcher`` to a fixed depth on ``search.bench_positions``, then on the dai shogi bench
positions (``DAISHOGI_POSITIONS``, ``DAISHOGI_EXTRA_DEPTH`` plies deeper: its search is narrower per ply than its
13x13 board suggests, and at the shogi depth a search lasts a few milliseconds)."""
from __future__ import annotations

import time
from typing import Optional

#: Dai shogi: the start position and two from a seeded random game (moves 20 and 40).
DAISHOGI_POSITIONS = [
    ("dai-start", "lnicsgkgscinl/uoqytxejtyqou/rwvbhdfdhbvwr/ppppppppppppp/3m5m3/13/13/13/3M5M3/PPPPPPPPPPPPP/"
                  "RWVBHDFDHBVWR/UOQYTJEXTYQOU/LNICSGKGSCINL b - 1"),
    ("dai-mid20", "lnicsgkgsci1l/uoqytxejtyqou/rwvbhdfdhbnvr/pGppppp1pp1p1/7p1wp1p/13/9m3/7P5/3M4PMP2/PPPPPPP2PVPP/RWVB"
                   "HDFD1BQWR/UOQYTJEXTY1OU/LNICSGKGSCINL b - 21"),
    ("dai-mid40", "lnicsgkgsci1l/uoqyte1jtyqou/r1vbhd1d2nvr/1Gpxppphppb2/p2p3p1wppp/9m3/13/7P5/3M1P2fMP2/PPPPP1P2PVPP/R"
                   "WVBHDFDQ1NWR/UOQYTJEXTYO1U/LNICSGKGSCI1L b - 41"),
]
DAISHOGI_EXTRA_DEPTH = 2


def named_positions(variant: str) -> list[tuple[object, str]]:
    """The bench positions of ``variant`` as ``(name, sfen)``: shogi's ``search.bench_positions`` by index, or the dai
    shogi ones above (for the fixed-node and thread benches)."""
    from search import bench_positions
    return list(enumerate(bench_positions)) if variant == "shogi" else list(DAISHOGI_POSITIONS)


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
    for name, sfen in DAISHOGI_POSITIONS:
        searcher.clear()
        pos = Position.from_sfen(sfen, "daishogi2017")
        searcher.search(pos, Limits(depth=1))  # compile outside the timing
        searcher.clear()
        t = time.perf_counter()
        result = searcher.search(pos, Limits(depth=depth + DAISHOGI_EXTRA_DEPTH))
        seconds = max(time.perf_counter() - t, 1e-9)
        rows.append({"position": name, "sfen": sfen, "depth": result.depth, "nodes": result.nodes,
                     "seconds": seconds, "nps": result.nodes / seconds})
    return rows
