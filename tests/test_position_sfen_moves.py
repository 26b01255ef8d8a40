"""``position sfen X moves M`` means ``position sfen Y``, Y being X after M, in every variant (issue 48).

Random games (seeded) give X, the tokens M (chance events as the USI protocol of the variant has them: ``roll=``,
``throw=``, ``card=``; turncoat as the side to move sees them: its own plan ``plan=<squares>``, the other's
``plan=?``) and Y. The engine is driven in-process: after each of the two ``position`` lines the ``d`` output, the
legal moves and a ``go depth 1`` answer (legal, no error line) are compared / checked.
"""
from __future__ import annotations

import io
import random

import pytest

import engine
from engine.variants.turncoat.state import HIDDEN
from usi import games
from usi.engine import UsiEngine

#: variant -> (games, cuts per game, plies per game): small, the kernels are compiled once and cached
PLAN = {
    "shogi": (3, 2, 50),
    "daishogi2017": (2, 2, 40),
    "fantasista": (3, 2, 70),  # the first d20 roll comes after ply 15
    "turncoat": (4, 2, 90),
    "mawarikudoi": (3, 2, 40),
    "enokian": (3, 2, 40),
}


CHANCE_VARIANTS = ("fantasista", "mawarikudoi", "enokian")


def _is_event(token: str) -> bool:
    """A chance event (``roll=``, ``throw=``, ``card=``) or, in turncoat, a plan or a declaration seen as one."""
    return "=" in token.split(",", 1)[0]


class Engine:
    """A :class:`UsiEngine` fed line by line, its output kept."""

    def __init__(self, variant: str) -> None:
        self.out = io.StringIO()
        self.eng = UsiEngine(out=self.out)
        self.variant = variant
        self.send(f"setoption name USI_Variant value {variant}", "setoption name Seed value 7", "isready")

    def send(self, *lines: str) -> list[str]:
        start = len(self.out.getvalue().splitlines())
        for line in lines:
            self.eng.handle(line)
        job = self.eng._job
        if job is not None and job.thread is not None:
            job.thread.join(120)
            assert not job.thread.is_alive(), "search did not finish"
        return self.out.getvalue().splitlines()[start:]

    def legal(self) -> list[str]:
        if self.eng.is_game:
            return sorted(self.eng.game.legal_actions())
        pos = self.eng.pos
        return sorted(pos.move_usi(int(c)) for c in pos.legal_codes())

    def state(self):
        return self.eng.game.copy() if self.eng.is_game else self.eng.pos.copy()

    def look(self, position: str) -> tuple[list[str], list[str], str]:
        """(``d`` lines, legal moves, ``bestmove`` of ``go depth 1``) after ``position``; no error line anywhere."""
        lines = self.send(position)
        assert lines == [], (position, lines)
        shown = self.send("d")
        legal = self.legal()
        state = self.state()
        lines = self.send("go depth 1")
        assert not any(line.startswith("info string") for line in lines), (position, lines)
        best = [line.split()[1] for line in lines if line.startswith("bestmove")]
        assert len(best) == 1, (position, lines)
        if self.eng.is_game:
            assert games.is_legal(state, best[0]), (position, best)
        else:
            assert best[0] in legal, (position, best)
        return shown, legal, best[0]


def random_game(variant: str, rng: random.Random, plies: int) -> tuple[list, list[str], list[bool]]:
    """A random game: the state after each token (``states[k]`` after ``tokens[:k]``), the tokens, and whether each
    state is a decision node with something to play (where ``go`` is asked)."""
    if not games.is_game_variant(variant):
        pos = engine.Position.startpos(variant)
        states, tokens, asks = [pos.copy()], [], [True]
        for _ in range(plies):
            codes = pos.legal_codes()
            if len(codes) == 0:
                break
            tokens.append(pos.move_usi(int(rng.choice(list(codes)))))
            pos.push(tokens[-1])
            states.append(pos.copy())
            asks.append(len(pos.legal_codes()) > 0)
        return states, tokens, asks
    state = games.new_state(variant, games.option_getter({}))
    states, tokens = [state.copy()], []
    asks = [state.node_kind().value == "decision"]
    for _ in range(plies):
        kind = state.node_kind().value
        if kind == "terminal":
            break
        if kind == "chance":
            token = games.sample_event(state.chance_events(), rng)
        else:
            actions = state.legal_actions()
            # turncoat: declare now and then once allowed, so that games with defections are covered
            token = "defect" if "defect" in actions and rng.random() < 0.3 else rng.choice(actions)
        state.apply(token)
        if variant == "turncoat":
            tokens.append(state.record[-1])  # the recorded form (plan:..., defect=...)
        else:
            tokens.append(token)
        states.append(state.copy())
        asks.append(state.node_kind().value == "decision")
    return states, tokens, asks


def position_lines(variant: str, states: list, tokens: list[str], i: int, j: int) -> tuple[str, str]:
    """``position sfen X moves M`` and ``position sfen Y`` for the cut ``tokens[i:j]``. Turncoat: both as the side
    to move at ``j`` sees them (:meth:`TurncoatGame.view`, ``sfen(side)``)."""
    if variant == "turncoat":
        side = states[j].side_to_move()
        x, y = states[i].sfen(side), states[j].sfen(side)
        moves = states[j].view(side)[i:j]
    else:
        x, y, moves = states[i].sfen(), states[j].sfen(), tokens[i:j]
    return f"position sfen {x} moves {' '.join(moves)}", f"position sfen {y}"


@pytest.mark.parametrize("variant", sorted(PLAN))
def test_position_sfen_with_moves_means_the_position_after_them(variant):
    n_games, n_cuts, plies = PLAN[variant]
    rng = random.Random(48)
    eng = Engine(variant)
    chance = variant in CHANCE_VARIANTS
    checked = with_events = set_up = 0
    for _ in range(n_games):
        states, tokens, asks = random_game(variant, rng, plies)
        ends = [k for k in range(1, len(states)) if asks[k]]
        for cut in range(n_cuts):
            for _ in range(100):  # a chance game's first cut of each game spans an event
                j = rng.choice(ends)
                i = rng.randrange(0, j)
                if not chance or cut > 0 or any(_is_event(t) for t in tokens[i:j]):
                    break
            with_events += any(_is_event(t) for t in tokens[i:j])
            with_moves, after = position_lines(variant, states, tokens, i, j)
            d1, legal1, _ = eng.look(with_moves)
            d2, legal2, _ = eng.look(after)
            assert d1 == d2, (with_moves, after)
            assert legal1 == legal2 and legal1, (with_moves, after)
            if variant == "turncoat":
                side = states[j].side_to_move()
                x_plans = with_moves.split()[6].split(";")[1:3]  # X's plan fields
                shown = next(line for line in d1 if line.startswith("sfen ")).split()[5].split(";")[1:3]
                set_up += x_plans[side] != "-"  # X carries the side's own plan
                if isinstance(states[j].plans[1 - side], tuple) and not states[j].declared[1 - side]:
                    # the other side's secret plan stays hidden: in X, in the moves, in the engine's state
                    assert x_plans[1 - side] in (HIDDEN, "-") and shown[1 - side] == HIDDEN, with_moves
            checked += 1
    assert checked == n_games * n_cuts
    assert with_events >= (n_games if chance else 0)
    assert variant != "turncoat" or set_up > 0
