"""The searchers of the games played as an :class:`engine.game.GameState` (fantasista, turncoat, mawarikudoi,
enokian), each behind the :class:`search.interface.GameSearcher` interface: one :class:`~search.interface.Limits`
in, :class:`~search.interface.Info` lines out, a :class:`~search.interface.Result` whose moves are action tokens.

Each wraps its game's engine (:mod:`search.fantasista_shared`, :mod:`search.turncoat`, :mod:`search.mawarikudoi`,
:mod:`search.enokian`); :func:`search.registry.make_searcher` builds them. The limits of one ``go`` exist before its
search thread starts and the USI loop's ``stop`` and ``ponderhit`` change them (``limits.stop``, the soft and hard
limits, ``ponder``): a searcher reads them as it starts and while it searches, so that neither is lost however early
it comes. ``stop()`` may be called from another thread to interrupt a running search promptly; ``think`` then
returns soon with the best answer found so far (each finishes at least its first, cheap iteration).
"""
from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable

from .interface import Info, Limits, Result, pv_tokens
from .timeman import PLAIN_GO_MS


def winprob_cp(p: float) -> int:
    """A win probability as a symmetric centipawn-like score for two-player games (±1000 at certainty)."""
    return int(round(2000 * (min(1.0, max(0.0, p)) - 0.5)))


class _GameSearcher:
    """Base: ``think`` must be overridden; ``stop`` sets the flag of the running search's limits. Every searcher is
    built as ``cls(seed, hash_mb, **settings)``; ``hash_mb`` sizes a transposition table where the engine has one
    sized by it (turncoat's), and is ignored elsewhere."""

    variant = ""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self._limits: Limits | None = None

    def warmup(self) -> None:
        """Compile / build tables (called on ``isready``)."""

    def clear(self) -> None:
        """A new game (``usinewgame``)."""

    def stop(self) -> None:
        if self._limits is not None:
            self._limits.stop.set()

    def progress(self) -> Info | None:
        """The running ``think`` so far (nodes searched), read from another thread (the USI engine's progress line
        during a long iteration), or ``None`` when the engine does not count them as it goes."""
        return None

    def think(self, state: Any, limits: Limits, on_info: Callable[[Info], None]) -> Result:
        """The action token the side to move of ``state`` plays within ``limits`` (``GameSearcher.think``)."""
        raise NotImplementedError


class FantasistaGameSearcher(_GameSearcher):
    """Fantasista's decisions by the shared alpha-beta / expectimax search: turns and magic targets by
    :class:`search.position.PositionSearcher` over :class:`search.fantasista_shared.FxPosition`, the pre-game choice
    by :func:`search.fantasista_shared.pregame_worths`. ``hash_mb`` sizes its table; ``chance``: how a roll is
    valued (:data:`CHANCE_SEARCHES`); ``chance_aware`` false is the roll-blind baseline; ``search_features``,
    ``search_params``, ``eval_mode``, ``threads``: the USI options SearchFeatures, SearchParams, EvalMode
    (``learned`` reads ``eval/weights/kp_fantasista.npz``, derived from shogi's tables by :mod:`train.derive`) and
    Threads (the main search and ``threads - 1`` Lazy SMP helpers, as shogi's)."""

    variant = "fantasista"
    #: how the search values a roll: "main" (the most probable result searched, the others by their static
    #: difference from it; the default, by SPRT: bench/strength/fantasista-sprt.tsv) or "star1" (the exact
    #: expectation over every result, Star1-pruned)
    CHANCE_SEARCHES = ("main", "star1")

    def __init__(self, seed: int = 0, hash_mb: int = 16, chance: str = "main", chance_aware: bool = True,
                 search_features: str = "default", search_params: str = "default",
                 eval_mode: str | None = None, threads: int = 1) -> None:
        super().__init__(seed)
        from eval import DEFAULT_EVAL_MODE, EVAL_MODES

        from .alphabeta import Searcher, parse_features
        from .kernels import CHANCE_BLIND, CHANCE_MAIN, CHANCE_STAR1
        from .params import parse_params
        from .position import PositionSearcher

        if chance not in self.CHANCE_SEARCHES:
            raise ValueError(f"unknown chance search {chance!r} (one of {', '.join(self.CHANCE_SEARCHES)})")
        eval_mode = eval_mode or DEFAULT_EVAL_MODE
        if eval_mode not in EVAL_MODES:
            raise ValueError(f"unknown evaluation mode {eval_mode!r} (one of {', '.join(EVAL_MODES)})")
        searcher = Searcher(hash_mb=hash_mb, seed=seed, features=parse_features(search_features, self.variant))
        searcher.set_params(parse_params(search_params))
        searcher.eval_mode = eval_mode
        searcher.chance_mode = (CHANCE_BLIND if not chance_aware else CHANCE_MAIN if chance == "main"
                                else CHANCE_STAR1)
        searcher.threads = threads
        self.kernel_searcher = PositionSearcher(seed, hash_mb, "fantasista", searcher)

    def clear(self) -> None:
        self.kernel_searcher.clear()

    def stop(self) -> None:
        super().stop()
        self.kernel_searcher.stop()

    def progress(self) -> Info | None:
        return self.kernel_searcher.progress()

    def warmup(self) -> None:
        from engine.variants.fantasista import new_game

        from .prefetch import helping

        # a short search compiles the kernel (and the game layer's generator, which names the moves); on a cold
        # cache a second core compiles a part
        with helping("fantasista", self.kernel_searcher.searcher):
            self.think(new_game(), Limits(depth=2), lambda info: None)
        self.kernel_searcher.clear()

    def think(self, state: Any, limits: Limits, on_info: Callable[[Info], None]) -> Result:
        """The pre-game choice (the magic worth most), a magic target or a turn (the search within ``limits``; a
        plain ``go``: its plain time)."""
        from .fantasista_shared import FxPosition

        self._limits = limits
        if state.pregame_side() is not None:
            from engine.variants.fantasista.variant import FANTASISTA

            from .fantasista_shared import pregame_worths

            token, worth = pregame_worths(state, self.kernel_searcher.searcher.eval_tables(FANTASISTA))[0]
            on_info(Info(depth=0, time_ms=limits.elapsed_ms(), score_cp=worth, pv=[token]))
            return Result(token, score_cp=worth)
        r = self.kernel_searcher.think(FxPosition.from_game(state), limits, on_info)
        if r.best is None or r.best == "resign":  # no legal turn, or one the game layer does not list
            acts = state.legal_actions()
            return Result(acts[0] if acts else None)
        return r


