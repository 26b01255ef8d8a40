"""``python -m bench.strength`` (issue 24, item 1): depths from the runner's records, the ledger and its pooled report
(default run, no engines), and a 2-game smoke run against Debian's fairy-stockfish at a small node budget (slow)."""
from __future__ import annotations

import math
import sys

import pytest

from bench import strength as B
from usi import match as M
from usi.stats import MatchStats

START = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1"


def _record(game, sente, gote, result, depths, start=START):
    return {"game": game, "pair": game // 2, "sente": sente, "gote": gote, "result": result, "reason": "checkmate",
            "start_sfen": start, "depths": depths}


def test_mean_depth_per_engine_follows_the_side_to_move():
    recs = [_record(0, "fantasista", "fsf", "gote", [None, None, 8, 13, 9, 14]),
            _record(1, "fsf", "fantasista", "sente", [None, 12, 7, None]),
            # a start position with gote to move: its first mover is gote
            _record(2, "fsf", "fantasista", "draw", [6, 11], start=START.replace(" b ", " w "))]
    d = B.mean_depths(recs)
    # game 0: ours sente (plies 2, 4); game 1: ours gote (ply 1); game 2: gote (ours) moves first (ply 0)
    assert d["fantasista"] == pytest.approx((8 + 9 + 12 + 6) / 4) and d["fsf"] == pytest.approx((13 + 14 + 7 + 11) / 4)


