"""Evaluation for standard shogi: material (hand pieces a little above board pieces), piece-square terms and king
safety (own pieces near the own king, own pieces near the enemy king); where a variant sets it (dai shogi), mobility.

The terms are compiled once per variant into :class:`EvalTables` (numpy arrays) that the search kernels read; every
constant lives in :mod:`eval.params`. :func:`evaluate` is the Python entry point (side-to-move point of view).

>>> from engine import Position
>>> evaluate(Position.startpos())  # symmetric start: only the tempo bonus
20
"""
from __future__ import annotations

import numpy as np

from engine.variant import N_CODES, STANDARD_PIECES, Variant

from . import params as EP
from .kernels import (ATT_ROWS, C_KP, C_KS, C_MOBILITY, C_SMOB, C_TEMPO, C_THREATS, KS_SIZE, KS_ZONE, N_CONSTS,
                      SM_BUCKETS, EvalTables, evaluate_k, piece_mobility, threat_size)
from . import fantasista as _fantasista  # noqa: F401,E402  (registers fantasista's variant_terms)

__all__ = ["DEFAULT_EVAL_MODE", "EVAL_MODES", "EvalTables", "build_eval_tables", "evaluate", "evaluate_k", "kp_eval_tables",
           "piece_mobility", "piece_value", "threat_scratch", "threat_scratch_shape"]

#: ``hand``: the hand-set terms of :mod:`eval.params`; ``learned``: the KP tables of :mod:`eval.kp` trained by
#: :mod:`train.fit`, shipped in ``eval/weights/`` (a variant without a weights file keeps the hand-set terms).
EVAL_MODES = ("hand", "learned")
#: the evaluation a search uses unless told otherwise (``Searcher.eval_mode``, the USI option ``EvalMode``):
#: ``learned`` since its SPRT against ``hand`` accepted it (2026-12-03, ledger bench/strength/shogi-sprt.tsv)
DEFAULT_EVAL_MODE = "learned"

_MINORS = {"S", "G", "N"}
_PROMOTED_MINORS = {"+P", "+L", "+N", "+S"}
_CACHE: dict[tuple[int, str], EvalTables] = {}
_NO_KP = np.zeros((1, 1, 1), np.int32)
_NO_KS = np.zeros(1, np.int32)
_NO_THREATS = np.zeros(1, np.int32)
_NO_SMOB = np.zeros(1, np.int32)


def _positional(letter: str, fwd_rank: int, n_ranks: int, edge_file: int, start_rank: int) -> int:
    """Piece-square term of one piece type from the owner's view.

    ``fwd_rank``: ranks advanced from the owner's back rank (0 = own back rank); ``edge_file``: files from the nearer
    edge; ``start_rank``: the piece's usual starting rank in the same counting.
    """
    if letter == "P":
        return EP.PAWN_ADVANCE * max(0, min(fwd_rank - start_rank, EP.PAWN_ADVANCE_CAP))
    if letter in _MINORS:
        return EP.MINOR_ADVANCE * min(max(fwd_rank, 0), 3) + EP.CENTER_FILE_BONUS * edge_file
    if letter in _PROMOTED_MINORS:
        return EP.PROMOTED_ADVANCE * fwd_rank + EP.CENTER_FILE_BONUS * edge_file
    if letter == "K":
        centre = 4
        return -EP.KING_RANK_PENALTY * fwd_rank + EP.KING_EDGE_BONUS * (centre - min(edge_file, centre))
    return EP.BIG_PIECE_ADVANCE * fwd_rank


def piece_value(letter: str) -> int:
    return EP.PIECE_VALUES.get(letter, 0)


