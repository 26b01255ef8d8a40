"""The match runner under faults (issue 48): engines that do not leave on ``quit`` are killed and reaped on every path
(a game's end, an engine fault, a stop by signal), bad openings are refused before the first game, ``--resume`` drops
a record cut inside a multi-byte character, and an engine's over-long output line loses it the game."""
from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from usi import match as M
from usi import referee as R
from usi.client import MAX_LINE_BYTES

from .proc_helpers import gone, stubborn_cmd, wait_not_running, wrapped_stubborn_cmd

ROOT = Path(__file__).resolve().parents[1]
FAKES = Path(__file__).parent / "fake_engines"
STARTPOS = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL"


def _pids(pidfile: Path) -> list[int]:
    return [int(x) for x in pidfile.read_text().split()] if pidfile.exists() else []


def _stubborn(pidfile: Path, name: str, *flags: str) -> list[str]:
    """``--engine`` arguments for stubborn.py named ``name``."""
    return ["--engine", f"cmd={shlex.join(stubborn_cmd(pidfile, *flags))}", f"name={name}"]


def _wrapped(pidfile: Path, name: str, *flags: str) -> list[str]:
    """``--engine`` arguments for stubborn.py run as the child of ``sh -c``, named ``name``."""
    return ["--engine", f"cmd={shlex.join(wrapped_stubborn_cmd(pidfile, *flags))}", f"name={name}"]


@pytest.fixture
def book(tmp_path: Path) -> Path:
    path = tmp_path / "book.txt"
    path.write_text("7g7f 3c3d\n")
    return path


# ---------------------------------------------------- engines that do not leave
@pytest.mark.parametrize("ending", ["resign", "time forfeit"])
@pytest.mark.parametrize("start", [_stubborn, _wrapped], ids=["direct", "wrapped"])
def test_engines_that_do_not_leave_are_gone_when_the_runner_returns(tmp_path, monkeypatch, capsys, book, ending,
                                                                   start):
    """One engine lingers on ``quit``, the other ignores ``quit``, SIGTERM and the end of its input; started directly
    or through ``sh -c 'python stubborn.py ...'``. Whether the game ends normally (a resignation: ``gameover``,
    ``quit``, the grace, then SIGKILL) or by an engine's fault (no ``bestmove``: killed at once), and in the warm-up,
    each engine's whole process group is killed and the runner's own child reaped by the time the runner returns: no
    engine, shell or shell's child runs on."""
    monkeypatch.setattr(R, "QUIT_GRACE", 0.3)
    pidfile = tmp_path / "pids"
    hang = ("--hang",) if ending == "time forfeit" else ()
    code = M.main([*start(pidfile, "lingers", "--on-quit", "linger", *hang),
                   *start(pidfile, "ignores", "--on-quit", "ignore", *hang),
                   "--games", "2", "--openings", str(book), "--move-timeout", "1", "--formats=", "--quiet",
                   "--out", str(tmp_path / "m")])
    assert code == 0, capsys.readouterr().err
    pids = _pids(pidfile)
    # a shell's child is an orphan whose zombie only the system's init reaps: it must not run
    reaped, orphans = (pids[0::2], pids[1::2]) if start is _wrapped else (pids, [])
    assert len(reaped) == 6 and not set(reaped) & set(orphans)  # two in the warm-up, two in each game
    assert all(map(gone, reaped)), "engine processes outlived the runner"
    assert not wait_not_running(orphans), "children of the engines outlived the runner"
    recs = M.read_records(tmp_path / "m" / "games.jsonl")
    assert [r["reason"] for r in recs] == [ending, ending]


