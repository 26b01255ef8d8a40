"""Turncoat shogi (寝返り将棋): plans, identities, defection, extended SFEN, per-side views, the engine.

Rules as read in ``shared/spec/turncoat.md`` and ``docs/turncoat.md``.
"""
from __future__ import annotations

import random
import re
import time

import numpy as np
import pytest

from engine.game import GameError, NodeKind
from engine.variants.turncoat import TurncoatGame, all_plans, new_game, package_of, parse_plan, plan_text
from engine.variants.turncoat import plans as PL

START_IDS = ("9a8a7a6a5a4a3a2a1a" "8b2b" "9c8c7c6c5c4c3c2c1c" "9g8g7g6g5g4g3g2g1g" "8h2h" "9i8i7i6i5i4i3i2i1i")


def sq(name: str) -> int:
    return PL.parse_square(name)


def make(pieces: dict[str, tuple[str, str]], side: str = "b", move: int = 31, hands: str = "-",
         hand_ids: str = "", plans: str = "8b;2h", reversed_: str = "-") -> TurncoatGame:
    """A game from ``{square: (SFEN letter, identity)}``; hand identities in SFEN hand order, oldest first."""
    rows, ids = [], []
    for r in "abcdefghi":
        row, empty = "", 0
        for f in range(9, 0, -1):
            p = pieces.get(f"{f}{r}")
            if p is None:
                empty += 1
                continue
            row += (str(empty) if empty else "") + p[0]
            empty = 0
            ids.append(p[1])
        rows.append(row + (str(empty) if empty else ""))
    text = f"{'/'.join(rows)} {side} {hands} {move} {''.join(ids) + hand_ids};{plans};{reversed_}"
    g = TurncoatGame.from_sfen(text)
    assert g.sfen() == text
    return g


def started(plan0: str = "8b", plan1: str = "2h") -> TurncoatGame:
    g = new_game()
    g.apply("plan:" + plan0)
    g.apply("plan:" + plan1)
    return g


# ----------------------------------------------------------------------------------------------- plans
def test_plan_enumeration_gives_332_per_side():
    for side in (0, 1):
        plans = all_plans(side)
        assert len(plans) == len(set(plans)) == 332
        assert [sum(1 for p in plans if package_of(p) == k) for k in (1, 2, 3, 4)] == [2, 18, 26, 286]
        for p in plans:  # every named piece is an enemy piece of the right kinds
            kinds = sorted(PL.kind_of(q) for q in p)
            assert all(PL.army_of(q) == 1 - side for q in p)
            assert (kinds in (["R"], ["B"]) or (len(p) == 2 and "G" in kinds and "P" in kinds)
                    or (len(p) == 2 and "S" in kinds and kinds != ["S", "S"] and "G" not in kinds)
                    or (len(p) == 3 and set(kinds) <= {"N", "L", "P"}))


@pytest.mark.parametrize("text,side,package", [
    ("8b", 0, 1), ("2b", 0, 1), ("2h", 1, 1), ("8h", 1, 1),
    ("6a,5c", 0, 2), ("4i,9g", 1, 2),
    ("3a,2a", 0, 3), ("7a,1a", 0, 3), ("7a,5c", 0, 3), ("3i,8i", 1, 3),
    ("1a,9a,5c", 0, 4), ("2a,8a,1c", 0, 4), ("1g,2g,3g", 1, 4),
])
def test_each_package_accepts_its_plans(text, side, package):
    p = parse_plan(text, side)
    assert package_of(p) == package
    assert plan_text(p) == ",".join(sorted(text.split(","), key=sq))


@pytest.mark.parametrize("text,side", [
    ("2h", 0),            # own rook
    ("8b,2b", 0),         # two big pieces
    ("6a,4a", 0),         # two golds
    ("6a,7a", 0),         # gold + silver
    ("7a,3a", 0),         # two silvers
    ("6a,2a", 0),         # gold + knight (package 2 needs a pawn)
    ("1c,2c,3c,4c", 0),   # four pawns
    ("1c,2c", 0),         # two pawns
    ("5a", 0),            # the king
    ("5e", 0),            # an empty square
    ("6a,6a", 0),         # the same piece twice
    ("1c,2c,7a", 0),      # silver is not a knight/lance/pawn
    ("1z", 0), ("", 0),
])
def test_illegal_plans_are_refused(text, side):
    with pytest.raises(GameError):
        parse_plan(text, side)


# ------------------------------------------------------------------------------------------- identities
def test_identities_survive_capture_promotion_and_drop():
    g = started()
    for tok in ("7g7f", "3c3d", "8h2b+"):
        g.apply(tok)
    assert g.ids_text(sq("2b")) == "8h" and g.pos.piece_at(sq("2b")) == ("+B", 0)  # promoted, same piece
    assert g.hand_ids[0][6] == [sq("2b")]  # gote's bishop, in sente's hand
    g.apply("3a2b")  # the silver takes the horse: it goes to gote's hand unpromoted, still the 8h bishop
    assert g.ids_text(sq("2b")) == "3a" and g.hand_ids[1][6] == [sq("8h")]
    g.apply("B*5e")
    assert g.ids_text(sq("5e")) == "2b"  # the bishop that started on 2b, now sente's
    g.apply("B*8h")
    assert g.ids_text(sq("8h")) == "8h"  # back home, for gote
    ids = g.sfen().split()[4].split(";")[0]
    assert sorted(ids[i:i + 2] for i in range(0, 80, 2)) == sorted(START_IDS[i:i + 2] for i in range(0, 80, 2))


