"""Helpers for tests that drive ``usi.engine.UsiEngine`` in-process."""
from __future__ import annotations

import threading
import time
from typing import Callable, Optional


class Sink:
    """A thread-safe stdout stand-in for the engine: keeps every line (``lines``) with the ``time.perf_counter()``
    at which it arrived (``times``), and lets a test wait for a line."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.times: list[float] = []
        self._buf = ""
        self._cond = threading.Condition()

    def write(self, text: str) -> int:
        """Keep each complete line of ``text``; a partial line waits for the rest."""
        with self._cond:
            self._buf += text
            *done, self._buf = self._buf.split("\n")
            now = time.perf_counter()
            self.lines.extend(done)
            self.times.extend(now for _ in done)
            self._cond.notify_all()
        return len(text)

    def flush(self) -> None:
        """Nothing to do: lines are kept as they are written."""

    def _wait(self, found: Callable[[str], bool], start: int, timeout: float) -> Optional[int]:
        """The index of the first line at ``start`` or after for which ``found`` holds, or None after ``timeout`` s."""
        end = time.monotonic() + timeout
        with self._cond:
            while True:
                for i in range(start, len(self.lines)):
                    if found(self.lines[i]):
                        return i
                left = end - time.monotonic()
                if left <= 0:
                    return None
                self._cond.wait(left)

    def wait_for(self, prefix: str, start: int = 0, timeout: float = 10.0) -> tuple[int, str]:
        """The first line at index >= ``start`` beginning with ``prefix`` (index, line); fails after ``timeout`` s."""
        i = self._wait(lambda line: line.startswith(prefix), start, timeout)
        if i is None:
            raise AssertionError(f"no line starting with {prefix!r} in {self.lines[start:]}")
        return i, self.lines[i]

    def bestmoves(self, start: int = 0) -> list[tuple[float, str]]:
        """The ``bestmove`` lines at index >= ``start``, each with the time it arrived."""
        with self._cond:
            return [(t, line) for t, line in zip(self.times[start:], self.lines[start:]) if line.startswith("bestmove")]

    def wait_bestmove(self, start: int, timeout: float) -> Optional[tuple[float, str]]:
        """The first ``bestmove`` line at index >= ``start`` with the time it arrived, or None after ``timeout`` s."""
        i = self._wait(lambda line: line.startswith("bestmove"), start, timeout)
        return None if i is None else (self.times[i], self.lines[i])
