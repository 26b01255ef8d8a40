"""Turn generation: the distinct end states of a turn of exactly N actions, each with one canonical action path.

The work is a breadth-first dynamic programme over turn-states (runner, square, facing, corner record, stomp used)
in :mod:`.kernels`; a throw that crosses several legs simply runs through relays inside it. Paths are stored as
back-pointers, so the cost is O(N x reachable states x actions) whatever the number of paths (which grows
exponentially with N).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import board as B
from . import kernels as K


@dataclass(frozen=True)
class TurnEnd:
    """One end state of a turn, in sente's frame: ``state`` is a runner state index or ``board.WIN``."""

    state: int
    path: tuple[tuple[int, int], ...]  # (turn-state before, action index), in order

    @property
    def won(self) -> bool:
        return self.state == B.WIN


class TurnGenerator:
    """Reusable scratch buffers for the turn kernels (one per thread)."""

    def __init__(self) -> None:
        size = B.N_STATES2 + 1
        self.mark = np.empty(size, dtype=np.int32)
        self.cur = np.empty(size, dtype=np.int32)
        self.nxt = np.empty(size, dtype=np.int32)
        self.ends = np.empty(size + 1, dtype=np.int32)
        self._parent = np.empty((1, size), dtype=np.int32)

    def _parents(self, n: int) -> np.ndarray:
        if self._parent.shape[0] < n + 1:
            self._parent = np.empty((n + 1, B.N_STATES2 + 1), dtype=np.int32)
        return self._parent

    def end_states(self, start: int, n: int, enemy_sq: int, enemy_rank: int) -> tuple[np.ndarray, int]:
        """(sorted end runner states, kwin): ``board.WIN`` is among them if the king can finish within n actions,
        kwin is the fewest actions that win (-1 if none). All in sente's frame; enemy_rank -1 disables stomps."""
        parent = self._parents(n)
        count, kwin = K.reach_paths(start * 2, n, enemy_sq, enemy_rank, B.TARGETS, B.N_TARGETS, parent, self.mark,
                                    self.cur, self.nxt, self.ends)
        ends2 = self.ends[:count]
        states = np.unique(np.where(ends2 == B.WIN2, B.WIN, ends2 >> 1))
        return states, kwin

    def path_to(self, start: int, n: int, enemy_sq: int, enemy_rank: int, end: int) -> TurnEnd:
        """The canonical path to one end state (as in :meth:`turn_ends`, without tracing all the others)."""
        parent = self._parents(n)
        count, kwin = K.reach_paths(start * 2, n, enemy_sq, enemy_rank, B.TARGETS, B.N_TARGETS, parent, self.mark,
                                    self.cur, self.nxt, self.ends)
        ends2 = sorted(int(x) for x in self.ends[:count])
        if end == B.WIN:
            if kwin < 0:
                raise ValueError("the win is out of reach")
            k, t = kwin, B.WIN2
        else:
            found = [t for t in ends2 if t != B.WIN2 and t >> 1 == end]
            if not found:
                raise ValueError(f"end state {end} is not reachable in {n} actions")
            k, t = n, found[0]
        buf = np.empty((max(k, 1), 2), dtype=np.int64)
        K.trace_path(parent, k, t, buf)
        return TurnEnd(end, tuple((int(buf[j, 0]), int(buf[j, 1])) for j in range(k)))

    def turn_ends(self, start: int, n: int, enemy_sq: int, enemy_rank: int) -> list[TurnEnd]:
        """Every distinct end state with its canonical path (the path to the stomp-unused copy is preferred when
        both copies of an end state are reachable: the stomp flag is forgotten at the end of the turn)."""
        parent = self._parents(n)
        count, kwin = K.reach_paths(start * 2, n, enemy_sq, enemy_rank, B.TARGETS, B.N_TARGETS, parent, self.mark,
                                    self.cur, self.nxt, self.ends)
        chosen: dict[int, tuple[int, int]] = {}
        for t in sorted(int(x) for x in self.ends[:count]):
            if t == B.WIN2:
                chosen[B.WIN] = (kwin, t)
            elif (t >> 1) not in chosen:
                chosen[t >> 1] = (n, t)
        out = []
        buf = np.empty((max(n, 1), 2), dtype=np.int64)
        for state in sorted(chosen):
            k, t = chosen[state]
            K.trace_path(parent, k, t, buf)
            out.append(TurnEnd(state, tuple((int(buf[j, 0]), int(buf[j, 1])) for j in range(k))))
        return out
