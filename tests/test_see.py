"""Static exchange evaluation (search/see.py): hand-checked exchanges on 9x9 shogi and 13x13 dai shogi, and the
threshold form against the full swap over random positions.

Expected values are worked out by hand from the exchange sequence and written as sums of piece values (a captured
piece is worth its board value plus its hand value in shogi, its board value in dai shogi, which has no drops).
"""
from __future__ import annotations

import random

import numpy as np
import pytest

from engine import Position
from eval import build_eval_tables
from search.see import SEE_ROYAL, static_exchange, static_exchange_ge


def _code(pos: Position, usi: str) -> int:
    mv = pos.parse_move(usi)
    codes = pos.legal_codes().tolist()
    assert mv.code in codes, usi
    return mv.code


def _cv(pos: Position, letter: str) -> int:
    """Capture value of a gote piece of type ``letter``: board value + hand value."""
    v = pos.variant
    pt = next(i for i, p in enumerate(v.pieces, start=1) if p.letter == letter)
    code = v.code(pt, 1)
    E = build_eval_tables(v)
    T = v.tables
    return int(E.value[code] + E.hand_val[0, T.hand_type[code]])


def _val(pos: Position, letter: str) -> int:
    v = pos.variant
    pt = next(i for i, p in enumerate(v.pieces, start=1) if p.letter == letter)
    return int(build_eval_tables(v).value[v.code(pt, 0)])


# (sfen, move, expected from cv / val) -- every line hand-checked; the comment gives the exchange.
SHOGI_CASES = [
    # P takes an undefended pawn.
    ("4k4/9/9/4p4/4P4/9/9/9/4K4 b - 1", "5e5d", lambda cv, val: cv("P")),
    # R takes a pawn defended by a silver: sxR, nothing more.
    ("4k4/9/4s4/4p4/9/9/9/4R4/4K4 b - 1", "5h5d", lambda cv, val: cv("P") - cv("R")),
    # A lance behind the rook (x-ray): RxP sxR LxS; gote still takes the rook (R > P + S): P + S - R.
    ("4k4/9/4s4/4p4/9/9/9/4R4/K3L4 b - 1", "5h5d", lambda cv, val: cv("P") + cv("S") - cv("R")),
    # Lance in front, rook behind: LxP, and sxL would lose the silver to RxS for a lance (S > L): gote does not
    # take, sente keeps the pawn.
    ("4k4/9/4s4/4p4/9/9/9/4L4/K3R4 b - 1", "5h5d", lambda cv, val: cv("P")),
    # Gold drop on a square an enemy pawn attacks, nothing supports it: the gold is lost.
    ("4k4/9/4p4/9/9/9/9/9/4K4 b G 1", "G*5d", lambda cv, val: -cv("G")),
    # Gold drop backed by a pawn: pxG PxP: -G + P.
    ("4k4/9/4p4/9/4P4/9/9/9/4K4 b G 1", "G*5d", lambda cv, val: -cv("G") + cv("P")),
    # Quiet pawn push onto a square nobody attacks.
    ("4k4/9/9/9/9/4P4/9/9/4K4 b - 1", "5f5e", lambda cv, val: 0),
    # Pawn takes a silver beside the gote king, promoting; the king may not recapture because sente's lance (an
    # x-ray behind the pawn) also hits the square.
    ("4k4/4s4/4P4/9/9/9/9/9/K3L4 b - 1", "5c5b+", lambda cv, val: cv("S") + val("+P") - val("P")),
    # Without the lance the king takes the tokin back.
    ("4k4/4s4/4P4/9/9/9/9/9/K8 b - 1", "5c5b+", lambda cv, val: cv("S") + val("+P") - val("P") - cv("+P")),
    # Bishop takes a pawn defended by a gold (6c covers 5d): the first capture is made, gxB: P - B.
    ("4k4/9/3g5/4p4/9/9/9/8B/K8 b - 1", "1h5d", lambda cv, val: cv("P") - cv("B")),
    # Promotion without a capture on a square the enemy does not attack.
    ("4k4/9/9/P8/9/9/9/9/4K4 b - 1", "9d9c+", lambda cv, val: val("+P") - val("P")),
    # A checking pawn that only the king can take, nothing behind it: the king takes it.
    ("4k4/9/4P4/9/9/9/9/9/4K4 b - 1", "5c5b", lambda cv, val: -cv("P")),
]


@pytest.mark.parametrize("sfen,usi,expect", SHOGI_CASES)
def test_see_shogi_hand_checked(sfen, usi, expect):
    pos = Position.from_sfen(sfen)
    mv = _code(pos, usi)
    before = pos.state.board.copy()
    want = expect(lambda l: _cv(pos, l), lambda l: _val(pos, l))
    assert static_exchange(pos, mv) == want
    assert static_exchange_ge(pos, mv, want)
    assert not static_exchange_ge(pos, mv, want + 1)
    assert np.array_equal(pos.state.board, before)  # the lifted pieces are back


DAI = "daishogi2017"
DAI_CASES = [
    # 13x13: pawn takes an undefended pawn.
    ("6k6/13/13/13/6p6/6P6/13/13/13/13/13/13/6K6 b - 1", "7f7e", lambda v: v("P")),
    # Pawn takes a pawn defended by a pawn: pxP, and sente has nothing more: 0.
    ("6k6/13/13/6p6/6p6/6P6/13/13/13/13/13/13/6K6 b - 1", "7f7e", lambda v: v("P") - v("P")),
    # Rook takes a pawn defended by a pawn, a lance behind the rook: RxP pxR LxP.
    ("6k6/13/13/6p6/6p6/13/13/13/13/13/6R6/13/K5L6 b - 1", "7k7e", lambda v: v("P") - v("R") + v("P")),
]


@pytest.mark.parametrize("sfen,usi,expect", DAI_CASES)
def test_see_daishogi_hand_checked(sfen, usi, expect):
    pos = Position.from_sfen(sfen, DAI)
    mv = _code(pos, usi)
    want = expect(lambda l: _val(pos, l))
    assert static_exchange(pos, mv) == want
    assert static_exchange_ge(pos, mv, want) and not static_exchange_ge(pos, mv, want + 1)


def test_see_royal_outweighs_any_exchange():
    pos = Position.startpos()
    assert SEE_ROYAL > 100 * _cv(pos, "R")


def test_see_rejects_an_illegal_move():
    pos = Position.startpos()
    with pytest.raises(ValueError):
        static_exchange(pos, 12345)


@pytest.mark.parametrize("variant,plies", [("shogi", 60), (DAI, 40)])
def test_see_ge_agrees_with_see_on_random_positions(variant, plies):
    """see_ge(mv, t) == (see(mv) >= t) for every capture of positions along random games, at several thresholds."""
    rng = random.Random(7)
    checked = 0
    for game in range(3 if variant == DAI else 6):
        pos = Position.startpos(variant)
        for _ in range(plies):
            moves = pos.legal_codes().tolist()
            if not moves:
                break
            board = pos.state.board
            caps = [m for m in moves if not (m >> 17) & 1 and board[m & 0xFF] != 0][:8]
            for m in caps:
                v = static_exchange(pos, m)
                for t in (v - 1, v, v + 1, 0, -200, 200):
                    assert static_exchange_ge(pos, m, t) == (v >= t), (pos.sfen(), pos.move_usi(m), v, t)
                checked += 1
            # play captures more often than not, so exchanges appear
            pos.push_unchecked(rng.choice(caps) if caps and rng.random() < 0.6 else rng.choice(moves))
    assert checked > 20
