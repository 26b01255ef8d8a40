"""The one interface between the USI layer and every game's searcher: :class:`Limits` in, :class:`Info` lines out
while it thinks, one :class:`Result` at the end, and the :class:`GameSearcher` protocol each game's searcher follows.

Light on purpose (no numpy, no numba): the USI loop imports it before it answers ``usiok``.

Moves are in the searcher's own form: kernel move codes inside the shogi-family search (:mod:`search.alphabeta`),
action tokens (the strings of a USI ``position ... moves`` line) at the game interface (:class:`GameSearcher`).
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, runtime_checkable


@dataclass
class Limits:
    """What one search may spend, in milliseconds.

    ``soft_ms``: start no new iteration after it; ``hard_ms``: abort at it. Both count from ``t0`` (a
    ``time.perf_counter()`` instant: the USI loop sets the moment the ``go`` line arrived) or, when ``t0`` is
    ``None``, from the start of the search. ``infinite`` and ``ponder`` search until ``stop`` (a ``ponderhit`` may
    bring a clock: :meth:`set_budget`). ``stop`` is the flag a ``stop`` sets; a searcher reads it as it starts and
    while it runs, so a ``stop`` that came before the search began is not lost.
    """

    depth: int | None = None
    nodes: int | None = None
    soft_ms: int | None = None
    hard_ms: int | None = None
    multipv: int = 1
    searchmoves: list[Any] | None = None
    infinite: bool = False
    ponder: bool = False
    t0: float | None = None
    stop: threading.Event = field(default_factory=threading.Event, repr=False, compare=False)
    #: called after :meth:`set_budget`, for a searcher whose running search must be told the new limits
    on_budget: Callable[[], None] | None = field(default=None, repr=False, compare=False)

    def origin(self) -> float:
        """The instant the limits count from (``t0``; set to now on first use when it was ``None``)."""
        if self.t0 is None:
            self.t0 = time.perf_counter()
        return self.t0

    def set_budget(self, soft_ms: int, hard_ms: int, now: float | None = None) -> None:
        """A clock that starts ``now`` (a ``ponderhit``): the search may go on ``soft_ms`` / ``hard_ms`` from then.
        The hard limit is stored first, as a searcher takes ``soft_ms`` as the sign of a clock; then
        :attr:`on_budget` tells a running search."""
        now = time.perf_counter() if now is None else now
        since = int((now - self.origin()) * 1000)
        self.ponder = False
        self.hard_ms = since + hard_ms
        self.soft_ms = since + soft_ms
        hook = self.on_budget
        if hook is not None:
            hook()

    @property
    def timed(self) -> bool:
        """A clock applies (a soft limit is set)."""
        return self.soft_ms is not None

    @property
    def unbounded(self) -> bool:
        """``go infinite`` or ``go ponder``: only ``stop`` (or a ``ponderhit``) ends it."""
        return self.infinite or self.ponder

    def elapsed_ms(self) -> int:
        """ms since :meth:`origin`."""
        return int((time.perf_counter() - self.origin()) * 1000)

    def counted_from(self, instant: float) -> tuple[int | None, int | None]:
        """The soft and hard limits as ms from ``instant`` (a search's own start) rather than from ``t0``; a limit
        already passed becomes 0 (soft: no new iteration) or 1 (hard). Without ``t0`` they count from the start."""
        late = 0 if self.t0 is None else int((instant - self.t0) * 1000)
        return (None if self.soft_ms is None else max(0, self.soft_ms - late),
                None if self.hard_ms is None else max(1, self.hard_ms - late))

    def ms_left(self, limit_ms: int | None) -> int | None:
        """``limit_ms`` (soft or hard) as ms from now, at least 1; ``None`` for no limit."""
        return None if limit_ms is None else max(1, limit_ms - self.elapsed_ms())

    def soft_left_s(self) -> float | None:
        """Seconds to the soft limit (0 once passed), ``None`` without one."""
        return None if self.soft_ms is None else max(0.0, (self.soft_ms - self.elapsed_ms()) / 1000)

    def soft_passed(self) -> bool:
        return self.stop.is_set() or (self.soft_ms is not None and self.elapsed_ms() >= self.soft_ms)

    def hard_passed(self) -> bool:
        return self.stop.is_set() or (self.hard_ms is not None and self.elapsed_ms() >= self.hard_ms)

    def open_ended(self) -> bool:
        """Nothing but ``stop`` ends the search (no depth, nodes or clock; infinite or ponder)."""
        return self.unbounded and self.depth is None and self.nodes is None and self.soft_ms is None


@dataclass
class Info:
    """One progress line of a search (one per MultiPV line of an iteration). ``hashfull`` is ``None`` for a searcher
    without a transposition table to report; ``string``: free text shown after the line (a win probability)."""

    depth: int
    seldepth: int = 0
    score_cp: int | None = None
    mate: int | None = None
    nodes: int = 0
    nps: int = 0
    time_ms: int = 0
    hashfull: int | None = None
    pv: list[Any] = field(default_factory=list)
    multipv: int = 1
    bound: str | None = None
    string: str | None = None


@dataclass
class Result:
    """What a search answers: the best move, the expected reply (``ponder``), its score (``mate``: plies, + when
    the side to move mates), the depth completed, the nodes searched and the principal variation."""

    best: Any
    ponder: Any = None
    score_cp: int | None = None
    mate: int | None = None
    depth: int = 0
    nodes: int = 0
    pv: list[Any] = field(default_factory=list)


@runtime_checkable
class GameSearcher(Protocol):
    """A game's searcher as the USI loop drives it (one per variant, built by :func:`search.registry.make_searcher`
    with the engine's option getter and seed). ``think`` runs on the search thread; ``stop`` and ``progress`` are
    called from others."""

    variant: str

    def warmup(self) -> None:
        """Compile and build what the first search needs (``isready``)."""

    def clear(self) -> None:
        """A new game (``usinewgame``)."""

    def stop(self) -> None:
        """End the running ``think`` promptly with the best answer so far."""

    def progress(self) -> Info | None:
        """The running ``think`` so far, read from another thread: nodes, and where the searcher knows them the depth
        (0: not by depth), seldepth, ms and the root move being searched (``pv[0]``); ``None``: not counted."""

    def think(self, state: Any, limits: Limits, on_info: Callable[[Info], None]) -> Result:
        """The action token the side to move of ``state`` (a decision node) plays, within ``limits``."""


def pv_tokens(pos: Any, codes: list[int]) -> list[str]:
    """Kernel move codes of a line from ``pos`` as USI move tokens (``pos`` is left unchanged). The line ends
    before a move without a token (fantasista's past a roll the search did not play)."""
    p, tokens = pos.copy(), []
    for code in codes:
        token = p.move_usi(int(code))
        if token is None:
            break
        tokens.append(token)
        p.push_unchecked(int(code))
    return tokens