def build_eval_tables(variant: Variant, mode: str = "hand") -> EvalTables:
    """Kernel tables for ``variant`` (cached per variant object and mode): :mod:`eval.params` compiled, and in
    ``learned`` mode the shipped KP tables (``eval/weights/kp_<variant>.npz``) when the variant has them."""
    if mode not in EVAL_MODES:
        raise ValueError(f"unknown evaluation mode {mode!r} (one of {', '.join(EVAL_MODES)})")
    cached = _CACHE.get((id(variant), mode))
    if cached is not None:
        return cached
    if mode == "learned":
        from . import kp
        path = kp.weights_path(variant.id)
        E = build_eval_tables(variant, "hand")
        if path.is_file():
            E = kp_eval_tables(variant, *kp.load_weights(path, variant))
        _CACHE[(id(variant), mode)] = E
        return E
    g = variant.geometry
    n_sq, n_files, n_ranks = g.n_squares, g.n_files, g.n_ranks
    T = variant.tables
    R = (2 * n_files - 1) * (2 * n_ranks - 1)
    pst = np.zeros((N_CODES, n_sq), np.int32)
    value = np.zeros(N_CODES, np.int32)
    near_own = np.zeros((N_CODES, R), np.int32)
    near_enemy = np.zeros((N_CODES, R), np.int32)
    hand_val = np.zeros((2, 32), np.int32)
    mobility = np.zeros(N_CODES, np.int32)
    mobility_cp = EP.MOBILITY_CP.get(variant.id, 0)
    king_rel = np.zeros((n_sq, n_sq), np.int16)
    for a in range(n_sq):
        for b in range(n_sq):
            df = g.file_of(b) - g.file_of(a) + n_files - 1
            dr = g.rank_of(b) - g.rank_of(a) + n_ranks - 1
            king_rel[a, b] = df * (2 * n_ranks - 1) + dr
    for pt, piece in enumerate(variant.pieces, start=1):
        letter = piece.like or piece.letter
        # Standard pieces take the tuned shogi values; other variants' kinds carry their own (PieceType.value,
        # e.g. from eval.material for dai shogi). Royals have no material value.
        if piece.royal:
            val = 0
        elif variant.pieces is STANDARD_PIECES:
            val = EP.PIECE_VALUES.get(piece.letter, piece.value)
        else:
            val = piece.value
        if pt in variant.hand_ptypes:
            hv = val * EP.HAND_NUM // EP.HAND_DEN + EP.HAND_BONUS
            hand_val[0, pt], hand_val[1, pt] = hv, -hv
        start_rank = 2 if letter == "P" else 0
        d_near = EP.DEFENDER_BONUS.get(letter, (0, 0))
        a_near = EP.ATTACKER_BONUS.get(letter, (0, 0))
        for color in (0, 1):
            code = variant.code(pt, color)
            sign = 1 if color == 0 else -1
            value[code] = val
            # Sliders and the special movers only: their freedom varies most (a walled-in free king has none, an
            # open one 40 squares), while counting the short steppers too cost a third more time per node.
            if not piece.royal and (T.slide_list[code, 0] >= 0 or T.special[code] != 0):
                mobility[code] = sign * mobility_cp
            for sq in range(n_sq):
                f, r = g.file_of(sq), g.rank_of(sq)
                fwd = (n_ranks - 1 - r) if color == 0 else r  # ranks advanced from own back rank
                edge = min(f, n_files - 1 - f)
                pst[code, sq] = sign * (val + _positional(letter, fwd, n_ranks, edge, start_rank))
            for df in range(-(n_files - 1), n_files):
                for dr in range(-(n_ranks - 1), n_ranks):
                    dist = max(abs(df), abs(dr))
                    idx = (df + n_files - 1) * (2 * n_ranks - 1) + dr + n_ranks - 1
                    if 1 <= dist <= 2:
                        near_own[code, idx] = sign * d_near[dist - 1]
                        near_enemy[code, idx] = sign * a_near[dist - 1]
    consts = np.zeros(N_CONSTS, np.int64)
    consts[C_TEMPO] = EP.TEMPO
    consts[C_MOBILITY] = int(np.any(mobility != 0))
    try_bonus = np.zeros(n_ranks, np.int32)
    if variant.try_rule:
        try_bonus[:len(EP.TRY_BONUS)] = EP.TRY_BONUS[:n_ranks]
    mirror = np.array([g.square(n_files - 1 - g.file_of(sq), n_ranks - 1 - g.rank_of(sq)) for sq in range(n_sq)],
                      np.int32)
    zone_index, zone_square, zone_leaper, zone_rays = _king_zone_geometry(variant)
    E = EvalTables(pst=pst, hand_val=hand_val, king_rel=king_rel, near_own=near_own, near_enemy=near_enemy,
                   value=value, consts=consts, try_bonus=try_bonus, mobility=mobility, kp=_NO_KP, kp_hand=_NO_KP,
                   mirror=mirror, ks=_NO_KS, zone_index=zone_index, zone_square=zone_square, zone_leaper=zone_leaper,
                   zone_rays=zone_rays, threats=_NO_THREATS, smob=_NO_SMOB)
    _CACHE[(id(variant), "hand")] = E
    return E


