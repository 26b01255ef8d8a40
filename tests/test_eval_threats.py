"""The threat term of the learned evaluation (eval.kernels.threat_counts, ``TH_*``): hand-checked
positions give the documented entries, training's features times a table equal what the kernel adds, the term is
colour-symmetric on 9x9 and 13x13, weights files carry the table, and ``python -m train add-threats`` fits it."""
from __future__ import annotations

import numpy as np
import pytest

from engine import Position
from eval import build_eval_tables, kp_eval_tables, threat_scratch
from eval import kp as KP
from train import features as F
from eval.kernels import C_MOBILITY, C_THREATS, TH_KINDS, TH_MULTI, evaluate_k, threat_size
from .test_eval_kp import _flip, _random_positions, _random_tables

SHOGI = Position.startpos().variant


def _entry(side: str, kind: str, letter: str) -> int:
    """The table entry of a threatened piece: ``side`` own/enemy (of the side to move), ``kind`` cheaper (attacked by
    a cheaper piece) / undefended."""
    pt = next(i for i, p in enumerate(SHOGI.pieces, start=1) if p.letter == letter)
    s, k = ("own", "enemy").index(side), ("cheaper", "undefended").index(kind)
    return (s * TH_KINDS + k) * (len(SHOGI.pieces) + 1) + pt


def _multi(side: str, n: int) -> int:
    return 2 * TH_KINDS * (len(SHOGI.pieces) + 1) + ("own", "enemy").index(side) * TH_MULTI + min(n, 3) - 2


def _features(sfen: str) -> dict[int, int]:
    p = Position.from_sfen(sfen)
    f = F.threat_features(p.state.board[None, :], np.array([p.turn]), SHOGI)[0]
    return {int(i): int(f[i]) for i in np.flatnonzero(f)}


@pytest.mark.parametrize("sfen, want", [
    ("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1", {}),
    # the bishops face each other, each guarded: equal value, defended, no threat
    ("lnsgkgsnl/1r5b1/pppppp1pp/6p2/9/2P6/PP1PPPPPP/1B5R1/LNSGKGSNL b - 3", {}),
    # a gote silver attacks the sente gold: a cheaper attacker, the gold is the enemy's of gote to move
    ("4k4/9/4p4/4s4/4G4/9/9/9/4K4 w - 1", {_entry("enemy", "cheaper", "G"): 1}),
    # the same seen by sente to move: its own gold
    ("4k4/9/4p4/4s4/4G4/9/9/9/4K4 b - 1", {_entry("own", "cheaper", "G"): 1}),
    # a bishop attacks an unguarded gold: dearer attacker, undefended
    ("4k4/9/2b1p4/9/4G4/3R5/9/9/4K4 b - 1", {_entry("own", "undefended", "G"): 1}),
    # ... and with the gold guarded by a silver, no threat
    ("4k4/9/2b1p4/9/4G4/4S4/9/9/4K4 b - 1", {}),
    # a knight forks a rook and a gold (both dearer than it): two threatened pieces of gote to move
    ("4k4/r1g6/9/1N7/9/9/9/9/4K4 w - 1", {_entry("own", "cheaper", "R"): 1, _entry("own", "cheaper", "G"): 1,
                                         _multi("own", 2): 1}),
    # a king attacks an unguarded silver (a royal threatens only what is not defended)
    ("9/9/9/9/4k4/4S4/9/9/4K4 w - 1", {_entry("enemy", "undefended", "S"): 1}),
    ("9/9/9/9/4k4/4S4/4P4/9/4K4 w - 1", {}),
])
def test_hand_checked_threats(sfen, want):
    assert _features(sfen) == want


def _random_threats(seed: int, variant=SHOGI) -> np.ndarray:
    return np.random.default_rng(seed).integers(-300, 300, threat_size(len(variant.pieces))).astype(np.int32)