def test_drop_uses_the_piece_captured_last():
    # Sente holds two gote pawns (1c captured first, then 2c); a drop uses 2c, the next one 1c.
    pieces = {f"{f}c": ("p", f"{f}c") for f in range(3, 10)}
    pieces.update({f"{f}g": ("P", f"{f}g") for f in range(2, 10)})
    pieces.update({"5a": ("k", "5a"), "5i": ("K", "5i")})
    g = make(pieces, move=1, hands="2Pp", hand_ids="1c2c1g", plans="8b;2h")
    g.apply("P*1e")
    assert g.ids_text(sq("1e")) == "2c" and g.hand_ids[0][1] == [sq("1c")]
    g.apply("P*1d")
    assert g.ids_text(sq("1d")) == "1g"


# -------------------------------------------------------------------------------------------- defection
def _defection_board():
    return {
        "5a": ("k", "5a"), "5i": ("K", "5i"),
        "9c": ("p", "9c"),            # named, gote's, on the board: defects
        "2c": ("P", "2c"),            # named, already sente's (captured and dropped): unaffected
        "2b": ("+b", "2b"),           # gote's promoted bishop
        "4g": ("P", "4g"), "4c": ("p", "4c"),
    }


def test_defection_flips_only_enemy_owned_pieces_on_the_board():
    g = make(_defection_board(), hands="p", hand_ids="1c", plans="1c,2c,9c;2h")
    # 1c is in gote's hand: unaffected; 2c is sente's already; 9c flips.
    g.apply("defect")
    assert g.pos.piece_at(sq("9c")) == ("P", 0)
    assert g.pos.piece_at(sq("2c")) == ("P", 0)
    assert g.pos.hand(1) == {"P": 1} and g.hand_ids[1][1] == [sq("1c")]
    assert g.pos.piece_at(sq("4c")) == ("P", 1) and g.pos.piece_at(sq("2b")) == ("+B", 1)
    assert g.declared == [True, False] and g.turn == 0 and g.move_number == 31  # not a move
    assert g.record[-1] == "defect=1c,2c,9c"


def test_promoted_piece_stays_promoted_and_defection_may_make_nifu():
    pieces = _defection_board()
    pieces["9g"] = ("P", "9g")
    g = make(pieces, plans="2b;2h")
    g.apply("defect")
    assert g.pos.piece_at(sq("2b")) == ("+B", 0)
    g2 = make(pieces, plans="1c,2c,9c;2h", hands="Pp", hand_ids="8c1c")
    g2.apply("defect")  # two sente pawns on file 9: not a foul
    assert g2.pos.piece_at(sq("9c")) == ("P", 0) and g2.pos.piece_at(sq("9g")) == ("P", 0)
    acts = g2.legal_actions()
    assert "P*8e" in acts and "P*9e" not in acts  # later drops still obey nifu


def _knight_lance_board():
    return {
        "5a": ("k", "5a"), "5i": ("K", "5i"),
        "2a": ("n", "2a"),            # on its start square
        "7c": ("n", "8a"),            # the 8a knight, moved away
        "9a": ("l", "9a"),            # on its start square
        "3c": ("p", "3c"), "1c": ("g", "4a"), "9e": ("p", "9c"),
    }


def test_knight_and_lance_on_their_start_square_keep_facing_for_their_first_move():
    g = make(_knight_lance_board(), plans="2a,8a,9a;2h")
    g.apply("defect")
    assert sorted(g.reversed) == sorted([sq("9a"), sq("2a")])
    acts = set(g.legal_actions())
    # The 2a knight moves as gote's knight would (toward rank c), for sente, and may promote (sente's zone).
    assert {"2a3c", "2a3c+", "2a1c", "2a1c+"} <= acts
    # The 8a knight had left its start square: it turned at once (sente's knight on 7c jumps to rank a, promoting).
    assert {"7c8a+", "7c6a+"} <= acts and "7c8a" not in acts and "7c8e" not in acts
    # The 9a lance slides toward rank i until the gote pawn on 9e, which it may capture.
    assert {"9a9b", "9a9b+", "9a9d", "9a9e", "9a9e+"} <= acts and "9a9f" not in acts
    g.apply("2a3c+")
    assert g.pos.piece_at(sq("3c")) == ("+N", 0) and sorted(g.reversed) == [sq("9a")]
    g.apply("5a6b")
    g.apply("9a9d")  # the lance moves once with the old facing, then faces sente's way
    assert not g.reversed and g.pos.piece_at(sq("9d")) == ("L", 0)
    g.apply("6b5a")
    assert "9d9c" in g.legal_actions() and "9d9e" not in g.legal_actions()