def test_an_abort_kills_each_engine_with_its_children(tmp_path, book):
    """An abort (a second Ctrl-C) SIGKILLs the engines of a game from the signal handler's thread, each with its
    process group: a wrapper's child ignoring SIGTERM dies too (before, only the wrapper's pid got the signal)."""
    from types import SimpleNamespace

    pidfile = tmp_path / "pids"
    spec = M.EngineSpec.parse(_wrapped(pidfile, "a", "--on-quit", "ignore")[1:])
    engine = M._popen_engine(spec.cmd, timeout=20)
    shell, child = _pids(pidfile)
    try:
        M.Referee.kill_now(SimpleNamespace(engines=[engine, None]))  # None: a side whose engine never started
        assert not wait_not_running([shell, child])
    finally:
        engine.close()
    assert gone(shell)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_runner_leaves_no_engine_behind(tmp_path, book, sig):
    """The runner stopped by SIGTERM (or a terminal's Ctrl-C, sent to its process group) in the middle of a game whose
    engines ignore ``quit`` and SIGTERM: when it has exited, they are gone too (no waiting afterwards)."""
    pidfile = tmp_path / "pids"
    proc = subprocess.Popen([sys.executable, "-m", "usi.match",
                             *_stubborn(pidfile, "a", "--on-quit", "ignore", "--hang"),
                             *_stubborn(pidfile, "b", "--on-quit", "ignore", "--hang"),
                             "--games", "2", "--openings", str(book), "--no-warmup", "--quiet",
                             "--out", str(tmp_path / "m")],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        t0 = time.monotonic()
        while len(_pids(pidfile)) < 2:  # both engines of the first game started
            assert proc.poll() is None and time.monotonic() - t0 < 120, proc.communicate()
            time.sleep(0.05)
        time.sleep(0.5)  # into the game: sente thinks (forever)
        os.killpg(proc.pid, sig) if sig == signal.SIGINT else os.kill(proc.pid, sig)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + sig and "Traceback" not in stderr, stderr
    pids = _pids(pidfile)
    assert len(pids) == 2 and all(map(gone, pids)), "engine processes outlived the runner"


def test_an_engine_stopped_in_its_start_is_closed_before_the_runner_goes_on(tmp_path):
    """A stop that comes while an engine is still starting (before ``usiok``) waits for the start to end, then kills
    and reaps the engine, instead of leaving it to a daemon thread that dies with the runner."""
    pidfile = tmp_path / "pids"
    cmd = stubborn_cmd(pidfile, "--on-quit", "ignore")

    class Stop(BaseException):
        pass

    def interrupt(signum, frame):
        raise Stop()

    old = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.01)  # raised in the wait for usiok, as a first Ctrl-C is
        with pytest.raises(Stop):
            M._popen_engine(cmd, timeout=20)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    pids = _pids(pidfile)
    assert len(pids) == 1 and all(map(gone, pids))


# ---------------------------------------------------------------- openings
@pytest.mark.parametrize("line,why", [
    (f"sfen {STARTPOS} b - 99999999999999999999", "the move number 99999999999999999999 is out of range"),
    (f"sfen {STARTPOS} b - 0 moves 7g7f", "the move number 0 is out of range"),
    ("sfen 9/9/9/9/9/9/9/9/9 b - 1", "neither side has a king"),
    ("4k4/9/9/9/9/9/9/9/9 b 2G 1", "sente has no king (a game needs both)"),  # a tsume problem is no game
    ("garbage here", "move 1 (garbage): unparseable move"),
    (f"sfen {STARTPOS} b - 1 moves 7g7f 3c3d 7g7f 8c8d", "move 3 (7g7f): illegal move 7g7f"),
    ("startpos moves 7g7f 7g7f", "move 2 (7g7f): illegal move"),
    ("startpos junk moves 7g7f", "'startpos' takes nothing but 'moves ...'"),
    ("sfen 4k4/4G4/4P4/9/9/9/9/9/4K4 w - 1", "the game is already over (checkmate)"),
])
def test_a_bad_opening_is_refused_before_the_first_game(tmp_path, capsys, line, why):
    """Each opening is checked as our engine checks a ``position`` (usi/sfen_check.py, the parser, every move), with
    both kings required and the game not over: a bad line stops the run before any engine starts, naming the file,
    the line and what is wrong, with exit status 2 and no traceback. (Before, a huge move number made the engine
    refuse the position and lose every game by "illegal move"; a king-less board was scored "no legal moves".)"""
    path = tmp_path / "openings.txt"
    path.write_text(f"# book\n7g7f 3c3d\n\n{line}\n2g2f 8c8d\n")
    pidfile = tmp_path / "pids"
    code = M.main([*_stubborn(pidfile, "a"), *_stubborn(pidfile, "b"), "--games", "2", "--openings", str(path),
                   "--out", str(tmp_path / "m")])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert f"fantasista-match: error: {path}:4: bad opening " in err and why in err, err
    assert len(err.strip().splitlines()) == 1  # one clear line
    assert not pidfile.exists() and not (tmp_path / "m").exists()  # no engine started, nothing written


