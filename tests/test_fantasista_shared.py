"""Fantasista on the shared position and generator (issue 50), held to the frozen answers of its own rules engine
(``tests/fantasista_fixture.py``).

A turn *is* its outcome, so the shared generator is compared by outcomes: the set of positions its moves lead to
against the set the fixture's actions lead to (played by today's game layer), restricted to the turns the shared
generator makes so far.
"""
from __future__ import annotations

import random

import numpy as np
import pytest

from engine.kernels.movegen import ST_PLY, do_move, undo_move
from engine.variants.fantasista import pieces as PC
from engine.variants.fantasista.movers import legal_moves
from engine.variants.fantasista.state import FantasistaState
from engine.variants.fantasista.variant import ST_TRUNCATED, FANTASISTA, fx_tables, position_key, to_board, to_pos
from tests.fantasista_fixture import load

MOVE_BUFFER = 1 << 16
FEW_TURNS = 400  # a node with more turns has a sample of them played through the game layer


@pytest.fixture(scope="module")
def decision_nodes() -> list[tuple[FantasistaState, list[str]]]:
    """The fixture's turn nodes (pre-game and target decisions left out) as states with their legal actions."""
    out = []
    fixture = load()
    for node in fixture["positions"] + fixture["features"]:
        g = FantasistaState.from_sfen(node["sfen"])
        if g.phase == "move" and g.pregame_side() is None:
            out.append((g, node["actions"]))
    return out


def _has_carrier(g: FantasistaState) -> bool:
    return any(m & PC.CARRIER for m in g.bd.m)


def test_kinds_and_tables():
    T = fx_tables()
    lt = FANTASISTA.ptype_of_letter
    assert [lt[x] for x in ("D", "O", "Y", "T", "H", "W")] == list(range(15, 21))
    assert lt["P'"] == 21 and lt["+R'"] == 29
    for letter in ("P'", "+R'", "D", "Y", "W"):  # captured tokens leave the game
        assert T.hand_type[lt[letter]] == 0 and T.hand_type[lt[letter] + 32] == 0
    assert T.hand_type[lt["+P"]] == lt["P"]
    assert T.promote_code[lt["Y"]] == lt["+P'"] == T.promote_code[lt["P'"]]
    assert T.prefer_promote[lt["P'"]] and T.prefer_promote[lt["R'"]] and not T.prefer_promote[lt["Y"]]
    # immunities: the king-god dragon not to a pawn (token or not), the thunder horse only to K R L N
    assert not T.capture_ok[lt["P'"], lt["O"] + 32] and T.capture_ok[lt["+P"], lt["O"] + 32]
    assert T.capture_ok[lt["R'"], lt["T"] + 32] and not T.capture_ok[lt["+R"], lt["T"] + 32]
    assert not T.capture_ok[lt["R"], lt["K"] + 32]


def test_position_round_trip(decision_nodes):
    T = fx_tables()
    for g, _ in decision_nodes:
        P = to_pos(g.bd, g.move_number)
        assert to_board(P).key() == g.bd.key(), g.sfen()
        assert P.keys[0] == position_key(P, T)


def test_key_tells_marks_riders_and_rights_apart(decision_nodes):
    T = fx_tables()
    g = next(g for g, _ in decision_nodes if _has_carrier(g) and any(g.bd.r))
    base = to_pos(g.bd).keys[0]
    sq = next(s for s in range(81) if g.bd.r[s])
    for change in ("rider", "rider mark", "carrier", "right", "emblem"):
        bd = g.bd.copy()
        if change == "rider":
            bd.r[sq] = 0
        elif change == "rider mark":
            bd.rm[sq] ^= PC.INVINCIBLE
        elif change == "carrier":
            bd.m[sq] &= ~PC.CARRIER
        elif change == "right":
            bd.rights[0][1] += 1
        else:
            bd.emblem[1] = not bd.emblem[1]
        assert to_pos(bd).keys[0] != base, change
        assert to_pos(bd).keys[0] == position_key(to_pos(bd), T)


def test_turns_are_the_fixtures(decision_nodes):
    # as many moves as the fixture has turns, each to a different place (keys kept move by move), and back; where
    # the turns are few enough to play them all through the game layer, the same places
    T = fx_tables()
    out = np.zeros(MOVE_BUFFER, np.int32)
    rng = random.Random(50)
    for g, actions in decision_nodes:
        P = to_pos(g.bd, g.move_number)
        board = P.board.copy()
        n = legal_moves(P, T, out)
        assert not P.st[ST_TRUNCATED]
        assert n == len(actions), g.sfen()
        keys = set()
        for mv in out[:n]:
            do_move(P, T, mv)
            keys.add(int(P.keys[1]))
            undo_move(P, T)
        assert len(keys) == n and (P.board == board).all() and P.st[ST_PLY] == 0, g.sfen()
        few = len(actions) <= FEW_TURNS
        shared = {}
        for mv in (out[:n] if few else rng.sample(list(out[:n]), FEW_TURNS)):
            do_move(P, T, mv)
            assert P.keys[1] == position_key(P, T), (g.sfen(), hex(mv))
            shared[to_board(P).key()] = int(mv)
            undo_move(P, T)
        expected = {}
        for a in (actions if few else []):
            h = g.copy()
            h.apply(a)
            expected[h.bd.key()] = a
        if few:
            assert set(shared) == set(expected), (
                g.sfen(), sorted(expected[k] for k in set(expected) - set(shared)),
                sorted(hex(shared[k]) for k in set(shared) - set(expected)))
        else:  # a big silver wave: the game layer finds each sampled outcome among its turns
            _, _, by_key = g.turns()
            assert all(by_key.get(k) is not None for k in shared), g.sfen()


def _perft(P, T, depth: int, buffers: list[np.ndarray]) -> int:
    """Turns ``depth`` plies deep (rolls not played), counted at the last ply."""
    out = buffers[depth]
    n = legal_moves(P, T, out)
    if depth == 1:
        return n
    total = 0
    for mv in out[:n].copy():
        do_move(P, T, mv)
        total += _perft(P, T, depth - 1, buffers)
        undo_move(P, T)
    return total


def test_perft_is_the_fixtures():
    T = fx_tables()
    for name, entry in load()["perft"].items():
        g = FantasistaState.from_sfen(entry["sfen"])
        P = to_pos(g.bd, g.move_number)
        buffers = [np.zeros(MOVE_BUFFER, np.int32) for _ in range(len(entry["counts"]) + 1)]
        assert [_perft(P, T, d, buffers) for d in range(1, len(entry["counts"]) + 1)] == entry["counts"], name