def test_reversed_knight_attacks_are_seen_by_the_enemy():
    pieces = _knight_lance_board()
    del pieces["3c"]
    g = make(pieces, plans="2a,8a,9a;2h")
    g.apply("defect")
    g.apply("7c6a+")
    # The reversed knight on 2a attacks 3c and 1c (gote's knight pattern), and the gote king may not step into them.
    assert g.attacked(sq("3c"), 0) and g.attacked(sq("1c"), 0)
    g2 = make({**pieces, "4b": ("k", "5a"), "5a": ("s", "7a")}, plans="2a,8a,9a;2h")
    g2.apply("defect")
    g2.apply("9a9b")
    assert "4b3c" not in g2.legal_actions()  # would walk into the reversed knight


def test_knight_off_its_start_square_turns_at_once():
    pieces = _knight_lance_board()
    g = make(pieces, plans="2a,8a,9a;2h")
    g.apply("defect")
    assert sq("7c") not in g.reversed


# Pawn-drop mate (uchifuzume) with reversed knights and lances. The kernel's test does not see them (it sees a
# piece with no move on the far rank), so the state re-decides a checking pawn drop with them included. Each position
# is given with gote or sente dropping and then rotated 180 degrees (colours, squares, identities and plans swapped).
def _rot(name: str) -> str:
    return f"{10 - int(name[0])}{'abcdefghi'[8 - 'abcdefghi'.index(name[1])]}"


def _rot_plan(text: str) -> str:
    bang = "!" if text.startswith("!") else ""
    return bang + ",".join(sorted((_rot(x) for x in text.lstrip("!").split(",")), key=sq))


def _uchi_case(pieces, side, hand, hand_id, plans, rev, rotate):
    """A game from a position given for one orientation (``rotate``: turned 180 degrees, colours swapped)."""
    if rotate:
        pieces = {_rot(k): (v[0].swapcase(), _rot(v[1])) for k, v in pieces.items()}
        side, hand, hand_id, rev = "w" if side == "b" else "b", hand.swapcase(), _rot(hand_id), _rot(rev)
        plans = ";".join(_rot_plan(p) for p in reversed(plans.split(";")))
    return make(pieces, side=side, move=40, hands=hand, hand_ids=hand_id, plans=plans, reversed_=rev)


def _drop(square: str, rotate: bool) -> str:
    return "P*" + (_rot(square) if rotate else square)


UCHI_CASES = {
    # The defender's reversed lance (sente's, on 9a, moving toward rank i) can take the pawn: not mate, legal.
    "defender lance takes": (
        {"5a": ("k", "5a"), "9d": ("K", "5i"), "9a": ("L", "9a"), "8b": ("g", "6a"), "7c": ("s", "7a"),
         "7e": ("r", "8b")}, "w", "p", "9g", "!2a,8a,9a;2h", "9a", "9c", True, ("9a", "9c")),
    # The same lance blocked by the gold on 9b: it cannot reach the pawn; mate, illegal.
    "defender lance blocked": (
        {"5a": ("k", "5a"), "9d": ("K", "5i"), "9a": ("L", "9a"), "9b": ("g", "6a"), "7c": ("s", "7a"),
         "7e": ("r", "8b")}, "w", "p", "9g", "!2a,8a,9a;2h", "9a", "9c", False, None),
    # The defender's reversed knight (on 2a, attacking 1c and 3c) can take the pawn on 1c: legal.
    "defender knight takes": (
        {"5a": ("k", "5a"), "1d": ("K", "5i"), "2a": ("N", "2a"), "2b": ("g", "6a"), "3e": ("+r", "8b")},
        "w", "p", "9g", "!2a,8a,9a;2h", "2a", "1c", True, ("2a", "1c")),
    # The dropper's reversed lance covers the king's flight squares 9b, 9c, 9d: mate, illegal.
    "dropper lance covers": (
        {"8c": ("k", "5a"), "5i": ("K", "5i"), "9a": ("L", "9a"), "7e": ("+R", "2h"), "8a": ("G", "6i")},
        "b", "P", "1c", "!2a,8a,9a;2h", "9a", "8d", False, None),
    # The same lance blocked by a sente pawn on 9b: 9c and 9d are free; legal.
    "dropper lance blocked": (
        {"8c": ("k", "5a"), "5i": ("K", "5i"), "9a": ("L", "9a"), "9b": ("P", "9g"), "7e": ("+R", "2h"),
         "8a": ("G", "6i")}, "b", "P", "1c", "!2a,8a,9a;2h", "9a", "8d", True, None),
    # The dropper's reversed knight guards the pawn on 1c, so the king cannot take it: mate, illegal.
    "dropper knight guards": (
        {"1b": ("k", "5a"), "5i": ("K", "5i"), "2a": ("N", "2a"), "3c": ("+B", "8h"), "3a": ("G", "4i")},
        "b", "P", "1c", "!2a,8a,9a;2h", "2a", "1c", False, None),
}


