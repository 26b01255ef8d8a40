"""The alpha-beta search of the shogi family (standard shogi, dai shogi; turncoat's positions): iterative deepening around jitted PVS, quiescence, TT, MultiPV, and a mate search.

The iterative-deepening loop runs in Python so that a :class:`Info` can stream out after every iteration; each
iteration is one call of the jitted :func:`search.kernels.search` at the root, which releases the GIL. :meth:`Searcher.stop`
and the hard-deadline timer set a flag in a shared control array that every node polls.

>>> from engine import Position
>>> s = Searcher(hash_mb=1)
>>> r = s.search(Position.from_sfen("8k/6S2/7G1/9/9/9/9/9/4K4 b G 1"), Limits(depth=2))
>>> Position.startpos().move_usi(r.best), r.mate
('G*1b', 1)
"""
from __future__ import annotations

import threading
import time
from typing import Callable, Mapping

import numpy as np

from engine import Position
from engine.kernels.movegen import DROP, MAX_MOVES, PROMOTE
from eval import (DEFAULT_EVAL_MODE, EvalTables, build_eval_tables, evaluate, kp_eval_tables, threat_scratch,
                  threat_scratch_shape)
from eval.kp import KPWeights

from .kernels import (CHANCE_COLS, CHANCE_MAIN, CTL_BEST_MOVE, CTL_BEST_SCORE, CTL_CHANCE, CTL_CURRMOVE,
                      CTL_FEATURES, CTL_GEN, CTL_HORIZON, CTL_NODES, CTL_NODE_LIMIT, CTL_ROOT_N, CTL_SELDEPTH,
                      CTL_SIZE, CTL_STOP, EVAL_HASH_ENTRIES, FEAT_CHECK_PRUNE, FEAT_CONT_HIST, FEAT_CUT_NODE,
                      FEAT_HIST_LMR, FEAT_IIR, FEAT_IMPROVING, FEAT_LMR_CHECKS, FEAT_LMR_EVASIONS, FEAT_LMR_FUTILITY,
                      FEAT_MALUS_SEARCHED, FEAT_MATE1, FEAT_PROBCUT, FEAT_PV_CHECK_EXT, FEAT_QS_CHECKS,
                      FEAT_QS_EVASION_PRUNE, FEAT_QS_TT, FEAT_QUIET_PROMOTIONS, FEAT_RAZOR, FEAT_ROOT_LMR, FEAT_SEE,
                      FEAT_SINGULAR, FEAT_STAGED, FEAT_TT_EVAL, FEAT_WIDE_FUTILITY, FEAT_WIDE_LMR, INF, MATE,
                      MATE_BOUND, MAX_CHANCE_ROWS, MAX_DEPTH, MAX_PLY, MAX_QUIETS, SearchTables, hashfull)
from .kernels import chance_game, clear_chance, search as search_kernel
from .mate import DISPROVEN_ALL, MATE_MAX_PLY, UNKNOWN_PROOF, MateTables, mate_node
from .movepick import CONT_KINDS, MP_COLS
from .params import PARAM_INDEX, TUNE_LMR_BASE, TUNE_LMR_DIV, default_tune, lmr_table, tune_from
from .see import see_buffer
from .interface import Info, Limits, Result
from .smp import start_helpers, stop_helpers

__all__ = ["FEATURES", "Limits", "Info", "Result", "Searcher", "evaluate", "bench_positions", "MAX_DEPTH",
           "MATE", "MATE_BOUND"]

NO_LIMIT = 1 << 62
#: Search features by name (search.kernels.FEAT_*), each kept off by default until an SPRT against the engine
#: without it accepts it (bench/strength/shogi-sprt.tsv).
FEATURES: dict[str, int] = {"see": FEAT_SEE, "staged": FEAT_STAGED, "qstt": FEAT_QS_TT,
                             "pvcheckext": FEAT_PV_CHECK_EXT, "histlmr": FEAT_HIST_LMR, "iir": FEAT_IIR,
                             "widefutility": FEAT_WIDE_FUTILITY, "widelmr": FEAT_WIDE_LMR,
                             "improving": FEAT_IMPROVING, "conthist": FEAT_CONT_HIST,
                             "checkprune": FEAT_CHECK_PRUNE, "qschecks": FEAT_QS_CHECKS,
                             "qsevasions": FEAT_QS_EVASION_PRUNE, "cutnode": FEAT_CUT_NODE,
                             "lmrchecks": FEAT_LMR_CHECKS, "mate1": FEAT_MATE1,
                             "rootlmr": FEAT_ROOT_LMR, "razor": FEAT_RAZOR, "lmrfutility": FEAT_LMR_FUTILITY,
                             "singular": FEAT_SINGULAR, "probcut": FEAT_PROBCUT, "tteval": FEAT_TT_EVAL,
                             "quietpromotions": FEAT_QUIET_PROMOTIONS, "malussearched": FEAT_MALUS_SEARCHED,
                             "lmrevasions": FEAT_LMR_EVASIONS}
