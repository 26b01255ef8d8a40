"""Default limits and depths that answer (issue 48): the GUI's default engine limit answers in about a second in
every variant, and enokian's ``go depth N`` searches N of the player's decisions, answering at small N and honouring
``stop`` and time limits while it searches (each depth multiplies the work by the player's moves times the draw's
outcomes, a few thousand early in a game: depth 3 from the opening takes about an hour)."""
from __future__ import annotations

import threading
import time

import pytest

from gui.engines import BUILTIN
from gui.session import DEFAULT_MOVETIME_MS, PlayerSpec
from usi.engine import UsiEngine

from tests.test_enokian_search import LATE, game_decisions
from tests.test_usi_ponder import DECISION, VARIANTS

#: A hang guard, far above what any answer below takes.
GUARD_S = 60.0


class Sink:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self._cond = threading.Condition()
        self._buf = ""

    def write(self, text: str) -> None:
        with self._cond:
            self._buf += text
            *done, self._buf = self._buf.split("\n")
            self.lines.extend(done)
            self._cond.notify_all()

    def flush(self) -> None:
        pass

    def bestmove(self, start: int, timeout: float) -> str | None:
        end = time.monotonic() + timeout
        with self._cond:
            while True:
                found = [line for line in self.lines[start:] if line.startswith("bestmove")]
                if found:
                    return found[0]
                if time.monotonic() >= end:
                    return None
                self._cond.wait(end - time.monotonic())


def _engine(variant: str) -> tuple[UsiEngine, Sink]:
    out = Sink()
    eng = UsiEngine(out=out)
    for line in (f"setoption name USI_Variant value {variant}", "isready"):
        eng.handle(line)
    return eng, out


def _go(eng: UsiEngine, out: Sink, go: str, stop_after: float | None = None) -> tuple[str, float, list[str]]:
    """``go``; then ``stop`` after ``stop_after`` s if given. The bestmove, the seconds it took, the lines."""
    start = len(out.lines)
    t0 = time.perf_counter()
    eng.handle(go)
    if stop_after is not None:
        time.sleep(stop_after)
        eng.handle("stop")
    best = out.bestmove(start, GUARD_S)
    took = time.perf_counter() - t0
    if best is None:
        eng.handle("stop")
        pytest.fail(f"{go!r}: no bestmove within {GUARD_S} s")
    eng._finish_search()
    return best, took, out.lines[start:]


# ------------------------------------------------------------------------------------------------ the GUI
def test_gui_default_limit_is_a_time():
    spec = PlayerSpec.parse("engine", {BUILTIN: ["python", "-m", "usi"]})
    assert (spec.depth, spec.movetime, spec.nodes) == (None, DEFAULT_MOVETIME_MS, None)
    assert DEFAULT_MOVETIME_MS <= 2000  # "about a second"


@pytest.mark.parametrize("variant", VARIANTS)
def test_gui_default_limit_answers_in_every_variant(variant):
    eng, out = _engine(variant)
    eng.handle(DECISION[variant])
    legal = None if variant in ("shogi", "daishogi2017") else eng.game.legal_actions()
    best, took, lines = _go(eng, out, f"go movetime {DEFAULT_MOVETIME_MS}")
    assert took < 10 * DEFAULT_MOVETIME_MS / 1000, (variant, took)  # generous: a hang guard, not a speed limit
    if legal is not None:
        assert best.split()[1] in legal
    eng.handle("quit")


# ------------------------------------------------------------------------------------------------ enokian depth
def enokian_decisions(n: int, seed: int = 1) -> list[str]:
    """SFENs of the first ``n`` decision nodes of a seeded game (the engine plays depth 1)."""
    return game_decisions(n, seed)


def _depths(lines: list[str]) -> list[int]:
    return [int(line.split()[2]) for line in lines if line.startswith("info depth ")]


def test_enokian_go_depth_1_answers_at_depth_1_from_decision_positions():
    eng, out = _engine("enokian")
    for sfen in enokian_decisions(7):
        eng.handle(f"position sfen {sfen}")
        legal = eng.game.legal_actions()
        best, _, lines = _go(eng, out, "go depth 1")
        assert best.split()[1] in legal and _depths(lines) == [1], lines
    eng.handle("quit")


def test_enokian_go_depth_2_searches_two_decisions():
    """Depth 2 from the first decision of a game (15 M nodes, under a second) and late in a game: two decisions
    deep, each draw expanded."""
    eng, out = _engine("enokian")
    for sfen in (enokian_decisions(1)[0], LATE):
        eng.handle(f"position sfen {sfen}")
        legal = eng.game.legal_actions()
        best, _, lines = _go(eng, out, "go depth 2")
        assert best.split()[1] in legal and _depths(lines) == [1, 2], lines
    eng.handle("quit")


def test_enokian_go_depth_3_answers_late_in_a_game():
    """Depth 3 where it is affordable (9 M nodes late in a game): three decisions, an info line for each depth."""
    eng, out = _engine("enokian")
    eng.handle(f"position sfen {LATE}")
    legal = eng.game.legal_actions()
    best, _, lines = _go(eng, out, "go depth 3")
    assert best.split()[1] in legal and _depths(lines) == [1, 2, 3], lines
    eng.handle("quit")


@pytest.mark.slow
def test_enokian_go_depth_2_answers_from_opening_decision_positions():
    """Depth 2 from the first seven decisions of a game: 15-40 M nodes, 0.5-1.7 s each on the shared machine."""
    eng, out = _engine("enokian")
    for sfen in enokian_decisions(7):
        eng.handle(f"position sfen {sfen}")
        best, _, lines = _go(eng, out, "go depth 2")
        assert _depths(lines) == [1, 2], lines
    eng.handle("quit")


def test_enokian_go_depth_3_obeys_stop_and_time_limits():
    """Depth 3 from the opening is out of reach (about an hour): stop after 0.5 s answers at once with the deepest
    finished iteration, and a time limit beside the depth ends the search by itself."""
    eng, out = _engine("enokian")
    first = enokian_decisions(1)[0]
    eng.handle(f"position sfen {first}")
    legal = eng.game.legal_actions()
    t_stop = time.perf_counter() + 0.5
    best, took, lines = _go(eng, out, "go depth 3", stop_after=0.5)
    assert time.perf_counter() - t_stop < 5.0, took  # answered promptly after the stop (a hang guard)
    assert best.split()[1] in legal and _depths(lines)[:1] == [1]
    best, took, lines = _go(eng, out, "go depth 3 movetime 500")
    assert took < 5.0 and best.split()[1] in legal, (took, lines)
    eng.handle("quit")
