"""Fantasista on the shared position and generator (issue 50), held to the frozen answers of its own rules engine
(``tests/fantasista_fixture.py``).

A turn *is* its outcome, so the shared generator is compared by outcomes: the set of positions its moves lead to
against the set the fixture's actions lead to (played by today's game layer), restricted to the turns the shared
generator makes so far.
"""
from __future__ import annotations

import numpy as np
import pytest

from engine.kernels.movegen import GEN_ALL, do_move, generate_by_mode, undo_move
from engine.variants.fantasista import pieces as PC
from engine.variants.fantasista.state import FantasistaState
from engine.variants.fantasista.variant import FANTASISTA, fx_tables, position_key, to_board, to_pos
from tests.fantasista_fixture import load

MOVE_BUFFER = 4096


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


def _one_move(action: str, g: FantasistaState) -> bool:
    """A turn the shared generator makes as one move: a move (a rider's too) or a drop (emblem tokin drops
    included), a capture without moving (breath, the sword silver) or the spear pawn's double capture."""
    rider = action.startswith("rider:")
    action = action.removeprefix("rider:")
    if action.startswith(("curtain:", "wave:")):
        return False
    legs = action.split(",")
    if len(legs) == 1:
        return True
    frm = PC.parse_square(legs[0][:2])
    mover = g.bd.r[frm] if rider else g.bd.b[frm]
    return len(legs) == 2 and mover & 31 == PC.Y and not legs[1].startswith("rider:")


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


def test_one_move_turns_are_the_fixtures(decision_nodes):
    # every move of the shared generator leads where one of the fixture's single-part turns leads, and back; the
    # key kept move by move is the key computed from scratch
    T = fx_tables()
    out = np.zeros(MOVE_BUFFER, np.int32)
    compared = 0
    for g, actions in decision_nodes:
        P = to_pos(g.bd, g.move_number)
        before = g.bd.key()
        shared = {}
        for mv in out[:generate_by_mode(P, T, GEN_ALL, out)]:
            do_move(P, T, mv)
            assert P.keys[1] == position_key(P, T), (g.sfen(), hex(mv))
            shared[to_board(P).key()] = int(mv)
            undo_move(P, T)
            assert to_board(P).key() == before
        expected = {}
        for a in (a for a in actions if _one_move(a, g)):
            h = g.copy()
            h.apply(a)
            expected[h.bd.key()] = a
        assert set(shared) == set(expected), (g.sfen(), sorted(expected[k] for k in set(expected) - set(shared)),
                                              sorted(hex(shared[k]) for k in set(shared) - set(expected)))
        compared += 1
    assert compared == len(decision_nodes)
