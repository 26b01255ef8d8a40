"""The match runner: referee rules with scripted engines, faulty engines, records, executors, real peers."""
import shutil
import subprocess
import sys
from pathlib import Path

import cshogi
import cshogi.CSA
import cshogi.KIF
import pytest

from usi import match as M
from usi import stats as S
from usi.client import Cp, UsiPlayResult
from usi.records import read_jsonl

FAKES = Path(__file__).parent / "fake_engines"
FSF = shutil.which("fairy-stockfish") or "/usr/games/fairy-stockfish"  # .ci/run installs it: no skip
RANDOM = [f"cmd={sys.executable} {FAKES / 'random_engine.py'}"]
QUICK = M.MatchSettings(max_plies=40, handshake_timeout=5, move_timeout=6, margin=300)


def spec(script, name):
    return M.EngineSpec.parse([f"cmd={sys.executable} {FAKES / script}", f"name={name}"])


# ------------------------------------------------------- scripted engines
class Scripted:
    """An in-process stand-in for UsiEngine that plays a fixed list of answers (cmd = ["script", *answers])."""

    def __init__(self, cmd, timeout=None):
        self.answers = list(cmd[1:])
        self.options, self.seen = {}, []

    def configure(self, options): pass
    def isready(self, timeout=None): pass
    def new_game(self): pass
    def gameover(self, result): self.result = result
    def quit(self, timeout=None): pass
    def close(self): pass

    def play(self, position, limit, timeout=None):
        self.seen.append(position)
        token = self.answers.pop(0)
        res = UsiPlayResult(None if token in ("win", "resign") else token, resign=token == "resign", win=token == "win",
                            info={"score": Cp(-900), "depth": 1}, elapsed=0.01)
        return res


def scripted_game(sente, gote, sfen="startpos", **settings):
    task = M.GameTask(0, 0, M.EngineSpec(["script", *sente], "s"), M.EngineSpec(["script", *gote], "g"),
                      M.Opening(sfen, [], 0, sfen), M.MatchSettings(**settings), seed=1)
    referee = M.Referee(task, engine_factory=Scripted)
    return referee, referee.play()


def test_sennichite_is_a_draw():
    _, rec = scripted_game(["5i5h", "5h5i"] * 3, ["5a5b", "5b5a"] * 3)
    assert (rec["result"], rec["reason"], len(rec["moves"])) == ("draw", "sennichite", 12)


def test_perpetual_check_loses():
    ref, rec = scripted_game(["2i1i", "1i2i"] * 3, ["1a2a", "2a1a"] * 3, sfen="8k/9/9/9/9/9/9/9/K6R1 b - 1")
    assert (rec["result"], rec["reason"]) == ("gote", "perpetual check")
    assert ref.view_for(0).startswith("position sfen 8k/9/9/9/9/9/9/9/K6R1 b - 1 moves 2i1i 1a2a")


def test_checkmate_entering_king_and_adjudication():
    _, rec = scripted_game(["2g2f", "2f2e", "2e2d", "2d2c+", "R*5b"], ["3c3d", "3a3b", "4a4b", "5c5d"],
                           sfen="4k4/9/9/9/9/9/9/9/4K4 b R 1")
    assert rec["reason"] in ("illegal move", "checkmate")
    # a declaration that holds
    ek = "+P+P+P+P+P+P+P+P+P/R3K3B/9/9/9/9/9/9/4k4 b RB4g4s4n4l9p 1"
    _, rec = scripted_game(["win"], [], sfen=ek)
    assert (rec["result"], rec["reason"]) == ("sente", "entering king")
    _, rec = scripted_game(["win"], [])
    assert (rec["result"], rec["reason"]) == ("gote", "illegal declaration")
    _, rec = scripted_game(["7g7f", "2g2f", "6g6f"], ["3c3d", "8c8d", "1c1d"], resign_score=500, resign_moves=3)
    assert (rec["result"], rec["reason"], len(rec["moves"])) == ("gote", "adjudication", 5)
    _, rec = scripted_game(["7g7f", "2g2f"], ["resign"], max_plies=512)
    assert (rec["result"], rec["reason"], rec["winner"]) == ("sente", "resign", "s")


