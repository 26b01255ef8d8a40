"""``python -m bench [perft|search|fantasista] [--depth N] [--search-depth N] [--no-peers] [--out DIR]``.

Prints one table (perft nodes/s against cshogi and python-shogi with ratios, then search speed and time to
depth), writes ``bench/results/<date-time>.json`` and a PNG bar chart of the nodes/s next to it (matplotlib, from
the ``bench`` extra: ``pip install -e '.[bench]'``; without it the table and the JSON are still written).
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import platform
import sys
from pathlib import Path

from . import chart
from . import fantasista as fantasista_bench
from . import perft as perft_bench
from . import search as search_bench

RESULTS = Path(__file__).parent / "results"


def _fmt_nps(x: float) -> str:
    return f"{x / 1e6:.2f}M" if x >= 1e6 else f"{x / 1e3:.1f}k"


def perft_table(rows: list[dict]) -> list[str]:
    head = f"{'perft':<14}{'ours d':>7}{'nodes':>12}{'nodes/s':>10}{'cshogi d':>9}{'nodes/s':>10}{'ratio':>8}" \
           f"{'pyshogi d':>10}{'nodes/s':>10}{'ratio':>9}"
    out = [head, "-" * len(head)]
    for r in rows:
        o = r["ours"]
        line = f"{r['position']:<14}{o['depth']:>7}{o['nodes']:>12,}{_fmt_nps(o['nps']):>10}"
        for peer in ("cshogi", "python-shogi"):
            p = r.get(peer)
            if p:
                mark = "" if p.get("agrees", True) else "!"
                line += f"{p['depth']:>{9 if peer == 'cshogi' else 10}}{_fmt_nps(p['nps']):>10}" \
                        f"{o['nps'] / p['nps']:>{8 if peer == 'cshogi' else 9}.1f}x{mark}"
            else:
                line += f"{'-':>{9 if peer == 'cshogi' else 10}}{'-':>10}{'-':>{8 if peer == 'cshogi' else 9}}"
        out.append(line)
    out.append("ratio = our nodes/s over the peer's ('!' marks a node count that disagrees with ours)")
    return out


def variant_perft_table(rows: list[dict]) -> list[str]:
    """Variant start positions against our 9x9 start-position perft of the same run (no peer plays them)."""
    head = f"{'variant perft':<16}{'d':>3}{'nodes':>12}{'nodes/s':>10}{'shogi d':>9}{'nodes/s':>10}{'ratio':>8}"
    out = [head, "-" * len(head)]
    for r in rows:
        o, s = r["ours"], r["shogi"]
        out.append(f"{r['position']:<16}{o['depth']:>3}{o['nodes']:>12,}{_fmt_nps(o['nps']):>10}{s['depth']:>9}"
                   f"{_fmt_nps(s['nps']):>10}{r['ratio_to_shogi']:>7.2f}x")
    out.append("ratio = the variant's nodes/s over 9x9 shogi's start position, timed alternately in this run "
               "(dai shogi's target: 0.33x)")
    return out


def search_table(rows: list[dict]) -> list[str]:
    head = f"{'search':<14}{'depth':>7}{'nodes':>12}{'nodes/s':>10}{'time to depth':>15}"
    out = [head, "-" * len(head)]
    for r in rows:
        out.append(f"{r['position']:<14}{r['depth']:>7}{r['nodes']:>12,}{_fmt_nps(r['nps']):>10}"
                   f"{r['seconds']:>14.2f}s")
    return out


def chart_panels(result: dict, search_depth: int) -> list[tuple[str, list[tuple[str, dict[str, float]]]]]:
    """The chart's panels (see :func:`bench.chart.bar_chart`) from a run's result: perft against the peers, the
    variants' perft, search; a part the run did not play gives an empty panel."""
    perft = [(r["position"], {"ours": r["ours"]["nps"], **{peer: r[peer]["nps"] for peer in ("cshogi", "python-shogi")
                                                          if r.get(peer)}})
             for r in result.get("perft", [])]
    variants = [(r["position"], {"ours": r["ours"]["nps"]}) for r in result.get("variant_perft", [])]
    search = [(r["position"], {"ours": r["nps"]}) for r in result.get("search", [])]
    return [("perft: ours against the peers (each at its own depth, see the table)", perft),
            ("perft of the variants' start positions", variants),
            (f"search to depth {search_depth} (search nodes per second)", search)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench", description="perft and search benchmarks")
    p.add_argument("part", nargs="?", choices=["all", "perft", "search", "fantasista"], default="all")
    p.add_argument("--depth", type=int, help="cap every perft depth (e.g. 2 for a quick run)")
    p.add_argument("--search-depth", type=int, default=5)
    p.add_argument("--no-peers", action="store_true", help="time our perft only")
    p.add_argument("--out", type=Path, default=RESULTS, help="directory for the JSON and PNG (default bench/results)")
    args = p.parse_args(argv)
    from usi.kernel_cache import purge_stale_kernels

    purge_stale_kernels()  # before the first kernel loads (a stale kernel compiled against an edited one crashes)
    result = {"when": _dt.datetime.now().isoformat(timespec="seconds"), "python": sys.version.split()[0],
              "machine": platform.machine(), "processor": platform.processor()}
    lines = []
    if args.part in ("all", "perft"):
        result["perft"] = perft_bench.run(args.depth, peers=not args.no_peers)
        lines += perft_table(result["perft"])
        result["variant_perft"] = perft_bench.run_variants(args.depth)
        lines += [""] + variant_perft_table(result["variant_perft"])
    if args.part in ("all", "search"):
        rows = search_bench.run(args.search_depth)
        if rows is not None:
            result["search"] = rows
            lines += [""] + search_table(rows)
    if args.part in ("all", "fantasista"):
        result["fantasista"], more = fantasista_bench.run(args.depth)
        lines += [""] + more
    print("\n".join(lines))
    args.out.mkdir(parents=True, exist_ok=True)
    stem = args.out / f"bench-{_dt.datetime.now():%Y%m%d-%H%M%S}"
    json_path, png_path = stem.with_suffix(".json"), stem.with_suffix(".png")
    json_path.write_text(json.dumps(result, indent=2))
    panels = chart_panels(result, args.search_depth)
    if not any(rows for _, rows in panels):
        print(f"\nwrote {json_path}")
        return 0
    try:
        chart.bar_chart(panels, png_path, title=f"python -m bench: nodes per second, {result['when'][:10]} "
                                                f"({result['machine'] or 'unknown machine'})")
    except chart.ChartError as exc:
        print(f"\nwrote {json_path}; no chart: {exc}")
        return 0
    print(f"\nwrote {json_path} and the chart {png_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