@pytest.mark.parametrize("rotate", [False, True], ids=["as-given", "rotated"])
@pytest.mark.parametrize("case", sorted(UCHI_CASES))
def test_pawn_drop_mate_sees_reversed_knights_and_lances(case, rotate):
    pieces, side, hand, hand_id, plans, rev, to, legal, reply = UCHI_CASES[case]
    g = _uchi_case(pieces, side, hand, hand_id, plans, rev, rotate)
    drop = _drop(to, rotate)
    assert g.in_check() is False and g.in_check(1 - g.turn) is False
    assert (drop in g.legal_actions()) is legal
    # The kernel alone (blind to the reversed facing) says the opposite, except where the reversed piece is blocked.
    kernel = [g.pos.move_usi(c) for c in g.pos.legal_codes()]
    assert (drop in kernel) is (legal if "blocked" in case else not legal)
    if legal:
        g.apply(drop)
        assert g.in_check() and g.result() is None
        acts = g.legal_actions()
        if reply is not None:  # the reversed piece takes the pawn, as the enemy's piece would
            frm, dst = (_rot(x) for x in reply) if rotate else reply
            assert frm + dst in acts
            g.apply(frm + dst)
            assert not g.in_check() and not g.reversed
    else:
        with pytest.raises(GameError, match="illegal move"):
            g.apply(drop)


def test_declaration_refused_before_move_31_and_after_use():
    for move, side in ((29, "b"), (30, "w")):
        g = make(_defection_board(), side=side, move=move, plans="2b;8h")
        before = g.sfen()
        with pytest.raises(GameError, match="from move 31"):
            g.apply("defect")
        assert g.sfen() == before and "defect" not in g.legal_actions()
    g = make(_defection_board(), side="w", move=32, plans="2b;8h")
    assert "defect" in g.legal_actions()
    g = make(_defection_board(), move=31, plans="2b;8h")
    g.apply("defect,5i5h")
    g.apply("5a5b")
    before = g.sfen()
    with pytest.raises(GameError, match="once per game"):
        g.apply("defect")
    assert g.sfen() == before and "defect" not in g.legal_actions()


def test_defection_that_attacks_the_enemy_king_wins_at_once():
    g = make({"5a": ("k", "5a"), "5i": ("K", "5i"), "6a": ("g", "6a"), "9c": ("p", "9c")}, plans="6a,9c;2h")
    with pytest.raises(GameError, match="no move follows"):
        g.apply("defect,5i5h")
    g.apply("defect")
    assert g.result() == (1.0, "defection: the enemy king can be captured")
    assert g.node_kind() is NodeKind.TERMINAL and g.legal_actions() == []


# ------------------------------------------------------------------------------------------ SFEN, views
def test_start_sfen_and_views_exact():
    from engine.game import GameState
    g = new_game()
    assert isinstance(g, GameState) and g.variant_id == "turncoat" and g.chance_events() == []
    assert g.node_kind() is NodeKind.DECISION and g.position_command(0) == "position startpos"
    assert g.sfen() == ("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1 " + START_IDS + ";-;-;-")
    g.apply("plan:8b")
    assert g.position_command(1) == "position startpos moves plan=?"  # gote chooses without seeing sente's plan
    assert g.side_to_move() == 1 and g.sfen(1).endswith(";?;-;-") and g.sfen(0).endswith(";8b;-;-")
    g.apply("plan:4i,5g")
    for tok in ("7g7f", "3c3d"):
        g.apply(tok)
    assert g.position_command(0) == "position startpos moves plan=8b plan=? 7g7f 3c3d"
    assert g.position_command(1) == "position startpos moves plan=? plan=4i,5g 7g7f 3c3d"
    assert g.sfen(0).endswith(";8b;?;-") and g.sfen(1).endswith(";?;4i,5g;-") and g.sfen().endswith(";8b;4i,5g;-")
    assert "4i" not in g.sfen(0).split()[4] [80:] and "8b" not in g.sfen(1).split()[4][80:]


def test_views_never_contain_the_other_plan_until_declared():
    rng = random.Random(3)
    g = started("6a,7c", "1g,2g,3g")
    while g.move_number < 31:
        g.apply(rng.choice([a for a in g.legal_actions()]))
    for side, secret in ((0, "1g,2g,3g"), (1, "6a,7c")):
        assert secret not in " ".join(g.view(side)) and secret not in g.sfen(side)
        v = TurncoatGame.replay(g.view(side))
        assert v.sfen(side) == g.sfen(side)
    g.apply("defect")
    assert g.view(1)[-1] == "defect=6a,7c" and g.view(0)[-1] == "defect=6a,7c"
    assert "6a,7c" in g.sfen(1) and "1g,2g,3g" not in g.sfen(0)
    v1 = TurncoatGame.replay(g.view(1))  # gote's view learns sente's plan from the declaration
    assert v1.sfen(1) == g.sfen(1) and v1.plans[0] == parse_plan("6a,7c", 0)


