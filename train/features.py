"""The KP evaluation (:mod:`eval.kp`) in the form training needs: the prior tables and the sparse features.

:func:`prior_tables` writes the hand-set evaluation (material, piece-square, the near-king terms, hand values) in
the KP form exactly, so with the prior tables the KP evaluation equals the hand-set one wherever the variant has no
mobility or try terms (standard shogi); training (:mod:`train.fit`) moves the tables away from it. :func:`features`
gives the sum of :func:`eval.kernels.kp_sum` as sparse indices for numpy training; the other ``*_features`` give
the terms the kernels read beside it (mobility, king zone, threats, safe mobility).
"""
from __future__ import annotations

import numpy as np

from engine.variant import COLOR_SHIFT, Variant
from eval import build_eval_tables, threat_scratch
from eval.kernels import KS_SIZE, SM_BUCKETS, threat_size
from eval.kp import kp_shape


def mirror_squares(variant: Variant) -> np.ndarray:
    """int32[n_sq]: the square seen from the other side (board rotated 180 degrees)."""
    g = variant.geometry
    out = np.empty(g.n_squares, np.int32)
    for sq in range(g.n_squares):
        out[sq] = g.square(g.n_files - 1 - g.file_of(sq), g.n_ranks - 1 - g.rank_of(sq))
    return out


def prior_tables(variant: Variant) -> tuple[np.ndarray, np.ndarray]:
    """The hand-set evaluation (``eval.build_eval_tables``) written as KP tables (int32); see the module docstring."""
    E = build_eval_tables(variant, "hand")
    (n_sq, R, _), hshape = kp_shape(variant)
    n_pt = R // 2
    kp = np.zeros((n_sq, R, n_sq), np.int32)
    kh = np.zeros(hshape, np.int32)
    rel = E.king_rel.astype(np.int64)  # [king, square]
    for pt in range(1, n_pt + 1):
        own, foe = variant.code(pt, 0), variant.code(pt, 1)
        # own piece: material + piece-square + its term near its own king; enemy piece: its term near our king
        kp[:, pt - 1, :] = E.pst[own][None, :] + E.near_own[own][rel]
        kp[:, n_pt + pt - 1, :] = E.near_enemy[foe][rel]
    counts = np.arange(hshape[2], dtype=np.int32)
    for pt in variant.hand_ptypes:
        kh[:, pt - 1, :] = E.hand_val[0, pt] * counts[None, :]
    return kp, kh


def king_squares(board: np.ndarray, variant: Variant) -> tuple[np.ndarray, np.ndarray]:
    """Sente's and gote's king squares of each row of ``board`` (int8[N, n_sq]); the first royal of a colour."""
    royal = np.zeros(64, bool)
    for pt in variant.royal_ptypes:
        royal[variant.code(pt, 0)] = royal[variant.code(pt, 1)] = True
    codes = board.astype(np.int64)
    is_k0 = royal[codes] & (codes >> COLOR_SHIFT == 0)
    is_k1 = royal[codes] & (codes >> COLOR_SHIFT == 1)
    if not (is_k0.any(axis=1).all() and is_k1.any(axis=1).all()):
        raise ValueError("every position needs a king of each colour for the KP evaluation")
    return is_k0.argmax(axis=1), is_k1.argmax(axis=1)


def flat_weights(kp: np.ndarray, kp_hand: np.ndarray) -> np.ndarray:
    """The weight vector ``w`` that :func:`features` indexes: ``kp`` and ``kp_hand`` flattened and the padding slot
    (0) after them, as float64 for training."""
    return np.concatenate([kp.ravel(), kp_hand.ravel(), [0]]).astype(np.float64)


def features(board: np.ndarray, hands: np.ndarray, variant: Variant) -> tuple[np.ndarray, np.ndarray]:
    """Sparse form of :func:`eval.kernels.kp_sum` for N positions: ``(idx, coef)``, both [N, F], so that the
    sente-view KP value is ``(w[idx] * coef).sum(1)`` with ``w = concat(kp.ravel(), kp_hand.ravel(), [0])``; the
    last slot of ``w`` (index ``kp.size + kp_hand.size``) is the padding of empty squares (coefficient 0)."""
    (n_sq, R, _), (_, _, H) = kp_shape(variant)
    n_pt = R // 2
    N = board.shape[0]
    dummy = n_sq * R * n_sq + n_sq * R * H
    m = mirror_squares(variant)
    k0, k1 = king_squares(board, variant)
    kb = m[k1]
    codes = board.astype(np.int64)
    pt = (codes & ((1 << COLOR_SHIFT) - 1)) - 1
    col = codes >> COLOR_SHIFT
    sq = np.arange(n_sq)[None, :]
    r_a = np.where(col == 0, pt, n_pt + pt)    # relation seen by sente
    r_b = np.where(col == 0, n_pt + pt, pt)    # relation seen by gote
    ia = (k0[:, None] * R + r_a) * n_sq + sq
    ib = (kb[:, None] * R + r_b) * n_sq + m[sq]
    empty = codes == 0
    ia[empty] = dummy
    ib[empty] = dummy
    ca = np.where(empty, 0, 1).astype(np.int8)
    hp = np.array(variant.hand_ptypes, np.int64)
    idx_parts, coef_parts = [ia, ib], [ca, -ca]
    if len(hp):
        off = n_sq * R * n_sq
        n0 = np.minimum(hands[:, 0, hp].astype(np.int64), H - 1)
        n1 = np.minimum(hands[:, 1, hp].astype(np.int64), H - 1)
        own, foe = hp[None, :] - 1, n_pt + hp[None, :] - 1
        for kk, r, n, sgn in ((k0, own, n0, 1), (k0, foe, n1, 1), (kb, own, n1, -1), (kb, foe, n0, -1)):
            idx_parts.append(off + (kk[:, None] * R + r) * H + n)
            coef_parts.append(np.full((N, len(hp)), sgn, np.int8))
    return np.concatenate(idx_parts, axis=1), np.concatenate(coef_parts, axis=1)


