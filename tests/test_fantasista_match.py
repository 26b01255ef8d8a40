"""Ousho Fantasista strength: the chance-aware search against the same search ignoring coming rolls, and against a
one-ply greedy player, with the same node budget per turn.

Our own game loop (``usi/match.py`` drives USI engines; the fantasista searcher is not wired to USI yet): colours
alternate, fairies are drawn per game pair, rolls come from a seeded generator (both games of a pair see the same
roll sequence), and a game that reaches ``MAX_PLIES`` is adjudicated by the static material balance (a win for the
side ahead by more than ``ADJUDICATE`` centipawns, else a draw). Deterministic for a seed.

Run ``python -m tests.test_fantasista_match GAMES NODES`` for the report (score of the first player, 95% interval).
"""
from __future__ import annotations

import math
import random
import sys
import time

import pytest

from engine.game import NodeKind
from engine.variants.fantasista import FAIRIES, new_game
from engine.variants.fantasista.turngen import to_array
from search.fantasista import FantasistaSearcher, greedy_turn

MAX_PLIES = 100
ADJUDICATE = 600


def _searcher_player(chance_aware: bool, nodes: int):
    s = FantasistaSearcher(chance_aware=chance_aware)

    def play(g):
        s.tt.clear()
        return s.search(g, depth=6, node_limit=nodes).best
    return play


def _greedy_player():
    s = FantasistaSearcher(chance_aware=False)
    return lambda g: greedy_turn(g, s)


def play_game(players, fairies, roll_seed: int) -> float:
    """Score of ``players[0]`` (sente) in one game."""
    rng = random.Random(roll_seed)
    g = new_game(fairies, max_plies=MAX_PLIES)
    while g.node_kind() is not NodeKind.TERMINAL:
        if g.node_kind() is NodeKind.CHANCE:
            g.apply(f"roll={rng.randint(1, 20)}")
            continue
        g.apply(players[g.side_to_move()](g))
    score, reason = g.result()
    if reason == "move limit":
        judge = FantasistaSearcher(chance_aware=False)
        judge._set_fairies(g.fairy)
        v = judge.evaluate(to_array(g.bd), g.move_number)  # for the side to move
        v = v if g.bd.stm == 0 else -v
        score = 1.0 if v > ADJUDICATE else 0.0 if v < -ADJUDICATE else 0.5
    return score


def match(make_a, make_b, games: int, seed: int = 1):
    """Score of A against B over ``games`` games (pairs with colours swapped): (mean, half width of the 95% CI,
    per-game scores)."""
    rng = random.Random(seed)
    a, b = make_a(), make_b()
    scores = []
    for k in range(games):
        if k % 2 == 0:
            fairies = (rng.choice(FAIRIES), rng.choice(FAIRIES))
            roll_seed = rng.randrange(1 << 30)
        if k % 2 == 0:
            scores.append(play_game((a, b), fairies, roll_seed))
        else:
            scores.append(1.0 - play_game((b, a), fairies[::-1], roll_seed))
    n = len(scores)
    mean = sum(scores) / n
    var = sum((x - mean) ** 2 for x in scores) / max(1, n - 1)
    return mean, 1.96 * math.sqrt(var / n), scores


def test_chance_aware_beats_greedy_small():
    mean, _, scores = match(lambda: _searcher_player(True, 120), _greedy_player, games=4, seed=3)
    assert mean >= 0.5, scores


@pytest.mark.slow
def test_chance_aware_beats_greedy_100_games():
    mean, half, scores = match(lambda: _searcher_player(True, 300), _greedy_player, games=100, seed=11)
    print(f"aware vs greedy: {mean:.3f} +- {half:.3f}")
    assert mean - half > 0.5


@pytest.mark.slow
def test_chance_aware_vs_roll_blind_100_games():
    mean, half, scores = match(lambda: _searcher_player(True, 300), lambda: _searcher_player(False, 300),
                               games=100, seed=12)
    print(f"aware vs roll-blind: {mean:.3f} +- {half:.3f}")
    assert mean >= 0.5


if __name__ == "__main__":
    games = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    nodes = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    which = sys.argv[3] if len(sys.argv) > 3 else "both"
    t0 = time.time()
    if which in ("both", "greedy"):
        m, h, sc = match(lambda: _searcher_player(True, nodes), _greedy_player, games, seed=11)
        print(f"aware vs greedy ({games} games, {nodes} nodes): {m:.3f} +- {h:.3f} "
              f"W{sc.count(1.0)} D{sc.count(0.5)} L{sc.count(0.0)} ({time.time() - t0:.0f} s)", flush=True)
    if which in ("both", "blind"):
        m, h, sc = match(lambda: _searcher_player(True, nodes), lambda: _searcher_player(False, nodes), games,
                         seed=12)
        print(f"aware vs roll-blind ({games} games, {nodes} nodes): {m:.3f} +- {h:.3f} "
              f"W{sc.count(1.0)} D{sc.count(0.5)} L{sc.count(0.0)} ({time.time() - t0:.0f} s)", flush=True)
