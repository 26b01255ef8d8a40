"""Search at a fixed node budget: nodes/s (CPU time) and the depth reached, for the selectivity work (issue 24).

``python -m bench.search_nodes [--nodes N | --to-depth D] [--variant shogi|daishogi2017] [--features F]
[--eval-mode M] [--params P] [--eval-file W]`` (F as the USI option SearchFeatures: ``default``, ``none``,
``see+histlmr``, ``-see``; M as EvalMode; P as SearchParams: ``LMPBase=3,LMPScale=10``; W a weights file, as the
USI option EvalFile; or run the file with another tree first on PYTHONPATH to measure that tree) searches each
position of
``search.bench_positions`` (shogi) or ``bench.search.DAISHOGI_POSITIONS`` (dai shogi) with a cleared table to the
node budget and prints per position the completed depth, nodes, CPU seconds and nodes/s, then the totals and the
mean depth. CPU time (``time.process_time``) because the machine is shared: it is the single-thread figure.

``--to-depth D`` searches each position to depth D instead (D - 3 on the two sharp shogi positions, 4 and 5, whose
trees are ten times larger) and prints the nodes each needed and their geometric mean: the size of the tree, which
a change to pruning or reductions changes and nodes/s does not show.

``--positions FILE`` searches the positions of FILE instead (one SFEN a line, ``#`` comments; all to the same
depth): ``bench/positions/shogi-games.txt`` holds 106 positions from recorded games (``bench/make_positions.py``),
for which the geometric mean moves far less with the chance of one position than on the six bench positions.
"""
from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

from eval import DEFAULT_EVAL_MODE, EVAL_MODES


#: Bench positions whose trees are about ten times larger (sharp, many pieces in hand): --to-depth searches them
#: SHARP_DEPTH_OFFSET plies shallower.
SHARP_SHOGI_POSITIONS = (4, 5)
SHARP_DEPTH_OFFSET = 3


def read_positions(path: str) -> list[tuple[object, str]]:
    """``(line number, sfen)`` for each SFEN line of a positions file (text after ``#`` is a comment)."""
    out: list[tuple[object, str]] = []
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        sfen = line.split("#", 1)[0].strip()
        if sfen:
            out.append((f"line-{n}", sfen))
    return out


def run(nodes: int = 200_000, variant: str = "shogi", features: str = "default", eval_mode: str = DEFAULT_EVAL_MODE,
        params: str = "default", to_depth: int | None = None, positions: str | None = None,
        eval_file: str | None = None) -> list[dict]:
    """One row per position: position, depth, nodes, seconds (CPU), nps. With ``to_depth`` each position is
    searched to that depth (less on the sharp shogi bench positions) without a node budget. ``positions``: a file
    of SFENs (:func:`read_positions`) to search instead of the bench positions; ``eval_file``: a weights file to
    use instead of the shipped tables (as the USI option EvalFile)."""
    from engine import Position
    from search import Limits, Searcher, parse_features
    from search.params import parse_params

    from bench.search import named_positions
    named = read_positions(positions) if positions else named_positions(variant)
    s = Searcher(hash_mb=16, features=parse_features(features, variant))
    s.eval_mode = eval_mode
    s.set_params(parse_params(params))
    if eval_file:
        from eval.kp import load_weights_file
        vid, weights = load_weights_file(eval_file)
        s.eval_weights[vid] = weights
    s.warmup()
    rows = []
    for name, sfen in named:
        pos = Position.from_sfen(sfen, variant)
        s.clear()
        t = time.process_time()
        if to_depth is None:
            limits = Limits(nodes=nodes)
        else:
            sharp = variant == "shogi" and not positions and name in SHARP_SHOGI_POSITIONS
            limits = Limits(depth=max(1, to_depth - SHARP_DEPTH_OFFSET) if sharp else to_depth)
        r = s.search(pos, limits)
        sec = max(time.process_time() - t, 1e-9)
        rows.append({"position": str(name), "depth": r.depth, "nodes": r.nodes, "seconds": sec,
                     "nps": r.nodes / sec})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    from usi.kernel_cache import purge_stale_kernels

    purge_stale_kernels()  # before the first kernel loads: one cached against an edited shared kernel crashes
    ap.add_argument("--nodes", type=int, default=200_000)
    ap.add_argument("--to-depth", type=int, default=None,
                    help="search each position to this depth instead of a node budget (the sharp ones 3 less)")
    ap.add_argument("--variant", default="shogi")
    ap.add_argument("--features", default="default", help="search features, as the USI option SearchFeatures")
    ap.add_argument("--eval-mode", default=DEFAULT_EVAL_MODE, choices=EVAL_MODES,
                    help="evaluation, as the USI option EvalMode")
    ap.add_argument("--params", default="default", help="search parameters, as the USI option SearchParams")
    ap.add_argument("--positions", default=None,
                    help="a file of SFENs to search instead of the bench positions (bench/positions/shogi-games.txt)")
    ap.add_argument("--eval-file", default=None, help="a weights file, as the USI option EvalFile")
    a = ap.parse_args()
    if a.nodes <= 0 or (a.to_depth is not None and not 1 <= a.to_depth <= 64):
        ap.error("--nodes must be positive and --to-depth in 1..64")
    rows = run(a.nodes, a.variant, a.features, a.eval_mode, a.params, a.to_depth, a.positions, a.eval_file)
    for r in rows if len(rows) <= 12 else []:  # a positions file: the totals only
        print(f"{r['position']:<12} depth {r['depth']:>3} nodes {r['nodes']:>9} {r['seconds']:7.2f}s "
              f"{r['nps'] / 1e3:8.1f} kn/s")
    n = sum(r["nodes"] for r in rows)
    sec = sum(r["seconds"] for r in rows)
    print(f"total nodes {n} cpu {sec:.2f}s nps {n / sec / 1e3:.1f}k mean depth "
          f"{sum(r['depth'] for r in rows) / len(rows):.2f}")
    if a.to_depth is not None:
        print(f"geometric mean of the nodes to depth {a.to_depth}: "
              f"{math.exp(sum(math.log(r['nodes']) for r in rows) / len(rows)):.0f}")


if __name__ == "__main__":
    main()