def _king_zone_geometry(variant: Variant) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``E.zone_index``, ``E.zone_square``, ``E.zone_leaper`` and ``E.zone_rays`` of ``variant`` (see
    :data:`eval.kernels.EvalTables`): a king's zone is the squares at Chebyshev distance 1, indexed in square order;
    a piece may leap into it from at most one square further than the variant's longest leap; a ray crosses it when
    one of the ray's squares on the empty board is in it."""
    g = variant.geometry
    n_sq = g.n_squares
    files = np.array([g.file_of(sq) for sq in range(n_sq)])
    ranks = np.array([g.rank_of(sq) for sq in range(n_sq)])
    dist = np.maximum(np.abs(files[:, None] - files[None, :]), np.abs(ranks[:, None] - ranks[None, :]))
    leap_dest = variant.tables.leap_dest
    on_board = leap_dest >= 0
    longest = int(dist[np.nonzero(on_board)[0], leap_dest[on_board]].max()) if on_board.any() else 0
    zone_index = np.full((n_sq, n_sq), -1, np.int8)
    zone_square = np.full((n_sq, KS_ZONE), -1, np.int16)
    for ksq in range(n_sq):
        ring = np.flatnonzero(dist[ksq] == 1)
        zone_index[ksq, ring] = np.arange(len(ring))
        zone_square[ksq, :len(ring)] = ring
    rays = variant.tables.rays
    zone_rays = np.zeros((n_sq, n_sq), np.uint8)
    for sq in range(n_sq):
        for d in range(rays.shape[1]):
            ray = rays[sq, d][rays[sq, d] >= 0]
            zone_rays[(dist[:, ray] == 1).any(axis=1), sq] |= np.uint8(1 << d)
    return zone_index, zone_square, dist <= longest + 1, zone_rays


def kp_eval_tables(variant: Variant, kp: np.ndarray, kp_hand: np.ndarray, tempo: int | None = None,
                   mobility: np.ndarray | None = None, ks: np.ndarray | None = None,
                   threats: np.ndarray | None = None, smob: np.ndarray | None = None) -> EvalTables:
    """The hand-set tables of ``variant`` with the KP tables ``kp``, ``kp_hand`` switched on (not cached); ``tempo``
    replaces the hand-set side-to-move bonus and ``mobility`` (centipawns per destination, by piece type) the
    variant's mobility weights when given (learned weights carry their own); ``ks`` switches on the king-zone table
    (``eval.kernels.KS_*``), ``threats`` the threat table (``eval.kernels.TH_*``), ``smob`` the safe-mobility table
    (``eval.kernels.SM_BUCKETS``)."""
    from .kp import kp_shape
    want_kp, want_kh = kp_shape(variant)
    if kp.shape != want_kp or kp_hand.shape != want_kh:
        raise ValueError(f"KP tables of shapes {kp.shape}, {kp_hand.shape}; {variant.id} needs {want_kp}, {want_kh}")
    E = build_eval_tables(variant, "hand")
    consts = E.consts.copy()
    consts[C_KP] = 1
    if tempo is not None:
        consts[C_TEMPO] = tempo
    mob = E.mobility
    if mobility is not None:
        mob = np.zeros_like(E.mobility)
        for pt in range(1, len(variant.pieces) + 1):
            mob[variant.code(pt, 0)], mob[variant.code(pt, 1)] = mobility[pt], -mobility[pt]
        consts[C_MOBILITY] = int(np.any(mob != 0))
    ks_table = _NO_KS
    if ks is not None:
        if ks.shape != (KS_SIZE,):
            raise ValueError(f"a king-zone table of shape {ks.shape}; it needs ({KS_SIZE},)")
        ks_table = np.ascontiguousarray(ks, np.int32)
        consts[C_KS] = 1
    threat_table = _NO_THREATS
    if threats is not None:
        want = (threat_size(len(variant.pieces)),)
        if threats.shape != want:
            raise ValueError(f"a threat table of shape {threats.shape}; {variant.id} needs {want}")
        threat_table = np.ascontiguousarray(threats, np.int32)
        consts[C_THREATS] = 1
    smob_table = _NO_SMOB
    if smob is not None:
        want = ((len(variant.pieces) + 1) * SM_BUCKETS,)
        if smob.shape != want:
            raise ValueError(f"a safe-mobility table of shape {smob.shape}; {variant.id} needs {want}")
        smob_table = np.ascontiguousarray(smob, np.int32)
        consts[C_SMOB] = 1
    return E._replace(kp=np.ascontiguousarray(kp, np.int32), kp_hand=np.ascontiguousarray(kp_hand, np.int32),
                      consts=consts, mobility=mob, ks=ks_table, threats=threat_table, smob=smob_table)


def evaluate(pos, mode: str = "hand") -> int:
    """Static evaluation of ``pos`` in centipawns, from the side to move's point of view (``mode``: see
    :data:`EVAL_MODES`)."""
    return int(evaluate_k(pos.state, pos.tables, build_eval_tables(pos.variant, mode), threat_scratch(pos.variant)))


def threat_scratch_shape(variant: Variant) -> tuple[int, int]:
    """The shape of :func:`threat_scratch`: the piece walk's attack maps and every piece's destinations, at most
    ``n_sq`` pieces of fewer than ``n_sq`` each (``eval.kernels._piece_walk``)."""
    n_sq = variant.geometry.n_squares
    return ATT_ROWS, n_sq * n_sq


def threat_scratch(variant: Variant) -> np.ndarray:
    """The scratch array ``evaluate_k`` and the search's evaluation take (int32, one per thread)."""
    return np.zeros(threat_scratch_shape(variant), np.int32)
