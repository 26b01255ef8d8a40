"""The real engine (``python -m usi``) in a subprocess: driven by cshogi's own USI client, and by raw dialogs.

The first ``isready`` compiles the search kernels when the numba disk cache is cold (minutes on a loaded machine);
later runs load them from ``__pycache__``.
"""
from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from engine import Position

REPO = Path(__file__).resolve().parents[1]
READY_TIMEOUT = 900  # cold numba cache on a shared 2-core machine
MATE_IN_1 = "8k/6S2/7G1/9/9/9/9/9/4K4 b G 1"
NO_MATE = "4k4/9/9/9/9/9/9/9/4K4 b - 1"
ENTERING_KING = "9/B3K3R/PPPPPPPPP/9/9/9/9/4k4/9 b 2G2S2N2LP 1"


def engine_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


class RawEngine:
    """``python -m usi`` with a reader thread, so a test can wait for a line with a timeout."""

    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, "-m", "usi"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, bufsize=1, env=engine_env(), cwd=REPO)
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def send(self, line: str) -> None:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def expect(self, prefix: str, timeout: float = 30.0) -> str:
        end = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, end - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no {prefix!r} within {timeout} s; saw {self.seen[-10:]}") from None
            if line is None:
                raise AssertionError(f"engine exited waiting for {prefix!r}; saw {self.seen[-10:]}")
            self.seen.append(line)
            if line.startswith(prefix):
                return line

    def close(self) -> str:
        try:
            self.send("quit")
        except (BrokenPipeError, OSError):
            pass
        try:
            _, err = self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        return err


@pytest.fixture
def raw():
    eng = RawEngine()
    yield eng
    eng.close()


# ---------------------------------------------------------------------------------------------- start-up
def test_usi_module_imports_no_numba():
    code = "import sys, usi, usi.engine, search.timeman; sys.exit('numba' in sys.modules or 'numpy' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], env=engine_env(), cwd=REPO).returncode == 0


def test_usiok_is_immediate(raw):
    t0 = time.monotonic()
    raw.send("usi")
    raw.expect("usiok", timeout=10)
    assert time.monotonic() - t0 < 3.0, "usi must be answered at once (GUIs give up after 2-10 s)"
    assert any(line.startswith("id name Fantasista") for line in raw.seen)
    raw.send("quit")
    assert raw.proc.wait(timeout=10) == 0
    assert raw.proc.stderr.read() == ""  # stderr stays quiet


def test_real_search_threads_stop_ponderhit_isready(raw):
    raw.send("usi")
    raw.expect("usiok")
    raw.send("isready")
    raw.expect("readyok", timeout=READY_TIMEOUT)
    raw.send("usinewgame")
    raw.send("position startpos moves 7g7f 3c3d")
    raw.send("go infinite")
    raw.expect("info depth 2", timeout=60)
    raw.send("isready")
    raw.expect("readyok", timeout=10)
    raw.send("stop")
    move = raw.expect("bestmove", timeout=10).split()[1]
    pos = Position.from_sfen("startpos")
    pos.push("7g7f"); pos.push("3c3d")
    assert pos.is_legal(move)

    raw.send("go ponder btime 0 wtime 0 byoyomi 500")
    raw.expect("info depth 1", timeout=60)
    time.sleep(0.3)
    raw.send("ponderhit")
    t0 = time.monotonic()
    move = raw.expect("bestmove", timeout=10).split()[1]
    assert time.monotonic() - t0 < 3.0
    assert pos.is_legal(move)

    raw.send("go ponder byoyomi 500")
    raw.expect("info depth 1", timeout=60)
    raw.send("stop")
    raw.expect("bestmove", timeout=10)
    raw.send("gameover")
    raw.send("position startpos")
    raw.send("go perft 2")
    assert raw.expect("Nodes searched:", timeout=30) == "Nodes searched: 900"
    raw.send("quit")
    assert raw.proc.wait(timeout=30) == 0
    assert raw.proc.stderr.read() == ""
    assert sum(line.startswith("bestmove") for line in raw.seen) == 3


def test_odd_numbers_and_long_perft_keep_stderr_quiet_and_quit_works(raw):
    # issue 22: a huge clock used to kill the timer thread with an OverflowError on stderr; a long go perft
    # blocked the reader, so quit was ignored
    raw.send("isready")
    raw.expect("readyok", timeout=READY_TIMEOUT)
    raw.send("position startpos")
    for go in ("go btime 99999999999999999999 wtime 99999999999999999999", "go movetime 99999999999999999999",
               "go nodes 99999999999999999999", "go byoyomi 99999999999999999999 btime 0 wtime 0"):
        raw.send(go)
        raw.expect("info depth 1", timeout=60)
        raw.send("stop")
        raw.expect("bestmove", timeout=10)
    raw.send("go depth 0")
    raw.expect("bestmove", timeout=10)
    raw.send("position sfen lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b 40P 1")
    assert raw.expect("info string error") == ("info string error position not changed: 58 pawns (with their "
                                                "promoted forms), but the set has 18")
    raw.send("position startpos")
    raw.send("go perft 1")  # the perft kernel compiled (a cold cache) before the timed part
    raw.expect("Nodes searched: 30", timeout=READY_TIMEOUT)
    raw.send("go perft 9")
    raw.send("isready")
    raw.expect("readyok", timeout=10)
    t0 = time.monotonic()
    raw.send("quit")
    assert raw.proc.wait(timeout=30) == 0
    assert time.monotonic() - t0 < 10
    assert raw.proc.stderr.read() == ""
    assert sum(line.startswith("bestmove") for line in raw.seen) == 5


