"""The match runner under interruption and odd flags (issue 22): Ctrl-C / SIGTERM keep every finished game and write
the summary, a second Ctrl-C aborts at once, ``--resume`` completes a stopped match with the same seeds,
``summary.json`` is strict JSON, ``--games`` counts per pairing, ``--gauntlet``, each engine its own seed, the
warm-up covering a cold start, and the default opening set."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from usi import match as M
from usi.client import Cp, UsiPlayResult
from usi.stats import MatchStats

ROOT = Path(__file__).resolve().parents[1]
FAKES = Path(__file__).parent / "fake_engines"


def strict_load(text: str):
    """json.loads that refuses NaN / Infinity (Python's json accepts them by default)."""
    def refuse(name):
        raise ValueError(f"non-standard JSON constant {name}")

    return json.loads(text, parse_constant=refuse)


def fake_game(task):
    """The first engine named ``a`` wins every game (no engines started)."""
    winner = "sente" if task.sente.name == "a" else "gote" if task.gote.name == "a" else "draw"
    return {"game": task.index, "pair": task.pair, "sente": task.sente.name, "gote": task.gote.name,
            "seed": task.seed, "result": winner, "reason": "resign", "variant": "shogi"}


# ----------------------------------------------------------------- schedules
def test_games_are_per_pairing_and_gauntlet_plays_the_first_engine_only(monkeypatch):
    engines = [M.EngineSpec(["x"], n) for n in "abc"]
    openings = [M.Opening("startpos", [m], i, m) for i, m in enumerate(["7g7f", "2g2f", "5g5f"])]
    tasks = M.schedule(engines, openings, 5, M.MatchSettings(), seed=3)
    per = {}
    for t in tasks:
        per.setdefault(frozenset((t.sente.name, t.gote.name)), []).append(t)
    assert {k: len(v) for k, v in per.items()} == {frozenset("ab"): 5, frozenset("ac"): 5, frozenset("bc"): 5}
    for games in per.values():  # openings in colour-swapped pairs, cycled; the odd fifth game plays the third once
        assert [g.opening.line for g in games] == ["7g7f", "7g7f", "2g2f", "2g2f", "5g5f"]
        assert games[0].sente.name == games[1].gote.name and games[0].pair == games[1].pair
    gauntlet = M.schedule(engines, openings, 4, M.MatchSettings(), seed=3, gauntlet=True)
    assert len(gauntlet) == 8 and all("a" in (t.sente.name, t.gote.name) for t in gauntlet)
    with pytest.raises(ValueError, match="at least 1"):
        M.schedule(engines, openings, 0, M.MatchSettings(), seed=3)

    monkeypatch.setattr(M, "play_game", fake_game)
    res = M.run_match([M.EngineSpec(["x"], n) for n in "abc"], games=4, gauntlet=True)
    assert sorted(res.stats) == ["a vs b", "a vs c"] and all(st.games == 4 for st in res.stats.values())
    res = M.run_match([M.EngineSpec(["x"], n) for n in "abc"], games=4)
    assert {k: st.games for k, st in res.stats.items()} == {"a vs b": 4, "a vs c": 4, "b vs c": 4}
    help_text = M.build_parser().format_help()
    assert "games per pairing" in help_text and "--gauntlet" in help_text and "--resume" in help_text


# ------------------------------------------------------------ summary.json
def test_summary_is_strict_json_with_the_reason_for_each_null(tmp_path, monkeypatch):
    st = MatchStats("a", "b")
    for g in range(4):
        st.add({"game": g, "pair": g // 2, "sente": "ab"[g % 2], "gote": "ba"[g % 2],
                "result": "sente" if g % 2 == 0 else "gote", "reason": "resign"})
    raw = st.summary()
    assert raw["elo"] == float("inf")  # the case: a 100% score has no finite Elo
    with pytest.raises(ValueError):
        json.dumps(raw, allow_nan=False)
    clean = M.strict_summary(raw)
    text = json.dumps(clean, allow_nan=False)
    back = strict_load(text)
    assert back["elo"] is None and back["wins"] == 4
    assert "100%" in back["null_because"]["elo"] and "pentanomial_elo[0]" in back["null_because"]
    empty = strict_load(json.dumps(M.strict_summary(MatchStats("a", "b").summary()), allow_nan=False))
    assert "no games" in empty["null_because"]["elo_lower"]

    monkeypatch.setattr(M, "play_game", fake_game)
    M.run_match([M.EngineSpec(["x"], "a"), M.EngineSpec(["y"], "b")], games=4, out=tmp_path, formats=())
    summary = strict_load((tmp_path / "summary.json").read_text())
    assert summary["match"] == {"games_scheduled": 4, "games_played": 4, "complete": True, "stopped_by": None}
    assert summary["pairings"]["a vs b"]["elo"] is None and summary["pairings"]["a vs b"]["null_because"]


# ------------------------------------------------------------- engine seeds
class SeedRecorder:
    """A stand-in engine offering ``Seed`` that records the options it is given and resigns."""

    def __init__(self, cmd, timeout=None):
        self.options = {"Seed": None}
        self.given = {}

    def configure(self, options): self.given.update(options)
    def isready(self, timeout=None): pass
    def new_game(self): pass
    def gameover(self, result): pass
    def quit(self, timeout=None): pass
    def close(self): pass

    def play(self, position, limit, timeout=None):
        return UsiPlayResult(None, resign=True, info={"score": Cp(0)}, elapsed=0.0)


def test_each_engine_gets_its_own_seed_never_the_opponents():
    seeds = {}
    for game_seed in (1, 2):
        task = M.GameTask(0, 0, M.EngineSpec(["s"], "s"), M.EngineSpec(["g"], "g"), M.Opening(), M.MatchSettings(),
                          seed=game_seed)
        ref = M.Referee(task, engine_factory=SeedRecorder)
        ref.play()
        seeds[game_seed] = [ref.engines[side].given["Seed"] for side in (0, 1)]
    assert seeds[1][0] != seeds[1][1] and set(seeds[1]).isdisjoint(seeds[2])
    assert all(0 < s < 2**31 for pair in seeds.values() for s in pair)
    assert seeds[1] == [M.engine_seed(1, 0), M.engine_seed(1, 1)]  # reproducible from the game's seed
    # an engine whose command line sets Seed keeps it
    task = M.GameTask(0, 0, M.EngineSpec(["s"], "s", options={"Seed": "7"}), M.EngineSpec(["g"], "g"), M.Opening(),
                      M.MatchSettings(), seed=1)
    ref = M.Referee(task, engine_factory=SeedRecorder)
    ref.play()
    assert ref.engines[0].given["Seed"] == "7"


# --------------------------------------------------- warm-up and openings
def test_warm_up_covers_a_cold_start_and_the_default_openings_are_used(tmp_path, capsys):
    warm = tmp_path / "warm"
    warm.write_text("compiled")
    quick = [f"cmd={sys.executable} {FAKES / 'cold_start.py'} {warm} 0", "name=quick"]
    cold = lambda marker: [f"cmd={sys.executable} {FAKES / 'cold_start.py'} {marker} 3", "name=cold"]  # noqa: E731
    common = ["--ready-timeout", "1.5", "--seed", "1"]
    # without the warm-up the cold start costs the game (and, killed mid-start, it stays cold)
    code = M.main(["--engine", *quick, "--engine", *cold(tmp_path / "m1"), *common, "--games", "1", "--no-warmup",
                   "--out", str(tmp_path / "a"), "--quiet"])
    recs = M.read_records(tmp_path / "a" / "games.jsonl")
    assert code == 0 and [(r["reason"], r["winner"]) for r in recs] == [("handshake", "quick")]
    capsys.readouterr()
    code = M.main(["--engine", *quick, "--engine", *cold(tmp_path / "m2"), *common, "--games", "2",
                   "--out", str(tmp_path / "b")])
    err = capsys.readouterr().err
    recs = M.read_records(tmp_path / "b" / "games.jsonl")
    assert code == 0 and [r["reason"] for r in recs] == ["resign", "resign"], recs
    assert "warming up cold: waiting for readyok, 1 s" in err and "cold: ready in" in err
    # no --openings: the shipped balanced set (bench/openings/shogi-balanced.txt), in file order
    book = M.read_openings(ROOT / "bench" / "openings" / "shogi-balanced.txt")
    assert len(book) >= 100 and "shogi-balanced.txt (" in err
    assert all(r["moves"] == book[0].moves and r["opening"]["index"] == 0 for r in recs)
    meta = strict_load((tmp_path / "b" / "match.json").read_text())
    assert meta["openings"].endswith("shogi-balanced.txt") and meta["games_scheduled"] == 2
    # a variant without a shipped set is warned about, loudly (even with --quiet)
    M.main(["--engine", *quick, "--engine", *quick, "--variant", "turncoat", "--games", "1",
            "--out", str(tmp_path / "c"), "--no-warmup", "--quiet"])
    assert "WARNING: no --openings" in capsys.readouterr().err
    # more games than twice the openings: the starts repeat, and the runner says so
    one = tmp_path / "one.txt"
    one.write_text("7g7f 3c3d\n")
    M.main(["--engine", *quick, "--engine", quick[0], "name=other", "--openings", str(one), "--games", "4",
            "--out", str(tmp_path / "d"), "--no-warmup"])
    assert "4 games a pairing from 1 openings: each opening is played 2 times a colour" in capsys.readouterr().err


def test_a_bad_engine_fails_the_warm_up_with_a_clear_error(tmp_path, capsys):
    code = M.main(["--engine", f"cmd={sys.executable} {FAKES / 'random_engine.py'}", "--engine",
                   f"cmd={sys.executable} {FAKES / 'no_usiok.py'}", "name=bad", "--games", "2", "--quiet",
                   "--handshake-timeout", "2", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and "engine bad failed to start (handshake)" in err and "Traceback" not in err
    assert not (tmp_path / "games.jsonl").exists()  # no game was played


def test_an_option_the_engine_refuses_stops_the_match_before_its_games(tmp_path, capsys):
    """An engine that answers a setoption with ``info string error`` (ours does for a mistyped SearchFeatures) is
    not set up as asked: the warm-up names it and no game is played, instead of a match of its defaults."""
    engine = f"cmd={sys.executable} {FAKES / 'random_engine.py'}"
    code = M.main(["--engine", engine, "name=good", "option.Mode=random", "--engine", engine, "name=bad",
                   "option.Mode=warp", "--games", "2", "--quiet", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "engine bad failed to start (setup): bad: refused its setup: error Mode not changed: 'warp'" in err
    assert not (tmp_path / "games.jsonl").exists()


# ------------------------------------------------------ Ctrl-C and --resume
def _engine_args(tag: str) -> list[str]:
    cmd = f"cmd={sys.executable} {FAKES / 'random_engine.py'} --delay 40 {tag}"
    return ["--engine", cmd, "name=a", "--engine", cmd, "name=b"]


def _start(args: list[str]) -> subprocess.Popen:
    """The runner in its own session, so a signal to its process group is what a terminal's Ctrl-C sends."""
    return subprocess.Popen([sys.executable, "-m", "usi.match", *args], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def _wait_for_records(path: Path, n: int, proc: subprocess.Popen, timeout: float = 240.0) -> None:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if path.exists() and len([x for x in path.read_text().splitlines() if x.strip()]) >= n:
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    raise AssertionError(f"no {n} records in {timeout} s")


def _processes_with(tag: str) -> list[int]:
    pids = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if tag.encode() in Path(f"/proc/{d}/cmdline").read_bytes():
                    pids.append(int(d))
            except OSError:
                pass
    return pids


def _no_engines_left(tag: str, within: float = 10.0) -> bool:
    t0 = time.monotonic()
    while _processes_with(tag):
        if time.monotonic() - t0 > within:
            return False
        time.sleep(0.1)
    return True


@pytest.mark.parametrize("concurrency,games", [(1, 4), pytest.param(2, 6, marks=pytest.mark.slow)])
def test_ctrl_c_keeps_the_finished_games_and_resume_completes_the_match(tmp_path, concurrency, games):
    """In-process games (default run) and a process pool, whose workers must ignore the terminal's Ctrl-C (slow:
    about 100 s under load, where most of the time is engine start-ups). The match must still run when the
    signal comes: a loaded machine may let the runner play on for seconds after the first record, so the games
    left after it (three, or four over two workers) outlast that; resuming plays them."""
    tag, out = f"tag-{uuid.uuid4().hex}", tmp_path / "m"
    args = [*_engine_args(tag), "--games", str(games), "--max-plies", "12", "--seed", "5", "--out", str(out),
            "--concurrency", str(concurrency), "--no-warmup"]
    proc = _start(args)
    _wait_for_records(out / "games.jsonl", 1, proc)
    os.killpg(proc.pid, signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGINT, stderr
    assert "SIGINT: stopping" in stderr and "Traceback" not in stderr
    assert "a vs b:" in stdout and "stopped by SIGINT" in stdout and f"--resume {out}" in stdout
    assert _no_engines_left(tag)
    before = (out / "games.jsonl").read_text().splitlines()
    summary = strict_load((out / "summary.json").read_text())
    assert 1 <= len(before) < games and summary["match"]["games_played"] == len(before)
    assert summary["match"]["games_scheduled"] == games
    assert summary["match"]["complete"] is False and summary["match"]["stopped_by"] == "SIGINT"
    assert summary["pairings"]["a vs b"]["games"] == len(before)

    # resume: only execution options may be added; the match's own settings come from match.json
    bad = subprocess.run([sys.executable, "-m", "usi.match", "--resume", str(out), "--games", "8"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "--games" in bad.stderr and "Traceback" not in bad.stderr
    again = subprocess.run([sys.executable, "-m", "usi.match", *args], cwd=ROOT, capture_output=True, text=True,
                           timeout=120)
    assert again.returncode == 2 and "already holds games" in again.stderr
    done = subprocess.run([sys.executable, "-m", "usi.match", "--resume", str(out), "--quiet", "--concurrency", "1"],
                          cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    after = (out / "games.jsonl").read_text().splitlines()
    assert after[:len(before)] == before  # the finished games are kept as they were
    recs = [json.loads(x) for x in after]
    assert sorted(r["game"] for r in recs) == list(range(games))
    summary = strict_load((out / "summary.json").read_text())
    assert summary["match"]["complete"] is True and summary["pairings"]["a vs b"]["games"] == games
    # the same seeds: a resumed game is the game an uninterrupted match plays
    engines = [M.EngineSpec.parse(args[1:3]), M.EngineSpec.parse(args[4:6])]
    tasks = M.schedule(engines, M.read_openings(ROOT / "bench" / "openings" / "shogi-balanced.txt"), games,
                       M.MatchSettings(max_plies=12), 5)
    assert [r["seed"] for r in sorted(recs, key=lambda r: r["game"])] == [t.seed for t in tasks]
    last = max(recs, key=lambda r: r["game"])
    assert last["game"] == games - 1 and M.play_game(tasks[-1])["moves"] == last["moves"]


def test_a_second_signal_aborts_at_once(tmp_path):
    """Two SIGINTs sent back to back reach a process as one (the kernel keeps one pending signal of a kind), so the
    second signal here is SIGTERM, which the runner treats like a second Ctrl-C; the handler's own second-SIGINT case
    is checked directly."""
    control = M.StopControl()
    control.message = lambda text: None
    control.handle(signal.SIGINT)
    assert control.stopping and control.reason == "SIGINT"
    with pytest.raises(M.MatchAborted):
        control.handle(signal.SIGINT)
    import threading  # off the main thread (a GUI's worker) signals cannot be caught: install is a no-op there

    before = signal.getsignal(signal.SIGINT)
    worker = threading.Thread(target=lambda: M.StopControl().install()())
    worker.start()
    worker.join()
    assert signal.getsignal(signal.SIGINT) is before

    tag, out = f"tag-{uuid.uuid4().hex}", tmp_path / "m"
    # 60 short games: the match must still be running when the signals come. With 6, a loaded machine could let the
    # runner finish the other five (about 5 s) between the first record and the signals; the runner then restored
    # the default handlers on its way out, and SIGTERM killed it (return code -15, about 1 run in 30 here)
    proc = _start([*_engine_args(tag), "--games", "60", "--max-plies", "12", "--out", str(out)])
    _wait_for_records(out / "games.jsonl", 1, proc)
    # both signals pending before the runner can act on the first: sent back to back, a loaded machine could run
    # the runner's whole stop (and its restoring the default handlers) between them, and SIGTERM then killed it
    # (about 1 run in 12 here, even alone)
    os.kill(proc.pid, signal.SIGSTOP)
    os.kill(proc.pid, signal.SIGINT)
    os.kill(proc.pid, signal.SIGTERM)
    os.kill(proc.pid, signal.SIGCONT)
    t0 = time.monotonic()
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode in (128 + signal.SIGINT, 128 + signal.SIGTERM) and time.monotonic() - t0 < 20, stderr
    assert "aborting now" in stderr and "aborted: the finished games" in stderr and "Traceback" not in stderr, stderr
    assert "stopped by" not in stdout and not (out / "summary.json").exists(), stdout  # no summary: it aborted
    # the engines of the game are SIGKILLed; one still starting (no handshake yet) exits when it reads EOF
    assert _no_engines_left(tag, within=30.0), [Path(f"/proc/{p}/cmdline").read_bytes() for p in _processes_with(tag)]
    assert M.read_records(out / "games.jsonl")  # the finished games are still there
