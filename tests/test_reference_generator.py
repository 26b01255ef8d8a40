"""The kernels against the slow reference generator: on 9x9, and on a 13x13 board (4-word bitboards), so the data
layout is proven board-size agnostic before the large variants arrive."""
import random

import pytest

from engine import Position, Variant
from engine.geometry import BoardGeometry

from .reference_movegen import reference_legal_moves

BIG = Variant(
    id="test13", geometry=BoardGeometry(13, 13), promotion_ranks=4,
    start_sfen="lnsgkgsnl4/1r5b5/ppppppppp4/13/13/13/13/13/13/13/4PPPPPPPPP/5B5R1/4LNSGKGSNL b - 1",
)


def random_positions(start: Position, seed: int, count: int, plies: int = 120):
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        pos = start.copy()
        for _ in range(plies):
            codes = pos.legal_codes()
            if len(codes) == 0 or len(out) >= count:
                break
            out.append(pos.copy())
            captures = [c for c in codes if pos.state.board[c & 0xFF] != 0 and not c & (1 << 17)]
            pick = rng.choice(captures) if captures and rng.random() < 0.6 else rng.choice(list(codes))
            pos.push_unchecked(int(pick))
    return out


@pytest.mark.parametrize("start, seed", [(Position.startpos(), 1), (Position.startpos(BIG), 2)],
                         ids=["9x9", "13x13"])
def test_kernel_agrees_with_reference(start, seed):
    for pos in random_positions(start, seed, 120):
        ours = {pos.move_usi(m) for m in pos.legal_codes()}
        assert ours == reference_legal_moves(pos), pos.sfen()
        assert Position.from_sfen(pos.sfen(), pos.variant).sfen() == pos.sfen()


def test_13x13_geometry_uses_four_file_aligned_words():
    g = BIG.geometry
    assert (g.files_per_word, g.n_words) == (4, 4)
    assert g.squares_of(g.file_bb[12]) == [g.square(12, r) for r in range(13)]


def test_13x13_perft_depth_2_matches_reference():
    pos = Position.startpos(BIG)
    expected = 0
    for m in reference_legal_moves(pos):
        child = pos.copy()
        child.push(m)
        expected += len(reference_legal_moves(child))
    assert pos.perft(2) == expected
