"""Process helpers for the tests that check engines are killed and reaped: whether a pid still exists or still
runs, and the command lines of the stubborn fake engine (``fake_engines/stubborn.py``), alone or behind a shell."""
from __future__ import annotations

import os
import shlex
import signal
import sys
import time
from pathlib import Path

FAKES = Path(__file__).parent / "fake_engines"
#: A hang guard for a killed process to stop running (SIGKILL acts at once).
KILL_WAIT_S = 10.0


def gone(pid: int) -> bool:
    """No such process, not even a zombie waiting to be reaped (``kill(pid, 0)`` succeeds on a zombie)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def running(pid: int) -> bool:
    """Whether ``pid`` names a process that can still run: not gone and not a zombie. A killed grandchild of the test
    is an orphan whose zombie waits for the system's init, which in some containers never reaps it."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:  # gone meanwhile
        return False


def wait_not_running(pids: list[int], timeout: float = KILL_WAIT_S) -> list[int]:
    """The pids still running after waiting up to ``timeout`` s; those are then killed, so that a failed test leaves
    nothing behind."""
    deadline = time.monotonic() + timeout
    while any(running(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    left = [p for p in pids if running(p)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return left


def wait_for_pid(pidfile: Path, what: str, timeout: float = 30.0) -> int:
    """The first pid a fake engine wrote to ``pidfile``, once it has (a hang guard of ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    while not (pidfile.exists() and pidfile.read_text().strip()):
        assert time.monotonic() < deadline, f"{what} never started"
        time.sleep(0.05)
    return int(pidfile.read_text().split()[0])


def stubborn_cmd(pidfile: Path, *flags: str) -> list[str]:
    """The command line of stubborn.py (it appends its pid to ``pidfile``); ``flags`` as its usage gives them."""
    return [sys.executable, str(FAKES / "stubborn.py"), str(pidfile), *flags]


def wrapped_stubborn_cmd(pidfile: Path, *flags: str) -> list[str]:
    """``sh -c`` running stubborn.py as its child (a command follows it, so the shell cannot exec it): the shell,
    then the child, append their pids to ``pidfile``."""
    script = f"echo $$ >> {shlex.quote(str(pidfile))}; {shlex.join(stubborn_cmd(pidfile, *flags))}; exit $?"
    return ["sh", "-c", script]
