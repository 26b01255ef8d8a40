"""Lazy SMP on this machine: wall time to a fixed depth and nodes/s at 1 and more threads (the USI option Threads).

``python -m bench.threads [--depth D] [--threads 1 2] [--variant shogi|daishogi2017] [--hash MB]`` searches each
position of ``search.bench_positions`` (or the dai shogi bench positions) to depth ``D`` with a cleared table, once
per thread count, and prints per position the wall seconds, nodes (every thread's) and nodes/s, then per thread
count the totals and the time-to-depth speed-up against the first count. Wall time (``time.perf_counter``), since
the point is what several cores buy; run it on an otherwise idle machine (two threads need two free cores).
"""
from __future__ import annotations

import argparse
import time


def run(depth: int, threads: list[int], variant: str = "shogi", hash_mb: int = 64) -> dict[int, list[dict]]:
    """Per thread count, one row per position: position, depth, nodes, seconds (wall), best move."""
    from engine import Position
    from search import Limits, Searcher

    from bench.search import named_positions
    positions = named_positions(variant)
    out: dict[int, list[dict]] = {}
    for n in threads:
        s = Searcher(hash_mb=hash_mb)
        s.warmup(variant)
        s.threads = n
        rows = []
        for name, sfen in positions:
            pos = Position.from_sfen(sfen, variant)
            s.clear()
            t = time.perf_counter()
            r = s.search(pos, Limits(depth=depth))
            sec = max(time.perf_counter() - t, 1e-9)
            rows.append({"position": str(name), "depth": r.depth, "nodes": r.nodes, "seconds": sec,
                         "best": pos.move_usi(r.best) if r.best is not None else "-"})
        out[n] = rows
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    from usi.kernel_cache import purge_stale_kernels

    purge_stale_kernels()  # before the first kernel loads: one cached against an edited shared kernel crashes
    ap.add_argument("--depth", type=int, default=9)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--variant", default="shogi", choices=["shogi", "daishogi2017"])
    ap.add_argument("--hash", type=int, default=64, help="table size in MiB")
    a = ap.parse_args()
    if a.depth < 1 or min(a.threads) < 1:
        ap.error("--depth and --threads must be at least 1")
    results = run(a.depth, a.threads, a.variant, a.hash)
    base = sum(r["seconds"] for r in results[a.threads[0]])
    for n, rows in results.items():
        for r in rows:
            print(f"threads {n} {r['position']:<12} depth {r['depth']:>3} nodes {r['nodes']:>10} "
                  f"{r['seconds']:7.2f}s {r['nodes'] / r['seconds'] / 1e3:8.1f} kn/s best {r['best']}")
        nodes = sum(r["nodes"] for r in rows)
        sec = sum(r["seconds"] for r in rows)
        print(f"threads {n}: total {sec:.2f}s wall, {nodes} nodes, {nodes / sec / 1e3:.1f} kn/s, "
              f"time to depth {a.depth} x{base / sec:.2f} against {a.threads[0]} thread(s)")


if __name__ == "__main__":
    main()
