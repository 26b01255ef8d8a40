"""The shared test helpers do what the process and USI tests rely on: ``gone`` and ``running`` tell a zombie apart,
and ``Sink`` joins partial writes and finds lines."""
from __future__ import annotations

import subprocess
import sys
import time

import pytest

from .proc_helpers import gone, running, stubborn_cmd, wait_not_running, wrapped_stubborn_cmd
from .usi_helpers import Sink


def test_gone_and_running_tell_a_zombie_apart():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 30  # a hang guard
    while running(proc.pid):
        assert time.monotonic() < deadline, "the child never exited"
        time.sleep(0.02)
    assert not gone(proc.pid)  # exited, not yet reaped: a zombie
    proc.wait()
    assert gone(proc.pid) and not running(proc.pid)


def test_wait_not_running_kills_what_still_runs():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert running(proc.pid)
        assert wait_not_running([proc.pid], timeout=0.1) == [proc.pid]
        assert proc.wait(timeout=10) < 0  # killed by the helper
    finally:
        proc.kill()
        proc.wait()


def test_the_wrapped_stubborn_engine_is_a_shell_with_a_child(tmp_path):
    pidfile = tmp_path / "pid file"  # a space: the command lines quote the path
    cmd = wrapped_stubborn_cmd(pidfile, "--on-quit", "linger", "--seconds", "0")
    assert cmd[:2] == ["sh", "-c"] and stubborn_cmd(pidfile)[1] in cmd[2]
    out = subprocess.run(cmd, input="usi\nquit\n", capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "usiok" in out.stdout, out.stderr
    shell, child = (int(x) for x in pidfile.read_text().split())
    assert shell != child


def test_sink_joins_partial_writes_and_finds_lines():
    sink = Sink()
    sink.write("info depth 1\nbest")
    assert sink.lines == ["info depth 1"]
    assert sink.wait_bestmove(0, timeout=0.01) is None
    sink.write("move 7g7f\n")
    assert sink.wait_for("bestmove") == (1, "bestmove 7g7f")
    (t, line), = sink.bestmoves()
    assert line == "bestmove 7g7f" and t == sink.times[1] and sink.wait_bestmove(0, 1.0) == (t, line)
    with pytest.raises(AssertionError, match="no line starting with 'readyok'"):
        sink.wait_for("readyok", timeout=0.01)
