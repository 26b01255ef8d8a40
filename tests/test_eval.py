"""Evaluation: symmetry, side-to-move point of view, material and hand values, dai shogi's mobility term."""
from __future__ import annotations

import random
import re

import pytest

from engine import Position
from eval import build_eval_tables, evaluate, params, piece_mobility
from eval.kernels import C_MOBILITY
from search import bench_positions


def _mirror(sfen: str) -> str:
    """Swap colours and rotate the board 180 degrees (the same game seen from the other side)."""
    board, side, hand = sfen.split()[:3]
    rows = board.split("/")[::-1]
    out = []
    for r in rows:
        toks = re.findall(r"\d+|\+?[A-Za-z]", r)  # empty-square runs (13x13: two digits), pieces
        out.append("".join(t.swapcase() for t in reversed(toks)))
    new_hand = "-" if hand == "-" else hand.swapcase()
    return f"{'/'.join(out)} {'w' if side == 'b' else 'b'} {new_hand} 1"


@pytest.mark.parametrize("sfen", bench_positions)
def test_colour_symmetry(sfen):
    assert evaluate(Position.from_sfen(sfen)) == evaluate(Position.from_sfen(_mirror(sfen)))


def test_start_position_is_balanced():
    assert evaluate(Position.startpos()) == params.TEMPO


def test_side_to_move_point_of_view():
    a = Position.from_sfen("4k4/9/9/9/9/9/9/9/4K4 b R 1")
    b = Position.from_sfen("4k4/9/9/9/9/9/9/9/4K4 w R 1")
    assert evaluate(a) > 900 and evaluate(b) < -900


def test_hand_piece_worth_more_than_board_piece():
    E = build_eval_tables(Position.startpos().variant)
    v = Position.startpos().variant
    for letter in "PLNSGBR":
        pt = v.ptype_of_letter[letter]
        assert E.hand_val[0, pt] > E.value[v.code(pt, 0)] > 0


# ------------------------------------------------------------------ dai shogi mobility
DAI = "daishogi2017"
# Kings on their back ranks, two sente pawns that wall in the corner square 13m, and a sente rook.
_ROOK_BOXED = "6k6/13/13/13/13/13/13/13/13/13/13/P12/RP4K6 b - 1"
_ROOK_OPEN = "6k6/13/13/13/13/13/7R5/13/13/13/13/P12/1P4K6 b - 1"


def _random_dai_positions(n: int, seed: int = 5) -> list[str]:
    rng = random.Random(seed)
    pos, out = Position.startpos(DAI), []
    while len(out) < n:
        moves = pos.legal_moves()
        if not moves or pos.result() is not None:
            pos = Position.startpos(DAI)
            continue
        pos.push(rng.choice(moves))
        if pos.ply % 7 == 0:
            out.append(pos.sfen())
    return out


def test_mobility_only_for_dai_shogi_sliders_and_special_movers():
    shogi = build_eval_tables(Position.startpos().variant)
    assert shogi.consts[C_MOBILITY] == 0 and not shogi.mobility.any()  # standard shogi's evaluation is unchanged
    v = Position.startpos(DAI).variant
    E = build_eval_tables(v)
    assert E.consts[C_MOBILITY] == 1
    weight = params.MOBILITY_CP[DAI]
    for letter, expected in (("R", weight), ("F", weight), ("Z", weight), ("O", weight), ("P", 0), ("G", 0),
                             ("K", 0), ("A", 0)):
        pt = v.ptype_of_letter[letter]
        assert E.mobility[v.code(pt, 0)] == expected and E.mobility[v.code(pt, 1)] == -expected, letter


def test_mobile_rook_scores_higher():
    boxed, open_ = Position.from_sfen(_ROOK_BOXED, DAI), Position.from_sfen(_ROOK_OPEN, DAI)
    rook_sq_boxed, rook_sq_open = boxed.variant.geometry.parse_square("13m"), boxed.variant.geometry.parse_square("6g")
    code = boxed.state.board[rook_sq_boxed]
    assert piece_mobility(boxed.state.board, boxed.tables, code, rook_sq_boxed) == 0
    assert piece_mobility(open_.state.board, open_.tables, code, rook_sq_open) == 24
    # The rook has no piece-square term and is far from both kings: mobility is the whole difference.
    assert evaluate(open_) - evaluate(boxed) == 24 * params.MOBILITY_CP[DAI]


def test_mobility_counts_captures_not_own_pieces():
    # Sente rook on 7g: an own pawn on 7f, an enemy pawn on 7h; files 1-6 and 8-13 open on rank g.
    pos = Position.from_sfen("6k6/13/13/13/13/6P6/6R6/6p6/13/13/13/13/6K6 b - 1", DAI)
    sq = pos.variant.geometry.parse_square("7g")
    assert piece_mobility(pos.state.board, pos.tables, pos.state.board[sq], sq) == 6 + 6 + 1


def test_dai_shogi_colour_symmetry():
    assert evaluate(Position.startpos(DAI)) == params.TEMPO
    for sfen in _random_dai_positions(12):
        assert evaluate(Position.from_sfen(sfen, DAI)) == evaluate(Position.from_sfen(_mirror(sfen), DAI)), sfen
