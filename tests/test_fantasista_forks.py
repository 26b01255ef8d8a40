"""bench/fantasista_forks.py: the turn where the two games of a decisive duplicate pair part."""
from __future__ import annotations

import pytest

from bench import fantasista_forks as F
from bench import fantasista_strength as ledger


def _pair(seed: int, j: int, scores: tuple[float, float], mode: str = "blind-seat", nodes: int = 120):
    (sente, gote), _ = ledger.pair_setups(seed, j + 1)[j]
    return [ledger.Game(mode, nodes, seed, 2 * j + k, sente, gote, s, "r") for k, s in enumerate(scores)]


def test_only_decisive_pairs_are_replayed_to_the_turn_where_the_engines_part():
    games = _pair(40, 0, (1.0, 0.0)) + _pair(40, 1, (0.0, 0.0)) + _pair(40, 2, (1.0, 1.0))
    found = list(F.forks(games, "blind-seat", 120, 40))
    assert [(f.pair, f.points) for f in found] == [(1, 0.0), (2, 2.0)]
    for f in found:
        assert (f.sente, f.gote) == ledger.pair_setups(40, 3)[f.pair][0]
        # a fork names two different turns; a pair that never parted (move 0) names none
        assert (f.move > 0 and f.aware != f.blind and f.aware and f.blind) or (f.move, f.aware) == (0, "")
    lines = F.tally(found)
    assert lines[0].startswith("forks before the first roll: aware won") and lines[1].startswith("forks after it")
    assert sum(int(line.split(" of ")[1].split()[0]) for line in lines[:2]) == sum(f.move > 0 for f in found)


def test_a_ledger_of_another_draw_or_mode_is_refused():
    games = _pair(40, 0, (1.0, 1.0))
    wrong = [g._replace(sente="hiko" if g.sente != "hiko" else "ayumi") for g in games]
    with pytest.raises(ValueError, match="pair 0 of seed 40"):
        list(F.forks(wrong, "blind-seat", 120, 40))
    with pytest.raises(ValueError, match="duplicate modes"):
        list(F.forks(games, "blind", 120, 40))


def test_the_replay_plays_the_match_scripts_games():
    from tests import test_fantasista_match as M
    assert F.MAX_PLIES == M.MAX_PLIES
    assert ledger.MODE_SETTINGS["blind"] == {"prune_twin_drops": False, "positional": False}  # as played
    seats = []
    M.match(M._greedy_player, M._greedy_player, 4, seed=77, fairies_by_seat=True,
            on_game=lambda k, fairies, score: seats.append(fairies))
    assert seats[::2] == [fairies for fairies, _ in ledger.pair_setups(77, 2)]
