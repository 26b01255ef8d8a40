"""King-relative evaluation, Bonanza-style KP: one table ``kp[king square, relation, square]`` where ``relation`` is
the piece type (0-based) of a piece of the viewer (``pt``) or of its opponent (``n_pt + pt``), and one hand table
``kp_hand[king square, relation, count]`` for the number of pieces of a type in a hand.

The value (sente's view) is ``f(sente) - f(gote)``, where ``f(c)`` sums the tables over every piece on the board
(kings included: the own king's entry on its own square is its piece-square term, the enemy king's entry is the
king-king term) and both hands, seen from side ``c``: gote looks at the board rotated 180 degrees (``mirror``), so
one table serves both sides and the evaluation is colour-symmetric by construction (a colour-flipped position has
the opposite value). The shapes come from the variant record (squares, piece-type count, the largest possible hand
count), not from 9x9 shogi.

The kernel is :func:`eval.kernels.kp_sum`. This module holds what the evaluation needs at run time: the tables'
shapes and the weights files (shipped, or an ``EvalFile``). The prior tables (the hand-set evaluation in this form)
and the sparse features for training are :mod:`train.features`; training (:mod:`train.fit`) writes the files.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple, Optional

import numpy as np

from engine.variant import Variant

from .kernels import KS_SIZE, SM_BUCKETS, threat_size

WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"
MAX_FILE_BYTES = 20 * 1024 * 1024  # the cap for shipped weights


def weights_path(variant_id: str) -> Path:
    """Where the learned tables of a variant are shipped (``eval/weights/kp_<variant>.npz``)."""
    return WEIGHTS_DIR / f"kp_{variant_id}.npz"


def kp_shape(variant: Variant) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """Shapes of ``kp`` and ``kp_hand``: (squares, 2 x piece types, squares) and (squares, 2 x piece types,
    largest hand count + 1); the largest hand count is the number of non-royal pieces of the start position."""
    n_sq = variant.geometry.n_squares
    n_pt = len(variant.pieces)
    royal = set(variant.royal_ptypes)
    # read from the start SFEN's board field, not from a Position (whose checks would compile the plain tables'
    # kernels for a variant that has tables of its own)
    pieces = re.findall(r"\+?[A-Za-z]", variant.start_sfen.split()[0])
    n_men = sum(1 for token in pieces if variant.ptype_of_letter[token.upper()] not in royal)
    return (n_sq, 2 * n_pt, n_sq), (n_sq, 2 * n_pt, n_men + 1)


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


def save_weights(path: Path | str, variant_id: str, w: KPWeights, **meta) -> None:
    """Write ``w`` as a weights file of ``variant_id``, the format :func:`_read_weights` reads: ``kp`` as int16 when
    every entry fits, the optional tables that are present, and ``meta`` beside them (arrays or numbers saying how
    the tables were made; names of their own)."""
    small = np.int16 if np.abs(w.kp).max() < 2 ** 15 else np.int32
    tables = {name: arr for name, arr in (("mobility", w.mobility), ("ks", w.ks), ("threats", w.threats),
                                          ("safe_mobility", w.smob)) if arr is not None}
    np.savez_compressed(path, variant=np.str_(variant_id), kp=w.kp.astype(small), kp_hand=w.kp_hand,
                        tempo=np.float64(w.tempo), **tables, **meta)


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
