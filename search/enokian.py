"""Expectimax for Enokian shogi: maximise the player's win probability over the remaining deck.

The player knows the draw pile as a multiset (never its order), so every draw is a chance node over the cards left.
Cards are grouped by effect (27 classes, see :mod:`engine.variants.enokian.kernels`): a number card by rank and axis,
J and Q of a suit together, all tens together. The tree alternates the player's decisions (max) and a round's draw
(expectation) over its distinct outcomes: a ten or court card, a number card spent on one, or a pair of number cards
(drawn in either order: one outcome, since the same state follows), at most ``kernels.MAX_OUTCOMES`` (342).

A depth counts the player's decisions, each followed by the draw after it: depth N is the exact expectimax of N
decisions and N draws with the static evaluation (or with ``leaf='rollout'`` the mean of Monte Carlo rollouts played
by a one-ply greedy policy) at the decision after the last draw. Once the depth exceeds the cards left the tree
reaches the end of the game everywhere and the value is exact. The last draw is evaluated board by board (the
outcomes that leave one board share its reading), which gives the same values as card by card. Values are memoised
in a transposition table keyed on the board, the headings, the class counts of the deck and the pending card.

Scores: 1 for a win by survival, ``1 + SUBDUE_BONUS`` for a win by subduing Michizane (the tie-break), 0 for a loss;
so a score is the win probability to within ``SUBDUE_BONUS``.

>>> from engine.variants.enokian import EnokianState
>>> r = EnokianSearch().search(EnokianState.from_sfen(
...     "9/9/9/9/+r3K3k/9/9/9/9 b - 1 SxCeHxDx/-/K/-/-/-"))
>>> r.best, r.exact, round(r.winprob, 3)     # step off the dragon's rank before the last card (KC)
('5e4d', True, 1.0)
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from engine.game import NodeKind
from engine.variants.enokian import kernels as K
from engine.variants.enokian.state import EnokianState, move_name

STACK_ROWS = 180  # > plies of a whole game (52 draws + 52 decisions) + 2 rows of scratch + 2 rollout rows
MAX_MOVES = 128
LEAF_MODES = {"static": 0, "rollout": 1}
STOP_POLL_S = 0.005  # how often a search polls its ``should_stop`` while a kernel runs


@dataclass
class EnokianResult:
    """One iteration's answer with the expectimax details (``search.games.EnokianGameSearcher`` turns it into a
    ``search.Result``)."""

    best: str  # the chosen action token ('' at chance and terminal nodes)
    score: float  # expectimax score of the best action (win probability + subdue tie-break)
    depth: int  # player decisions searched
    exact: bool  # the tree reached the end of the game everywhere
    nodes: int
    seconds: float
    values: dict[str, float] = field(default_factory=dict)  # score of every legal action

    @property
    def winprob(self) -> float:
        return min(1.0, self.score)


class EnokianSearch:
    """An expectimax searcher with its own transposition table (``2**tt_bits`` entries, kept between searches)."""

    def __init__(self, tt_bits: int = 20, params: np.ndarray | None = None, seed: int = 0):
        self.params = (K.EVAL_PARAMS if params is None else np.asarray(params, dtype=np.float64)).copy()
        self.zob = K.make_zobrist()
        self.tt_key = np.zeros(1 << tt_bits, dtype=np.uint64)
        self.tt_val = np.zeros(1 << tt_bits, dtype=np.float64)
        self.tt_depth = np.full(1 << tt_bits, -1, dtype=np.int32)
        self.stack = np.zeros((STACK_ROWS, K.SEARCH_LEN), dtype=np.int32)
        self.moves = np.zeros((STACK_ROWS, MAX_MOVES), dtype=np.int32)
        self.tgt = np.zeros(4, dtype=np.int32)
        self.deckbuf = np.zeros(64, dtype=np.int32)
        self.frames = np.zeros((STACK_ROWS, K.FRAME_INTS), dtype=np.int64)
        self.fvals = np.zeros((STACK_ROWS, 2), dtype=np.float64)
        self.fkeys = np.zeros(STACK_ROWS, dtype=np.uint64)
        self.work = np.zeros(K.SEARCH_LEN, dtype=np.int32)
        self.counters = np.zeros(2, dtype=np.int64)
        self.oa = np.zeros((STACK_ROWS, K.MAX_OUTCOMES), dtype=np.int32)  # draw outcomes per ply
        self.ob = np.zeros((STACK_ROWS, K.MAX_OUTCOMES), dtype=np.int32)
        self.op = np.zeros((STACK_ROWS, K.MAX_OUTCOMES), dtype=np.float64)
        self.feat = np.zeros((2, K.SF_LEN), dtype=np.int32)
        self.out_moves = np.zeros(MAX_MOVES, dtype=np.int32)
        self.out_vals = np.zeros(MAX_MOVES, dtype=np.float64)
        K.seed_rng(seed)

    def clear(self) -> None:
        """Forget the transposition table (needed only if the evaluation parameters change)."""
        self.tt_depth[:] = -1
        self.tt_key[:] = 0

    # ------------------------------------------------------------------ values
    def value(self, state: EnokianState, depth: int = 1000, leaf: str = "static", rollouts: int = 8) -> float:
        """Expectimax score of any node (chance, decision or terminal) searching ``depth`` decisions."""
        s = state.s[:K.SEARCH_LEN].copy()
        return float(K.expectimax(s, depth, self.stack, self.moves, self.frames, self.fvals, self.fkeys, self.tgt,
                                  self.tt_key, self.tt_val, self.tt_depth, self.zob, self.params, self.counters,
                                  LEAF_MODES[leaf], rollouts, self.deckbuf, self.oa, self.ob, self.op, self.feat))

    def _root(self, s: np.ndarray, depth: int, leaf: int, rollouts: int) -> int:
        """Value of every move at decision node ``s`` into ``out_vals`` (``depth`` counts the root decision); the
        number of moves, or -1 when the search was aborted. A loop in Python: a kernel of its own would add the
        whole search to the cold compile once more, for ~20 calls."""
        nm = int(K.gen_moves(s, self.out_moves))
        for i in range(nm):
            self.work[:] = s
            K.do_move(self.work, int(self.out_moves[i]))  # an int64, as the rules layer calls it (one compile)
            v = K.expectimax(self.work, depth - 1, self.stack, self.moves, self.frames, self.fvals, self.fkeys,
                             self.tgt, self.tt_key, self.tt_val, self.tt_depth, self.zob, self.params, self.counters,
                             leaf, rollouts, self.deckbuf, self.oa, self.ob, self.op, self.feat)
            if v < 0.0:
                return -1  # aborted
            self.out_vals[i] = v
        return nm

    def stop(self) -> None:
        """Abort a running search from another thread (the kernel polls this; the last finished iteration counts)."""
        self.counters[1] = 1

    def search(self, state: EnokianState, depth: int | None = None,
               max_time: float | Callable[[], float | None] | None = None,
               max_nodes: int | None = None, leaf: str = "static", rollouts: int = 8,
               on_iteration=None, should_stop: Callable[[], bool] | None = None) -> EnokianResult:
        """Choose the player's action at a decision node.

        Iterative deepening from one decision up to ``depth`` (default: until exact), until ``max_time`` seconds
        would be exceeded by the next iteration (its cost is predicted from the last ones), or until ``max_nodes``
        nodes (an iteration that hits the limit is discarded). Depth 1 is always completed, and is what
        :meth:`stop` leaves if it comes earlier. ``on_iteration(result)`` is called after every iteration (the USI
        loop prints ``info`` there).

        ``max_time`` may be a function, read after every iteration (the USI loop's ``ponderhit`` brings a clock
        to a running search). ``should_stop()`` is polled every :data:`STOP_POLL_S` while an iteration runs, and
        before every iteration after the first: once true the running iteration is aborted and no other starts.
        Unlike :meth:`stop`, whose flag the search resets as it starts, it holds for a request (``stop``, a deadline)
        that came before the search began.
        """
        if leaf not in LEAF_MODES:
            raise ValueError(f"leaf must be one of {sorted(LEAF_MODES)}")
        if state.node_kind() is not NodeKind.DECISION:
            score = self.value(state, depth if depth is not None else 1, leaf, rollouts)
            return EnokianResult("", score, depth or 1, False, int(self.counters[0]), 0.0)
        s = state.s[:K.SEARCH_LEN].copy()
        t0 = time.perf_counter()
        self.counters[:] = 0
        n_cards = int(s[K.O_NCARDS])
        limit = depth if depth is not None else n_cards + 1
        watch_done = threading.Event()
        watcher = None
        if should_stop is not None:
            def watch() -> None:
                while not watch_done.wait(STOP_POLL_S):
                    if should_stop():
                        self.stop()
                        return

            watcher = threading.Thread(target=watch, name="enokian-stop-watch", daemon=True)
            watcher.start()
        try:
            return self._deepen(state, s, t0, n_cards, limit, max_time, max_nodes, leaf, rollouts, on_iteration,
                                should_stop)
        finally:
            watch_done.set()
            if watcher is not None:
                watcher.join()  # no stop() of this search may land in the next one

    def _deepen(self, state, s, t0, n_cards, limit, max_time, max_nodes, leaf, rollouts, on_iteration,
                should_stop) -> EnokianResult:
        """The iterations of :meth:`search`."""
        total_nodes = 0
        result = None
        last, prev = 0.0, 0.0
        d = 1
        while True:
            t_it = time.perf_counter()
            self.counters[0] = 0
            if d > 1 and max_nodes is not None:
                self.counters[1] = max(1, max_nodes - total_nodes)
            # after the counters are written: a stop() that comes later aborts the kernel, an earlier one is seen here
            if d > 1 and should_stop is not None and should_stop():
                break
            nm = self._root(s, d, LEAF_MODES[leaf], rollouts)
            while nm < 0 and result is None:  # stopped during depth 1 (a few ms): finish it anyway, however often
                self.counters[:] = 0          # stopped (the USI loop's safety net stops again every 0.5 s)
                nm = self._root(s, d, LEAF_MODES[leaf], rollouts)
            spent = time.perf_counter() - t_it
            total_nodes += int(self.counters[0])
            if nm < 0:  # aborted: keep the previous iteration
                break
            exact = d > n_cards
            if nm == 0:
                result = EnokianResult("pass", 0.0, d, exact, 0, 0.0)
                result.score = self.value(_after(state, "pass"), max(d - 1, 0), leaf, rollouts)
                result.values = {"pass": result.score}
            else:
                vals = self.out_vals[:nm]
                order = np.argsort(-vals, kind="stable")
                result = EnokianResult(move_name(int(self.out_moves[order[0]])), float(vals[order[0]]), d, exact, 0,
                                      0.0, {move_name(int(self.out_moves[i])): float(vals[i]) for i in order})
            result.nodes = total_nodes
            result.seconds = time.perf_counter() - t0
            if on_iteration is not None:
                on_iteration(result)
            if exact or d >= limit:
                break
            budget = max_time() if callable(max_time) else max_time
            if budget is not None:
                # a first iteration's leaves each grow a tree about as big as half the whole first iteration
                growth = spent / prev if prev > 0 else max(30.0, result.nodes / 2)
                if result.seconds + spent * max(growth, 2.0) > budget:
                    break
            prev, last = spent, spent
            d += 1
        return result

    def best_action(self, state: EnokianState, **kw) -> str:
        return self.search(state, **kw).best


def _after(state: EnokianState, token: str) -> EnokianState:
    g = state.copy()
    g.apply(token)
    return g


__all__ = ["EnokianSearch", "EnokianResult"]
