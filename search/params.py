"""Tunable parameters of the shared alpha-beta (shogi, dai shogi): the one definition of each.

The kernel (:mod:`search.kernels`) reads them at run time from the int32 array ``S.tune`` by its ``TUNE_*`` indices,
so changing a value here needs no recompilation. The USI engine takes them in one string option, ``SearchParams``
(``default``, or ``Name=value`` pairs separated by commas: ``RFPMargin=120,LMPBase=4``; docs/usi.md), parsed here
by :func:`parse_params`, so that ``usi`` still answers before the search package (numba) loads. The ``LMR*``
parameters shape the late-move-reduction table, which is built in Python (:func:`lmr_table`).

The defaults are shogi's: the values the search used before they became parameters (SPRT-tested as a whole, ledger
``bench/strength/shogi-sprt.tsv``), five of them since replaced by SPSA-tuned values that an SPRT accepted; a tuned
value replaces its default only after an SPRT accepts it. A variant may keep other defaults
(:data:`VARIANT_DEFAULT_PARAMS`) until an SPRT on that variant says otherwise.
The ``FEAT_WIDE_FUTILITY`` feature still swaps in its own fixed margins (search.kernels.WIDE_*).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from .kernels import (TUNE_DELTA_MARGIN, TUNE_FUT_DEPTH, TUNE_FUT_MARGIN, TUNE_HIST_LMR_DIV, TUNE_LMP_BASE,
                      TUNE_LMP_DEPTH, TUNE_LMP_SCALE, TUNE_LMR_BASE, TUNE_LMR_DIV, TUNE_NULL_BASE,
                      TUNE_NULL_DEPTH_DIV, TUNE_NULL_EVAL_DIV, TUNE_RAZOR_MARGIN, TUNE_RFP_DEPTH, TUNE_RFP_MARGIN,
                      TUNE_SEE_CAPTURE, TUNE_SEE_DEPTH, TUNE_SEE_QUIET, TUNE_SINGULAR_DEPTH, TUNE_SINGULAR_MARGIN,
                      TUNE_PROBCUT_DEPTH, TUNE_PROBCUT_MARGIN, TUNE_CHANCE_REDUCTION,
                      TUNE_CHANCE_MAIN_REDUCTION, TUNE_SIZE)


@dataclass(frozen=True)
class Tunable:
    """One parameter: its name in ``SearchParams``, default, range and SPSA perturbation."""

    name: str
    default: int
    lo: int
    hi: int
    #: SPSA's final perturbation size c (in the parameter's units); ``bench.spsa`` starts larger.
    step: float
    doc: str


TUNABLES: dict[int, Tunable] = {
    TUNE_RFP_DEPTH: Tunable("RFPDepth", 3, 0, 10, 0.6, "reverse futility pruning up to this depth"),
    TUNE_RFP_MARGIN: Tunable("RFPMargin", 136, 20, 500, 15,
                             "reverse futility: static eval - margin * depth >= beta returns"),
    TUNE_FUT_DEPTH: Tunable("FutilityDepth", 2, 0, 8, 0.6, "move-loop futility pruning up to this depth"),
    TUNE_FUT_MARGIN: Tunable("FutilityMargin", 210, 20, 600, 15,
                             "move-loop futility: quiet moves pruned when eval + margin * depth <= alpha"),
    TUNE_LMP_DEPTH: Tunable("LMPDepth", 4, 0, 10, 0.6, "late-move (move-count) pruning up to this depth"),
    # 3 + d^2 since the SPRT of 2026-12-03 (was 6 + 3 d^2; ledger bench/strength/shogi-sprt.tsv)
    TUNE_LMP_BASE: Tunable("LMPBase", 3, 1, 60, 2, "late-move pruning: quiet moves after base + scale/10 * depth^2"),
    TUNE_LMP_SCALE: Tunable("LMPScale", 10, 5, 100, 4, "late-move pruning: the depth^2 factor in tenths"),
    TUNE_NULL_BASE: Tunable("NullBase", 3, 1, 6, 0.5, "null-move reduction: base + depth / divisor"),
    TUNE_NULL_DEPTH_DIV: Tunable("NullDepthDiv", 6, 2, 12, 0.8, "null-move reduction: the depth divisor"),
    TUNE_NULL_EVAL_DIV: Tunable("NullEvalDiv", 0, 0, 400, 20,
                                "null-move reduction: + min((eval - beta) / div, 3) plies; 0: off"),
    TUNE_SEE_DEPTH: Tunable("SEEDepth", 6, 0, 12, 0.6, "SEE pruning in the move loop up to this depth"),
    TUNE_SEE_CAPTURE: Tunable("SEECaptureMargin", 200, 20, 600, 15,
                              "SEE pruning: a capture may lose up to margin * depth"),
    TUNE_SEE_QUIET: Tunable("SEEQuietMargin", 59, 5, 300, 6, "SEE pruning: a quiet move may lose margin * depth^2"),
    TUNE_HIST_LMR_DIV: Tunable("HistLMRDiv", 5000, 1000, 20000, 400,
                               "history per ply of LMR change (feature histlmr)"),
    TUNE_DELTA_MARGIN: Tunable("DeltaMargin", 200, 0, 600, 15,
                               "quiescence delta pruning: stand pat + gain + margin <= alpha skips a capture"),
    # LMRBase, LMRDiv, RFPMargin, FutilityMargin, SEEQuietMargin: SPSA values (bench.spsa, 2026-12-06) since their SPRT
    # at movetime 150 ms (ledger bench/strength/shogi-sprt.tsv); the old values stay dai shogi's
    # (VARIANT_DEFAULT_PARAMS)
    TUNE_LMR_BASE: Tunable("LMRBase", 70, 0, 200, 8, "LMR table: base / 100 + ln(depth) ln(moves) / (div / 100)"),
    TUNE_LMR_DIV: Tunable("LMRDiv", 228, 100, 500, 15, "LMR table: the divisor of ln(depth) ln(moves), in 1/100"),
    TUNE_RAZOR_MARGIN: Tunable("RazorMargin", 500, 100, 1500, 30,
                               "razoring (feature razor): a depth-1 node with eval + margin <= alpha returns its "
                               "quiescence value"),
    TUNE_SINGULAR_DEPTH: Tunable("SingularDepth", 6, 2, 20, 0.6,
                                 "singular extensions (feature singular) at nodes of this depth or more"),
    TUNE_SINGULAR_MARGIN: Tunable("SingularMargin", 2, 0, 60, 2,
                                  "singular extensions: the TT move is singular when every other move scores below "
                                  "tt score - margin * depth"),
    # from 5: the capture's search goes to depth - 4, at least 1 (a quiescence search there would repeat the first)
    TUNE_PROBCUT_DEPTH: Tunable("ProbCutDepth", 5, 5, 20, 0.6,
                                "ProbCut (feature probcut) at nodes of this depth or more"),
    TUNE_PROBCUT_MARGIN: Tunable("ProbCutMargin", 100, 0, 600, 15,
                                 "ProbCut: a capture whose shallow search holds beta + margin returns"),
    TUNE_CHANCE_REDUCTION: Tunable("ChanceReduction", 0, 0, 8, 0.6,
                                   "chance nodes (fantasista's rolls): the results after the most probable one are "
                                   "searched this many plies shallower; 0: every result to full depth"),
    TUNE_CHANCE_MAIN_REDUCTION: Tunable("ChanceMainReduction", 0, 0, 4, 0.5,
                                        "chance nodes searched by their most probable result (fantasista's "
                                        "FantasistaChanceSearch=main): that result is searched this many plies "
                                        "shallower than the node"),
}
assert sorted(TUNABLES) == list(range(TUNE_SIZE)), "every TUNE_* index of the kernel has its entry here"
#: parameter name -> index
PARAM_INDEX: dict[str, int] = {t.name: i for i, t in TUNABLES.items()}
#: Each variant's defaults that differ from TUNABLES' (shogi's). Dai shogi keeps the values its SPRT against the old
#: engine measured (ledger bench/strength/shogi-sprt.tsv, 2026-12-06T01:56) until an SPRT of its own: values tuned on
#: 9x9 are not assumed to suit 13x13 (as with its default features, search.VARIANT_DEFAULT_FEATURES).
VARIANT_DEFAULT_PARAMS: dict[str, dict[str, int]] = {
    "daishogi2017": {"LMRBase": 75, "LMRDiv": 225, "RFPMargin": 150, "FutilityMargin": 200, "SEEQuietMargin": 60},
}


def default_tune(variant_id: str = "shogi") -> np.ndarray:
    """The default parameter vector (int32[TUNE_SIZE]) of a search of ``variant_id``."""
    tune = np.array([TUNABLES[i].default for i in range(TUNE_SIZE)], np.int32)
    for name, value in VARIANT_DEFAULT_PARAMS.get(variant_id, {}).items():
        tune[PARAM_INDEX[name]] = value
    return tune


def tune_from(values: Mapping[str, int], variant_id: str = "shogi") -> np.ndarray:
    """``variant_id``'s default vector with ``values`` (parameter name -> int) applied; a bad name or a value outside
    a parameter's range raises ValueError.

    >>> int(tune_from({"RFPMargin": 120})[TUNE_RFP_MARGIN]), int(tune_from({}, "daishogi2017")[TUNE_RFP_MARGIN])
    (120, 150)
    """
    tune = default_tune(variant_id)
    for name, value in values.items():
        if name not in PARAM_INDEX:
            raise ValueError(f"unknown search parameter {name!r} (known: {', '.join(PARAM_INDEX)})")
        t = TUNABLES[PARAM_INDEX[name]]
        if not t.lo <= int(value) <= t.hi:
            raise ValueError(f"search parameter {name} must be in {t.lo}..{t.hi}, not {value}")
        tune[PARAM_INDEX[name]] = int(value)
    return tune


def parse_params(text: str) -> dict[str, int]:
    """The ``SearchParams`` option: ``default`` (or empty) for none, else ``Name=value`` pairs separated by commas
    (or spaces); checked against the table (ValueError). Names are case-insensitive, as USI option names.

    >>> parse_params("rfpmargin=120, LMPBase=4")
    {'RFPMargin': 120, 'LMPBase': 4}
    """
    out: dict[str, int] = {}
    text = text.strip()
    if text.lower() in ("", "default", "<empty>"):
        return out
    by_lower = {name.lower(): name for name in PARAM_INDEX}
    for item in text.replace(",", " ").split():
        name, sep, value = item.partition("=")
        if not sep or name.lower() not in by_lower:
            raise ValueError(f"not a search parameter: {item!r} (Name=value; known: {', '.join(PARAM_INDEX)})")
        try:
            out[by_lower[name.lower()]] = int(value)
        except ValueError:
            raise ValueError(f"search parameter {name} takes an integer, not {value!r}") from None
    tune_from(out)  # the ranges
    return out


def format_params(values: Mapping[str, int]) -> str:
    """The ``SearchParams`` text of ``values`` (the inverse of :func:`parse_params`; ``default`` when empty)."""
    return ",".join(f"{k}={int(v)}" for k, v in values.items()) or "default"


def lmr_table(base: int = TUNABLES[TUNE_LMR_BASE].default, div: int = TUNABLES[TUNE_LMR_DIV].default) -> np.ndarray:
    """Late-move reduction by depth and move number, int8[64, 64]: ``int(base / 100 + ln d ln m / (div / 100))``.

    >>> t = lmr_table()
    >>> int(t[1, 1]), int(t[8, 8]), int(t[20, 40])
    (0, 2, 5)
    """
    logs = np.log(np.arange(1, 64, dtype=np.float64))
    t = np.zeros((64, 64), np.int8)
    t[1:, 1:] = (base / 100 + np.outer(logs, logs) / (div / 100)).astype(np.int64)  # all >= 0: truncation = int()
    return t
