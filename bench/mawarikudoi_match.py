"""Matches of mawarikudoi players (:class:`search.mawarikudoi.Engine` and the baselines here): one game, a match on
shared or duplicate dice with its interval. The engine's strength figures of ``docs/mawarikudoi.md`` come from here."""
from __future__ import annotations

import numpy as np

from engine.variants.mawarikudoi import throws as T
from engine.variants.mawarikudoi.state import MawarikudoiState
from search.mawarikudoi import race_tables
from usi import stats


class Greedy:
    """Most progress this turn: the end state with the fewest actions left to finish; always the mixed throw."""

    name = "greedy"

    def __init__(self, probs: T.ThrowProbabilities = T.DEFAULT_PROBABILITIES) -> None:
        self.distance = race_tables(probs).distance

    def choose_throw(self, state: MawarikudoiState) -> tuple[str, float]:
        return ("mixed" if state.mixed_allowed(state.side) else "gold"), float("nan")

    def choose_end(self, state: MawarikudoiState) -> tuple[int, float]:
        ends = state.end_states()
        return int(ends[int(np.argmin(self.distance[ends]))]), float("nan")


class RandomPlayer:
    """Uniform among the allowed throws and among the distinct end states of the turn."""

    name = "random"

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def choose_throw(self, state: MawarikudoiState) -> tuple[str, float]:
        kinds = ["gold", "mixed"] if state.mixed_allowed(state.side) else ["gold"]
        return kinds[int(self.rng.integers(len(kinds)))], float("nan")

    def choose_end(self, state: MawarikudoiState) -> tuple[int, float]:
        ends = state.end_states()
        return int(ends[int(self.rng.integers(len(ends)))]), float("nan")


def play_game(players, rng: np.random.Generator, probs: T.ThrowProbabilities = T.DEFAULT_PROBABILITIES,
              max_turns: int = 10000, dice: tuple[np.random.Generator, np.random.Generator] | None = None) -> int:
    """Play one game between ``players[0]`` (sente) and ``players[1]``; return the winner (0 or 1).

    Throws are drawn from ``rng``; with ``dice`` (one generator per seat) each throw is instead the inverse CDF of
    one uniform from the seat's generator, so two games on the same dice give each seat the same luck (the k-th
    throw of a seat uses its k-th uniform, whatever the kind of throw)."""
    state = MawarikudoiState(probs=probs)
    while state.phase != "end":
        if state.turn > max_turns:
            raise RuntimeError("game too long")
        player = players[state.side]
        if state.phase == "choose":
            state.choose_throw(player.choose_throw(state)[0])
        d = state.throw_distribution(state.phase)
        if dice is None:
            n = int(rng.choice(len(d), p=d))
        else:
            cum = np.cumsum(d)
            n = min(int(np.searchsorted(cum, dice[state.side].random() * cum[-1], side="right")), len(d) - 1)
        state.apply_throw_value(n)
        state.apply_end_state(player.choose_end(state)[0])
    return state.winner


def match(a, b, n_games: int, seed: int = 0, probs: T.ThrowProbabilities = T.DEFAULT_PROBABILITIES,
          duplicate: bool = False, results: list | None = None):
    """``a`` against ``b``, colours alternating; returns (wins of a, games, 95% Wilson interval of a's rate).

    ``duplicate=True``: games 2j and 2j+1 are played on the same dice (seeded ``(seed, j, seat)``), ``a`` sente in
    the first and gote in the second, so the luck of the dice cancels within a pair (duplicate dice, as in
    duplicate backgammon); see :func:`paired_interval`. ``results`` (a list) receives 1/0 per game for ``a``."""
    rng = np.random.default_rng(seed)
    wins = 0
    for g in range(n_games):
        dice = None
        if duplicate:
            dice = (np.random.default_rng((seed, g // 2, 0)), np.random.default_rng((seed, g // 2, 1)))
        if g % 2 == 0:
            won = play_game((a, b), rng, probs, dice=dice) == 0
        else:
            won = play_game((b, a), rng, probs, dice=dice) == 1
        wins += won
        if results is not None:
            results.append(int(won))
    return wins, n_games, stats.wilson(wins, n_games)


def paired_interval(results, z: float = stats.Z95) -> tuple[float, float, float]:
    """(rate, low, high): normal 95% interval of the win rate with the pair as the sampling unit, for a duplicate
    match (pairs are independent; the two games of a pair are not). ``results``: 1/0 per game, pairs 2j, 2j+1."""
    return stats.pentanomial_score(stats.pentanomial(results), z)