def test_a_long_bad_opening_is_quoted_cut_to_the_shown_length(tmp_path, monkeypatch):
    """The bad line is quoted cut to usi.engine's SHOWN_INPUT_CHARS, the error stays one short line."""
    monkeypatch.setattr(M, "SHOWN_INPUT_CHARS", 20)
    path = tmp_path / "openings.txt"
    path.write_text("garbage " * 30 + "\n")
    with pytest.raises(ValueError, match=r":1: bad opening 'garbage garbage g\.\.\.': "):
        M.read_openings(path)


def test_openings_of_the_game_variants_are_checked_too(tmp_path):
    path = tmp_path / "fairies.txt"
    path.write_text(f"{STARTPOS} b - 1 f=hh\n{STARTPOS} b - 99999999999999999999 f=hh\n")
    with pytest.raises(ValueError, match=r"fairies.txt:2: bad opening .*move number 99999999999999999999 is out"):
        M.read_openings(path, "fantasista")
    path.write_text("4k4/9/9/9/9/9/9/9/9 b 2G 1 f=hh\n")
    with pytest.raises(ValueError, match="fairies.txt:1: bad opening .*sente has no king"):
        M.read_openings(path, "fantasista")
    for name in ("shogi-balanced.txt", "shogi.txt"):  # the shipped sets pass
        assert M.read_openings(ROOT / "bench" / "openings" / name)


def test_a_turncoat_opening_with_a_hidden_plan_is_refused(tmp_path):
    """'?' is a view's mark for the enemy's plan: an opening giving it (in the SFEN, or as a ``plan=?`` move) would
    leave the referee without that plan, so its engine could declare whatever plan suits it. Refused naming the side;
    given plans, or '-' for the engine to choose, pass."""
    from usi import games

    state = games.new_state("turncoat", games.option_getter({}))
    for tok in ("plan:1a,1c,2a", "plan:8i,9g,9i"):
        state.apply(tok)
    board, extra = state.sfen().rsplit(" ", 1)
    ids, p0, p1, rev = extra.split(";")
    path = tmp_path / "turncoat.txt"
    for plans, moves, bad in [((p0, p1), "7g7f", None), (("-", "-"), f"plan:{p0} plan:{p1} 7g7f", None),
                              ((p0, "?"), "7g7f", "gote"), (("?", "?"), "7g7f", "sente and gote")]:
        path.write_text(f"sfen {board} {';'.join([ids, *plans, rev])} moves {moves}\n")
        if bad is None:
            assert M.read_openings(path, "turncoat")[0].moves == moves.split()
        else:
            with pytest.raises(ValueError, match=rf"turncoat.txt:1: bad opening .*the plan of {bad} is '\?'"):
                M.read_openings(path, "turncoat")
    path.write_text("startpos moves plan:1a,1c,2a plan=?\n")
    with pytest.raises(ValueError, match=r"the plan of gote is '\?': the referee must know each plan"):
        M.read_openings(path, "turncoat")


def test_an_unreadable_openings_file_is_a_clear_error(tmp_path, capsys):
    base = ["--engine", "cmd=x", "--engine", "cmd=y", "--out", str(tmp_path / "m")]
    assert M.main([*base, "--openings", str(tmp_path / "missing.txt")]) == 2
    err = capsys.readouterr().err
    assert "missing.txt: cannot read the openings file: No such file or directory" in err and "Traceback" not in err
    latin = tmp_path / "latin.txt"
    latin.write_bytes("7g7f 3c3d # d\xe9but\n".encode("latin-1"))
    assert M.main([*base, "--openings", str(latin)]) == 2
    assert "latin.txt: not a UTF-8 text file" in capsys.readouterr().err


