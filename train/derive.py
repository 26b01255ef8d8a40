"""Learned tables for a variant whose pieces play like shogi's, derived from shogi's learned tables (fantasista).

Fantasista has no games of its own to fit on yet, but 14 of its 29 kinds are shogi's and the rest move like one of
them (``PieceType.like``: a pawn token like a pawn, the fire dragon like a dragon). Each kind takes the learned
entries of the shogi kind it plays like (its KP rows as a piece of either side, its mobility, threat and
safe-mobility entries) plus the difference of the two kinds' hand-set values (``eval.build_eval_tables``'s
``value``), so a standard piece is valued exactly as in shogi and a special piece at the prior's margin over its
model. A kind in hand reads the hand row of its model's unpromoted form (the fire dragon's: the rook's), shifted by
the value difference per piece held. The king-zone table and the tempo are shogi's.

``python -m train derive --variant fantasista`` writes ``eval/weights/kp_fantasista.npz``.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from engine.variant import Variant
from eval.kernels import SM_BUCKETS, TH_KINDS, TH_MULTI
from eval.kp import KPWeights, kp_shape, save_weights


def variant_record(variant_id: str) -> Variant:
    """The variant record of ``variant_id``, fantasista's too (it is played as a game, not a shogi position)."""
    if variant_id == "fantasista":
        from engine.variants.fantasista.variant import FANTASISTA
        return FANTASISTA
    from engine import get_variant
    return get_variant(variant_id)


def model_letters(variant: Variant) -> list[str]:
    """The shogi letter each kind of ``variant`` plays like (index 0: kind 1)."""
    return [p.like or p.letter for p in variant.pieces]


def _kind_of(letters: list[str], letter: str) -> int:
    if letter not in letters:
        raise ValueError(f"no shogi kind {letter!r} to derive from")
    return letters.index(letter) + 1


def derive(source: KPWeights, source_variant: Variant, variant: Variant) -> KPWeights:
    """``variant``'s tables from ``source`` (learned for ``source_variant``, shogi): see the module docstring."""
    from eval import build_eval_tables

    src_letters = [p.letter for p in source_variant.pieces]
    n_src = len(src_letters)
    n_pt = len(variant.pieces)
    (n_sq, _, _), (_, _, n_hand) = kp_shape(variant)
    if source.kp.shape[0] != n_sq or source.kp_hand.shape[2] < n_hand:
        raise ValueError(f"{source_variant.id}'s tables ({source.kp.shape[0]} squares, hands of "
                         f"{source.kp_hand.shape[2] - 1}) do not cover {variant.id}'s ({n_sq} squares, hands of "
                         f"{n_hand - 1})")
    letters = [p.letter for p in variant.pieces]
    model = [_kind_of(src_letters, m) for m in model_letters(variant)]  # source kind of each kind (1-based)
    value = build_eval_tables(variant, "hand").value
    own_value = [int(value[variant.code(pt, 0)]) for pt in range(1, n_pt + 1)]

    def margin(pt: int, model_letter: str) -> int:
        """Hand-set value of kind ``pt`` above the variant's own kind of ``model_letter``."""
        return own_value[pt - 1] - own_value[_kind_of(letters, model_letter) - 1]

    kp = np.zeros((n_sq, 2 * n_pt, n_sq), np.int32)
    kp_hand = np.zeros((n_sq, 2 * n_pt, n_hand), np.int32)
    src_hand = source.kp_hand.astype(np.int32)
    counts = np.arange(n_hand, dtype=np.int32)
    for pt in range(1, n_pt + 1):
        m = model[pt - 1]
        kp[:, pt - 1, :] = source.kp[:, m - 1, :] + margin(pt, src_letters[m - 1])
        kp[:, n_pt + pt - 1, :] = source.kp[:, n_src + m - 1, :]
        if pt in variant.hand_ptypes:
            base = src_letters[m - 1].lstrip("+")
            b = _kind_of(src_letters, base)
            kp_hand[:, pt - 1, :] = src_hand[:, b - 1, :n_hand]
            kp_hand[:, n_pt + pt - 1, :] = src_hand[:, n_src + b - 1, :n_hand]
            kp_hand[:, pt - 1, :] += margin(pt, base) * counts[None, :]
    by_kind = np.array([0] + model, np.int64)  # entry index of kind pt (0: no kind) in the source's tables
    mobility = None if source.mobility is None else source.mobility[by_kind].astype(np.int32)
    threats = None
    if source.threats is not None:
        rows = source.threats[:2 * TH_KINDS * (n_src + 1)].reshape(2 * TH_KINDS, n_src + 1)
        threats = np.concatenate([rows[:, by_kind].ravel(), source.threats[-2 * TH_MULTI:]]).astype(np.int32)
    smob = None
    if source.smob is not None:
        smob = source.smob.reshape(n_src + 1, SM_BUCKETS)[by_kind].ravel().astype(np.int32)
    return KPWeights(kp, kp_hand, source.tempo, mobility, source.ks, threats, smob)


def write(weights: KPWeights, variant: Variant, out: Path, source: Path) -> None:
    """Save ``weights`` as a weights file of ``variant`` (the format of :mod:`eval.kp`), naming its source."""
    save_weights(out, variant.id, weights, derived_from=np.str_(source.name))