def test_sfen_round_trip_through_random_games_with_defections():
    rng = random.Random(7)
    reversed_seen = 0
    for _ in range(3):
        g = new_game()
        g.apply(rng.choice(g.legal_actions()))
        g.apply(rng.choice(g.legal_actions()))
        while g.result() is None and g.move_number < 90:
            acts = g.legal_actions()
            g.apply("defect" if "defect" in acts and rng.random() < 0.3 else
                    rng.choice([a for a in acts if a != "defect"] or acts))
            reversed_seen += bool(g.reversed)
            s = g.sfen()
            h = TurncoatGame.from_sfen(s)
            assert h.sfen() == s
            if g.result() is None:
                assert h.legal_actions() == g.legal_actions()
        for side in (0, 1):
            assert TurncoatGame.replay(g.view(side)).sfen(side) == g.sfen(side)


def test_push_pop_restores_everything():
    rng = random.Random(11)
    g = started("8a,9a,9c", "8i,9i,9g")
    for _ in range(40):
        acts = [a for a in g.legal_actions() if a != "defect"]
        if not acts:
            break
        g.apply(rng.choice(acts))
    before = g.sfen()
    stack = 0
    for _ in range(20):
        codes = g.legal_codes()
        if not codes:
            break
        g.push(rng.choice(codes))
        stack += 1
    if g.can_declare():
        g.declare()
        stack += 1
    for _ in range(stack):
        g.pop()
    assert g.sfen() == before


@pytest.mark.parametrize("token", ["plan:2h", "plan:8b,2b", "plan:?", "7g7f", "defect", "", " plan:8b", "xyz"])
def test_bad_tokens_at_the_plan_node(token):
    g = new_game()
    before = g.sfen()
    with pytest.raises(GameError):
        g.apply(token)
    assert g.sfen() == before and g.record == []


@pytest.mark.parametrize("token", ["7g7e", "9z9z", "defect", "defect,7g7f", "defect=8b", "plan:8b", "P*5e",
                                   "defect,", "7g7f,3c3d"])
def test_bad_tokens_in_play(token):
    g = started()
    before, rec = g.sfen(), list(g.record)
    with pytest.raises(GameError):
        g.apply(token)
    assert g.sfen() == before and g.record == rec


def test_wrong_declared_plan_and_atomic_declaring_turn():
    g = make(_defection_board(), plans="2b;8h")
    before = g.sfen()
    with pytest.raises(GameError, match="does not match"):
        g.apply("defect=8b")
    with pytest.raises(GameError, match="illegal move"):
        g.apply("defect,5i5a")  # the declaration is undone with the bad move
    assert g.sfen() == before
    g.apply("defect=2b,5i5h")
    assert g.record[-2:] == ["defect=2b", "5i5h"]


def test_illegal_move_error_quotes_the_movers_view_not_the_other_plan():
    """Issue 48: an illegal move's error quoted the true SFEN with both plans, so whoever passes the error on (a USI
    engine's error line, the match runner's log, the GUI) could show the mover the other side's plan."""
    for mover, token in ((0, "5e5d"), (1, "5e5f")):
        g = started("8b", "2h")
        if mover == 1:
            g.apply("7g7f")
        with pytest.raises(GameError, match="illegal move") as err:
            g.apply(token)
        quoted = _quoted_plans(str(err.value))
        assert quoted[mover] == ("8b", "2h")[mover] and quoted[1 - mover] == "?", str(err.value)
    # a declaring turn: the declarer's plan is public once declared, the other's stays hidden
    g = make(_defection_board(), plans="2b;8h")
    with pytest.raises(GameError, match="illegal move") as err:
        g.apply("defect,5i5a")
    assert _quoted_plans(str(err.value)) == ["!2b", "?"], str(err.value)


def _quoted_plans(text: str) -> list[str]:
    """The plan fields of the one turncoat SFEN quoted in an error (its identities name every start square)."""
    sfens = re.findall(r"\(([^()]+ [bw] \S+ \d+ [^()\s]+)\)", text)
    assert len(sfens) == 1, text
    return sfens[0].split()[4].split(";")[1:3]


# ----------------------------------------------------------------------------------------------- engine
def test_engine_plan_belief_and_moves():
    from search.turncoat import Settings, TurncoatEngine, plan_prior
    prior = plan_prior(1)
    plans = all_plans(1)
    assert abs(prior.sum() - 1) < 1e-12
    for k in (1, 2, 3, 4):
        assert abs(sum(w for w, p in zip(prior, plans) if package_of(p) == k) - 0.25) < 1e-12
    e = TurncoatEngine(Settings(depth=1), seed=1)
    g = new_game()
    tok = e.choose(g)
    assert tok in g.legal_actions()
    g.apply(tok)
    g.apply("plan=?")  # sente's view: gote's plan hidden
    move = e.choose(g)
    assert move in g.legal_actions()


