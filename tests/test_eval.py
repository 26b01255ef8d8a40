"""Evaluation: symmetry, side-to-move point of view, material and hand values."""
from __future__ import annotations

import pytest

from engine import Position
from eval import build_eval_tables, evaluate, params
from search import bench_positions


def _mirror(sfen: str) -> str:
    """Swap colours and rotate the board 180 degrees (the same game seen from the other side)."""
    board, side, hand = sfen.split()[:3]
    rows = board.split("/")[::-1]
    out = []
    for r in rows:
        toks, i = [], 0
        while i < len(r):
            if r[i] == "+":
                toks.append(r[i:i + 2]); i += 2
            else:
                toks.append(r[i]); i += 1
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
