"""Ousho Fantasista, issue 23: every legal turn is generated (waves of many silvers too, no silent cut), and no pass
is disguised as a turn (docs/fantasista.md, "The engine" and "No pass disguised as a turn")."""
from __future__ import annotations

import itertools

import pytest

from engine.game import GameError
from engine.variants.fantasista import board as PY
from search import Limits
from search.games import FantasistaGameSearcher

from . import fantasista_reference as REF
from .test_fantasista import actions, state
from .test_fantasista_reference import FEATURES as _FEATURES, outcome_of


def _unchanged(g, b) -> bool:
    """Whether board ``b`` (after a turn) is ``g``'s position again, rights and side to move aside."""
    a = g.bd
    return (a.b, a.m, a.r, a.rm, a.hand, a.th, a.emblem) == (b.b, b.m, b.r, b.rm, b.hand, b.th, b.emblem)


def _agree(g) -> None:
    """The kernels, the Python generator of board.py and the reference give the same turns."""
    turns = g.turns()[0]
    assert {outcome_of(b) for b in turns.values()} == REF.legal_outcomes(REF.parse(g.sfen()))
    py, _, _ = PY.legal_turns(g.bd)
    assert {t: turns[t].key() for t in turns} == {t: b.key() for t, b in py.items()}


# ------------------------------------------------------------------ no pass disguised as a turn
def test_gale_horse_out_and_back_is_no_turn():
    g = state({"5i": "K", "2a": "k", "9i": "H"})
    with pytest.raises(GameError):
        g.canonical("9i5e,5e9i")
    assert g.canonical("9i5e,5e6e") in actions(g)  # a second move elsewhere still is
    assert not any(_unchanged(g, b) for b in g.turns()[0].values())
    _agree(g)


def test_awakened_rook_out_and_back_is_no_turn():
    g = state({"5i": "K", "1a": "k", "2h": "R"}, extra="f=hh;r=A")
    for token in ("2h2d,2d2h", "2h2c,2c2h", "2h6h,6h2h"):
        with pytest.raises(GameError):
            g.canonical(token)
    assert g.canonical("2h2c+,2c2h") in actions(g)  # back as a dragon: the position changed
    assert not any(_unchanged(g, b) for b in g.turns()[0].values())
    _agree(g)


def test_empty_silver_wave_is_no_turn():
    g = state({"5i": "K", "1a": "k", "5g": "S", "5h": "S"}, extra="f=gh;r=W")
    with pytest.raises(GameError):
        g.canonical("wave:")
    assert "wave:5g5f,5h5g" in actions(g) and "wave:5g4f" in actions(g)
    assert not any(_unchanged(g, b) for b in g.turns()[0].values())
    _agree(g)


def test_the_curtain_with_no_free_square_is_the_one_pass():
    g = state({"5i": "K", "1a": "k", "4h": "G", "5h": "G", "6h": "G", "6i": "G", "4i": "G"}, extra="f=gh;r=C")
    assert "curtain:" in actions(g)
    _agree(g)
    g.apply("curtain:")
    assert g.side_to_move() == 1 and "r=" not in g.sfen()


def test_a_side_whose_only_turn_was_an_empty_wave_has_no_legal_turn():
    """Sente's king is walled in by its own silvers, which invincible gote pawns (only a king takes them) keep from
    moving; the hand is empty. The empty wave was its one turn before the reading; now it has none (a loss)."""
    walls = {"9g": "p", "8g": "p", "7g": "p", "7h": "p", "7i": "+p"}
    g = state({"9i": "K", "9h": "S", "8h": "S", "8i": "S", "1a": "k", **walls}, extra="f=gh;r=W;m=7g!,8g!,9g!,7h!,7i!")
    assert not g.bd.in_check(0)
    assert g.legal_actions() == []
    assert g.result() == (0.0, "no legal turn")
    _agree(g)


# ------------------------------------------------------------------ every legal turn is generated
#: Double check of the sente king on 1i (rook 1a down file 1, bishop 5e on the diagonal 4f-3g-2h); the silver on 2i
#: is pinned by the rook on 9i. Only a wave saves the king: 2g to 1f or 1h (the file) and 3h to 3g (the diagonal).
#: The pinned silver comes early in the wave's order, so its moves open huge subtrees of the other silvers first:
#: the former generator's seen-set (16,384 wave positions) filled up there and the saving waves were never reached.
ONLY_A_WAVE = {"1i": "K", "2i": "S", "9i": "r", "9a": "k", "1a": "r", "5e": "b", "2g": "S", "3h": "S",
               "7e": "S", "9g": "S", "8c": "S", "5c": "S"}