def test_engine_declares_a_winning_defection_and_learns_a_revealed_plan():
    from search.turncoat import Settings, TurncoatEngine
    g = make({"5a": ("k", "5a"), "5i": ("K", "5i"), "6a": ("g", "6a"), "9c": ("p", "9c")}, plans="6a,9c;2h")
    assert TurncoatEngine(Settings(depth=1)).choose(g) == "defect"
    # Gote's view of a game in which sente declared: the belief collapses on the revealed plan.
    full = started("6a,7c", "1g,2g,3g")
    rng = random.Random(5)
    while full.move_number < 31:
        full.apply(rng.choice(full.legal_actions()))
    full.apply("defect")
    if full.result() is None:
        full.apply(full.legal_actions()[0])  # sente's move of the declaring turn
    view = TurncoatGame.replay(full.view(1))
    e = TurncoatEngine(Settings(depth=1), seed=2)
    if view.result() is None:
        assert view.side_to_move() == 1
        view.copy().apply(e.choose(view))  # a legal token (possibly its own declaration, defect,<move>)
        assert e.belief.max() == 1.0 and all_plans(0)[int(np.argmax(e.belief))] == parse_plan("6a,7c", 0)


class _CountingSearcher:
    """The shared searcher, recording each position it is asked to search and the limits it got."""

    def __init__(self) -> None:
        from search import Searcher
        self.inner = Searcher()
        self.calls: list[tuple[str, object]] = []

    def search(self, pos, limits, on_info=None, on_start=None):
        self.calls.append((pos.sfen(), limits))
        return self.inner.search(pos, limits, on_info, on_start)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def _game_at_move(n: int, seed: int) -> TurncoatGame:
    """Sente's view of a random game (gote's plan hidden) with sente to play move ``n``, no declaration yet."""
    full = started("6a,7c", "1g,2g,3g")
    rng = random.Random(seed)
    while full.move_number < n:
        full.apply(rng.choice([t for t in full.legal_actions() if not t.startswith("defect")]))
        assert full.result() is None
    assert full.turn == 0
    return TurncoatGame.replay(full.view(0))


@pytest.mark.parametrize("seed", [3, 4])  # games where declaring does not win at once
def test_engine_searches_with_the_shared_searcher_and_pimc_once_the_enemy_may_declare(seed):
    """Every position is searched by search.Searcher (the shared kernel), with the limits handed in: while the
    enemy's trigger is far, the main search (one line, every legal move) and, when its line carries more sleeper
    risk than the safest moves, one search of those alone; once the enemy may declare on its next turn, the main
    search keeps several lines (MultiPV) and one search per candidate and distinct flipped set follows, each a
    position where enemy pieces changed sides, and one of the position after our own declaration. They share the
    decision's node budget."""
    from search import Limits
    from search.turncoat import Settings, TurncoatEngine
    far = _game_at_move(11, seed)
    counting = _CountingSearcher()
    e = TurncoatEngine(Settings(declare_margin=10 ** 6), seed=1, searcher=counting)
    assert e.choose(far, Limits(depth=3)) in far.legal_actions()
    legal = sorted(far.legal_codes())
    assert {sfen for sfen, _ in counting.calls} == {far.pos.sfen()} and len(counting.calls) <= 2
    main, *safe = [limits for _, limits in counting.calls]
    assert main.multipv == 1 and main.depth == 3 and sorted(main.searchmoves) == legal
    assert all(len(s.searchmoves) < len(legal) and s.multipv == 1 for s in safe)
    assert e.last.depth == 3 and e.last.nodes > 0
    near = _game_at_move(31, seed)  # sente's move 31: gote may declare at move 32; sente may declare now
    counting.calls.clear()
    tok = e.choose(near, Limits(nodes=20_000))
    assert tok in near.legal_actions() or tok.startswith("defect,")
    own = [limits for sfen, limits in counting.calls if sfen == near.pos.sfen()]
    assert own[0].multipv == Settings().candidates
    rest = [(sfen, limits) for sfen, limits in counting.calls if sfen != near.pos.sfen()]
    after_declaring = [c for c in rest if c[0].split()[1] == "b"]  # our own declaration: still our move
    pimc = [c for c in rest if c[0].split()[1] == "w"]  # the enemy to move, after it declared
    assert len(after_declaring) == 1 and pimc, "no determinization was searched"
    assert all(sfen.split()[0] != near.pos.sfen().split()[0] for sfen, _ in pimc)
    assert sum(limits.nodes for _, limits in counting.calls) <= 20_000 + len(counting.calls)


def test_engine_stop_answers_from_the_main_search_and_skips_the_rest():
    """A stop while the main search runs: it answers with a legal move at once and nothing else is searched."""
    import threading

    from search import Limits
    from search.turncoat import TurncoatEngine
    near = _game_at_move(31, 3)
    counting = _CountingSearcher()
    e = TurncoatEngine(seed=1, searcher=counting)
    threading.Timer(0.3, e.stop).start()
    t0 = time.perf_counter()
    tok = e.choose(near, Limits(infinite=True))
    assert time.perf_counter() - t0 < 60  # a hang guard, not a speed test
    assert len(counting.calls) == 1 and (tok in near.legal_actions() or tok.startswith("defect"))


