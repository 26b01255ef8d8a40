"""King-relative evaluation, Bonanza-style KP: one table ``kp[king square, relation, square]`` where ``relation`` is
the piece type (0-based) of a piece of the viewer (``pt``) or of its opponent (``n_pt + pt``), and one hand table
``kp_hand[king square, relation, count]`` for the number of pieces of a type in a hand.

The value (sente's view) is ``f(sente) - f(gote)``, where ``f(c)`` sums the tables over every piece on the board
(kings included: the own king's entry on its own square is its piece-square term, the enemy king's entry is the
king-king term) and both hands, seen from side ``c``: gote looks at the board rotated 180 degrees (``mirror``), so
one table serves both sides and the evaluation is colour-symmetric by construction (a colour-flipped position has
the opposite value). The shapes come from the variant record (squares, piece-type count, the largest possible hand
count), not from 9x9 shogi.

:func:`prior_tables` writes the hand-set evaluation (material, piece-square, the near-king terms, hand values) in
this form exactly, so with the prior tables the KP evaluation equals the hand-set one wherever the variant has no
mobility or try terms (standard shogi); training (:mod:`train.fit`) moves the tables away from it.
The kernel is :func:`eval.kernels.kp_sum`; :func:`features` gives the same sum as sparse indices for numpy training.
"""
from __future__ import annotations

from pathlib import Path
from typing import NamedTuple, Optional

import numpy as np

from engine.variant import COLOR_SHIFT, Variant

from .kernels import KS_SIZE, SM_BUCKETS, threat_size

WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"
MAX_FILE_BYTES = 20 * 1024 * 1024  # the cap for shipped weights


def weights_path(variant_id: str) -> Path:
    """Where the learned tables of a variant are shipped (``eval/weights/kp_<variant>.npz``)."""
    return WEIGHTS_DIR / f"kp_{variant_id}.npz"


def mirror_squares(variant: Variant) -> np.ndarray:
    """int32[n_sq]: the square seen from the other side (board rotated 180 degrees)."""
    g = variant.geometry
    out = np.empty(g.n_squares, np.int32)
    for sq in range(g.n_squares):
        out[sq] = g.square(g.n_files - 1 - g.file_of(sq), g.n_ranks - 1 - g.rank_of(sq))
    return out


def kp_shape(variant: Variant) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """Shapes of ``kp`` and ``kp_hand``: (squares, 2 x piece types, squares) and (squares, 2 x piece types,
    largest hand count + 1); the largest hand count is the number of non-royal pieces of the start position."""
    from engine import Position
    n_sq = variant.geometry.n_squares
    n_pt = len(variant.pieces)
    board = Position.startpos(variant).state.board
    royal = set(variant.royal_ptypes)
    n_men = sum(1 for c in board if c != 0 and (int(c) & ((1 << COLOR_SHIFT) - 1)) not in royal)
    return (n_sq, 2 * n_pt, n_sq), (n_sq, 2 * n_pt, n_men + 1)


def prior_tables(variant: Variant) -> tuple[np.ndarray, np.ndarray]:
    """The hand-set evaluation (``eval.build_eval_tables``) written as KP tables (int32); see the module docstring."""
    from . import build_eval_tables
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


class KPWeights(NamedTuple):
    """What a weights file holds, in the order :func:`eval.kp_eval_tables` takes it."""

    kp: np.ndarray                    # int32, shape kp_shape(variant)[0]
    kp_hand: np.ndarray               # int32, shape kp_shape(variant)[1]
    tempo: int                        # side-to-move bonus, centipawns
    mobility: Optional[np.ndarray]    # int32[n_pt + 1]: centipawns per destination of a slider, by piece type
    ks: Optional[np.ndarray] = None   # int32[KS_SIZE]: the king-zone table (eval.kernels.KS_*), when learned
    threats: Optional[np.ndarray] = None  # int32[threat_size(n_pt)]: the threat table (eval.kernels.TH_*), when learned
    smob: Optional[np.ndarray] = None  # int32[(n_pt + 1) SM_BUCKETS]: the safe-mobility table, when learned


def _read_weights(path: Path | str) -> tuple[str, KPWeights]:
    """The variant id a weights file names and its arrays, unchecked against any variant; ``ValueError`` in words
    when it is missing, too big (checked before opening it) or unreadable."""
    from .params import TEMPO
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"no KP weights file {path}")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise ValueError(f"KP weights file {path} is larger than {MAX_FILE_BYTES} bytes")
    try:
        with np.load(path, allow_pickle=False) as z:
            vid = str(z["variant"])
            kp = np.ascontiguousarray(z["kp"], dtype=np.int32)
            kh = np.ascontiguousarray(z["kp_hand"], dtype=np.int32)
            tempo = int(round(float(z["tempo"]))) if "tempo" in z.files else TEMPO
            mobility = np.asarray(z["mobility"], np.int32) if "mobility" in z.files else None
            ks = np.asarray(z["ks"], np.int32) if "ks" in z.files else None
            threats = np.asarray(z["threats"], np.int32) if "threats" in z.files else None
            smob = np.asarray(z["safe_mobility"], np.int32) if "safe_mobility" in z.files else None
    except (OSError, KeyError, ValueError) as exc:
        raise ValueError(f"KP weights file {path} is not readable: {exc}") from None
    return vid, KPWeights(kp, kh, tempo, mobility, ks, threats, smob)


