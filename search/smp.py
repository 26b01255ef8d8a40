"""Lazy SMP: helper threads that search the same root into the shared transposition table.

With ``Searcher.threads = n`` the main thread runs the usual iterative deepening (its iterations, aspiration windows,
time checks and ``info`` lines are unchanged) while ``n - 1`` helper threads search the same root moves, each with
its own kernel buffers (move lists, PV, killers, history, counter-moves, the position's state) and the main
thread's table. The kernels are ``nogil``, so the threads run in parallel; helpers help only through the table (their
cutoffs, scores and best moves shorten the main thread's search) and their results are otherwise ignored, which is
the "lazy" in the name (YaneuraOu and Stockfish do the same). Helpers with an odd index start one ply deeper, so the
threads are not all in the same iteration at once.

Races: table entries are written without locks, so a reader may see the key of one entry with the move or score of
another. The move is only an ordering hint among generated legal moves (the staged picker's TT-move stage checks
pseudo-legality first), so a torn entry can cost a wrong cutoff, never a corrupted board.
"""
from __future__ import annotations

import threading

import numpy as np

from engine import Position

from .kernels import (CTL_BEST_MOVE, CTL_CHANCE, CTL_FEATURES, CTL_GEN, CTL_NODE_LIMIT, CTL_NODES, CTL_ROOT_N, CTL_STOP, INF,
                      MAX_DEPTH)
from .kernels import SearchTables
from .kernels import chance_game, clear_chance, search as search_kernel

#: Per-thread buffers of SearchTables (everything else is shared: the table, the LMR table, the parameters).
_PER_THREAD = ("ctl", "moves", "mscore", "pv", "pv_len", "killers", "history", "checks", "root_moves", "root_scores",
               "see_buf", "mp", "counter", "quiets", "sev", "excluded", "kp_key", "kp_val", "att",
               "ev_key", "ev_val", "chance")


class Helper:
    """One helper thread of a search: started by :meth:`start`, ended by :meth:`stop` (sets its stop flag, joins)."""

    def __init__(self, index: int, main: SearchTables, pos: Position, E, root: list[int], no_limit: int) -> None:
        self.index = index
        self.pos = pos.copy()
        self.S = main._replace(**{name: np.zeros_like(getattr(main, name)) for name in _PER_THREAD})
        self.S.checks[:] = main.checks
        self.S.ctl[CTL_FEATURES] = main.ctl[CTL_FEATURES]
        self.S.ctl[CTL_CHANCE] = main.ctl[CTL_CHANCE]
        self.S.ctl[CTL_GEN] = main.ctl[CTL_GEN]
        self.S.ctl[CTL_NODE_LIMIT] = no_limit  # helpers run until the main thread stops them
        self.E = E
        self.root = np.asarray(root, np.int32)
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=f"search-helper-{index}", daemon=True)

    @property
    def nodes(self) -> int:
        return int(self.S.ctl[CTL_NODES])

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self.S.ctl[CTL_STOP] = 1
        self._thread.join()

    def _run(self) -> None:
        S, P, T = self.S, self.pos.state, self.pos.tables
        n = len(self.root)
        S.root_moves[:n] = self.root
        S.ctl[CTL_ROOT_N] = n
        rolls = chance_game(T)
        if rolls is None:
            clear_chance(S.ctl)
        try:
            for depth in range(1 + self.index % 2, MAX_DEPTH + 1):
                S.ctl[CTL_BEST_MOVE] = 0
                search_kernel(P, T, self.E, S, -INF, INF, depth, 0, False, False, rolls)  # root moves best first
                if S.ctl[CTL_STOP]:
                    break
        except BaseException as exc:  # reported by the owner; a helper must never take the process down
            self.error = exc


def start_helpers(count: int, main: SearchTables, pos: Position, E, root: list[int], no_limit: int) -> list[Helper]:
    """Start ``count`` helpers on the prepared position ``pos`` (``main``: the main thread's tables of this search;
    ``no_limit``: the node count that means "no limit")."""
    helpers = [Helper(i + 1, main, pos, E, root, no_limit) for i in range(count)]
    for h in helpers:
        h.start()
    return helpers


def stop_helpers(helpers: list[Helper]) -> None:
    for h in helpers:
        h.stop()