def test_a_stop_applied_as_the_decision_starts_is_not_lost():
    """A stop that arrives before the decision resets its flag (applied through on_start, as the USI loop's searcher does)
    ends an infinite decision at once instead of being reset and lost."""
    from search import Limits
    from search.turncoat import TurncoatEngine
    near = _game_at_move(21, 3)
    counting = _CountingSearcher()
    e = TurncoatEngine(seed=1, searcher=counting)
    t0 = time.perf_counter()
    tok = e.choose(near, Limits(infinite=True), on_start=e.stop)
    assert time.perf_counter() - t0 < 60  # a hang guard: without the hook this never returns
    assert tok in near.legal_actions() and len(counting.calls) == 1 and counting.calls[0][1].depth == 1


def test_usi_turncoat_go_depth_is_the_shared_searchs_depth():
    """``go depth 5`` reaches depth 5 with the shared search's info lines (seldepth, nodes, multipv, pv of moves);
    the engine of 44c866b searched a fixed 2 plies whatever it was asked."""
    import io

    from usi.engine import UsiEngine
    out = io.StringIO()
    eng = UsiEngine(out=out)
    for line in ("setoption name USI_Variant value turncoat", "setoption name Seed value 3",
                 "position startpos moves plan=4a,6c plan=? 7g7f 3c3d 2g2f 8c8d", "go depth 5"):
        eng.handle(line)
    eng._job.thread.join(300)  # (not _finish_search: its stop would end the search)
    assert not eng._job.thread.is_alive()
    lines = out.getvalue().splitlines()
    assert not any("error" in line for line in lines), lines
    infos = [line.split() for line in lines if line.startswith("info depth")]
    assert max(int(t[2]) for t in infos) == 5
    assert any("seldepth" in t and "multipv" in t for t in infos)
    best = [line.split()[1] for line in lines if line.startswith("bestmove")]
    assert len(best) == 1


@pytest.mark.slow
def test_strength_plan_user_beats_plain_engine():
    """100 games (50 seeds, colours swapped): the engine that uses its plan and reasons about the enemy's against
    the same engine that never declares and ignores the enemy's plan. Own referee loop
    (bench.turncoat_match.play_game)."""
    from concurrent.futures import ProcessPoolExecutor

    from bench.turncoat_match import match_pair
    with ProcessPoolExecutor(2) as ex:
        results = [r for pair in ex.map(match_pair, range(50)) for r in pair]
    score = sum(s for _, s, _ in results)
    print(f"smart engine: {score} / {len(results)}")  # 97/100 measured
    assert len(results) == 100 and score > 60


@pytest.mark.slow
def test_strength_belief_beats_declarer_that_ignores_the_enemy_plan():
    """100 games against the engine that declares with the same rule but ignores the enemy's plan (90/100 measured)."""
    from concurrent.futures import ProcessPoolExecutor
    from functools import partial

    from bench.turncoat_match import match_pair
    with ProcessPoolExecutor(2) as ex:
        results = [r for pair in ex.map(partial(match_pair, opponent="declarer"), range(50)) for r in pair]
    score = sum(s for _, s, _ in results)
    print(f"smart engine vs declarer: {score} / {len(results)}")
    assert len(results) == 100 and score > 60


