"""Time management in matches (issue 24, item 6): our engine against itself through the referee under sudden death,
Fischer and byoyomi with no grace margin, and the clock replay (``bench.strength.time_usage``, ``usi.match.spend``)
that the strength bench reports from the records.

The unit rules of the budget are in ``test_usi_timeman.py``; here the whole path is played: the referee's clocks, the
``go`` lines, the engine's budget, its search stopping and its ``bestmove`` arriving in time."""
from __future__ import annotations

import sys

import pytest

from bench import strength as B
from usi import match as M

OURS = f"cmd={sys.executable} -m usi"


def _engines() -> list[M.EngineSpec]:
    return [M.EngineSpec.parse([OURS, f"name={name}", "option.USI_Hash=16"]) for name in ("a", "b")]


@pytest.mark.parametrize("tc, max_plies", [
    # sudden death: 3 s, capped at 160 plies (a long game). Each move's fixed latency is reserved for the moves to
    # come (search.timeman.MOVE_COST_MS); before that reserve a 3 s game was lost on time at ply ~120 under load.
    (M.TimeControl(main=3_000), 160),
    (M.TimeControl(main=1000, inc=100), 512),        # Fischer: 1 s + 100 ms a move
    (M.TimeControl(main=0, byoyomi=300), 50),        # byoyomi only: 300 ms a move (capped: 50 plies)
], ids=["sudden-death", "fischer", "byoyomi"])
def test_our_engine_never_overruns_its_clock_in_a_match(tc, max_plies, tmp_path):
    # margin 0: any move longer than what the clock allowed is a forfeit. ready_timeout: a cold numba cache
    # compiles in the game's isready, before the clock starts.
    settings = M.MatchSettings(tc=tc, margin=0, max_plies=max_plies, ready_timeout=900)
    res = M.run_match(_engines(), games=1, settings=settings, seed=3, openings=[M.Opening()])
    (rec,) = res.records
    assert rec["reason"] not in ("time forfeit", "crash", "illegal move"), rec["detail"]
    usage = B.time_usage([rec], tc)
    plies = len(rec["moves"])
    assert plies >= min(max_plies, 40)  # a real game, not an early accident
    for name in ("a", "b"):
        u = usage[name]
        assert u.forfeits == 0 and u.moves >= plies // 2 - 1, u.summary()
        assert u.worst_overrun < 0, u.summary()  # every move came with time to spare
        if tc.kind == "sudden death":
            # the budget spreads over the game: the clock is never spent, and no move takes a fifth of the start
            assert u.min_clock > 0 and u.longest < tc.main / 5, u.summary()
        elif tc.kind == "fischer":
            assert u.min_clock > 0 and u.mean < tc.main / 5, u.summary()
        else:
            # byoyomi cannot be saved: the engine uses most of it on a move (overhead: NetworkDelay + safety)
            assert u.byoyomi_use is not None and u.byoyomi_use > 0.3, u.summary()


def test_clock_replay_matches_the_referee_rules():
    start = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1"  # gote moves first
    rec = {"sente": "s", "gote": "g", "start_sfen": start, "times": [1.0, 1.0, 1.5, 1.0, None],
           "reason": "time forfeit", "result": "gote"}
    # sudden death 3 s: g spends 1.0 + 1.5 (0.5 s left), s spends 1.0 + 1.0 (1 s left); s lost on time
    u = B.time_usage([rec], M.TimeControl(main=3000))
    assert (u["g"].moves, u["s"].moves) == (2, 2)
    assert u["g"].min_clock == pytest.approx(500) and u["g"].worst_overrun == pytest.approx(-500)
    assert u["s"].min_clock == pytest.approx(1000) and (u["s"].forfeits, u["g"].forfeits) == (1, 0)
    # Fischer 1 s + 1 s: g: 1000 - 1000 (+1000) = 1000, 1000 - 1500 = -500 (over by 500 before its increment)
    f = B.time_usage([rec], M.TimeControl(main=1000, inc=1000))
    assert f["g"].worst_overrun == pytest.approx(500) and f["g"].min_clock == pytest.approx(-500)
    # byoyomi 1 s after 1 s of main time: g's first move spends the main time, its second is in byoyomi (1.5 s: over)
    b = B.time_usage([rec], M.TimeControl(main=1000, byoyomi=1000))
    assert b["g"].worst_overrun == pytest.approx(500) and b["g"].byoyomi_moves == 1
    assert b["g"].byoyomi_use == pytest.approx(1.5) and "byoyomi used 150%" in b["g"].summary()
    assert B.TimeUsage().summary() == "no timed moves"


def test_spend_is_the_referees_forfeit_rule():
    byo = M.TimeControl(main=1000, byoyomi=500)
    assert M.spend(byo, 1000, 1400) == (0.0, -100)       # main time first, then the byoyomi
    assert M.spend(byo, 0, 600) == (0.0, 100)            # 100 ms over the byoyomi
    fischer = M.TimeControl(main=1000, inc=200)
    assert M.spend(fischer, 1000, 300) == (900, -700)    # the increment comes after the move
    assert M.spend(M.TimeControl(main=1000), 50, 100) == (-50, 50)


def test_timed_controls_of_the_bench():
    parse = B.build_parser().parse_args
    assert B.control_of(parse(["--time", "60"])) == ("sudden death 60s", M.TimeControl(main=60_000))
    assert B.control_of(parse(["--time", "2.5", "--inc", "0.1"])) == ("fischer 2.5s+100ms",
                                                                       M.TimeControl(main=2500, inc=100))
    assert B.control_of(parse(["--time", "30", "--byoyomi", "1"])) == ("byoyomi 30s+1000ms",
                                                                        M.TimeControl(main=30_000, byoyomi=1000))
    assert B.control_of(parse([]))[0] == "byoyomi 1000ms"  # the bar's control keeps its ledger label
    for bad in (["--inc", "1"], ["--time", "0", "--inc", "1"], ["--time", "-1"], ["--byoyomi", "0"],
                ["--nodes", "100", "--time", "5"]):
        with pytest.raises(ValueError):
            B.control_of(parse(bad))
    assert B.main(["--inc", "1", "--opponent", "fairy-stockfish"]) == 2
