"""The referee (usi/match.py, usi/game_referee.py) on the GameState variants: short games through real USI
subprocesses, our engine (``python -m usi`` with ``USI_Variant``) against a random-legal fake engine, records that
replay and reproduce with the seed, and turncoat views that never leak the enemy's plan."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from usi import games
from usi import match as M
from usi.game_referee import GameReferee, make_referee
from usi.records import read_jsonl

FAKE = str(Path(__file__).parent / "fake_engines" / "random_game_engine.py")
RANDOM = [f"cmd={sys.executable} {FAKE}"]
OURS = [f"cmd={sys.executable} -m usi", "name=ours"]


def _task(variant: str, sente, gote, seed: int = 11, max_plies: int = 40, **options) -> M.GameTask:
    # ready_timeout: these games start our engine without the CLI's warm-up, so a cold numba cache (after a kernel
    # change) compiles inside the game's own isready, which can pass the default 120 s under load
    settings = M.MatchSettings(variant=variant, tc=M.TimeControl(depth=1), max_plies=max_plies, ready_timeout=900,
                               variant_options=options)
    return M.GameTask(0, 0, M.EngineSpec.parse(sente), M.EngineSpec.parse(gote), M.Opening(), settings, seed)


def _replay(rec: dict, **options):
    state = games.new_state(rec["variant"], games.option_getter(options))
    for tok in rec["tokens"]:
        state.apply(tok)
    return state


def _check_record(rec: dict, **options) -> None:
    json.dumps(rec)
    assert rec["result"] in ("sente", "gote", "draw")
    assert rec["reason"] not in ("illegal move", "crash", "time forfeit", "handshake", "setup"), rec["detail"]
    assert len(rec["times"]) == len(rec["moves"])
    assert [t for _, t in rec["events"]] == [t for t in rec["tokens"] if "=" in t.split(",")[0]]
    assert _replay(rec, **options).sfen() == rec["final_sfen"]


@pytest.mark.parametrize("variant", ["fantasista", "turncoat", "mawarikudoi"])
def test_our_engine_against_random(variant):
    opts = {"FantasistaFairyGote": "ayumi"} if variant == "fantasista" else {}
    ref = make_referee(_task(variant, OURS, [*RANDOM, "name=rnd"], max_plies=36, **opts))
    assert type(ref) is GameReferee
    rec = ref.play()
    _check_record(rec, **opts)
    assert rec["sente"] == "ours" and rec["moves"]
    if variant == "fantasista":
        assert rec["start_sfen"].endswith("f=ha")
    if variant == "mawarikudoi":
        assert all(t.startswith("throw=") for _, t in rec["events"])


def test_enokian_duplicate_deck():
    rec = make_referee(_task("enokian", OURS, [*RANDOM, "name=rnd"], max_plies=60)).play()
    assert rec["reason"].startswith("duplicate deck: ")
    runs = rec["solo"]
    assert [r["engine"] for r in runs] == ["ours", "rnd"]
    # the same secret deck for both: each run's cards are a prefix of it, in order
    for run in runs:
        cards = [t for t in run["tokens"] if t.startswith("card=")]
        assert cards == rec["deck"][:len(cards)]
        assert run["reason"] not in ("illegal move", "crash", "time forfeit"), run["detail"]
    state = games.new_state("enokian", games.option_getter({}))
    for tok in runs[0]["tokens"]:
        state.apply(tok)
    assert state.sfen() == runs[0]["final_sfen"]
    expected = {(1, 0): "sente", (0, 1): "gote"}.get((runs[0]["score"], runs[1]["score"]), None)
    assert rec["result"] == (expected or ("sente" if runs[0]["score"] > runs[1]["score"] else
                                          "gote" if runs[1]["score"] > runs[0]["score"] else "draw"))


@pytest.mark.parametrize("variant", ["fantasista", "turncoat", "mawarikudoi", "enokian"])
def test_random_games_reproduce_with_the_seed(variant):
    recs = [make_referee(_task(variant, [*RANDOM, "name=a"], [*RANDOM, "name=b"], seed=4, max_plies=24)).play()
            for _ in range(2)]
    keys = ("tokens", "result", "reason", "final_sfen")
    assert [recs[0][k] for k in keys] == [recs[1][k] for k in keys]
    if variant != "enokian":
        for rec in recs:
            _check_record(rec)


def test_turncoat_views_never_leak_the_enemy_plan():
    ref = GameReferee(_task("turncoat", [*RANDOM, "name=a"], [*RANDOM, "name=b"], seed=2, max_plies=80))
    rec = ref.play()
    plans = [t for t in rec["tokens"] if t.startswith("plan=")]
    assert len(plans) == 2
    views = [ref.state.view(0), ref.state.view(1)]
    assert views[0][:2] == [plans[0], "plan=?"] and views[1][:2] == ["plan=?", plans[1]]
    for side in (0, 1):
        assert ref.sent[side], "the engine was asked"
        enemy_plan = plans[1 - side]
        for line in ref.sent[side]:
            tokens = line.split()[3:] if " moves " in line else []
            assert line.startswith("position startpos")
            assert tokens == views[side][:len(tokens)]  # exactly the side's view at that point
            assert enemy_plan not in tokens
            declared = any(t.startswith("defect=") for t in tokens)
            assert declared or enemy_plan[len("plan="):] not in line
        if side == 0:
            assert ref.sent[0][0] == "position startpos"
            assert ref.sent[0][1] == f"position startpos moves {plans[0]} plan=?"
    # the record holds the truth
    assert rec["tokens"][:2] == plans


def test_cli_variant_match(tmp_path, capsys):
    out = tmp_path / "m"
    code = M.main(["--engine", *RANDOM, "name=a", "--engine", *RANDOM, "name=b", "--variant", "mawarikudoi",
                   "--games", "2", "--depth", "1", "--max-plies", "20", "--out", str(out), "--quiet", "--seed", "3"])
    assert code == 0 and "a vs b: 2 games" in capsys.readouterr().out
    recs = list(read_jsonl(out / "games.jsonl"))
    assert len(recs) == 2 and all(r["variant"] == "mawarikudoi" for r in recs)
    assert not (out / "kif").exists()
    assert M.main(["--engine", *RANDOM, "--engine", *RANDOM, "--variant", "fantasista",
                   "--variant-option", "FantasistaFairyGote=dragon"]) == 2
    assert "dragon" in capsys.readouterr().err


FAIRY_OPENINGS = Path(__file__).parent.parent / "bench" / "openings" / "fantasista-fairies.txt"


def test_chance_aware_against_roll_blind_through_the_cli(tmp_path, capsys):
    """Issue 5's match at a tiny scale, as docs/matches.md gives it: our engine against itself with
    ``FantasistaChanceAware=false``, ``go nodes``, fairies from the openings file (one pair per game pair)."""
    out = tmp_path / "m"
    code = M.main(["--engine", *OURS[:1], "name=aware",
                   "--engine", *OURS[:1], "name=blind", "option.FantasistaChanceAware=false",
                   "--variant", "fantasista", "--games", "2", "--nodes", "150", "--max-plies", "36",
                   "--openings", str(FAIRY_OPENINGS), "--shuffle", "--seed", "5", "--out", str(out), "--quiet"])
    assert code == 0 and "aware vs blind: 2 games" in capsys.readouterr().out
    recs = list(read_jsonl(out / "games.jsonl"))
    assert [(r["sente"], r["gote"]) for r in recs] == [("aware", "blind"), ("blind", "aware")]
    starts = {o.sfen for o in M.read_openings(FAIRY_OPENINGS, "fantasista")}
    assert recs[0]["start_sfen"] == recs[1]["start_sfen"] and recs[0]["start_sfen"] in starts
    for rec in recs:
        # a rejected option would end the game as "setup"; a bad answer as "illegal move"
        assert rec["reason"] not in ("illegal move", "crash", "time forfeit", "handshake", "setup"), rec["detail"]
        assert any(t.startswith("roll=") for _, t in rec["events"])  # the games went past a roll
        state = games.build_state("fantasista", ["sfen", *rec["start_sfen"].split()], rec["tokens"],
                                  games.option_getter({}))
        assert state.sfen() == rec["final_sfen"]


def _turncoat_opening_with_both_plans() -> tuple[str, tuple[str, str]]:
    """A turncoat opening line whose extended SFEN carries both secret plans (two moves in), and the two plans."""
    state = games.new_state("turncoat", games.option_getter({}))
    for tok in ("plan:1a,1c,2a", "plan:8i,9g,9i", "7g7f", "3c3d"):
        state.apply(tok)
    plans = tuple(state.sfen().split()[4].split(";")[1:3])
    assert plans == ("1a,1c,2a", "8i,9g,9i")
    return f"sfen {state.sfen()} moves 2g2f 8c8d", plans


def test_a_turncoat_opening_with_both_plans_shows_each_engine_only_its_own(tmp_path):
    """An opening whose SFEN holds both plans reaches each engine as its own view: the enemy's undeclared plan is
    ``?`` in every ``position`` line it receives (it was sent the opening as written, both plans and all), the same
    line the game's ``position_command(side)`` gives; the record, written after the game, keeps the truth."""
    line, plans = _turncoat_opening_with_both_plans()
    logs = [tmp_path / "sente.log", tmp_path / "gote.log"]
    task = _task("turncoat", [*RANDOM[:1], "name=a"], [*RANDOM[:1], "name=b"], seed=3, max_plies=24)
    task.sente.cmd += ["--log", str(logs[0])]
    task.gote.cmd += ["--log", str(logs[1])]
    task.opening = M.parse_opening(line, 0, "turncoat")
    ref = GameReferee(task)
    rec = ref.play()
    assert rec["reason"] not in ("illegal move", "crash", "time forfeit", "handshake", "setup"), rec["detail"]
    truth = games.build_state("turncoat", ["sfen", *rec["start_sfen"].split()], rec["tokens"], games.option_getter({}))
    assert truth.sfen() == rec["final_sfen"]
    assert rec["moves"][:2] == ["2g2f", "8c8d"] and rec["start_sfen"] == line.split(" moves ")[0][len("sfen "):]
    for side in (0, 1):
        received = logs[side].read_text().splitlines()
        assert received and received == ref.sent[side]  # the audit list is what the engine got
        for sent in received:
            words = sent.split()
            assert words[:2] == ["position", "sfen"], sent
            shown = tuple(words[6].split(";")[1:3])  # the plans in the SFEN's extra field
            expected = (plans[0], "?") if side == 0 else ("?", plans[1])
            assert shown == expected, f"{'sente' if side == 0 else 'gote'} was sent {shown}"
            assert plans[1 - side] not in sent.split(" moves ")[0]
        # the last line is exactly what the game state itself sends that side at that point
        last = received[-1]
        moves = last.split(" moves ")[1].split() if " moves " in last else []
        probe = games.state_from_sfen("turncoat", rec["start_sfen"], games.option_getter({}))
        for tok in rec["tokens"][:len(moves)]:
            probe.apply(tok)
        assert last == probe.position_command(side)