def test_many_silvers_where_only_a_wave_saves_the_king():
    g = state(ONLY_A_WAVE, extra="f=gh;r=W")
    assert g.bd.in_check(0)
    assert g.result() is None
    acts = actions(g)
    assert acts and all(a.startswith("wave:") for a in acts)
    assert {"wave:2g1f,3h3g", "wave:2g1h,3h3g"} <= acts
    assert "wave:2g1f,2i2h,3h2i" in acts  # the pinned silver blocks the diagonal once 3h closes the pin line
    # every listed wave blocks the file (only 2g can) and leaves the king safe
    assert all("2g1f" in a or "2g1h" in a for a in acts)
    assert all(not b.in_check(0) for b in g.turns()[0].values())
    # the searcher finds a saving wave too (within its budget of outcomes: the few that answer the check)
    r = FantasistaGameSearcher(hash_mb=1).think(g, Limits(depth=1), lambda info: None)
    assert r.best in acts and r.mate is None


def test_waves_of_46655_turns_are_all_listed():
    """Six silvers whose moves never meet: each moves (5 ways) or stays, so the wave has 6^6 - 1 = 46,655 outcomes
    (the empty wave is no turn), more than the game layer's first buffers hold: they are listed after the buffers grow."""
    silvers = {s: "S" for s in ("2e", "5e", "8e", "2h", "5h", "8h")}
    g = state({"5i": "K", "5a": "k", **silvers}, extra="f=gh;r=W")
    without = state({"5i": "K", "5a": "k", **silvers}, extra="f=gh")
    acts = g.legal_actions()
    waves = [a for a in acts if a.startswith("wave:")]
    assert len(waves) == 6 ** 6 - 1 and len(set(waves)) == len(waves)
    assert len(acts) == len(without.legal_actions()) + 6 ** 6 - 1
    assert not g.turns()[0].truncated
    every = g.canonical("wave:2e1d,5e5d,8e9f,2h3g,5h4i,8h8g")
    assert every in waves
    g.apply(every)
    assert "r=" not in g.sfen() and g.side_to_move() == 1


def test_one_turn_is_found_and_named_without_listing_every_turn():
    """Playing, judging and naming a turn ask the generator for that turn only (turns.find_turn, turn_name,
    has_legal_turn): on random positions every spelling of every turn (aliases too) finds the listed board, every
    board is named by its canonical text, and a position has a turn exactly when its list is not empty."""
    from engine.variants.fantasista import turns as TG
    from .fantasista_fixture import magic_biased_walk

    fixed = [state({"5i": "K", "1a": "k", "5g": "P"}, hand="P", extra="f=ah;r=E"),  # emblem drops
             state({"5i": "K", "1b": "k", "8h": "B", "7h": "G"}, extra="f=yh;m=8h@G")]  # a rider
    walk = ((g, acts) for g, acts in magic_biased_walk(11) if acts is not None and g.phase == "move")
    positions, seen = 0, set()
    for g in itertools.chain(fixed, (g for g, _ in walk)):
        if positions >= 150:
            break
        turns, alias, _ = g.turns()
        assert TG.has_legal_turn(g.bd) == bool(turns), g.sfen()
        for text in [*turns, *alias]:
            canonical = alias.get(text, text)
            assert TG.find_turn(g.bd, text).key() == turns[canonical].key(), (g.sfen(), text)
            seen.update(name for name, test in _FEATURES.items() if test(text))
        for text, after in turns.items():
            assert TG.turn_name(g.bd, after) == text, (g.sfen(), text)
        assert TG.find_turn(g.bd, "9a9a") is None and TG.find_turn(g.bd, "wave:9a9b") is None
        positions += 1
    assert seen == set(_FEATURES), seen  # every kind of part was looked for


def test_playing_in_a_wave_position_does_not_list_its_turns(monkeypatch):
    """Six silvers and a wave right: 46,689 turns, whose naming took most of a second a ply (a whole game replayed
    at each USI ``position`` took seconds). A move, a wave in any order, the game's result and the name of a turn
    come without the list, and give what the list gives."""
    from engine.variants.fantasista import state as ST

    silvers = {s: "S" for s in ("2e", "5e", "8e", "2h", "5h", "8h")}
    listed = state({"5i": "K", "5a": "k", **silvers}, extra="f=gh;r=W")
    turns = listed.turns()[0]
    wave = "wave:2e1d,5e5d,8e9f,2h3g,5h4i,8h8g"
    reordered = "wave:8h8g,2e1d,5h4i,5e5d,8e9f,2h3g"
    expected = {t: turns[listed.canonical(t)].key() for t in ("5i4i", "2e2d", wave, reordered)}

    def no_list(*args):
        raise AssertionError("the turns were listed (or a turn named twice)")

    def named_once(bd, after):
        monkeypatch.setattr(ST, "turn_name", no_list)  # a second naming of the position is remembered
        return name(bd, after)

    name = ST.turn_name
    monkeypatch.setattr(ST, "legal_turns", no_list)
    for token, key in expected.items():
        g = state({"5i": "K", "5a": "k", **silvers}, extra="f=gh;r=W")
        assert g.result() is None
        monkeypatch.setattr(ST, "turn_name", named_once)
        for _ in range(2):
            assert g.turn_to(turns[listed.canonical(token)]) == listed.canonical(token)
        g.apply(token)
        assert g.bd.key() == key and g.result() is None, token
