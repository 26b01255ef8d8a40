"""Ousho Fantasista speed next to standard shogi's, measured in the same run.

* perft: ``engine.variants.fantasista.turns.perft`` (turns counted, rolls not played, leaves bulk-counted) from the
  start, where it must equal shogi's, against ``Position.perft`` of the same start; then a few mid-game positions
  whose side to move holds special pieces, rights, an emblem or a carrier (taken from seeded random games, see
  :data:`MIDGAMES`; they have no shogi twin, so their ratio is to shogi's start figure).
* shogi twins (:data:`TWINS`): standard shogi mid-game and endgame positions read as fantasista positions (no
  token, mark or right yet, no roll inside the horizon), perft and search timed for both engines on the same
  position: the cost of the variant layer itself, away from the start. Their perft counts must agree.
* search: fantasista's searcher (``search.games.FantasistaGameSearcher``, the shared kernel; chance-aware and
  roll-blind, from the start and the mid-game positions) against the shogi ``search.Searcher`` from the start, all
  with the same node budget.

Under a shared machine the figures swing by 30 % or more between runs, so each timing is the best of ``repeats``
alternating runs of both sides and only the ratio of one run means anything.
"""
from __future__ import annotations

import time
from typing import Any, Callable, Optional

START = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1"

#: (name, extended SFEN, perft depth). From random games (``random.Random(31)``, magic-biased turns, ``reserved``
#: mapped to rows 1-3) at plies 40-56, kept where the side to move is not plain (``kernels.is_plain``).
MIDGAMES = [
    ("fan-sword", "ln2p1gnl/rs1W1sk2/1p+Ng1p1p1/p1p5p/3ps4/1P4pP+p/P1SPPB1RP/LWG1GK2B/7NL w Pp 54 f=ga;r=e", 4),
    ("fan-carrier", "lnk1g1p2/1rsg1s1bl/ppppN1n1p/5pP2/h3P2p1/1Pb2S2P/P1PP1P1P1/1GKBG2SL/LN2R4 w P 56 "
                    "f=hy;m=2b@,7f'", 4),
    ("fan-wave", "lns1k2nl/2g2bg2/prp1ps3/1p1p2p1p/7p1/PP1S1pGPP/3PPGP2/L4K1RT/BN4SNL w 2p 48 f=yg;r=w;m=9i@", 4),
    ("fan-emblem", "lns1k1snl/2grg1g2/pp1ppp+pp1/2p+p5/BY1N1Pp1p/3+p5/PP1PS1PPP/LB1K2GR1/2S1G2NL w - 42 "
                   "f=aa;r=Ee;m=3b',6d';h=p", 4),
]

#: (name, shogi SFEN, perft depth): ``search.bench_positions``' middlegame, sharp middlegame and endgame. As
#: fantasista positions they get ``f=hy`` (fairies matter only once a roll comes).
TWINS = [
    ("middlegame", "ln5nl/1r1sk1g2/p1pgpsbp1/3p1pp1p/1p5P1/P1P1PPP1P/1PSPS1N2/2GK1G1R1/LN6L b Bp 1", 4),
    ("matsuri", "l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w RGgsn5p 1", 3),
    ("endgame-124", "8l/1l+R2P3/p2pBG1pp/kps1p4/Nn1P2G2/P1P1P2PP/1PS6/1KSG3+r1/LN2+p3L w Sbgn3p 124", 3),
]


def _best_of(fns: list[Callable[[], Any]], repeats: int, min_seconds: float = 0.0) -> list[tuple[Any, float]]:
    """Run the callables in turn ``repeats`` times; per callable its result and shortest time per call. Each timing
    calls its callable again until ``min_seconds`` have passed (a perft of a few hundredths of a second, timed
    once, swings with every pause of the machine)."""
    best: list[tuple[Any, float]] = [(0, float("inf"))] * len(fns)
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            t = time.perf_counter()
            calls = 0
            while True:
                n = fn()
                calls += 1
                dt = time.perf_counter() - t
                if dt >= min_seconds:
                    break
            dt = max(dt / calls, 1e-9)
            if dt < best[i][1]:
                best[i] = (n, dt)
    return best


def _row(name: str, depth: int, nodes: int, seconds: float) -> dict:
    return {"position": name, "depth": depth, "nodes": nodes, "seconds": seconds, "nps": nodes / seconds}