# ---------------------------------------------------------------------------------------------- cshogi
import cshogi.usi as cshogi_usi  # noqa: E402  (in the test extra: fail, never skip)


def run_bounded(eng, fn, timeout):
    """Run a cshogi call that may block forever (its read loops never see EOF) with a timeout."""
    box: dict = {}

    def target():
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - reported below
            box["error"] = exc

    t = threading.Thread(target=target, daemon=True)
    t.start()
    end = time.monotonic() + timeout
    while t.is_alive() and time.monotonic() < end:
        t.join(0.2)
        if eng is not None and eng.proc is not None and eng.proc.poll() is not None:
            break  # the engine died: cshogi would spin on EOF for ever
    if t.is_alive():
        rc = eng.proc.poll() if eng is not None else None
        err = ""
        if eng is not None:
            eng.proc.kill()
            try:
                eng.proc.stdout.close()
            except Exception:
                pass
            err = eng.proc.stderr.read().decode(errors="replace")[-2000:]
        t.join(5)
        pytest.fail(f"cshogi call did not return within {timeout} s (engine exit code {rc}); stderr: {err}")
    if "error" in box:
        raise box["error"]
    return box.get("value")


@pytest.fixture
def wrapper(tmp_path):
    """cshogi's Engine takes one executable path: a shell script running ``python -m usi``."""
    script = tmp_path / "fantasista.sh"
    script.write_text(f"#!/bin/sh\nPYTHONPATH='{REPO}' exec '{sys.executable}' -m usi\n")
    script.chmod(0o755)
    return str(script)


def test_cshogi_client_plays_legal_moves(wrapper):
    eng = run_bounded(None, lambda: cshogi_usi.Engine(wrapper), 30)
    try:
        assert eng.name.startswith("Fantasista")
        run_bounded(eng, lambda: eng.setoption("USI_Hash", 8), 10)
        run_bounded(eng, eng.isready, READY_TIMEOUT)
        run_bounded(eng, eng.usinewgame, 10)

        pos, moves = Position.startpos(), []
        for ply in range(6):
            eng.position(moves)
            if ply % 2:
                best, ponder = run_bounded(eng, lambda: eng.go(btime=30_000, wtime=30_000, byoyomi=200), 60)
            else:
                best, ponder = run_bounded(eng, lambda: eng.go(byoyomi=300), 60)
            assert pos.is_legal(best), (ply, best, pos.sfen())
            pos.push(best)
            moves.append(best)
            if ponder is not None:
                assert pos.is_legal(ponder)

        eng.position(sfen=f"sfen {MATE_IN_1}")
        assert run_bounded(eng, lambda: eng.go_mate(byoyomi=5000), 60) == "G*1b"
        eng.position(sfen=f"sfen {NO_MATE}")
        assert run_bounded(eng, lambda: eng.go_mate(byoyomi=5000), 60) == "nomate"
        eng.position(sfen=f"sfen {MATE_IN_1}", moves=["G*1b"])
        assert run_bounded(eng, lambda: eng.go(byoyomi=200), 60)[0] == "resign"
        eng.position(sfen=f"sfen {ENTERING_KING}")
        assert run_bounded(eng, lambda: eng.go(byoyomi=200), 60)[0] == "win"
        eng.gameover("win")
        eng.position(sfen=f"sfen {MATE_IN_1}")
        best, _ = run_bounded(eng, lambda: eng.go(byoyomi=1000), 60)
        assert best == "G*1b"
    finally:
        if eng.proc is not None:
            run_bounded(eng, eng.quit, 30)


# ---------------------------------------------------------------------------------------------- console scripts
def _console_scripts() -> dict[str, str]:
    import tomllib

    with open(REPO / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]["scripts"]


def _run_script(name: str, *args: str) -> subprocess.CompletedProcess:
    """The console script ``name`` as its installed wrapper runs it: its entry point with ``sys.argv``."""
    module, func = _console_scripts()[name].split(":")
    code = f"import sys; sys.argv[0] = {name!r}; from {module} import {func}; sys.exit({func}())"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=engine_env(),
                          cwd=REPO, timeout=300, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("name", sorted(_console_scripts()))
def test_console_scripts_answer_help_and_version(name):
    """Every console script answers --help (usage on stdout, exit 0) and --version (the package metadata's version,
    exit 0) as a command-line tool does, and refuses an unknown flag with a usage error on stderr (exit 2); the
    engine read --help as a USI line (issue 48)."""
    from importlib.metadata import version

    helped = _run_script(name, "--help")
    assert helped.returncode == 0 and helped.stdout.startswith("usage: ") and helped.stderr == "", helped
    assert "info string" not in helped.stdout
    shown = _run_script(name, "--version")
    assert shown.returncode == 0 and shown.stderr == "", shown
    assert shown.stdout.strip().endswith(" " + version("fantasista")), shown.stdout
    bad = _run_script(name, "--no-such-flag")
    assert bad.returncode == 2 and bad.stdout == "", bad
    assert "usage: " in bad.stderr and "--no-such-flag" in bad.stderr, bad.stderr