#: Each variant's default features: those an SPRT on that variant accepted (bench/strength/shogi-sprt.tsv). Dai
#: shogi keeps what it had until its own SPRT: a feature that helps 9x9 is not assumed to help 13x13.
VARIANT_DEFAULT_FEATURES: dict[str, int] = {
    # see: SPRT H1, +131 Elo at 10k nodes; pvcheckext + histlmr on top: SPRT H1, +59 Elo at 40k nodes;
    # checkprune + qstt on top: SPRT H1, +70 Elo at movetime 200 ms; rootlmr on top: SPRT H1, +54 Elo at 200 ms
    "shogi": FEAT_SEE | FEAT_PV_CHECK_EXT | FEAT_HIST_LMR | FEAT_CHECK_PRUNE | FEAT_QS_TT | FEAT_ROOT_LMR,
    "daishogi2017": FEAT_SEE,
}
DEFAULT_FEATURES = VARIANT_DEFAULT_FEATURES["shogi"]


def default_features(variant_id: str) -> int:
    """The features a search of ``variant_id`` uses unless told otherwise."""
    return VARIANT_DEFAULT_FEATURES.get(variant_id, DEFAULT_FEATURES)


def parse_features(text: str, variant_id: str = "shogi") -> int:
    """The feature bits a ``SearchFeatures`` option value names: ``default`` (the variant's), ``none``, or names
    joined by ``,`` or ``+`` (``see,staged``), each optionally prefixed ``-`` to take it off the default (``-see``);
    ``default`` among names starts from the default (``default+widelmr``, ``default,-see``). ValueError otherwise."""
    default = default_features(variant_id)
    words = [w.strip().lower() for w in str(text).replace("+", ",").split(",") if w.strip()]
    if not words or words == ["default"]:
        return default
    if words == ["none"]:
        return 0
    bits = default if "default" in words or all(w.startswith("-") for w in words) else 0
    for w in words:
        if w == "default":
            continue
        name = w.lstrip("-")
        if name not in FEATURES:
            raise ValueError(f"unknown search feature {name!r} (known: {', '.join(FEATURES)}; or default, none)")
        bits = bits & ~FEATURES[name] if w.startswith("-") else bits | FEATURES[name]
    return bits
TT_ENTRY_BYTES = 8 + 4 + 4 + 2 + 1 + 1
MATE_TT_ENTRIES = 1 << 18

# Benchmark positions (python -m bench search): opening, middlegames, endgames.
bench_positions: list[str] = [
    "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1",          # start position
    "lnsgkgsnl/1r7/p1ppp1bpp/1p3pp2/7P1/2P6/PP1PPPP1P/1B3S1R1/LNSGKG1NL b - 9",  # early opening
    "ln1gk2nl/1r1s2gb1/p1pppsppp/1p7/7P1/2P6/PPSPPPP1P/1B1G2SR1/LN2KG1NL b - 15",  # opening
    "ln5nl/1r1sk1g2/p1pgpsbp1/3p1pp1p/1p5P1/P1P1PPP1P/1PSPS1N2/2GK1G1R1/LN6L b Bp 1",  # middlegame
    "l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w RGgsn5p 1",  # sharp middlegame ("matsuri")
    "8l/1l+R2P3/p2pBG1pp/kps1p4/Nn1P2G2/P1P1P2PP/1PS6/1KSG3+r1/LN2+p3L w Sbgn3p 124",  # endgame
]


def split_score(v: int) -> tuple[int | None, int | None]:
    """Kernel score -> (score_cp, mate in plies signed, + when the side to move mates)."""
    if v > MATE_BOUND:
        return None, MATE - v
    if v < -MATE_BOUND:
        return None, -(MATE + v)
    return int(v), None


