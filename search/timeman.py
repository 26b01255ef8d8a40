"""Time management: turn a USI ``go`` clock into soft and hard search limits.

The search takes two numbers, both in milliseconds from the start of the search:

- ``soft``: do not start another iteration after this (the planned thinking time);
- ``hard``: abort the search at this point, whatever it is doing (never lose on time).

The clock of a USI ``go`` can be

- sudden death: ``btime``/``wtime`` only (``btime`` is *sente's* clock, ``wtime`` gote's);
- byoyomi: ``byoyomi <ms>`` per move once the main time (possibly 0) is used up;
- Fischer: ``binc``/``winc`` added to a side's clock after each of its moves;
- fixed time per move: ``movetime <ms>``.

Every budget is reduced by an *overhead*: the ``NetworkDelay`` option (the time the GUI or a server charges us
for the transport) plus :data:`SAFETY_MS` for the Python side (thread hand-over, the last iteration's unwinding,
printing ``bestmove``).

>>> tm = allocate(Clock(byoyomi=10_000), side=0, network_delay=120)
>>> tm.soft_ms <= tm.hard_ms <= 10_000 - 120
True
>>> allocate(Clock(), side=0) is None          # no clock at all: search until depth/nodes/stop
True
"""
from __future__ import annotations

from dataclasses import dataclass

#: A plain ``go`` (no clock, depth, nodes, ``infinite``, ``ponder`` or ``mate``, and no ``DepthLimit`` /
#: ``NodesLimit``): shogi, dai shogi and turncoat search this long (ms); the other variants' searchers have their own
#: defaults.
PLAIN_GO_MS = 1000

#: Margin for the Python side on top of ``NetworkDelay``, in ms.
SAFETY_MS = 60
#: Never give the search less than this (an answer at depth 1 is better than a loss on time).
MIN_MS = 5
#: The fixed cost of one move beyond the search itself (process hand-over, I/O, the referee or GUI reading the
#: answer): 10-25 ms measured here on a loaded 2-core machine. The overhead above is taken once from each budget;
#: this one is reserved from a sudden-death or Fischer bank for every move still to come, else a short clock in a
#: long game drains to it and is lost on time (as Stockfish's ``Move Overhead`` times the moves to go).
MOVE_COST_MS = 15
#: The game length the sudden-death reserve plans for, in plies (a long shogi game; few end later).
HORIZON_PLY = 240


@dataclass
class Clock:
    """The clock part of a USI ``go`` command (all in ms; ``None`` = not given)."""

    btime: int | None = None
    wtime: int | None = None
    byoyomi: int | None = None
    binc: int | None = None
    winc: int | None = None
    movetime: int | None = None

    def has_clock(self) -> bool:
        return any(x is not None for x in (self.btime, self.wtime, self.byoyomi, self.binc, self.winc,
                                           self.movetime))


@dataclass
class TimeBudget:
    """Soft and hard limits in ms from the start of the search."""

    soft_ms: int
    hard_ms: int


def moves_to_go(ply: int) -> int:
    """How many more moves of ours to budget for, by game ply (about 120 plies in a typical shogi game;
    never fewer than 20 so that a long game does not burn the clock)."""
    return max(20, 50 - ply // 4)


def moves_left(ply: int) -> int:
    """How many more moves of ours to reserve :data:`MOVE_COST_MS` for: up to :data:`HORIZON_PLY`, and never fewer
    than :func:`moves_to_go`."""
    return max(moves_to_go(ply), (HORIZON_PLY - ply) // 2)


def allocate(clock: Clock, side: int, ply: int = 0, network_delay: int = 0,
             safety_ms: int = SAFETY_MS) -> TimeBudget | None:
    """Soft and hard limits for the side to move ``side`` (0 = sente, uses ``btime``/``binc``; 1 = gote).

    Returns ``None`` when the ``go`` command carries no clock at all.

    >>> b = allocate(Clock(btime=60_000, wtime=1_000), side=0)     # our clock is btime
    >>> b.soft_ms > 1_000
    True
    >>> allocate(Clock(movetime=1_000), side=1, network_delay=100)
    TimeBudget(soft_ms=840, hard_ms=840)
    """
    if not clock.has_clock():
        return None
    overhead = max(0, network_delay) + max(0, safety_ms)

    if clock.movetime is not None:
        t = max(MIN_MS, clock.movetime - overhead)
        return TimeBudget(t, t)

    main = clock.btime if side == 0 else clock.wtime
    inc = clock.binc if side == 0 else clock.winc
    main = max(0, main or 0)
    inc = max(0, inc or 0)
    byo = max(0, clock.byoyomi or 0)

    # Time we may spend on this move at most: all the main time and all of the byoyomi, less the overhead.
    # Any byoyomi needs the overhead taken off it only once (it is per move).
    usable_main = max(0, main - overhead) if byo == 0 else main
    byo_avail = max(0, byo - overhead) if byo else 0
    if byo and main < overhead:
        # Hardly any main time left: the byoyomi pays the overhead.
        byo_avail = max(0, main + byo - overhead)
        usable_main = 0

    mtg = moves_to_go(ply)
    if not byo:
        # Sudden death and Fischer: keep each coming move's fixed cost out of the bank (an increment pays for it
        # first); byoyomi pays it on every move instead.
        usable_main = max(0, usable_main - max(0, MOVE_COST_MS - inc) * moves_left(ply))
        inc = max(0, inc - MOVE_COST_MS)
    share = usable_main / mtg

    if byo:
        # Byoyomi cannot be saved: all of it goes to every move (an iteration begun late and stopped at the hard
        # limit still answers with the best move it has found), plus a share of the main time.
        soft = share + byo_avail
        hard = min(usable_main, max(4 * share, usable_main // 8)) + byo_avail
    elif inc:
        # Fischer: spending about the increment keeps the clock steady; never spend most of the bank.
        soft = min(share + 0.9 * inc, 0.5 * usable_main)
        hard = min(max(3 * soft, share + inc), 0.75 * usable_main)
    else:
        # Sudden death.
        soft = min(share, 0.4 * usable_main)
        hard = min(4 * share, 0.6 * usable_main) if usable_main > 0 else 0

    hard = max(MIN_MS, int(hard))
    soft = max(MIN_MS, min(int(soft), hard))
    return TimeBudget(soft, hard)