def test_max_plies_and_time_accounting():
    _, rec = scripted_game(["5i5h", "5h5i", "5i5h"], ["5a5b", "5b5a"], max_plies=4)
    assert (rec["result"], rec["reason"]) == ("draw", "max plies")
    task = M.GameTask(0, 0, M.EngineSpec(["x"], "a"), M.EngineSpec(["x"], "b", nodes=7), M.Opening(),
                      M.MatchSettings(tc=M.TimeControl(main=1000, byoyomi=500), margin=100), seed=0)
    ref = M.Referee(task)
    assert ref.limit_for(0).go_command() == "go btime 1000 wtime 1000 byoyomi 500"
    assert ref.limit_for(1).go_command() == "go btime 1000 wtime 1000 byoyomi 500 nodes 7"
    ref._charge(0, 1.2)  # 1000 ms main + 200 ms of byoyomi
    assert ref.clocks[0] == 0
    with pytest.raises(M.GameOver) as over:
        ref._charge(0, 0.65)  # 650 > 500 + 100
    assert over.value.reason == "time forfeit" and over.value.result == "gote"
    fischer = M.Referee(M.GameTask(0, 0, task.sente, task.gote, M.Opening(),
                                   M.MatchSettings(tc=M.TimeControl(main=1000, inc=200)), seed=0))
    fischer._charge(1, 0.5)
    assert fischer.clocks[1] == 700 and "wtime 700 binc 200 winc 200" in fischer.limit_for(1).go_command()


# --------------------------------------------------------------- real runs
def test_random_match_records_stats_and_reproducible(tmp_path):
    engines = lambda: [M.EngineSpec.parse(RANDOM + ["name=r1"]), M.EngineSpec.parse(RANDOM + ["name=r2"])]  # noqa: E731
    res = M.run_match(engines(), games=4, settings=QUICK, seed=11, out=tmp_path / "a")
    assert [r["game"] for r in res.records] == [0, 1, 2, 3]
    assert [r["sente"] for r in res.records] == ["r1", "r2", "r1", "r2"] and [r["pair"] for r in res.records] == [0, 0, 1, 1]
    st = res.stats["r1 vs r2"]
    assert st.games == 4 and sum(st.penta) == 2
    lines = list(read_jsonl(tmp_path / "a" / "games.jsonl"))
    assert len(lines) == 4 and (tmp_path / "a" / "summary.json").exists()
    for r in res.records:
        assert len(r["times"]) == len(r["moves"]) == len(r["scores"]) and r["reason"]
        kif = cshogi.KIF.Parser.parse_file(str(tmp_path / "a" / "kif" / f"game-{r['game']:05d}.kif"))
        csa = cshogi.CSA.Parser.parse_file(str(tmp_path / "a" / "csa" / f"game-{r['game']:05d}.csa"))[0]
        assert [cshogi.move_to_usi(m) for m in kif.moves] == r["moves"] == [cshogi.move_to_usi(m) for m in csa.moves]
    again = M.run_match(engines(), games=2, settings=QUICK, seed=11)  # same seed: same games
    assert [r["moves"] for r in again.records] == [r["moves"] for r in res.records[:2]]


@pytest.mark.parametrize("script,reason", [("crash.py", "crash"), ("no_usiok.py", "handshake"),
                                           ("illegal.py", "illegal move"), ("hang.py", "time forfeit"),
                                           ("false_win.py", "illegal declaration")])
def test_faulty_engines_lose_and_the_match_goes_on(script, reason):
    res = M.run_match([M.EngineSpec.parse(RANDOM + ["name=ok"]), spec(script, "bad")], games=2, settings=QUICK)
    assert len(res.records) == 2
    for r in res.records:
        assert (r["winner"], r["reason"]) == ("ok", reason), r
    assert res.stats["ok vs bad"].wins == 2


