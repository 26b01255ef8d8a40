"""Perft speed: our ``Position.perft`` against cshogi (a Python loop over ``Board.legal_moves``, bulk-counted at
the last ply) and python-shogi (a small depth: it manages about 20k nodes/s); then the variants no peer plays, each
against our own 9x9 generator timed in the same run (dai shogi's issue asks for a third of its nodes/s)."""
from __future__ import annotations

import time
from typing import Optional

#: (id, sfen, our depth, cshogi depth, python-shogi depth). cshogi runs at our depth: at a smaller one its Python
#: loop over interior nodes would weigh more and understate its bulk-counting speed.
POSITIONS = [
    ("startpos", "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1", 5, 5, 3),
    ("matsuri", "l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w RGgsn5p 1", 3, 3, 2),
    ("max-moves", "R8/2K1S1SSk/4B4/9/9/9/9/9/1L1L1L3 b RBGSNLP3g3n17p 1", 3, 3, 2),
    ("endgame-124", "8l/1l+R2P3/p2pBG1pp/kps1p4/Nn1P2G2/P1P1P2PP/1PS6/1KSG3+r1/LN2+p3L w Sbgn3p 124", 4, 4, 2),
]


#: (id, variant, depth): variant start positions, timed against shogi's start position at ``SHOGI_DEPTH``.
VARIANT_POSITIONS = [
    ("daishogi-start", "daishogi2017", 5),
]
SHOGI_DEPTH = 5
ROUNDS = 2  # the variant and shogi perfts alternate this many times; each side's best round counts (load noise)


def _timed(fn, *args) -> tuple[int, float]:
    t = time.perf_counter()
    n = fn(*args)
    return n, max(time.perf_counter() - t, 1e-9)


def ours(sfen: str, depth: int) -> int:
    from engine import Position

    return Position.from_sfen(sfen).perft(depth)


def _board_perft(board, depth: int) -> int:
    """Bulk-counted perft through a board with ``legal_moves``, ``push`` and ``pop`` (cshogi and python-shogi)."""

    def rec(d: int) -> int:
        moves = list(board.legal_moves)
        if d == 1:
            return len(moves)
        total = 0
        for m in moves:
            board.push(m)
            total += rec(d - 1)
            board.pop()
        return total

    return rec(depth) if depth > 0 else 1


def cshogi_perft(sfen: str, depth: int) -> Optional[int]:
    try:
        import cshogi
    except ImportError:
        return None
    return _board_perft(cshogi.Board(sfen), depth)


def python_shogi_perft(sfen: str, depth: int) -> Optional[int]:
    try:
        import shogi
    except ImportError:
        return None
    return _board_perft(shogi.Board(sfen), depth)


def run(max_depth: Optional[int] = None, peers: bool = True) -> list[dict]:
    """One row per position: nodes, seconds and nodes/s for us and each peer; ``max_depth`` caps every depth."""
    from engine import Position

    Position.startpos().perft(2)  # load the compiled kernels before timing
    rows = []
    for name, sfen, d_ours, d_cs, d_ps in POSITIONS:
        cap = (lambda d: min(d, max_depth)) if max_depth else (lambda d: d)
        row = {"position": name}
        n, t = _timed(ours, sfen, cap(d_ours))
        row["ours"] = {"depth": cap(d_ours), "nodes": n, "seconds": t, "nps": n / t}
        for peer, fn, d in (("cshogi", cshogi_perft, d_cs), ("python-shogi", python_shogi_perft, d_ps)):
            if not peers:
                continue
            n, t = _timed(fn, sfen, cap(d))
            if n is None:
                row[peer] = None
                continue
            check = ours(sfen, cap(d))
            row[peer] = {"depth": cap(d), "nodes": n, "seconds": t, "nps": n / t, "agrees": n == check}
        rows.append(row)
    return rows


def variant_perft(sfen: str, variant: str, depth: int) -> int:
    from engine import Position

    return Position.from_sfen(sfen, variant).perft(depth)


def run_variants(max_depth: Optional[int] = None) -> list[dict]:
    """One row per variant start position: our nodes/s there and the ratio to our 9x9 shogi start-position perft,
    the two timed alternately in this call (``ROUNDS`` rounds, the best of each side), so load on the machine
    weighs on both alike."""
    from engine import Position, get_variant

    shogi_sfen = POSITIONS[0][1]
    shogi_depth = min(SHOGI_DEPTH, max_depth) if max_depth else SHOGI_DEPTH
    rows = []
    for name, variant, depth in VARIANT_POSITIONS:
        depth = min(depth, max_depth) if max_depth else depth
        sfen = get_variant(variant).start_sfen
        Position.from_sfen(sfen, variant).perft(2)  # load (or compile) the kernels before timing
        best, best_shogi = 0.0, 0.0
        for _ in range(ROUNDS):
            n_shogi, t = _timed(ours, shogi_sfen, shogi_depth)
            best_shogi = max(best_shogi, n_shogi / t)
            n, t = _timed(variant_perft, sfen, variant, depth)
            best = max(best, n / t)
        rows.append({"position": name, "variant": variant,
                     "ours": {"depth": depth, "nodes": n, "seconds": n / best, "nps": best},
                     "shogi": {"depth": shogi_depth, "nodes": n_shogi, "nps": best_shogi},
                     "ratio_to_shogi": best / best_shogi})
    return rows