class Searcher:
    """A reusable searcher: owns the transposition table, history and every kernel buffer.

    One search at a time; :meth:`stop` and :meth:`update_limits` may be called from other threads.
    ``seed`` is accepted for API symmetry (the search is deterministic for a given node count).
    """

    def __init__(self, hash_mb: int = 16, seed: int = 0, features: int | None = None) -> None:
        self.seed = seed
        #: selectivity features (bit set of FEATURES' values) for the next searches, None: the searched variant's
        #: default (default_features); see docs/search.md
        self.features = None if features is None else int(features)
        #: evaluation for the next searches (eval.EVAL_MODES: "hand" or "learned"; the USI option EvalMode)
        self.eval_mode = DEFAULT_EVAL_MODE
        #: learned tables that replace a variant's shipped ones in ``learned`` mode, by variant id (the USI option
        #: EvalFile; eval.kp.load_weights_file reads them)
        self.eval_weights: dict[str, KPWeights] = {}
        self._eval_override: tuple[KPWeights, EvalTables] | None = None  # the tables last built from eval_weights
        #: how chance nodes are searched (search.kernels.CHANCE_*: main, the exact Star1, or ignored for a roll-blind
        #: search); only a variant with chance events has them (fantasista)
        self.chance_mode = CHANCE_MAIN
        #: search threads (the USI option Threads): 1 + the Lazy SMP helpers of search.smp
        self.threads = 1
        self._helpers: list = []  # the helpers of the running (or last) search: their node counts stay readable
        self._last_reported: int | None = None  # first move of the last info line of the running search
        if self.features is not None and self.features & ~sum(FEATURES.values()):
            raise ValueError(f"unknown search feature bits in {self.features} (known: {FEATURES})")
        self._ctl = np.zeros(CTL_SIZE, np.int64)
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._timer: threading.Timer | None = None
        self._t0 = time.perf_counter()
        self._soft_ms: int | None = None
        self._infinite = False
        self._depth = 0  # the iteration running (progress())
        self._moves = np.zeros((MAX_PLY + 1, MAX_MOVES), np.int32)
        self._mscore = np.zeros((MAX_PLY + 1, MAX_MOVES), np.int32)
        self._pv = np.zeros((MAX_PLY + 1, MAX_PLY + 1), np.int32)
        self._pv_len = np.zeros(MAX_PLY + 1, np.int32)
        self._killers = np.zeros((MAX_PLY + 1, 2), np.int32)
        self._history = np.zeros((64, 81), np.int32)
        self._root_moves = np.zeros(MAX_MOVES, np.int32)
        self._root_scores = np.zeros(MAX_MOVES, np.int32)
        self._param_values: dict[str, int] = {}  # set_params' values; the rest: the searched variant's defaults
        self._tune_variant = "shogi"  # the variant whose defaults self._tune holds
        self._tune = np.zeros(0, np.int32)  # no vector yet: _use_tune builds the first one and its LMR table
        self._use_tune(default_tune())
        self._see_buf = see_buffer()
        self._mp = np.zeros((MAX_PLY + 1, MP_COLS), np.int32)
        self._counter = np.zeros((64, 81), np.int32)
        self._quiets = np.zeros((MAX_PLY + 1, MAX_QUIETS), np.int32)
        self._sev = np.zeros((MAX_PLY + 1, 2), np.int32)
        self._excluded = np.zeros(MAX_PLY + 1, np.int32)
        self._chance = np.zeros((MAX_PLY + 1, CHANCE_COLS, MAX_CHANCE_ROWS), np.int64)
        self._kp_key = np.zeros(MAX_PLY + 1, np.uint64)  # the incrementally updated KP sums (cleared every search)
        self._kp_val = np.zeros(MAX_PLY + 1, np.int64)
        self._att = np.zeros((1, 1), np.int32)  # the evaluation's piece-walk scratch: sized to the board in _tables
        self._ev_key = np.zeros(EVAL_HASH_ENTRIES, np.uint64)  # the evaluation hash (cleared every search)
        self._ev_val = np.zeros(EVAL_HASH_ENTRIES, np.int32)
        self._cont = np.zeros((1, 1), np.int16)  # continuation history: sized in _tables when conthist is on
        self._mate_moves = np.zeros((MATE_MAX_PLY + 1, MAX_MOVES), np.int32)
        self._mate_key = np.zeros(MATE_TT_ENTRIES, np.uint64)
        self._mate_proof = np.full(MATE_TT_ENTRIES, UNKNOWN_PROOF, np.int8)
        self._mate_disproof = np.full(MATE_TT_ENTRIES, -1, np.int8)
        self.set_hash(hash_mb)

    # ------------------------------------------------------------ options
    def set_hash(self, mb: int) -> None:
        """Resize the transposition table to at most ``mb`` MiB (a power-of-two entry count; clears it)."""
        n = max(1024, int(max(mb, 1) * (1 << 20) // TT_ENTRY_BYTES))
        n = 1 << (n.bit_length() - 1)
        self._tt_key = np.zeros(n, np.uint64)
        self._tt_move = np.zeros(n, np.int32)
        self._tt_score = np.zeros(n, np.int32)
        self._tt_depth = np.zeros(n, np.int16)
        self._tt_bound = np.zeros(n, np.int8)
        self._tt_gen = np.zeros(n, np.uint8)

    def clear(self) -> None:
        """Forget everything learnt (``usinewgame``): TT, history, killers, mate table."""
        for a in (self._tt_key, self._tt_move, self._tt_score, self._tt_depth, self._tt_bound, self._tt_gen,
                  self._history, self._killers, self._counter, self._cont, self._mate_key):
            a.fill(0)
        self._mate_proof.fill(UNKNOWN_PROOF)
        self._mate_disproof.fill(-1)

    def warmup(self, variant: str = "shogi") -> None:
        """Compile (or load from the disk cache) every kernel a search of ``variant`` calls, by running tiny searches
        of one of its positions: numba compiles the kernels once per board layout, so dai shogi's 13x13 needs its
        own (warmed with shogi positions, its first ``go`` compiled for 3 minutes on a loaded machine)."""
        if variant == "shogi":
            pos = Position.from_sfen("ln1g1g1nl/1ks2r3/1pppp1bpp/p3spp2/9/P1P1SP1PP/1PSPP1P2/2G2R3/LNK2G1NL b Pp 1")
            mate = Position.from_sfen("8k/6S2/7G1/9/9/9/9/9/4K4 b G 1")
        else:  # the start: no check there, the mate search still loads its kernels
            pos = mate = Position.startpos(variant)
        self.search(pos, Limits(depth=3 if variant == "shogi" else 2))
        self.search(pos, Limits(depth=1, multipv=2), on_info=lambda info: None)  # info lines: the hashfull kernel
        self.mate_search(mate, max_nodes=10_000)
        evaluate(pos)
        self.clear()

    # ------------------------------------------------------ thread control
    def stop(self) -> None:
        """Make the running search return promptly with the best move found so far (thread-safe)."""
        self._ctl[CTL_STOP] = 1
        with self._lock:
            self._infinite = False
        self._wake.set()

    def update_limits(self, soft_ms: int | None, hard_ms: int | None) -> None:
        """New time limits counted from the start of the running search (``ponderhit``); ends infinite mode."""
        with self._lock:
            self._infinite = False
            self._soft_ms = soft_ms
            self._arm_timer(hard_ms)
        self._wake.set()

    def _nodes(self) -> int:
        """Nodes of the running (or last) search, the helper threads' included."""
        return int(self._ctl[CTL_NODES]) + sum(h.nodes for h in self._helpers)

    def _elapsed_ms(self) -> int:
        return int((time.perf_counter() - self._t0) * 1000)

    def progress(self) -> tuple[int, int, int, int, int]:
        """``(depth, seldepth, nodes, currmove, ms)`` of the running search, read from another thread while an
        iteration runs (the USI engine's once-a-second ``info`` line); ``currmove`` is the root move being searched
        (0 before the first one)."""
        ctl = self._ctl
        return (self._depth, int(ctl[CTL_SELDEPTH]), self._nodes(), int(ctl[CTL_CURRMOVE]),
                self._elapsed_ms())

    def _arm_timer(self, hard_ms: int | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if hard_ms is None:
            return
        left = hard_ms / 1000 - (time.perf_counter() - self._t0)
        if left <= 0:
            self._ctl[CTL_STOP] = 1
            return
        self._timer = threading.Timer(left, self._time_up)
        self._timer.daemon = True
        self._timer.start()

    def set_params(self, values: Mapping[str, int]) -> None:
        """Set the tunable search parameters (search/params.py; name -> value, as in the USI option SearchParams):
        the ones not named return to the searched variant's defaults. ValueError on an unknown name or a value out of
        range (nothing is changed then)."""
        self._use_tune(tune_from(values, self._tune_variant))
        self._param_values = dict(values)

    @property
    def params(self) -> dict[str, int]:
        """The tunable search parameters in use (by the last search's variant, shogi before the first), by name."""
        return {name: int(self._tune[i]) for name, i in PARAM_INDEX.items()}

    def _use_tune(self, tune: np.ndarray) -> None:
        if not np.array_equal(tune, self._tune):  # set before every search: rebuild the LMR table only on a change
            self._lmr = lmr_table(int(tune[TUNE_LMR_BASE]), int(tune[TUNE_LMR_DIV]))
            self._tune = tune

    def _time_up(self) -> None:
        self._ctl[CTL_STOP] = 1

    # ---------------------------------------------------------- internals
    def _tables(self, pos: Position) -> SearchTables:
        n_sq = pos.variant.geometry.n_squares
        width = pos.variant.max_moves  # the generator writes a position's whole list: fantasista's are the widest
        if self._moves.shape[1] != width:
            self._moves = np.zeros((MAX_PLY + 1, width), np.int32)
            self._mscore = np.zeros((MAX_PLY + 1, width), np.int32)
            self._root_moves = np.zeros(width, np.int32)
            self._root_scores = np.zeros(width, np.int32)
        if self._history.shape[1] != n_sq:
            self._history = np.zeros((64, n_sq), np.int32)
            self._counter = np.zeros((64, n_sq), np.int32)
        # 13.4 MB on 9x9, 58.5 MB on 13x13 (int16), shared by the Lazy SMP helpers; only when the feature is on
        k = CONT_KINDS * n_sq if self._ctl[CTL_FEATURES] & FEAT_CONT_HIST else 1
        if self._cont.shape[0] != k:
            self._cont = np.zeros((k, k), np.int16)
        checks = np.zeros(len(pos.state.keys), np.int8)
        checks[:len(pos._checks)] = pos._checks
        self._kp_key.fill(0)  # the KP sums and evaluations of the last search may come from other tables (EvalFile)
        self._ev_key.fill(0)
        if self._att.shape != threat_scratch_shape(pos.variant):
            self._att = threat_scratch(pos.variant)
        return self._build_tables(checks)

    def _build_tables(self, checks: np.ndarray) -> SearchTables:
        return SearchTables(
            ctl=self._ctl, moves=self._moves, mscore=self._mscore, pv=self._pv, pv_len=self._pv_len,
            killers=self._killers, history=self._history, checks=checks, root_moves=self._root_moves,
            root_scores=self._root_scores, lmr=self._lmr, tt_key=self._tt_key, tt_move=self._tt_move,
            tt_score=self._tt_score, tt_depth=self._tt_depth, tt_bound=self._tt_bound, tt_gen=self._tt_gen,
            see_buf=self._see_buf, mp=self._mp, counter=self._counter, quiets=self._quiets, tune=self._tune,
            sev=self._sev, cont=self._cont, excluded=self._excluded, kp_key=self._kp_key, kp_val=self._kp_val,
            att=self._att, ev_key=self._ev_key, ev_val=self._ev_val, chance=self._chance)

    @staticmethod
    def _prepare(pos: Position) -> Position:
        p = pos.copy()
        p._ensure_depth(MAX_PLY + 8)
        return p

    @staticmethod
    def _initial_order(p: Position, moves: list[int]) -> list[int]:
        """Captures (most valuable victim first) and promotions before quiet moves."""
        E = build_eval_tables(p.variant)
        board = p.state.board

        def key(m: int) -> int:
            if m & DROP:
                return 0
            v = int(E.value[board[m & 0xFF]])
            return -(v * 4 + (100 if m & PROMOTE else 0))
        return sorted(moves, key=key)

    def _pv_list(self, p: Position, best: int) -> list[int]:
        """The PV of the last root search, validated move by move (a safety net: it is built from legal moves)."""
        n = int(self._pv_len[0])
        raw = [int(x) for x in self._pv[0, :n]] if n > 0 and self._pv[0, 0] == best else [best]
        q = p.copy()
        out = []
        for m in raw:
            if m not in q.legal_codes().tolist():
                break
            out.append(m)
            q.push_unchecked(m)
        return out

    # -------------------------------------------------------------- search
    def search(self, pos: Position, limits: Limits,
               on_info: Callable[[Info], None] | None = None,
               on_start: Callable[[], None] | None = None) -> Result:
        """Search ``pos`` (left unchanged) within ``limits``; blocking. Calls ``on_info`` after each iteration
        (once per MultiPV line). With ``limits.infinite`` it returns only after :meth:`stop` or
        :meth:`update_limits`, even when the depth limit was reached first.

        A search starts by resetting the stop flag, the soft limit and the timer, so a :meth:`stop` or
        :meth:`update_limits` called before that is lost. ``on_start()`` is called right after the reset, before
        anything is searched: from then on both act on this search, and a caller that got a ``stop`` or
        ``ponderhit`` earlier applies it there (the USI loop does)."""
        ctl = self._ctl
        with self._lock:
            self._t0 = time.perf_counter()
            ctl[:] = 0
            self._helpers = []
            ctl[CTL_FEATURES] = (self.features if self.features is not None
                                 else default_features(pos.variant.id))
            ctl[CTL_CHANCE] = self.chance_mode
            self._tune_variant = pos.variant.id
            self._use_tune(tune_from(self._param_values, pos.variant.id))
            ctl[CTL_GEN] = self._gen_next()
            ctl[CTL_NODE_LIMIT] = limits.nodes if limits.nodes else NO_LIMIT
            self._wake.clear()
            self._infinite = limits.infinite
            # limits counted from an earlier origin (the go line's arrival) are moved to this search's start
            soft, hard = (None, None) if limits.infinite else limits.counted_from(self._t0)
            self._soft_ms = soft
            self._arm_timer(hard)
        try:
            if on_start is not None:
                on_start()
            return self._search(pos, limits, on_info)
        finally:
            with self._lock:
                if self._timer is not None:
                    self._timer.cancel()
                    self._timer = None

    def eval_tables(self, variant) -> EvalTables:
        """The evaluation tables of the next search: ``eval_weights``' tables for the variant in ``learned`` mode,
        otherwise the shipped ones of ``eval_mode`` (built once per weights object, not per search)."""
        weights = self.eval_weights.get(variant.id) if self.eval_mode == "learned" else None
        if weights is None:
            return build_eval_tables(variant, self.eval_mode)
        if self._eval_override is None or self._eval_override[0] is not weights:
            self._eval_override = (weights, kp_eval_tables(variant, *weights))
        return self._eval_override[1]

    def _gen_next(self) -> int:
        self._gen = (getattr(self, "_gen", 0) + 1) & 255
        return self._gen

    def _search(self, pos: Position, limits: Limits, on_info) -> Result:
        ctl = self._ctl
        p = self._prepare(pos)
        P, T, E = p.state, p.tables, self.eval_tables(p.variant)
        S = self._tables(p)
        legal_all = p.legal_codes().tolist()
        root = p.legal_codes("search").tolist()
        if limits.searchmoves:
            wanted = [int(m) for m in limits.searchmoves]
            root = [m for m in legal_all if m in wanted] or root
        if not root:
            self._wait_if_infinite()
            return Result(None, None, None, 0, 0, 0, [])
        root = self._initial_order(p, root)
        max_depth = min(limits.depth or MAX_DEPTH, MAX_DEPTH)
        timed = limits.soft_ms is not None or limits.hard_ms is not None
        if len(root) == 1 and timed and not limits.infinite:
            max_depth = 1  # a forced move: answer at once
        multipv = max(1, min(limits.multipv, len(root)))

        best, best_v, best_pv, done_depth = root[0], 0, [root[0]], 0
        self._last_reported = None
        helpers = []
        if self.threads > 1 and multipv == 1 and max_depth > 1:
            helpers = start_helpers(self.threads - 1, S, p, E, root, NO_LIMIT)
        self._helpers = helpers
        try:
            prev_v = 0
            for depth in range(1, max_depth + 1):
                self._depth = depth  # for progress()
                if multipv == 1:
                    lines = self._iterate_single(P, T, E, S, p, root, depth, prev_v, on_info)
                else:
                    lines = self._iterate_multi(P, T, E, S, p, root, depth, multipv)
                stopped = ctl[CTL_STOP] != 0
                if lines:
                    v, mv, pv = lines[0]
                    best, best_v, best_pv = mv, v, pv
                    root = [l[1] for l in lines] + [m for m in root if m not in {l[1] for l in lines}]
                    if not stopped:
                        done_depth = depth
                        prev_v = v
                        self._report(on_info, depth, lines)
                    elif mv != self._last_reported and multipv == 1:
                        # A stop in the middle of an iteration that had already found a best move (searched to this
                        # depth inside the window): it is the answer, so its line is the last one a GUI shows.
                        # Compared with the last line shown, not the last completed depth's move: an aspiration
                        # fail-high shows its move, and the re-search may then settle on another before the stop.
                        self._report(on_info, depth, lines)
                if stopped:
                    break
                with self._lock:  # update_limits may have ended infinite mode and set a soft limit
                    infinite, soft = self._infinite, self._soft_ms
                if not infinite:
                    if soft is not None and self._elapsed_ms() >= soft:
                        break
                    if abs(best_v) > MATE_BOUND and depth >= MATE - abs(best_v) + 2 and multipv == 1:
                        break  # a mate score that deeper search cannot shorten
        finally:
            stop_helpers(helpers)
        failed = [h.error for h in helpers if h.error is not None]
        if failed:
            raise RuntimeError(f"a search helper thread failed: {failed[0]!r}") from failed[0]
        self._wait_if_infinite()
        cp, mate = split_score(best_v)
        return Result(best=best, ponder=best_pv[1] if len(best_pv) > 1 else None, score_cp=cp, mate=mate,
                            depth=max(done_depth, 1 if best_pv else 0), nodes=self._nodes(), pv=best_pv)

    def _wait_if_infinite(self) -> None:
        while True:
            with self._lock:
                if not self._infinite or self._ctl[CTL_STOP]:
                    return
            self._wake.wait(0.05)

    def _root_call(self, P, T, E, S, moves: list[int], depth: int, alpha: int, beta: int) -> int:
        self._root_moves[:len(moves)] = moves
        self._ctl[CTL_ROOT_N] = len(moves)
        self._ctl[CTL_BEST_MOVE] = 0
        rolls = chance_game(T)
        if rolls is None:
            clear_chance(self._ctl)
        return int(search_kernel(P, T, E, S, alpha, beta, depth, 0, False, False, rolls))

    def _iterate_single(self, P, T, E, S, p, root, depth, prev_v, on_info):
        """One aspiration-window iteration; returns [(score, move, pv)] or [] if stopped before any result."""
        ctl = self._ctl
        delta = 35
        if depth >= 4 and abs(prev_v) < MATE_BOUND:
            alpha, beta = max(prev_v - delta, -INF), min(prev_v + delta, INF)
        else:
            alpha, beta = -INF, INF
        moves = list(root)
        result = []
        while True:
            v = self._root_call(P, T, E, S, moves, depth, alpha, beta)
            moves = [int(m) for m in self._root_moves[:len(moves)]]
            if ctl[CTL_BEST_MOVE] != 0:
                mv = int(ctl[CTL_BEST_MOVE])
                result = [(int(ctl[CTL_BEST_SCORE]), mv, self._pv_list(p, mv))]
            if ctl[CTL_STOP]:
                return result
            if v <= alpha:
                beta = (alpha + beta) // 2
                alpha = max(v - delta, -INF)
                self._report(on_info, depth, [(v, moves[0], [moves[0]])], bound="upperbound")
                result = []
            elif v >= beta:
                beta = min(v + delta, INF)
                self._report(on_info, depth, result, bound="lowerbound")
            else:
                return result
            delta *= 2
            if delta > 1500:
                alpha, beta = -INF, INF

    def _iterate_multi(self, P, T, E, S, p, root, depth, multipv):
        lines = []
        excluded: set[int] = set()
        for _ in range(multipv):
            moves = [m for m in root if m not in excluded]
            self._root_call(P, T, E, S, moves, depth, -INF, INF)
            mv = int(self._ctl[CTL_BEST_MOVE])
            if mv == 0:
                break
            lines.append((int(self._ctl[CTL_BEST_SCORE]), mv, self._pv_list(p, mv)))
            excluded.add(mv)
            if self._ctl[CTL_STOP]:
                break
        lines.sort(key=lambda l: -l[0])
        return lines

    def _report(self, on_info, depth: int, lines, bound: str | None = None) -> None:
        if on_info is None or not lines:
            return
        self._last_reported = lines[0][1]  # the first move of the last line a GUI shows
        t = max(self._elapsed_ms(), 0)
        nodes = self._nodes()
        S = self._tables_for_hashfull()
        hf = int(hashfull(S))
        for i, (v, mv, pv) in enumerate(lines):
            cp, mate = split_score(v)
            on_info(Info(depth=depth, seldepth=max(int(self._ctl[CTL_SELDEPTH]), depth), score_cp=cp,
                               mate=mate, nodes=nodes, nps=nodes * 1000 // max(t, 1), time_ms=t, hashfull=hf,
                               pv=list(pv), multipv=i + 1, bound=bound))

    def _tables_for_hashfull(self) -> SearchTables:
        return self._build_tables(np.zeros(1, np.int8))

    # ---------------------------------------------------------- mate search
    def mate_search(self, pos: Position, max_ms: int | None = None, max_nodes: int | None = None,
                    on_start: Callable[[], None] | None = None) -> tuple[str, list[int]]:
        """Checks-only mate search by iterative deepening over odd depths (1, 3, 5, ... plies).

        Returns ``('mate', line)`` with the shortest mate found (attacker's checks and the defender's longest
        resistance), ``('nomate', [])`` when no mate exists within the horizon of ``MATE_MAX_PLY`` plies (or at all,
        when the check tree was exhausted), ``('timeout', [])`` when time, nodes or :meth:`stop` ended it first.
        ``on_start()``: called once the stop flag and the timer are reset, as in :meth:`search`.
        """
        ctl = self._ctl
        with self._lock:
            self._t0 = time.perf_counter()
            ctl[:] = 0
            self._helpers = []
            ctl[CTL_NODE_LIMIT] = max_nodes if max_nodes else NO_LIMIT
            self._infinite = False
            self._arm_timer(max_ms)
        try:
            if on_start is not None:
                on_start()
            p = self._prepare(pos)
            M = self._mate_tables(p.variant.max_moves)
            for d in range(1, MATE_MAX_PLY, 2):
                h0 = int(ctl[CTL_HORIZON])
                found = mate_node(p.state, p.tables, M, d, 0, True)
                if ctl[CTL_STOP]:
                    return "timeout", []
                if found:
                    ctl[CTL_NODE_LIMIT] = NO_LIMIT
                    line = self._mate_line(p, d, M)
                    if ctl[CTL_STOP]:
                        return "timeout", []
                    return "mate", line
                if int(ctl[CTL_HORIZON]) == h0:
                    return "nomate", []
            return "nomate", []
        finally:
            with self._lock:
                if self._timer is not None:
                    self._timer.cancel()
                    self._timer = None

    def _mate_tables(self, width: int) -> MateTables:
        if self._mate_moves.shape[1] != width:  # a move list of the variant searched (Variant.max_moves)
            self._mate_moves = np.zeros((MATE_MAX_PLY + 1, width), np.int32)
        return MateTables(ctl=self._ctl, moves=self._mate_moves, tt_key=self._mate_key, proof=self._mate_proof,
                          disproof=self._mate_disproof)

    def _mate_line(self, p: Position, depth: int, M: MateTables) -> list[int]:
        """Walk a proven mate: the attacker picks the quickest mating check, the defender the longest defence."""
        line: list[int] = []
        r = depth
        while r >= 1:
            best, best_r = None, None
            for m in p.legal_codes("search").tolist():
                p.push_unchecked(m)
                if p.is_check():
                    for r2 in range(0, r, 2):
                        if mate_node(p.state, p.tables, M, r2, 1, False):
                            if best_r is None or r2 < best_r:
                                best, best_r = m, r2
                            break
                p.pop()
                if best_r == 0:
                    break
            if best is None or self._ctl[CTL_STOP]:
                break
            line.append(best)
            p.push_unchecked(best)
            evasions = p.legal_codes("search").tolist()
            if not evasions:
                break
            worst, worst_r = None, -1
            for e in evasions:
                p.push_unchecked(e)
                for r3 in range(1, best_r, 2):
                    if mate_node(p.state, p.tables, M, r3, 1, True):
                        if r3 > worst_r:
                            worst, worst_r = e, r3
                        break
                p.pop()
            if worst is None:
                break
            line.append(worst)
            p.push_unchecked(worst)
            r = worst_r
        return line