def factor_map(variant: Variant) -> np.ndarray:
    """For every slot of ``w`` (see :func:`features`), the slot of the king-free factor (relation x square, and
    relation x hand count) that training shares across king squares; the padding maps to the factor's padding."""
    (n_sq, R, _), (_, _, H) = kp_shape(variant)
    board_part = np.tile(np.arange(R * n_sq), n_sq)
    hand_part = R * n_sq + np.tile(np.arange(R * H), n_sq)
    return np.concatenate([board_part, hand_part, [R * n_sq + R * H]]).astype(np.int64)


def slider_types(variant: Variant) -> np.ndarray:
    """The piece types (1-based) that may carry a learned mobility weight: every non-royal piece that slides."""
    T = variant.tables
    return np.array([pt for pt, piece in enumerate(variant.pieces, start=1)
                     if not piece.royal and T.slide_list[variant.code(pt, 0), 0] >= 0], np.int64)


def mobility_features(board: np.ndarray, variant: Variant) -> np.ndarray:
    """float64[N, n_pt + 1]: per piece type (index = type), the destinations (:func:`eval.piece_mobility`) of
    sente's sliders of that type minus gote's, for each row of ``board`` — the features of the learned mobility
    weights (``E.mobility``, read by the kernel's mobility term)."""
    from eval.kernels import piece_mobility
    T = variant.tables
    n_pt = len(variant.pieces)
    slide = np.zeros(64, bool)
    for pt in slider_types(variant):
        slide[variant.code(int(pt), 0)] = slide[variant.code(int(pt), 1)] = True
    out = np.zeros((board.shape[0], n_pt + 1))
    for i in range(board.shape[0]):
        row = board[i]
        for sq in np.flatnonzero(slide[row.astype(np.int64)]):
            code = int(row[sq])
            n = piece_mobility(row, T, code, int(sq))
            out[i, code & ((1 << COLOR_SHIFT) - 1)] += n if code >> COLOR_SHIFT == 0 else -n
    return out


def king_zone_features(board: np.ndarray, hands: np.ndarray, variant: Variant) -> np.ndarray:
    """float64[N, KS_SIZE]: for each row, the king-zone entries the kernel reads (:func:`eval.kernels.
    king_zone_entries`), +1 for the gote king's and -1 for the sente king's: the sente-view features of the learned
    king-zone table ``E.ks``."""
    from eval.kernels import king_zone_rows
    out = np.zeros((board.shape[0], KS_SIZE), np.float64)
    king_zone_rows(np.ascontiguousarray(board, np.int8), np.ascontiguousarray(hands, np.int8), variant.tables, out)
    return out


def threat_features(board: np.ndarray, stms: np.ndarray, variant: Variant) -> np.ndarray:
    """float64[N, threat_size]: for each row, the threat features the kernel reads (:func:`eval.kernels.
    threat_counts`), side to move's view (the rows' ``stms``): the features of the learned threat table
    ``E.threats``."""
    from eval.kernels import threat_rows
    out = np.zeros((board.shape[0], threat_size(len(variant.pieces))), np.int32)
    threat_rows(np.ascontiguousarray(board, np.int8), np.ascontiguousarray(stms, np.int64), variant.tables,
                build_eval_tables(variant, "hand").value, threat_scratch(variant), out)
    return out.astype(np.float64)


def safe_mobility_features(board: np.ndarray, variant: Variant) -> np.ndarray:
    """float64[N, (n_pt + 1) * SM_BUCKETS]: for each row, the safe-mobility entries the kernel reads (:func:`eval.
    kernels.safe_mobility_rows`), +1 for a sente piece's and -1 for a gote piece's: the sente-view features of the
    learned safe-mobility table ``E.smob``."""
    from eval.kernels import safe_mobility_rows
    out = np.zeros((board.shape[0], (len(variant.pieces) + 1) * SM_BUCKETS), np.int32)
    safe_mobility_rows(np.ascontiguousarray(board, np.int8), variant.tables, build_eval_tables(variant, "hand").value,
                       threat_scratch(variant), out)
    return out.astype(np.float64)