def _engine_plans(seed=None, n=1):
    """The plans named as sente and as gote by ``n`` fresh ``python -m usi`` processes (run side by side), each
    asked at the start position with the default options, or with ``Seed`` set."""
    import subprocess
    import sys

    script = ("usi\nsetoption name USI_Variant value turncoat\n"
              + (f"setoption name Seed value {seed}\n" if seed is not None else "")
              + "isready\nusinewgame\nposition startpos\ngo depth 1\nposition startpos moves plan=?\ngo depth 1\nquit\n")
    procs = [subprocess.Popen([sys.executable, "-m", "usi"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(n)]
    plans = []
    for p in procs:
        out, err = p.communicate(script, timeout=600)
        best = [line.split()[1] for line in out.splitlines() if line.startswith("bestmove")]
        assert len(best) == 2 and all(b.startswith("plan:") for b in best), (out[-500:], err[-500:])
        assert "info string error" not in out and not err.strip(), (out[-800:], err[-800:])
        plans.append(tuple(best))
    return plans


def test_fresh_engines_hide_their_plans_and_a_set_seed_reproduces_them():
    """Issue 22: with ``Seed`` unset, eight fresh engine processes name at least three different plans for each side
    (a fixed default seed named plan:6a,9c / plan:4i,5g in every game; a fair draw fails this about once in 10^5
    runs); with ``Seed`` set, two processes agree."""
    fresh = _engine_plans(n=8)
    assert len({s for s, _ in fresh}) >= 3 and len({g for _, g in fresh}) >= 3, fresh
    seeded = _engine_plans(seed=12345, n=2)
    assert seeded[0] == seeded[1], seeded


# ----------------------------------------------------------------------------------- games from a set-up position
# Issue 48: after sente's 7g7f, both plans in the SFEN (sente 2a,4c,7c, gote 4g,9g,9i), gote to move.
SETUP = ("lnsgkgsnl/1r5b1/ppppppppp/9/9/2P6/PP1PPPPPP/1B5R1/LNSGKGSNL w - 2 9a8a7a6a5a4a3a2a1a8b2b9c8c7c6c5c4c3c2c1c"
         "7g9g8g6g5g4g3g2g1g8h2h9i8i7i6i5i4i3i2i1i;2a,4c,7c;4g,9g,9i;-")


def _setup(plans: str) -> str:
    """:data:`SETUP` with ``<sente plan>;<gote plan>`` replaced."""
    head, extra = SETUP.rsplit(" ", 1)
    ids, _, _, rev = extra.split(";")
    return f"{head} {ids};{plans};{rev}"


def test_position_command_from_a_set_up_position_sends_the_start_sfen_with_the_plans_as_each_side_sees_them():
    from usi import games
    assert TurncoatGame.from_sfen(new_game().sfen()).start_sfen is None  # the standard start stays startpos
    assert started().position_command(0) == "position startpos moves plan=8b plan=?"
    g = TurncoatGame.from_sfen(SETUP)
    assert g.start_sfen == SETUP and g.position_command(1) == f"position sfen {_setup('?;4g,9g,9i')}"
    g.apply("3c3d")
    assert g.copy().position_command(0) == f"position sfen {_setup('2a,4c,7c;?')} moves 3c3d"
    # gote's plan is not in the SFEN: it is chosen in the record, and only gote's view shows it
    g = TurncoatGame.from_sfen(_setup("2a,4c,7c;-"))
    g.apply("plan:4g,9g,9i")
    g.apply("3c3d")
    assert g.view(0) == ["plan=?", "3c3d"] and g.view(1) == ["plan=4g,9g,9i", "3c3d"]
    assert "4g,9g,9i" not in g.position_command(0) and "2a,4c,7c" not in g.position_command(1)
    for side in (0, 1):  # what the engine rebuilds from the line is the side's view of the true state
        words = g.position_command(side).split()
        mi = words.index("moves")
        state = games.build_state("turncoat", words[1:mi], words[mi + 1:], games.option_getter({}))
        assert state.sfen() == g.sfen(side) and state.legal_actions() == g.legal_actions()


def test_engine_thinks_after_position_sfen_with_moves():
    """``position sfen <not the start> moves ...`` then ``go``: the engine observes the moves from the given start
    (it replayed them from the standard start: ``search failed: sente must choose a plan first`` and the first
    legal move)."""
    import io

    from search.turncoat import Settings, TurncoatEngine
    from usi import games
    from usi.engine import UsiEngine
    out = io.StringIO()
    eng = UsiEngine(out=out)
    for line in ("setoption name USI_Variant value turncoat", "setoption name Seed value 3",
                 f"position sfen {SETUP} moves 3c3d", "go depth 1"):
        eng.handle(line)
    eng._finish_search()
    lines = out.getvalue().splitlines()
    assert not any("error" in line for line in lines), lines
    best = [line.split()[1] for line in lines if line.startswith("bestmove")]
    view = games.build_state("turncoat", ["sfen", SETUP], ["3c3d"], games.option_getter({}))
    assert len(best) == 1 and games.is_legal(view, best[0])
    # the belief: gote's plan is in the SFEN, so it is known; a view that hides it starts from the prior
    e = TurncoatEngine(Settings(depth=1), seed=1)
    assert e.choose(view) in view.legal_actions()
    assert e.belief.max() == 1.0 and all_plans(1)[int(np.argmax(e.belief))] == parse_plan("4g,9g,9i", 1)
    hidden = TurncoatGame.from_sfen(_setup("2a,4c,7c;?"))
    hidden.apply("3c3d")
    assert e.choose(hidden) in hidden.legal_actions() and e.belief.max() < 0.5


def test_gui_engine_plays_on_from_a_set_up_position():
    """Issue 48: a GUI game started from an SFEN, a person (sente) against our engine (gote, depth 1). The engine
    was sent ``position startpos moves ...`` and the game ended at once on its illegal answer."""
    from gui.session import Session
    s = Session("turncoat", players=["human", {"kind": "engine", "depth": 1}], seed=5,
                start_sfen=_setup("2a,4c,7c;-"))
    try:
        rng = random.Random(5)
        for _ in range(3):  # the engine: its plan, then a move; the person moves; the engine again
            st = s.state()
            deadline = time.time() + 600
            while not (st["human_turn"] or st["result"]):
                assert time.time() < deadline, st["error"]
                s.wait(st["version"], 5)
                st = s.state()
            assert st["result"] is None and not st["error"], (st["result"], st["error"])
            s.play(rng.choice([a["token"] for a in st["legal"] if a["token"] != "defect"]))
        engine = [p.token for p in s.plies if p.side == 1 and not p.human]
        assert len(engine) >= 3 and engine[0].startswith("plan:") and not engine[1].startswith("plan")
        plan = engine[0][5:]
        line = s._position_line(1)
        assert line.startswith(f"position sfen {_setup('?;-')} moves plan={plan} ")
        assert "2a,4c,7c" not in line
        assert " plan=? " in s._position_line(0) and f"plan={plan}" not in s._position_line(0)
    finally:
        s.close()