@pytest.mark.parametrize("variant, n", [("shogi", 150), ("daishogi2017", 12)])
def test_threat_features_equal_the_kernel_and_the_term_is_colour_symmetric(variant, n):
    """Training's features times the table give what ``evaluate_k`` adds with the table switched on (side to move's
    view); a colour-flipped position gets the same value; the term varies over the positions. Mobility is on: with
    the threat table the kernel counts it in the walk of the threat term (``_piece_walk``), without it in its own
    (``_mobility_term``), so any difference between the two walks would show here too."""
    positions = _random_positions(n, variant, seed=13, every=3 if variant == "shogi" else 9)
    v = positions[0].variant
    kp, kh = _random_tables(v, 5)
    table = _random_threats(6, v)
    mobility = np.random.default_rng(7).integers(1, 12, len(v.pieces) + 1)
    E0 = kp_eval_tables(v, kp, kh, mobility=mobility)
    E1 = kp_eval_tables(v, kp, kh, mobility=mobility, threats=table)
    assert E1.consts[C_THREATS] == 1 and E0.consts[C_THREATS] == 0
    assert E1.consts[C_MOBILITY] == 1 and E0.consts[C_MOBILITY] == 1
    att = threat_scratch(v)
    feats = F.threat_features(np.array([p.state.board for p in positions]), np.array([p.turn for p in positions]), v)
    got = feats.astype(np.int64) @ table.astype(np.int64)
    diffs = set()
    for p, g in zip(positions, got):
        d = int(evaluate_k(p.state, p.tables, E1, att)) - int(evaluate_k(p.state, p.tables, E0, att))
        assert d == int(g)
        diffs.add(d)
        q = Position.from_sfen(_flip(p.sfen()), variant)
        assert int(evaluate_k(q.state, q.tables, E1, att)) == int(evaluate_k(p.state, p.tables, E1, att))
    assert len(diffs) > n // 4


def test_weights_files_carry_the_threat_table(tmp_path):
    """A weights file with a ``threats`` array switches the term on; one of the wrong shape is refused in words."""
    shipped = KP.load_weights(KP.weights_path("shogi"), SHOGI)
    good, bad = tmp_path / "good.npz", tmp_path / "bad.npz"
    base = dict(variant="shogi", kp=shipped.kp, kp_hand=shipped.kp_hand, tempo=shipped.tempo)
    np.savez_compressed(good, **base, threats=_random_threats(1))
    np.savez_compressed(bad, **base, threats=np.zeros(5, np.int32))
    w = KP.load_weights(good, SHOGI)
    assert np.array_equal(w.threats, _random_threats(1))
    assert kp_eval_tables(SHOGI, *w).consts[C_THREATS] == 1
    with pytest.raises(ValueError, match="threat table of shape"):
        KP.load_weights(bad, SHOGI)


def test_add_threats_fits_on_top_of_fixed_tables(tmp_path):
    """``python -m train add-threats``: the base file's tables stay as they were, the fitted table is not zero and fits
    the training positions better than the base, and its validation loss (recomputed by ``losses`` from the written
    file) is what the fit reports."""
    from train.fit import DEFAULT_DATA, fit_threats, validation_losses
    with np.load(DEFAULT_DATA) as z:
        d = {k: z[k] for k in z.files}
    rows = d["game"] < 60
    data = tmp_path / "d.npz"
    np.savez_compressed(data, **{k: (d[k][rows] if d[k].ndim else d[k]) for k in d})
    out = tmp_path / "t.npz"
    base = KP.weights_path("shogi")
    figures = fit_threats([data], base, out, steps=60, lr=5.0)
    w0, w1 = KP.load_weights(base, SHOGI), KP.load_weights(out, SHOGI)
    assert np.array_equal(w0.kp, w1.kp) and np.array_equal(w0.ks, w1.ks) and w1.threats.any()
    losses = validation_losses([data], [base, out])
    assert losses[str(out)] == pytest.approx(figures["loss_validation"], abs=1e-9)
    assert losses[str(base)] == pytest.approx(figures["loss_base_validation"], abs=1e-9)
    assert figures["loss_train"] < figures["loss_base_train"] - 1e-3
    assert build_eval_tables(SHOGI, "hand").consts[C_THREATS] == 0  # the hand-set evaluation has no threat term