def perft_rows(max_depth: Optional[int] = None, repeats: int = 3) -> list[dict]:
    """Rows for shogi's start, fantasista's start (with ``agrees``: same count) and :data:`MIDGAMES`, each with
    ``ratio`` = its nodes/s over shogi's start nodes/s."""
    from engine import Position
    from engine.variants.fantasista import FantasistaState, new_game
    from engine.variants.fantasista.turns import perft

    cap = (lambda d: min(d, max_depth)) if max_depth else (lambda d: d)
    d0 = cap(5)
    start = new_game()
    perft(start.bd, 2)  # load the compiled kernels before timing
    Position.startpos().perft(2)
    (n_sh, t_sh), (n_fa, t_fa) = _best_of([lambda: Position.from_sfen(START).perft(d0),
                                           lambda: perft(start.bd, d0)], repeats)
    shogi = _row("shogi start", d0, n_sh, t_sh)
    rows = [shogi, dict(_row("fantasista start", d0, n_fa, t_fa), agrees=n_fa == n_sh)]
    for name, sfen, d in MIDGAMES:
        bd = FantasistaState.from_sfen(sfen).bd
        (n, t), = _best_of([lambda: perft(bd, cap(d))], repeats)
        rows.append(_row(name, cap(d), n, t))
    for r in rows:
        r["ratio"] = r["nps"] / shogi["nps"]
    for name, sfen, d in TWINS:
        bd = FantasistaState.from_sfen(sfen + " f=hy").bd
        (n_sh, t_sh), (n_fa, t_fa) = _best_of([lambda: Position.from_sfen(sfen).perft(cap(d)),
                                               lambda: perft(bd, cap(d))], repeats + 2, min_seconds=0.25)
        twin = dict(_row(f"shogi {name}", cap(d), n_sh, t_sh), ratio=1.0)
        rows += [twin, dict(_row("  fantasista", cap(d), n_fa, t_fa), agrees=n_fa == n_sh,
                            ratio=(n_fa / t_fa) / twin["nps"], twin=name)]
    return rows


def search_rows(nodes: int = 50_000, repeats: int = 3) -> list[dict]:
    """The shogi searcher from the start against fantasista's (chance-aware and roll-blind) from the start and from
    :data:`MIDGAMES`, every search with the same node budget (``nodes``, deep enough to run ~0.1 s, so that
    per-search set-up does not dominate); ``ratio`` = nodes/s over the shogi searcher's."""
    from engine import Position
    from engine.variants.fantasista import FantasistaState, new_game
    from search import Limits, Searcher
    from search.games import FantasistaGameSearcher

    shogi = Searcher(hash_mb=16)
    if hasattr(shogi, "warmup"):
        shogi.warmup()
    aware, blind = FantasistaGameSearcher(), FantasistaGameSearcher(chance_aware=False)
    aware.warmup()  # load the compiled kernels before timing

    def run_shogi() -> tuple[int, int]:
        shogi.clear()
        r = shogi.search(Position.from_sfen(START), Limits(nodes=nodes, depth=64))
        return r.nodes, r.depth

    def fan(searcher: FantasistaGameSearcher, game: FantasistaState) -> Callable[[], tuple[int, int]]:
        def run() -> tuple[int, int]:
            searcher.clear()
            r = searcher.think(game, Limits(nodes=nodes, depth=64), lambda info: None)
            return r.nodes, r.depth
        return run

    def run_shogi_on(sfen: str) -> Callable[[], tuple[int, int]]:
        def run() -> tuple[int, int]:
            shogi.clear()
            r = shogi.search(Position.from_sfen(sfen), Limits(nodes=nodes, depth=64))
            return r.nodes, r.depth
        return run

    cases = [("shogi start", run_shogi), ("fantasista start", fan(aware, new_game())),
             ("  roll-blind", fan(blind, new_game()))]
    for name, sfen, _ in MIDGAMES:
        cases.append((name, fan(aware, FantasistaState.from_sfen(sfen))))
    n_plain = len(cases)
    for name, sfen, _ in TWINS:
        cases += [(f"shogi {name}", run_shogi_on(sfen)),
                  ("  fantasista", fan(aware, FantasistaState.from_sfen(sfen + " f=hy")))]
    timed = _best_of([fn for _, fn in cases], repeats)
    rows = [_row(name, depth, n, t) for (name, _), ((n, depth), t) in zip(cases, timed)]
    for r in rows[:n_plain]:
        r["ratio"] = r["nps"] / rows[0]["nps"]
    for k in range(n_plain, len(rows), 2):  # a twin pair: the fantasista row against the shogi row above it
        rows[k]["ratio"] = 1.0
        rows[k + 1]["ratio"] = rows[k + 1]["nps"] / rows[k]["nps"]
    return rows


def table(title: str, rows: list[dict]) -> list[str]:
    head = f"{title:<18}{'depth':>6}{'nodes':>13}{'seconds':>9}{'nodes/s':>10}{'vs shogi':>10}"
    out = [head, "-" * len(head)]
    for r in rows:
        nps = r["nps"]
        nps_text = f"{nps / 1e6:.2f}M" if nps >= 1e6 else f"{nps / 1e3:.1f}k"
        mark = "" if r.get("agrees", True) else "  (count differs from shogi's!)"
        out.append(f"{r['position']:<18}{r['depth']:>6}{r['nodes']:>13,}{r['seconds']:>9.2f}{nps_text:>10}"
                   f"{r['ratio']:>9.2f}x{mark}")
    return out


def run(max_depth: Optional[int] = None) -> tuple[dict, list[str]]:
    """Both tables: ``({"perft": rows, "search": rows}, printable lines)``; ``max_depth`` caps the perft depths."""
    result = {"perft": perft_rows(max_depth), "search": search_rows()}
    lines = table("fantasista perft", result["perft"])
    lines += ["(vs shogi = nodes/s over shogi's start nodes/s in this run, or, under a 'shogi <position>' row, over "
              "that row's; target >= 0.50x)", ""]
    lines += table("fantasista search", result["search"])
    lines += ["(the same; the twins: the shogi searcher and the chance-aware fantasista searcher on one position)"]
    return result, lines


if __name__ == "__main__":
    print("\n".join(run()[1]))