def test_ledger_lines_round_trip_and_pool(tmp_path):
    ledger = tmp_path / "ledger.tsv"
    st = MatchStats("fantasista", "fairy-stockfish")
    for g, res in enumerate(["gote", "sente", "draw", "gote"]):  # ours: sente in games 0, 2
        sente, gote = ("fantasista", "fairy-stockfish") if g % 2 == 0 else ("fairy-stockfish", "fantasista")
        st.add({"game": g, "pair": g // 2, "sente": sente, "gote": gote, "result": res, "reason": "checkmate"})
    assert (st.wins, st.draws, st.losses, st.penta) == (1, 1, 2, [1, 0, 0, 1, 0])  # pairs: 0 pts, 1.5 pts
    row = B.ledger_line("fairy-stockfish", "byoyomi 1000ms", st, {"fantasista": 8.5, "fairy-stockfish": 13.25},
                        "python -m bench.strength", "abc1234", date="2026-12-02T18:00:00Z")
    zero = MatchStats("fantasista", "fairy-stockfish")
    zero.add({"game": 0, "pair": 0, "sente": "fantasista", "gote": "fairy-stockfish", "result": "gote",
              "reason": "checkmate"})
    zero.add({"game": 1, "pair": 0, "sente": "fairy-stockfish", "gote": "fantasista", "result": "sente",
              "reason": "time forfeit"})
    row0 = B.ledger_line("fairy-stockfish", "byoyomi 1000ms", zero, {"fantasista": 7.0}, "cmd", "def5678")
    assert row0["elo"] == "-inf" and row0["depth_opponent"] == "-"  # 0% and no opponent depth: still a valid line
    B.append_ledger(ledger, [row])
    B.append_ledger(ledger, [row0])
    text = ledger.read_text().splitlines()
    assert text[0].split("\t") == list(B.COLUMNS) and len(text) == 3  # one header
    rows = B.read_ledger(ledger)
    assert rows[0]["pentanomial"] == "1,0,0,1,0" and rows[0]["score"] == "0.3750" and rows[1]["elo"] == "-inf"
    report = B.pooled_report(rows)
    # pooled: 6 games, +1 =1 -4; pentanomial [2, 0, 0, 1, 0]; depths weighted by games (8.5*4 + 7*2) / 6
    assert "6 games, +1 =1 -4, score 25.0%" in report and "pentanomial [2, 0, 0, 1, 0]" in report
    assert "fantasista 8.0" in report and "fairy-stockfish 13.2" in report and "abc1234, def5678" in report
    assert B.main(["--report", "--ledger", str(ledger)]) == 0
    bad = tmp_path / "bad.tsv"
    bad.write_text("date\tcommit\n2026\tx\n")
    assert B.main(["--report", "--ledger", str(bad)]) == 2


def test_figures_use_game_pairs_and_bad_arguments_are_refused(capsys):
    st = MatchStats("fantasista", "x")
    st.penta = [1, 2, 4, 2, 1]
    st.wins, st.draws, st.losses = 5, 10, 5
    fig = B.figures(st)
    assert fig["score"] == 0.5 and fig["elo"] == pytest.approx(0.0) and fig["elo_lower"] < 0 < fig["elo_upper"]
    assert math.isfinite(fig["elo_lower"])
    assert B.main(["--opponent", "gpsusi", "--nodes", "1000"]) == 2
    assert "no node limit" in capsys.readouterr().err
    assert B.main(["--games", "0"]) == 2
    assert B.main(["--opponent", "fairy-stockfish", "--engine-option", "SearchFeatures"]) == 2
    assert "--engine-option wants NAME=VALUE" in capsys.readouterr().err
    assert B.control_of(B.build_parser().parse_args(["--quick"]))[0] == "byoyomi 300ms"
    label, tc = B.control_of(B.build_parser().parse_args([]))
    assert label == "byoyomi 1000ms" and tc.kind == "byoyomi" and tc.main == 0


def test_an_output_directory_is_never_overwritten_and_resume_keeps_the_settings(tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    (out / "games.jsonl").write_text('{"game": 0}\n')
    base = ["--opponent", "fairy-stockfish", "--games", "2", "--nodes", "1000", "--no-ledger"]
    assert B.main([*base, "--out", str(out)]) == 2
    assert "already holds games" in capsys.readouterr().err
    assert B.main(["--resume", str(out)]) == 2  # no match.json: not a run of ours
    assert "match.json" in capsys.readouterr().err
    # A run's directory as the bench leaves it before its first game: the command line is saved, and --resume
    # replays it; a setting beside --resume would change the match, so it is refused.
    fresh = tmp_path / "fresh"
    args = B.build_parser().parse_args([*base, "--out", str(fresh)])
    engines = [M.EngineSpec.parse(["cmd=x", "name=fantasista"]), M.EngineSpec.parse(["cmd=y", "name=fsf"])]
    tasks = M.schedule(engines, M.read_openings(args.openings), 2, M.MatchSettings(), 1, gauntlet=True)
    assert M.prepare_output(fresh, tasks, [*base, "--out", str(fresh)], None, resume=False) == []
    assert M.resume_argv(fresh, ["--resume", str(fresh), "--quiet"], B.RESUME_OVERRIDES) == [
        *base, "--out", str(fresh), "--out", str(fresh), "--quiet"]
    assert B.main(["--resume", str(fresh), "--games", "4"]) == 2
    assert "only --concurrency, --quiet" in capsys.readouterr().err


@pytest.mark.slow
def test_smoke_two_games_against_fairy_stockfish(tmp_path, capsys):
    """The bench end to end: 2 games (one opening, colours swapped) at 2,000 nodes a move against fairy-stockfish."""
    ledger = tmp_path / "ledger.tsv"
    code = B.main(["--opponent", "fairy-stockfish", "--games", "2", "--nodes", "2000", "--ledger", str(ledger),
                   "--out", str(tmp_path / "m"), "--quiet", "--engine-cmd", f"{sys.executable} -m usi"])
    out = capsys.readouterr().out
    assert code == 0 and "fantasista vs fairy-stockfish at nodes 2000: 2 games" in out
    assert f"picture: {tmp_path / 'm' / 'strength-gauntlet.png'}" in out  # the summary names the picture it drew
    assert (tmp_path / "m" / "strength-gauntlet.png").read_bytes()[:4] == b"\x89PNG"
    (row,) = B.read_ledger(ledger)
    assert row["games"] == "2" and float(row["depth_ours"]) > 1 and float(row["depth_opponent"]) > 1
    recs = M.read_records(tmp_path / "m" / "games.jsonl")
    book = M.read_openings(B.OPENINGS)
    assert [r["moves"][:len(book[0].moves)] for r in recs] == [book[0].moves] * 2
    assert {r["sente"] for r in recs} == {"fantasista", "fairy-stockfish"}
    assert B.main(["--resume", str(tmp_path / "m"), "--quiet"]) == 0  # complete: nothing to play, no second line
    assert "nothing to resume" in capsys.readouterr().err and len(B.read_ledger(ledger)) == 1