class TurncoatGameSearcher(_GameSearcher):
    """``search.turncoat.TurncoatEngine`` over the shared shogi searcher (``hash_mb`` sizes its table), with the
    limits as one :class:`Limits` counted from the decision's start: the soft and hard limits, depth, nodes,
    ``go infinite`` / ``go ponder`` (a ``ponderhit`` brings the clock to the running search). Its belief over the
    enemy's plan is kept between decisions of one game. Its secret choices (the plan, the enemy plans sampled) come
    from ``seed``: 0 means unset and draws them from OS entropy afresh for every game (a fixed default would name the
    same plan every game); any other value makes them reproducible."""

    variant = "turncoat"

    def __init__(self, seed: int = 0, hash_mb: int = 16) -> None:
        super().__init__(seed)
        from .alphabeta import Searcher

        self.searcher = Searcher(hash_mb=hash_mb)
        self.clear()

    def clear(self) -> None:
        from .turncoat import TurncoatEngine

        self.searcher.clear()
        self.engine = TurncoatEngine(seed=self.seed or None, searcher=self.searcher)  # None: OS entropy

    def warmup(self) -> None:
        self.searcher.warmup("shogi")

    def stop(self) -> None:
        super().stop()
        self.engine.stop()

    def progress(self) -> Info | None:
        nodes = self.engine.progress()
        return None if nodes is None else Info(depth=0, nodes=nodes)

    def think(self, state: Any, limits: Limits, on_info: Callable[[Info], None]) -> Result:
        """A plan, a move or a declaration: the turncoat engine's decision within ``limits``."""
        from .kernels import MATE_BOUND

        self._limits = limits
        start = time.perf_counter()
        late = int((start - limits.origin()) * 1000)

        def from_start(limit_ms: int | None) -> int | None:
            return None if limit_ms is None else max(1, limit_ms - late)

        if limits.stop.is_set():  # stop (or a ponderhit without a clock) before the search began
            decision_limits = Limits(depth=1)
        else:
            decision_limits = Limits(depth=limits.depth, nodes=limits.nodes, soft_ms=from_start(limits.soft_ms),
                                     hard_ms=from_start(limits.hard_ms),
                                     infinite=limits.unbounded and not limits.timed)
            if not (decision_limits.infinite or limits.timed or limits.depth or limits.nodes):
                decision_limits.soft_ms = decision_limits.hard_ms = PLAIN_GO_MS  # a plain go: nothing else ends it
        # a ponderhit gives the running decision its clock
        limits.on_budget = lambda: self.engine.update_limits(from_start(limits.soft_ms), from_start(limits.hard_ms))
        shown: list = [None]

        def main_info(info: Info) -> None:
            shown[0] = tokens = pv_tokens(state.pos, info.pv)
            on_info(dataclasses.replace(info, pv=tokens))

        try:
            # a stop that came after the check above, before the decision reset its flag, is applied as it starts
            token = self.engine.choose(state, decision_limits, main_info,
                                       on_start=lambda: limits.stop.is_set() and self.engine.stop())
        finally:
            limits.on_budget = None
        d = self.engine.last
        mate = (1 if d.score > 0 else -1) if abs(d.score) > MATE_BOUND else None
        cp = None if mate is not None else d.score
        if not shown[0] or shown[0][0] != token:
            # the token is not the main search's last line (a plan, a declaration, a move the plan terms chose)
            if token.startswith("plan"):
                on_info(Info(depth=0, time_ms=limits.elapsed_ms(), pv=[token]))
                return Result(token)
            on_info(Info(depth=max(d.depth, 1), time_ms=limits.elapsed_ms(), nodes=d.nodes, score_cp=cp, mate=mate,
                         pv=[token]))
        return Result(token, score_cp=cp, mate=mate, depth=max(d.depth, 1), nodes=d.nodes, pv=[token])