def test_openings_file_and_cli(tmp_path, capsys):
    book = tmp_path / "book.txt"
    book.write_text("# openings\n7g7f 3c3d\nsfen l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w RGgsn5p 1\n"
                    "startpos moves 2g2f\n")
    ops = M.read_openings(book)
    assert [o.moves for o in ops] == [["7g7f", "3c3d"], [], ["2g2f"]] and ops[1].sfen.startswith("l6nl")
    bad = tmp_path / "bad.txt"
    bad.write_text("7g7f 7g7f\n")
    with pytest.raises(ValueError, match="bad.txt:1"):
        M.read_openings(bad)
    assert M.main(["--engine", *RANDOM, "--engine", *RANDOM, "--variant", "chess"]) == 2
    assert "unknown variant" in capsys.readouterr().err
    out = tmp_path / "cli"
    code = M.main(["--engine", *RANDOM, "name=a", "--engine", *RANDOM, "name=b", "--games", "2", "--openings", str(book),
                   "--max-plies", "30", "--out", str(out), "--quiet", "--seed", "3"])
    assert code == 0 and "a vs b: 2 games" in capsys.readouterr().out
    recs = list(read_jsonl(out / "games.jsonl"))
    assert all(r["moves"][:2] == ["7g7f", "3c3d"] and r["opening"]["plies"] == 2 for r in recs)
    assert recs[0]["times"][:2] == [None, None]


