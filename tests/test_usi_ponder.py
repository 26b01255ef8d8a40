"""``ponderhit`` and ``stop`` that reach the engine before its search thread has started (issue 48).

A GUI that gets an instant reply sends ``go ponder`` and ``ponderhit`` in one write; the reader handles both before
the search thread has run a line. The search resets its stop flag, soft limit and timer as it starts, so whatever the
reader did to them before was lost: the engine answered only at ``stop`` (no clock) or at the hard limit (a clock).
Every variant, with the real searchers, in-process and once in a subprocess.
"""
from __future__ import annotations

import subprocess
import sys
import threading
import time

import pytest

from engine import Position
from search import Limits, Searcher
from usi.engine import UsiEngine
from search.timeman import Clock, allocate

from tests.test_usi_subprocess import READY_TIMEOUT, REPO, engine_env
from tests.usi_helpers import Sink

#: A decision node of each variant (the side to move has an action to choose).
DECISION = {
    "shogi": "position startpos",
    "daishogi2017": "position startpos",
    "fantasista": "position startpos",
    "turncoat": "position startpos moves plan:8b plan:2h",
    "mawarikudoi": "position startpos moves throw=uudd",
    "enokian": "position startpos moves card=KS",
}
VARIANTS = tuple(DECISION)
#: Longer than any answer may take once ponderhit or stop is in (a hang guard, not a speed limit).
ANSWER_TIMEOUT = 20.0
#: A clock whose soft limit is far below its hard one (ms from the ponderhit, with NetworkDelay 120).
CLOCK = "btime 20000 wtime 20000"


@pytest.fixture(scope="module", params=VARIANTS)
def engine(request):
    out = Sink()
    eng = UsiEngine(out=out)
    for line in (f"setoption name USI_Variant value {request.param}", "isready", DECISION[request.param]):
        eng.handle(line)
    assert "readyok" in out.lines
    yield request.param, eng, out
    eng.handle("quit")


def _go_then(eng: UsiEngine, out: Sink, go: str, then: str) -> tuple[int, float]:
    """``go`` and ``then`` handled back to back, as the reader does with two lines of one read."""
    start = len(out.lines)
    eng.handle(go)
    t = time.perf_counter()
    eng.handle(then)
    return start, t


def _answered_alone(eng: UsiEngine, out: Sink, start: int, what: str) -> tuple[float, str]:
    got = out.wait_bestmove(start, ANSWER_TIMEOUT)
    if got is None:
        eng.handle("stop")  # end the search so that the next test starts clean; the test has failed anyway
        pytest.fail(f"{what}: no bestmove within {ANSWER_TIMEOUT} s (only stop would have ended the search)")
    eng._finish_search()
    assert len(out.bestmoves(start)) == 1, out.lines[start:]
    return got


def test_ponderhit_right_after_go_ponder_answers_without_stop(engine):
    variant, eng, out = engine
    for i in range(20):
        start, _ = _go_then(eng, out, "go ponder", "ponderhit")
        _, line = _answered_alone(eng, out, start, f"{variant} run {i}")
        assert line.split()[1] != "resign", line


def test_stop_right_after_go_answers_once(engine):
    variant, eng, out = engine
    for go in ("go infinite", "go ponder", "go ponder " + CLOCK):
        for i in range(5):
            start, _ = _go_then(eng, out, go, "stop")
            t, line = _answered_alone(eng, out, start, f"{variant} {go!r} run {i}")
            assert line.split()[1] != "resign", line


def test_ponderhit_right_after_go_ponder_keeps_the_soft_limit(engine):
    variant, eng, out = engine
    budget = allocate(Clock(btime=20_000, wtime=20_000), 0, 0, network_delay=eng.opt("NetworkDelay"))
    assert budget.soft_ms * 3 < budget.hard_ms
    after_hit = []
    for i in range(3):
        start, t_hit = _go_then(eng, out, f"go ponder {CLOCK}", "ponderhit")
        t, line = _answered_alone(eng, out, start, f"{variant} run {i}")
        after_hit.append(round((t - t_hit) * 1000))
    # The hard limit counts from the ponderhit; a lost soft limit answers only there (+ the safety timer), every
    # time. The median, not each run: on a loaded machine one iteration begun before the soft limit may run long.
    assert sorted(after_hit)[1] < budget.hard_ms, (variant, after_hit, budget)


def test_searcher_applies_what_on_start_does():
    """Searcher.search calls on_start after resetting its flags: a stop or new limits given there hold."""
    s = Searcher(hash_mb=1)
    pos = Position.startpos()
    r = s.search(pos, Limits(), on_start=s.stop)  # no limit at all: only the stop ends it
    assert r.best is not None and pos.is_legal(pos.move_usi(r.best))
    t0 = time.perf_counter()
    r = s.search(pos, Limits(infinite=True), on_start=lambda: s.update_limits(0, 60_000))
    assert time.perf_counter() - t0 < ANSWER_TIMEOUT and r.depth == 1  # soft 0: no iteration after the first


def test_ponderhit_in_the_same_write_in_a_subprocess():
    """The issue's pipeline: both lines in one write, stop only seconds later."""
    proc = subprocess.Popen([sys.executable, "-m", "usi"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=engine_env(), cwd=REPO)
    lines: list[tuple[float, str]] = []
    ready = threading.Event()

    def read() -> None:
        for line in proc.stdout:
            lines.append((time.monotonic(), line.strip()))
            if line.strip() == "readyok":
                ready.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        proc.stdin.write("usi\nisready\n")
        proc.stdin.flush()
        assert ready.wait(READY_TIMEOUT)
        proc.stdin.write("position startpos\ngo ponder\nponderhit\n")
        proc.stdin.flush()
        t0 = time.monotonic()
        while time.monotonic() - t0 < ANSWER_TIMEOUT and not any(l.startswith("bestmove") for _, l in lines):
            time.sleep(0.02)
        answered = [l for _, l in lines if l.startswith("bestmove")]
        proc.stdin.write("stop\nquit\n")
        proc.stdin.flush()
        assert proc.wait(timeout=30) == 0
        reader.join(10)
        assert len(answered) == 1, lines[-5:]
        assert sum(l.startswith("bestmove") for _, l in lines) == 1  # and no second one at stop
        assert proc.stderr.read() == ""
    finally:
        if proc.poll() is None:
            proc.kill()