# --------------------------------------------------------------------- resume
def _fake_game(task):
    """The engine named ``a`` wins every game; the record has text beyond ASCII (as engine names and details may)."""
    winner = "sente" if task.sente.name == "a" else "gote"
    return {"game": task.index, "pair": task.pair, "sente": task.sente.name, "gote": task.gote.name,
            "seed": task.seed, "result": winner, "reason": "resign", "detail": "投了 (resigned)", "variant": "shogi"}


def test_resume_drops_a_record_cut_inside_a_multibyte_character(tmp_path, monkeypatch, capsys, book):
    """A runner killed while writing a record can cut it inside a UTF-8 character; ``--resume`` then stopped with
    "'utf-8' codec can't decode byte 0xe5". The cut record is dropped like any cut record and its game replayed."""
    monkeypatch.setattr(M, "play_game", _fake_game)
    out = tmp_path / "m"
    args = ["--engine", "cmd=x", "name=a", "--engine", "cmd=y", "name=b", "--games", "4", "--openings", str(book),
            "--no-warmup", "--quiet", "--formats=", "--out", str(out)]
    assert M.main(args) == 0
    games = out / "games.jsonl"
    lines = games.read_bytes().splitlines(keepends=True)
    assert len(lines) == 4
    third = lines[2]
    cut = third.index("投".encode()) + 1  # inside the first character's three bytes
    games.write_bytes(b"".join(lines[:2]) + third[:cut])
    with pytest.raises(UnicodeDecodeError):
        games.read_text(encoding="utf-8")  # what the old reader did
    capsys.readouterr()
    assert M.main(["--resume", str(out), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "games.jsonl:3: dropping a record cut short" in err and "resuming" not in err and "Traceback" not in err
    recs = [json.loads(x) for x in games.read_text(encoding="utf-8").splitlines()]
    assert sorted(r["game"] for r in recs) == [0, 1, 2, 3]
    assert recs[:2] == [json.loads(x) for x in lines[:2]]


def test_a_last_record_missing_its_newline_is_kept_and_terminated(tmp_path):
    """A record cut just before its newline is whole: it is kept, and the file mended so that the next record
    appended does not run into it; a bad line before the last is still an error."""
    path = tmp_path / "games.jsonl"
    path.write_bytes(b'{"game": 0}\n{"game": 1, "detail": "\xe6\x8a\x95"}')
    assert M.read_records(path) == [{"game": 0}, {"game": 1, "detail": "投"}]
    assert path.read_bytes().endswith(b"}\n")
    path.write_bytes(b'{"game": 0}\n{"game": \xe6\x8a\n{"game": 2}\n')
    with pytest.raises(ValueError, match="games.jsonl:2: not a JSON record"):
        M.read_records(path)


# ------------------------------------------------------------ over-long lines
def test_an_engine_line_over_the_cap_loses_the_game_like_a_crash():
    """An engine answering ``go`` with a line over MAX_LINE_BYTES without a newline (3 MiB more) loses each game with
    a clear reason, as a crash does; the runner's buffer stays bounded (it used to hold the whole line)."""
    ok = M.EngineSpec.parse([f"cmd={sys.executable} {FAKES / 'random_engine.py'}", "name=ok"])
    bad = M.EngineSpec.parse([f"cmd={sys.executable} {FAKES / 'huge_line.py'} {MAX_LINE_BYTES + (3 << 20)}",
                              "name=bad"])
    settings = M.MatchSettings(max_plies=40, handshake_timeout=10, move_timeout=30, margin=300)
    res = M.run_match([ok, bad], games=2, settings=settings)
    assert len(res.records) == 2
    for r in res.records:
        assert (r["winner"], r["reason"]) == ("ok", "crash"), r
        assert r["detail"].startswith("bad: sent a line of more than 1048576 bytes (1 MiB) without a newline"), r