class MawarikudoiGameSearcher(_GameSearcher):
    """``search.mawarikudoi.Engine``: candidates from an expectimax step with race-table leaves, decided by 1,500
    simulated games each (a few hundredths of a second a decision; no iterations). ``probabilities``: the throw
    face probabilities of ``ThrowProbabilities`` (the state's own are used when they differ). Reports ``score cp``
    (2000 × (winprob − ½)) and ``string winprob`` (the simulated win rate)."""

    variant = "mawarikudoi"

    def __init__(self, seed: int = 0, hash_mb: int = 16, **probabilities: float) -> None:
        super().__init__(seed)
        from engine.variants.mawarikudoi import ThrowProbabilities

        from .mawarikudoi import Engine

        self.probs = ThrowProbabilities(**probabilities)
        self.engine = Engine(self.probs, seed=seed)

    def warmup(self) -> None:
        from engine.variants.mawarikudoi import new_game

        g = new_game(probs=self.probs)
        # the likeliest throw: a short turn loads the same kernels as any (the first listed, 0 up, is a turn of
        # hundreds of actions whose search took 1.4 s of a 5 s warm isready)
        g.apply(max(g.chance_events(), key=lambda e: e[1])[0])
        self.engine.search(g)

    def think(self, state: Any, limits: Limits, on_info: Callable[[Info], None]) -> Result:
        """The turn or throw choice of one expectimax step with simulations (``limits`` only timestamp it)."""
        self._limits = limits
        if state.probs != self.probs:
            from .mawarikudoi import Engine

            self.probs, self.engine = state.probs, Engine(state.probs, seed=self.seed)
        r = self.engine.search(state)
        cp = winprob_cp(r.winprob)
        on_info(Info(depth=1, time_ms=limits.elapsed_ms(), score_cp=cp, string=f"winprob {r.winprob:.3f}"))
        return Result(r.action, score_cp=cp, depth=1)


class EnokianGameSearcher(_GameSearcher):
    """``search.enokian.EnokianSearch``: iterative-deepening expectimax over the deck; ``stop`` aborts the kernel.
    Plain ``go`` without limits searches :data:`DEFAULT_TIME_S`. Reports ``score cp`` (1000 × winprob) and
    ``string winprob``. ``michizane``: the rule option the warm-up's game is dealt with."""

    variant = "enokian"
    DEFAULT_TIME_S = 1.0

    def __init__(self, seed: int = 0, hash_mb: int = 16, michizane: str = "1a") -> None:
        super().__init__(seed)
        from .enokian import EnokianSearch

        self.michizane = michizane
        self.searcher = EnokianSearch(seed=seed)

    def clear(self) -> None:
        self.searcher.clear()

    def warmup(self) -> None:
        from engine.variants.enokian import new_game

        g = new_game(michizane=self.michizane)
        g.apply(g.chance_events()[0][0])
        while g.node_kind().value == "chance":
            g.apply(g.chance_events()[0][0])
        self.searcher.search(g, depth=1)
        self.searcher.clear()

    def stop(self) -> None:
        super().stop()
        self.searcher.stop()

    def think(self, state: Any, limits: Limits, on_info: Callable[[Info], None]) -> Result:
        """The player's move: iterative-deepening expectimax within ``limits``."""
        self._limits = limits
        t_start = time.perf_counter()
        late_s = t_start - limits.origin()

        def on_iteration(r):
            on_info(Info(depth=r.depth, time_ms=limits.elapsed_ms(), nodes=r.nodes,
                         nps=int(r.nodes / max(r.seconds, 1e-3)), score_cp=int(round(1000 * r.winprob)), pv=[r.best],
                         string=f"winprob {r.winprob:.3f}"))

        def max_time() -> float | None:
            """Seconds the search may take, read before each iteration (a ponderhit may bring a clock)."""
            if limits.soft_ms is not None:
                return limits.soft_ms / 1000 - late_s
            if limits.unbounded or limits.depth is not None or limits.nodes is not None:
                return None
            return self.DEFAULT_TIME_S

        # stop (or a ponderhit without a clock) before the search began: the one iteration that always completes
        depth = 1 if limits.stop.is_set() else limits.depth
        r = self.searcher.search(state, depth=depth, max_time=max_time, max_nodes=limits.nodes,
                                 on_iteration=on_iteration, should_stop=limits.soft_passed)
        return Result(r.best, score_cp=int(round(1000 * r.winprob)), depth=r.depth, nodes=r.nodes, pv=[r.best])
