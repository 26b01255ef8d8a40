"""The safe-mobility term of the learned evaluation (``eval.kernels.SM_BUCKETS``): each non-royal piece's
destinations that no enemy piece attacks, one-hot by type and count. A hand-checked position gives the documented
entries, training's features times a table equal what the kernel adds (with and without the threat term, which
shares its walk over the pieces), the term is colour-symmetric on 9x9 and 13x13, and weights files carry it."""
from __future__ import annotations

import numpy as np
import pytest

from engine import Position
from eval import kp_eval_tables
from eval import kp as KP
from train import features as F
from eval.kernels import C_SMOB, SM_BUCKETS
from .test_eval_kp import _ev, _flip, _random_positions, _random_tables
from .test_eval_threats import SHOGI, _random_threats


def _pt(letter: str) -> int:
    return next(i for i, p in enumerate(SHOGI.pieces, start=1) if p.letter == letter)


def test_hand_checked_safe_mobility():
    """A sente silver on 5e and a gote pawn on 5c: the silver's five squares but 5d, which the pawn attacks (4); the
    pawn's one square, 5d, which the silver attacks (0, a gote piece: -1). Kings are left out."""
    p = Position.from_sfen("4k4/9/4p4/9/4S4/9/9/9/4K4 b - 1")
    f = F.safe_mobility_features(p.state.board[None, :], SHOGI)[0]
    assert {int(i): int(f[i]) for i in np.flatnonzero(f)} == {_pt("S") * SM_BUCKETS + 4: 1, _pt("P") * SM_BUCKETS: -1}
    # the start position: every piece's count is matched by the other side's, so the features cancel
    start = Position.startpos()
    assert not F.safe_mobility_features(start.state.board[None, :], SHOGI).any()


@pytest.mark.parametrize("variant, n", [("shogi", 150), ("daishogi2017", 12)])
@pytest.mark.parametrize("with_threats", [False, True])
def test_safe_mobility_features_equal_the_kernel_and_are_colour_symmetric(variant, n, with_threats):
    """Training's features (sente's view) times the table give what ``evaluate_k`` adds with the table switched on
    (signed to the side to move), with mobility on and the threat table on or off; a colour-flipped position gets
    the same value; the term varies over the positions."""
    positions = _random_positions(n, variant, seed=17, every=3 if variant == "shogi" else 9)
    v = positions[0].variant
    kp, kh = _random_tables(v, 5)
    table = np.random.default_rng(8).integers(-200, 200, (len(v.pieces) + 1) * SM_BUCKETS).astype(np.int32)
    mobility = np.random.default_rng(7).integers(1, 12, len(v.pieces) + 1)
    threats = _random_threats(6, v) if with_threats else None
    E0 = kp_eval_tables(v, kp, kh, mobility=mobility, threats=threats)
    E1 = kp_eval_tables(v, kp, kh, mobility=mobility, threats=threats, smob=table)
    assert E1.consts[C_SMOB] == 1 and E0.consts[C_SMOB] == 0
    feats = F.safe_mobility_features(np.array([p.state.board for p in positions]), v)
    sente_view = feats.astype(np.int64) @ table.astype(np.int64)
    diffs = set()
    for p, g in zip(positions, sente_view):
        d = _ev(p, E1) - _ev(p, E0)
        assert d == (int(g) if p.turn == 0 else -int(g))
        diffs.add(d)
        q = Position.from_sfen(_flip(p.sfen()), variant)
        assert _ev(q, E1) == _ev(p, E1)
    assert len(diffs) > n // 4


def test_weights_files_carry_the_safe_mobility_table(tmp_path):
    """A weights file with a ``safe_mobility`` array switches the term on; one of the wrong shape is refused in
    words; the shipped file carries one (j2s)."""
    shipped = KP.load_weights(KP.weights_path("shogi"), SHOGI)
    good, bad = tmp_path / "good.npz", tmp_path / "bad.npz"
    base = dict(variant="shogi", kp=shipped.kp, kp_hand=shipped.kp_hand, tempo=shipped.tempo)
    table = np.arange((len(SHOGI.pieces) + 1) * SM_BUCKETS, dtype=np.int32)
    np.savez_compressed(good, **base, safe_mobility=table)
    np.savez_compressed(bad, **base, safe_mobility=np.zeros(5, np.int32))
    w = KP.load_weights(good, SHOGI)
    assert np.array_equal(w.smob, table)
    assert kp_eval_tables(SHOGI, *w).consts[C_SMOB] == 1
    with pytest.raises(ValueError, match="safe-mobility table of shape"):
        KP.load_weights(bad, SHOGI)
    assert kp_eval_tables(SHOGI, *shipped).consts[C_SMOB] == 1 and shipped.smob.any()