def test_console_script_help():
    out = subprocess.run([sys.executable, "-m", "usi.match", "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "--cluster" in out.stdout


def test_process_pool_and_dask_executors():
    engines = [M.EngineSpec.parse(RANDOM + ["name=p"]), M.EngineSpec.parse(RANDOM + ["name=q"])]
    pool, close = M.make_executor(2)
    try:
        res = M.run_match(engines, games=2, settings=QUICK, seed=5, executor=pool)
    finally:
        close()
    import distributed  # in the test extra: a missing install must fail, not skip
    with distributed.LocalCluster(n_workers=1, processes=False, threads_per_worker=2, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        dres = M.run_match(engines, games=2, settings=QUICK, seed=5, executor=client.get_executor(pure=False))
    assert [r["moves"] for r in dres.records] == [r["moves"] for r in res.records]


def test_sprt_stops_early(monkeypatch):
    """The first engine wins every game (synthetic results): a loose SPRT accepts H1 and unplayed games are dropped."""
    def fake_game(task):
        return {"game": task.index, "pair": task.pair, "sente": task.sente.name, "gote": task.gote.name,
                "result": "sente" if task.sente.name == "a" else "gote", "reason": "resign", "variant": "shogi"}

    monkeypatch.setattr(M, "play_game", fake_game)
    engines = [M.EngineSpec(["x"], "a"), M.EngineSpec(["y"], "b")]
    res = M.run_match(engines, games=200, seed=1, sprt={"elo0": 0, "elo1": 200, "alpha": 0.05, "beta": 0.05})
    assert res.stopped_by_sprt and len(res.records) < 200 and res.stats["a vs b"].sprt().decision == "H1"


def test_fairy_stockfish_match(tmp_path):
    fsf = M.EngineSpec.parse([f"cmd={FSF}", "name=fsf", "option.USI_Hash=16", "nodes=300"])
    res = M.run_match([fsf, M.EngineSpec.parse(RANDOM + ["name=rnd"])], games=2, seed=2, out=tmp_path,
                      settings=M.MatchSettings(max_plies=160, move_timeout=20))
    assert len(res.records) == 2
    for r in res.records:
        assert r["reason"] in ("checkmate", "resign", "max plies", "sennichite", "entering king"), r
        kif = cshogi.KIF.Parser.parse_file(str(tmp_path / "kif" / f"game-{r['game']:05d}.kif"))
        assert [cshogi.move_to_usi(m) for m in kif.moves] == r["moves"]
        fsf_scores = r["scores"][0::2] if r["sente"] == "fsf" else r["scores"][1::2]
        assert any(s is not None for s in fsf_scores)
    assert res.stats["fsf vs rnd"].wins == 2  # a 300-node search never loses to random moves


def test_fairy_stockfish_against_our_engine(tmp_path):
    """The real peer against our engine (python -m usi) through the runner: valid records both ways."""
    fsf = M.EngineSpec.parse([f"cmd={FSF}", "name=fsf", "option.USI_Hash=16", "nodes=1000"])
    ours = M.EngineSpec.parse([f"cmd={sys.executable} -m usi", "name=fantasista", "option.USI_Hash=16", "nodes=1000"])
    res = M.run_match([ours, fsf], games=2, seed=4, out=tmp_path,
                      settings=M.MatchSettings(max_plies=200, ready_timeout=600, move_timeout=60))
    assert len(res.records) == 2 and {r["sente"] for r in res.records} == {"fantasista", "fsf"}
    for r in res.records:
        assert r["reason"] in ("checkmate", "resign", "max plies", "sennichite", "perpetual check",
                               "entering king"), r
        csa = cshogi.CSA.Parser.parse_file(str(tmp_path / "csa" / f"game-{r['game']:05d}.csa"))[0]
        assert [cshogi.move_to_usi(m) for m in csa.moves] == r["moves"]
    st = res.stats["fantasista vs fsf"]
    assert st.games == 2 and st.wins + st.draws + st.losses == 2


def test_sprt_prior_continues_a_test(monkeypatch, capsys):
    """A prior one won pair short of H1 (the counts of an earlier part, e.g. from a ledger line): the continued test
    stops after the first pair, where it alone would go on; the pooled counts are the prior's plus the new games."""
    def fake_game(task):
        return {"game": task.index, "pair": task.pair, "sente": task.sente.name, "gote": task.gote.name,
                "result": "sente" if task.sente.name == "a" else "gote", "reason": "resign", "variant": "shogi"}

    monkeypatch.setattr(M, "play_game", fake_game)
    sprt = {"elo0": 0, "elo1": 10, "alpha": 0.05, "beta": 0.05}
    penta = [36, 1, 121, 0, 85]
    while S.llr_pentanomial([*penta[:4], penta[4] + 1], 0, 10) < 2.944:  # a prior one won pair from H1
        penta[4] += 1
    assert S.sprt(penta, 0, 10).decision is None
    prior = S.Prior(2 * sum(penta) - 100, 100, 0, tuple(penta))  # W/D/L other than the pairs': only the sums count
    engines = [M.EngineSpec(["x"], "a"), M.EngineSpec(["y"], "b")]
    res = M.run_match(engines, games=40, seed=1, sprt=sprt, sprt_prior=prior)
    st = res.stats["a vs b"]
    assert res.stopped_by_sprt and len(res.records) == 2 and st.sprt().decision == "H1"
    assert st.penta == [*penta[:4], penta[4] + 1] and st.games == 2 * sum(penta) + 2
    alone = M.run_match(engines, games=40, seed=1, sprt=sprt)
    assert len(alone.records) > 2
    # the command line: the prior needs --sprt and a well-formed pair of counts
    base = ["--engine", *RANDOM, "--engine", *RANDOM, "--games", "2", "--quiet", "--no-warmup"]
    assert M.main([*base, "--sprt-prior", "1/0/1", "[0,0,1,0,0]"]) == 2
    assert "give --sprt too" in capsys.readouterr().err
    assert M.main([*base, "--sprt", "0", "10", "0.05", "0.05", "--sprt-prior", "1/0/1", "[0,0,1,0]"]) == 2
    assert "five pair counts" in capsys.readouterr().err
