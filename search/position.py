"""The searcher of the games played as an :class:`engine.Position` (standard shogi, dai shogi) behind the
:class:`search.interface.GameSearcher` interface: the shared alpha-beta :class:`search.alphabeta.Searcher` with
the limits, the entering-king declaration, ``searchmoves`` and the mate search, answering in USI move tokens.
"""
from __future__ import annotations

import dataclasses
import threading
import time
from typing import Any, Callable

from .interface import Info, Limits, Result, pv_tokens
from .timeman import PLAIN_GO_MS


class PositionSearcher:
    """``searcher``: the alpha-beta searcher to drive (default: a new :class:`search.alphabeta.Searcher` of
    ``hash_mb``); its options (evaluation, features, parameters, threads) are set on it directly.
    ``entering_king``: the rule a ``win`` declaration is judged by (an :class:`engine.EnteringKingRule` value)."""

    def __init__(self, seed: int = 0, hash_mb: int = 16, variant: str = "shogi", searcher: Any = None,
                 entering_king: str = "CSARule27") -> None:
        if searcher is None:
            from .alphabeta import Searcher

            searcher = Searcher(hash_mb=hash_mb, seed=seed)
        self.variant = variant
        self.searcher = searcher
        self.entering_king = entering_king
        self._root: Any = None  # the position of the running think (for progress's currmove)
        self._root_codes: set[int] = set()

    def warmup(self) -> None:
        from .prefetch import helping  # (numba: not when the USI engine imports this module)

        with helping(self.variant, self.searcher):  # on a cold cache, a second core compiles a part
            self.searcher.warmup(self.variant)

    def clear(self) -> None:
        self.searcher.clear()

    def stop(self) -> None:
        self.searcher.stop()

    def progress(self) -> Info | None:
        """The running search's depth, seldepth, nodes and time, and the root move it searches (``pv[0]``)."""
        if not hasattr(self.searcher, "progress"):
            return None
        depth, seldepth, nodes, cur, ms = self.searcher.progress()
        root = self._root
        pv = [root.move_usi(cur)] if root is not None and cur in self._root_codes else []
        return Info(depth=max(depth, 1), seldepth=max(seldepth, depth, 1), nodes=nodes,
                    nps=nodes * 1000 // max(ms, 1), time_ms=ms, pv=pv)

    def think(self, pos: Any, limits: Limits, on_info: Callable[[Info], None]) -> Result:
        """The move for the side to move of ``pos``: ``win`` when it may declare, ``resign`` without a legal move.
        ``limits.searchmoves`` are move tokens (legal ones; the USI loop checked them). A plain ``go`` (no limit at
        all) searches :data:`~search.timeman.PLAIN_GO_MS`."""
        import engine

        codes = [int(c) for c in pos.legal_codes()]
        if not codes:
            return Result("resign")
        if pos.can_declare_win(engine.EnteringKingRule(self.entering_king)):
            return Result("win")
        core = dataclasses.replace(limits, searchmoves=None, on_budget=None)
        if limits.searchmoves:
            core.searchmoves = [int(pos.parse_move(t).code) for t in limits.searchmoves]
        if not (limits.unbounded or limits.timed or limits.depth or limits.nodes):
            core.soft_ms = core.hard_ms = PLAIN_GO_MS  # a plain go: nothing else would end it
            core.t0 = None
        searcher = self.searcher
        lock = threading.Lock()
        started: list[float] = []  # the instant the search began, once it has

        def apply_clock() -> None:
            """The limits' clock (a ponderhit's) in the running search's time base."""
            searcher.update_limits(*limits.counted_from(started[0]))

        def on_start() -> None:
            # The searcher has reset its stop flag and limits: a stop or a ponderhit that came before applies now.
            with lock:
                started.append(time.perf_counter())
                if limits.stop.is_set():
                    searcher.update_limits(0, None)  # stopped before it began: answer from depth 1
                elif limits.soft_ms is not None and limits.soft_ms != core.soft_ms:
                    apply_clock()

        def on_budget() -> None:
            with lock:
                if started and limits.soft_ms is not None:
                    apply_clock()

        def core_info(info: Info) -> None:
            on_info(dataclasses.replace(info, pv=pv_tokens(pos, info.pv)))

        self._root, self._root_codes = pos, set(codes)
        limits.on_budget = on_budget
        try:
            r = searcher.search(pos, core, core_info, on_start=on_start)
        finally:
            limits.on_budget = None
            self._root, self._root_codes = None, set()
        if r.best is None or r.best not in codes:
            best = pos.move_usi(r.best) if r.best is not None else None
            return Result(best or pos.move_usi(codes[0]), nodes=r.nodes)
        pv = pv_tokens(pos, r.pv) if r.pv and r.pv[0] == r.best else [pos.move_usi(r.best)]
        ponder = None
        if r.ponder is not None:
            pos.push_unchecked(r.best)
            if int(r.ponder) in {int(c) for c in pos.legal_codes()}:
                ponder = pos.move_usi(r.ponder)
            pos.pop()
        return Result(pv[0], ponder, r.score_cp, r.mate, r.depth, r.nodes, pv)

    def mate(self, pos: Any, limits: Limits) -> tuple[str, list[str]]:
        """``go mate``: ``('mate', line)``, ``('nomate', [])`` or ``('timeout', [])`` within ``limits`` (its hard
        limit and nodes; ``stop``)."""
        kind, moves = self.searcher.mate_search(
            pos, max_ms=limits.ms_left(limits.hard_ms), max_nodes=limits.nodes,
            on_start=lambda: limits.stop.is_set() and self.searcher.stop())
        return kind, pv_tokens(pos, moves) if kind == "mate" else []
