"""Enokian simulator: Wilson intervals, reproducible games, and the engine's strength against random and greedy play.

The strength tests compare win rates over the same decks (game i uses seed i) with 95% Wilson intervals; the default
run uses 200 games (it could still fail: the intervals there are about +-0.07 wide), the slow run the full 2,000.
"""
import pytest

from bench.enokian_sim import main, make_policy, play_game, simulate
from usi.stats import wilson


def test_games_are_reproducible_and_legal():
    for name in ("random", "greedy", "engine"):
        a, b = [], []
        ra = play_game(7, make_policy(name), record=a)
        rb = play_game(7, make_policy(name), record=b)
        assert ra == rb and a == b
        cards = [t for t in a if t.startswith("card=")]
        assert len(set(cards)) == len(cards) <= 52


def test_main_prints_a_report(capsys):
    assert main(["--policy", "random", "--games", "20"]) == 0
    out = capsys.readouterr().out
    assert "random: 20 games" in out and "95%" in out


def intervals(games):
    out = {}
    for name in ("engine", "greedy", "random"):
        c = simulate(name, games, seed=0)
        out[name] = wilson(c["survived"] + c["subdued"], games)
    return out


def test_engine_beats_random_and_greedy_200_games():
    ci = intervals(200)
    assert ci["engine"][0] > ci["greedy"][1], ci
    assert ci["engine"][0] > ci["random"][1], ci


@pytest.mark.slow
def test_engine_beats_random_and_greedy_2000_games():
    ci = intervals(2000)
    assert ci["engine"][0] > ci["greedy"][1], ci
    assert ci["engine"][0] > ci["random"][1], ci
    assert ci["greedy"][0] > ci["random"][1], ci