def _check_shapes(path: Path | str, w: KPWeights, variant: Variant) -> KPWeights:
    want_kp, want_kh = kp_shape(variant)
    if w.kp.shape != want_kp or w.kp_hand.shape != want_kh:
        raise ValueError(f"KP weights file {path} has shapes {w.kp.shape}, {w.kp_hand.shape}; {variant.id} needs "
                         f"{want_kp}, {want_kh}")
    if w.mobility is not None and w.mobility.shape != (len(variant.pieces) + 1,):
        raise ValueError(f"KP weights file {path} has mobility weights of shape {w.mobility.shape}; {variant.id} "
                         f"needs ({len(variant.pieces) + 1},)")
    if w.ks is not None and w.ks.shape != (KS_SIZE,):
        raise ValueError(f"KP weights file {path} has a king-zone table of shape {w.ks.shape}; it needs ({KS_SIZE},)")
    n_threats = threat_size(len(variant.pieces))
    if w.threats is not None and w.threats.shape != (n_threats,):
        raise ValueError(f"KP weights file {path} has a threat table of shape {w.threats.shape}; {variant.id} needs "
                         f"({n_threats},)")
    n_smob = (len(variant.pieces) + 1) * SM_BUCKETS
    if w.smob is not None and w.smob.shape != (n_smob,):
        raise ValueError(f"KP weights file {path} has a safe-mobility table of shape {w.smob.shape}; {variant.id} "
                         f"needs ({n_smob},)")
    return w


def load_weights(path: Path | str, variant: Variant) -> KPWeights:
    """The tables of a weights file (``tempo`` is the hand-set one and ``mobility`` ``None`` for files that do not
    carry their own); ``ValueError`` in words when it is missing, too big, for another variant or of the wrong
    shape."""
    vid, w = _read_weights(path)
    if vid != variant.id:
        raise ValueError(f"KP weights file {path} is for variant {vid}, not {variant.id}")
    return _check_shapes(path, w, variant)


def load_weights_file(path: Path | str) -> tuple[str, KPWeights]:
    """The variant id a weights file is for and its tables, checked as :func:`load_weights` checks them; for a file
    named by the user (the USI option ``EvalFile``), whose variant is only known from the file itself."""
    from engine import get_variant
    vid, w = _read_weights(path)
    try:
        variant = get_variant(vid)
    except ValueError:
        raise ValueError(f"KP weights file {path} is for an unknown variant {vid!r}") from None
    return vid, _check_shapes(path, w, variant)


# ------------------------------------------------------------------ sparse features for numpy (training)
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
    from .kernels import piece_mobility
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
    from .kernels import king_zone_rows
    out = np.zeros((board.shape[0], KS_SIZE), np.float64)
    king_zone_rows(np.ascontiguousarray(board, np.int8), np.ascontiguousarray(hands, np.int8), variant.tables, out)
    return out


def threat_features(board: np.ndarray, stms: np.ndarray, variant: Variant) -> np.ndarray:
    """float64[N, threat_size]: for each row, the threat features the kernel reads (:func:`eval.kernels.
    threat_counts`), side to move's view (the rows' ``stms``): the features of the learned threat table
    ``E.threats``."""
    from . import build_eval_tables, threat_scratch
    from .kernels import threat_rows
    out = np.zeros((board.shape[0], threat_size(len(variant.pieces))), np.int32)
    threat_rows(np.ascontiguousarray(board, np.int8), np.ascontiguousarray(stms, np.int64), variant.tables,
                build_eval_tables(variant, "hand").value, threat_scratch(variant), out)
    return out.astype(np.float64)


def safe_mobility_features(board: np.ndarray, variant: Variant) -> np.ndarray:
    """float64[N, (n_pt + 1) * SM_BUCKETS]: for each row, the safe-mobility entries the kernel reads (:func:`eval.
    kernels.safe_mobility_rows`), +1 for a sente piece's and -1 for a gote piece's: the sente-view features of the
    learned safe-mobility table ``E.smob``."""
    from . import build_eval_tables, threat_scratch
    from .kernels import safe_mobility_rows
    out = np.zeros((board.shape[0], (len(variant.pieces) + 1) * SM_BUCKETS), np.int32)
    safe_mobility_rows(np.ascontiguousarray(board, np.int8), variant.tables, build_eval_tables(variant, "hand").value,
                       threat_scratch(variant), out)
    return out.astype(np.float64)
