"""Search at a fixed node budget: nodes/s (CPU time) and the depth reached, for the selectivity work (issue 24).

``python -m bench.search_nodes [--nodes N] [--variant shogi|daishogi2017] [--features F] [--eval-mode M]
[--params P]`` (F as the USI option SearchFeatures: ``default``, ``none``, ``see+histlmr``, ``-see``; M as EvalMode;
P as SearchParams: ``LMPBase=3,LMPScale=10``; or run the file with another tree first on PYTHONPATH to measure that
tree) searches each position of
``search.bench_positions`` (shogi) or ``bench.search.DAISHOGI_POSITIONS`` (dai shogi) with a cleared table to the
node budget and prints per position the completed depth, nodes, CPU seconds and nodes/s, then the totals and the
mean depth. CPU time (``time.process_time``) because the machine is shared: it is the single-thread figure.
"""
from __future__ import annotations

import argparse
import time

from eval import DEFAULT_EVAL_MODE, EVAL_MODES


def run(nodes: int = 200_000, variant: str = "shogi", features: str = "default", eval_mode: str = DEFAULT_EVAL_MODE,
        params: str = "default") -> list[dict]:
    """One row per position: position, depth, nodes, seconds (CPU), nps."""
    from engine import Position
    from search import Limits, Searcher, parse_features
    from search.params import parse_params

    from bench.search import named_positions
    positions = named_positions(variant)
    s = Searcher(hash_mb=16, features=parse_features(features, variant))
    s.eval_mode = eval_mode
    s.set_params(parse_params(params))
    s.warmup()
    rows = []
    for name, sfen in positions:
        pos = Position.from_sfen(sfen, variant)
        s.clear()
        t = time.process_time()
        r = s.search(pos, Limits(nodes=nodes))
        sec = max(time.process_time() - t, 1e-9)
        rows.append({"position": str(name), "depth": r.depth, "nodes": r.nodes, "seconds": sec,
                     "nps": r.nodes / sec})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=200_000)
    ap.add_argument("--variant", default="shogi")
    ap.add_argument("--features", default="default", help="search features, as the USI option SearchFeatures")
    ap.add_argument("--eval-mode", default=DEFAULT_EVAL_MODE, choices=EVAL_MODES,
                    help="evaluation, as the USI option EvalMode")
    ap.add_argument("--params", default="default", help="search parameters, as the USI option SearchParams")
    a = ap.parse_args()
    rows = run(a.nodes, a.variant, a.features, a.eval_mode, a.params)
    for r in rows:
        print(f"{r['position']:<12} depth {r['depth']:>3} nodes {r['nodes']:>9} {r['seconds']:7.2f}s "
              f"{r['nps'] / 1e3:8.1f} kn/s")
    n = sum(r["nodes"] for r in rows)
    sec = sum(r["seconds"] for r in rows)
    print(f"total nodes {n} cpu {sec:.2f}s nps {n / sec / 1e3:.1f}k mean depth "
          f"{sum(r['depth'] for r in rows) / len(rows):.2f}")


if __name__ == "__main__":
    main()
