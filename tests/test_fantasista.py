"""Ousho Fantasista: one focused test per rule (rules and readings in docs/fantasista.md)."""
from __future__ import annotations

import random

import pytest

from engine.game import GameError, GameState, NodeKind
from engine.variants.fantasista import FAIRIES, FantasistaState, magic_after, new_game, roll_effect


def board(pieces: dict[str, str]) -> str:
    """SFEN board from {"5i": "K", "1a": "k", "3c": "+p"} (upper case sente)."""
    rows = []
    for r in "abcdefghi":
        row, empty = "", 0
        for f in range(9, 0, -1):
            p = pieces.get(f"{f}{r}")
            if p is None:
                empty += 1
                continue
            row += (str(empty) if empty else "") + p
            empty = 0
        rows.append(row + (str(empty) if empty else ""))
    return "/".join(rows)


def state(pieces, side="b", hand="-", extra="f=hh", number=2) -> FantasistaState:
    g = FantasistaState.from_sfen(f"{board(pieces)} {side} {hand} {number} {extra}")
    assert FantasistaState.from_sfen(g.sfen()).sfen() == g.sfen()
    return g


def actions(g) -> set[str]:
    return set(g.legal_actions())


# ------------------------------------------------------------------ protocol and schedule
def test_is_a_game_state():
    assert isinstance(new_game(), GameState)


def test_magic_schedule_reading():
    assert [p for p in range(1, 62) if magic_after(p)] == [15, 16, 30, 31, 45, 46, 60, 61]


def test_roll_after_ply_15_for_sente_then_16_for_gote():
    g = new_game(("hiko", "yokaku"))
    moves = ["7g7f", "3c3d", "2g2f", "8c8d", "2f2e", "8d8e", "6i7h", "4a3b", "2e2d", "2c2d", "2h2d", "8e8f",
             "8g8f", "8b8f", "2d3d"]
    for m in moves:
        assert g.node_kind() is NodeKind.DECISION
        g.apply(m)
    assert g.node_kind() is NodeKind.CHANCE and g.side_to_move() == 0
    assert sum(p for _, p in g.chance_events()) == pytest.approx(1.0) and len(g.chance_events()) == 20
    g.apply("roll=5")  # hiko 4-8: a rook token to sente's hand
    assert "h=R" in g.sfen() and g.side_to_move() == 1
    g.apply(sorted(g.legal_actions())[0])
    assert g.node_kind() is NodeKind.CHANCE and g.side_to_move() == 1
    g.apply("roll=1")  # yokaku 1: a thunder-horse token to gote's hand
    assert "h=Rt" in g.sfen()
    assert "R'*5e" in g.legal_actions()


def test_reserved_option_and_tables():
    assert roll_effect(12) == "4-8" and roll_effect(12, "2") == "2" and roll_effect(20) == "nothing"
    assert roll_effect(3) == "3" and roll_effect(8) == "4-8"


@pytest.mark.parametrize("fairy,roll,expect", [
    ("hiko", 1, "h=D"), ("hiko", 2, "h=O"), ("hiko", 3, "r=A"), ("hiko", 4, "h=R"),
    ("ayumi", 1, "r=E"), ("ayumi", 2, "h=2Y"), ("ayumi", 8, "h=G2P"),
    ("yokaku", 1, "h=T"), ("yokaku", 2, "h=H"), ("yokaku", 6, "h=B"),
    ("ginsara", 1, "r=C"), ("ginsara", 2, "h=W"), ("ginsara", 3, "r=W"), ("ginsara", 7, "h=2S"),
])
def test_each_table_row(fairy, roll, expect):
    g = state({"5i": "K", "5a": "k", "5g": "P"}, side="w", extra=f"f={fairy[0] if fairy != 'ginsara' else 'g'}h;n=roll",
              number=16)
    g.apply(f"roll={roll}")
    assert expect in g.sfen().split()[-1]


def test_nothing_on_19_20():
    g = state({"5i": "K", "5a": "k"}, side="w", extra="f=hh;n=roll", number=16)
    g.apply("roll=19")
    assert g.sfen().split()[-1] == "f=hh"


def test_invincible_target_decision_and_no_target():
    g = state({"5i": "K", "5a": "k", "5g": "P", "4g": "P"}, side="w", extra="f=ah;n=roll", number=16)
    g.apply("roll=3")
    assert g.node_kind() is NodeKind.DECISION and g.side_to_move() == 0
    assert sorted(g.legal_actions()) == ["target:4g", "target:5g"]
    g.apply("target:5g")
    assert "m=5g!" in g.sfen() and g.side_to_move() == 1
    g2 = state({"5i": "K", "5a": "k"}, side="w", extra="f=ah;n=roll", number=16)
    g2.apply("roll=3")  # no pawn or tokin: the magic is nothing
    assert g2.node_kind() is NodeKind.DECISION and g2.side_to_move() == 1 and "m=" not in g2.sfen()


def test_carrier_target():
    g = state({"5i": "K", "5a": "k", "8h": "B"}, side="w", extra="f=yh;n=roll", number=16)
    g.apply("roll=3")
    assert g.legal_actions() == ["target:8h"]
    g.apply("target:8h")
    assert "m=8h@" in g.sfen()


# ------------------------------------------------------------------ tokens
def test_token_drop_is_spelt_apart_and_hands_stay_apart():
    g = state({"5i": "K", "5a": "k"}, hand="R", extra="f=hh;h=R")
    a = actions(g)
    assert "R*5e" in a and "R'*5e" in a
    g.apply("R'*5e")
    assert g.sfen().split()[2] == "R" and "m=5e'" in g.sfen() and "h=" not in g.sfen()


def test_token_captured_leaves_the_game():
    g = state({"5i": "K", "1a": "k", "5e": "R", "5c": "r"}, extra="f=hh;m=5c'")
    g.apply("5e5c")
    assert g.sfen().split()[2] == "-"
    g = state({"5i": "K", "1a": "k", "5e": "R", "5c": "r"}, extra="f=hh")
    g.apply("5e5c")
    assert g.sfen().split()[2] == "R"


def test_promotion_keeps_the_token_mark():
    g = state({"5i": "K", "1a": "k", "5e": "R"}, extra="f=hh;m=5e'")
    g.apply("5e5c+")
    assert "+R" in g.sfen().split()[0] and "m=5c'" in g.sfen()


def test_pawn_tokens_count_for_nifu():
    g = state({"5i": "K", "1a": "k", "5g": "P"}, extra="f=hh;m=5g';h=P")
    assert not any(a.endswith("5e") and a.startswith("P'*") for a in actions(g))
    assert "P'*4e" in actions(g)


# ------------------------------------------------------------------ special pieces
def test_breath_captures_without_moving_never_a_king():
    g = state({"5i": "K", "5a": "k", "5c": "p", "3e": "g"}, extra="f=hh;h=D")
    a = actions(g)
    assert {"D*5e:x5c", "D*5e:x3e"} <= a and "D*5e" in a
    g2 = state({"5i": "K", "5a": "k", "3e": "g"}, extra="f=hh;h=D")
    assert not any(x.startswith("D*5e:x5a") for x in actions(g2))  # 5a is the king, seen along the file
    g.apply("D*5e:x5c")
    assert g.sfen().split()[2] == "P" and g.sfen().split()[0].count("D") == 1


def test_king_god_dragon_moves_and_immunity():
    g = state({"5i": "K", "1a": "k", "5e": "O"}, extra="f=hh")
    a = actions(g)
    assert {"5e4c", "5e7d", "5e5a", "5e4d"} <= a
    g = state({"5i": "K", "1a": "k", "5e": "O", "5d": "p", "4c": "n", "4d": "s"}, side="w", extra="f=hh")
    a = actions(g)
    assert "5d5e" not in a and "4c5e" not in a and "4d5e" in a


def test_thunder_horse_only_falls_to_king_rook_lance_knight():
    pcs = {"5i": "K", "1a": "k", "5e": "T", "4d": "g", "6d": "s", "5d": "p"}
    g = state(pcs, side="w", extra="f=hh")
    assert not {"4d5e", "6d5e", "5d5e"} & actions(g)
    g = state({"5i": "K", "1a": "k", "5e": "T", "5b": "r", "6c": "n", "4d": "+r"}, side="w", extra="f=hh")
    a = actions(g)
    assert "5b5e" in a and "6c5e" in a and "4d5e" not in a


def test_spear_pawn_extra_capture():
    base = {"5i": "K", "1a": "k", "5g": "Y", "5d": "p"}
    g = state({**base, "5c": "s"}, extra="f=hh")
    a = actions(g)
    assert {"5g5d", "5g5d,5d5c", "5g5d,5d5c+"} <= a and "5g5d+" not in a
    g.apply("5g5d,5d5c+")
    assert g.sfen().split()[2] == "SP" and "m=5c'" in g.sfen()  # a tokin token
    g = state({**base, "5c": "S"}, extra="f=hh")  # the next piece is its own: the spear stops
    assert not any("," in x for x in actions(g) if x.startswith("5g"))
    g = state({"5i": "K", "5g": "Y", "5d": "p", "5c": "k"}, extra="f=hh")  # never a king
    assert not any("," in x for x in actions(g) if x.startswith("5g"))


def test_spear_pawn_last_rank():
    g = state({"5i": "K", "1a": "k", "5c": "Y"}, extra="f=hh;h=Y")
    a = actions(g)
    assert "5c5a+" in a and "5c5a" not in a and "Y*4a" not in a and "Y*4b" in a


def test_gale_horse_second_move_only_after_four_squares():
    g = state({"5i": "K", "2a": "k", "9i": "H"}, extra="f=hh")
    a = actions(g)
    assert g.canonical("9i5e,5e6e") in a  # four squares: a second move
    with pytest.raises(GameError):
        g.canonical("9i6f,6f6e")  # three squares: none


def test_gale_second_move_never_captures_the_king_but_may_check():
    g = state({"5i": "K", "1b": "k", "9i": "H", "2b": "p"}, extra="f=hh")
    a = actions(g)
    assert not any(x.endswith("1b") for x in a)
    assert "9i2b" in a and g.canonical("9i5e,5e5d") in a
    assert g.canonical("9i5e,5e2b") == "9i2b"  # the same outcome as the one-move capture: one turn


def test_sword_silver_capture_in_place():
    g = state({"5i": "K", "1a": "k", "5e": "W", "5d": "p", "4d": "g"}, extra="f=hh;h=W")
    a = actions(g)
    assert {"5e:x5d", "5e:x4d", "W*3c:x4d"} <= a
    g.apply("5e:x4d")
    assert g.sfen().split()[2] == "G" and "W" in g.sfen().split()[0]
    g = state({"5i": "K", "5d": "k"}, extra="f=hh;h=W")
    assert "W*6e" in actions(g) and "W*6e:x5d" not in actions(g)


def test_capture_that_empties_a_square_may_not_open_a_line_to_the_own_king():
    """Breath, the sword silver's capture in place and the spear pawn's first victim take an enemy piece off a
    square nothing lands on: when that piece stood between an enemy slider and the own king, the turn is illegal
    (the kernels once took such turns as safe without testing; the reference generator agrees with the fix)."""
    from . import fantasista_reference as REF
    from .test_fantasista_reference import outcome_of

    # the gote silver on 5e shields the sente king on 5i from the rook on 5a
    g = state({"5i": "K", "1a": "k", "5a": "r", "5e": "s", "4f": "W"})
    assert "4f:x5e" not in actions(g)
    g = state({"5i": "K", "1a": "k", "5a": "r", "5e": "s"}, extra="f=hh;h=D")
    breath = {a for a in actions(g) if a.endswith(":x5e")}
    assert breath == {f"D*5{r}:x5e" for r in "bcdfgh"}  # only from the file: there the dragon shields the king
    # the gote pawn on 5f shields the sente king on 1f from the rook on 9f: the spear may take it, not go on
    g = state({"1f": "K", "9a": "k", "9f": "r", "5f": "p", "5e": "s", "5g": "Y"})
    assert "5g5f" in actions(g) and not any("," in a for a in actions(g))
    for g in (state({"5i": "K", "1a": "k", "5a": "r", "5e": "s", "4f": "W"}),
              state({"1f": "K", "9a": "k", "9f": "r", "5f": "p", "5e": "s", "5g": "Y"})):
        assert {outcome_of(b) for b in g.turns()[0].values()} == REF.legal_outcomes(REF.parse(g.sfen()))


def test_specials_never_promote():
    g = state({"5i": "K", "1a": "k", "5d": "D", "7d": "H", "3d": "W"}, extra="f=hh")
    assert not any(x.endswith("+") for x in actions(g))


# ------------------------------------------------------------------ rights
def test_awakening_moves_the_rook_twice_and_uses_the_right():
    g = state({"5i": "K", "1a": "k", "2h": "R"}, extra="f=hh;r=A")
    a = actions(g)
    assert g.canonical("2h2d,2d2b+") in a and "2h2d" in a and g.canonical("2h2c+,2c1c") in a
    g.apply("2h2d,2d2b+")  # accepted, stored as the canonical spelling of the same outcome
    assert "r=" not in g.sfen()


def test_awakening_second_leg_may_not_capture_the_king():
    g = state({"5i": "K", "5a": "k", "2h": "R"}, extra="f=hh;r=A")
    a = actions(g)
    assert "2h2a+,2a5a" not in a and "2h2a,2a5a" not in a
    assert "2h2a+,2a4a" in a  # a second leg that checks is no foul


def test_silver_curtain_two_one_zero_squares():
    g = state({"5i": "K", "1a": "k"}, extra="f=gh;r=C")
    cur = {x for x in actions(g) if x.startswith("curtain:")}
    assert "curtain:4h,6h" in cur
    assert len({x for x in cur if x.count(",") == 1}) == 10  # C(5, 2) pairs of the five empty neighbours
    assert "curtain:4h,6h,4h3g" in cur
    g = state({"5i": "K", "1a": "k", "4h": "G", "5h": "G", "6h": "G", "6i": "G"}, extra="f=gh;r=C")
    cur = {x for x in actions(g) if x.startswith("curtain:")}
    assert "curtain:4i" in cur and not any(x.startswith("curtain:4i,") and len(x) == 13 for x in cur)
    g = state({"5i": "K", "1a": "k", "4h": "G", "5h": "G", "6h": "G", "6i": "G", "4i": "G"}, extra="f=gh;r=C")
    assert "curtain:" in actions(g)  # no empty square: using the right passes
    g.apply("curtain:")
    assert g.side_to_move() == 1 and "r=" not in g.sfen()


def test_silver_wave_order_matters():
    # 5g must leave before 5h can step up onto it: only that order reaches both advanced.
    g = state({"5i": "K", "1a": "k", "5g": "S", "5h": "S"}, extra="f=gh;r=W")
    a = actions(g)
    assert "wave:5g5f,5h5g" in a
    assert "wave:5h5g,5g5f" not in a  # illegal order: 5g is still occupied
    assert "wave:" not in a  # an empty wave is a pass in disguise (test_fantasista_turns.py)
    # Two independent moves in either order are one turn: the other order is accepted and stored canonically.
    one = g.copy()
    one.apply("wave:5g4f,5h6g")
    two = g.copy()
    two.apply("wave:5h6g,5g4f")
    assert one.sfen() == two.sfen()
    assert g.canonical("wave:5h6g,5g4f") in a


def test_silver_wave_excludes_promoted_and_sword_silvers():
    g = state({"5i": "K", "1a": "k", "5g": "+S", "4g": "W", "6g": "S"}, extra="f=gh;r=W;m=6g'")
    wav = {x for x in actions(g) if x.startswith("wave:")}
    assert all(p == "" or p.startswith("6g") for x in wav for p in x[5:].split(","))


# ------------------------------------------------------------------ emblem, invincible, carrier
def test_emblem_drop_ignores_nifu_and_last_rank():
    g = state({"5i": "K", "1a": "k", "5g": "P"}, hand="P", extra="f=ah;r=E")
    a = actions(g)
    assert "P*5e+" in a and "P*5e" not in a and "P*4a+" in a and "P*4a" not in a and "P*4e" in a


def test_emblem_drop_ignores_uchifuzume():
    pcs = {"5i": "K", "1a": "k", "2a": "l", "1b": "p", "2c": "G"}
    g = state(pcs, hand="P", extra="f=ah")
    assert "P*1b" not in actions(g)
    g = state({"5i": "K", "1a": "k", "2a": "n", "2b": "p", "3c": "G", "1c": "G"}, hand="P", extra="f=ah;r=E")
    a = actions(g)
    assert "P*1b" not in a and "P*1b+" in a  # pawn-drop mate forbidden, tokin drop allowed


def test_invincible_taken_only_by_the_king():
    g = state({"5i": "K", "5e": "P", "5a": "r", "4d": "k"}, side="w", extra="f=hh;m=5e!")
    a = actions(g)
    assert "5a5e" not in a and "4d5e" in a
    g.apply("4d5e")
    assert g.sfen().split()[2] == "p" and "m=" not in g.sfen()


def test_invincible_mark_survives_promotion():
    g = state({"5i": "K", "1a": "k", "5d": "P"}, extra="f=hh;m=5d!")
    g.apply("5d5c+")
    assert "m=5c!" in g.sfen()


def test_board_a_carrier_ride_and_follow_up():
    g = state({"5i": "K", "1b": "k", "8h": "B", "7h": "G"}, extra="f=yh;m=8h@")
    a = actions(g)
    assert "7h8h" in a and "B*5e" not in a
    g.apply("7h8h")
    assert "m=8h@G" in g.sfen()
    g.apply("1b1c")
    a = actions(g)
    assert "8h4d,rider:4d4c" in a and "8h4d" in a and "rider:8h8g" in a and "rider:8h7h" in a


def test_rider_gives_check_from_the_carrier():
    g = state({"5i": "K", "5a": "k", "5c": "B"}, side="w", extra="f=yh;m=5c@G")
    assert all(not x.startswith("5a") or x in ("5a4a", "5a6a", "5a4b", "5a6b") for x in actions(g))
    assert "5a5b" not in actions(g)  # 5b is covered by the gold riding on 5c


def test_carrier_captured_with_its_rider():
    g = state({"5i": "K", "1a": "k", "5c": "b", "5e": "R"}, extra="f=hh;m=5c@G")
    g.apply("5e5c+")
    assert g.sfen().split()[2] == "BG"
    g = state({"5i": "K", "1a": "k", "5c": "b", "5e": "R"}, extra="f=hh;m=5c@G'")
    g.apply("5e5c+")
    assert g.sfen().split()[2] == "B"  # the token rider leaves the game


# ------------------------------------------------------------------ mate and limits
def test_checkmate_escaped_only_by_a_magic():
    pcs = {"5i": "K", "4h": "P", "6h": "P", "4i": "L", "6i": "L", "5a": "r", "1a": "k"}
    g = state(pcs, extra="f=gh")
    assert g.result() == (0.0, "checkmate") and g.node_kind() is NodeKind.TERMINAL
    g = state(pcs, extra="f=gh;r=C")
    assert g.result() is None
    assert "curtain:5h" in actions(g) and all(x.startswith("curtain:5h") for x in actions(g))


def test_own_king_must_be_safe_at_the_end_of_the_turn():
    # Awakening: the first leg may uncover the own king if the second leg closes the line again.
    g = state({"5i": "K", "5e": "R", "5a": "r", "1a": "k"}, extra="f=hh;r=A")
    a = actions(g)
    assert "5e4e" not in a and "5e4e,4e4a" not in a
    with pytest.raises(GameError):  # out and back: no turn (a pass in disguise, test_fantasista_turns.py)
        g.canonical("5e4e,4e5e")
    assert g.canonical("5e5d,5d5c") in a and not any(t.startswith("5e4e,") or t.startswith("5e6e,") for t in a)


def test_illegal_token_rejected_state_unchanged():
    g = new_game()
    s = g.sfen()
    for bad in ("5e5d", "wave:", "roll=3", "target:5g", "", "7g7f,7f7e"):
        with pytest.raises(GameError):
            g.apply(bad)
        assert g.sfen() == s


def test_sfen_round_trip_rich_state():
    s = ("lnsgk2nl/1r4gb1/p1ppp1D1p/5Op2/1Y2T4/2P3H2/PP1PP1W1P/1B+R1S2R1/LN1GK1SNL b Sp 40 "
         "f=ag;r=2ACEwe;m=2g!,1g',8h@+P'!,5h'@;h=RB2Pg2s;n=target:i")
    # marks checked against pieces: 5h must be a bishop or horse to carry
    with pytest.raises(GameError):
        FantasistaState.from_sfen(s)
    s = s.replace("m=2g!,1g',8h@+P'!,5h'@", "m=1g',8h@+P'!")
    g = FantasistaState.from_sfen(s)
    assert g.sfen() == s


@pytest.mark.parametrize("seed", range(4))
def test_random_games_finish(seed):
    _random_games(seed, games=2)


def test_self_play_games_at_tiny_depth_finish():
    _random_games(99, games=2, searched=True)


@pytest.mark.slow
def test_thousand_random_games():
    _random_games(12345, games=1000)


@pytest.mark.slow
def test_thousand_self_play_games_at_tiny_depth():
    """1,000 self-play games, every turn chosen by the search at depth 1 (a few random turns for variety)."""
    _random_games(4321, games=1000, searched=True)


def _random_games(seed, games, searched=False):
    from search import Limits
    from search.games import FantasistaGameSearcher
    rng = random.Random(seed)
    searchers = [FantasistaGameSearcher(hash_mb=1), FantasistaGameSearcher(hash_mb=1, chance_aware=False)]
    for _ in range(games):
        g = new_game((rng.choice(FAIRIES), rng.choice(FAIRIES)), reserved=rng.choice(["4-8", "1", "2", "3"]),
                     max_plies=160)
        while g.node_kind() is not NodeKind.TERMINAL:
            if g.node_kind() is NodeKind.CHANCE:
                g.apply(rng.choice(g.chance_events())[0])
            elif searched and rng.random() < 0.85:
                s = searchers[g.side_to_move()]
                s.clear()
                g.apply(s.think(g, Limits(depth=1, nodes=150), lambda info: None).best)
            else:
                g.apply(rng.choice(g.legal_actions()))
        assert g.result() is not None


# ------------------------------------------------------------------ search (the shared kernel; tests/test_chance.py,
# tests/test_fantasista_shared.py)
def _think(g, depth: int):
    from search import Limits
    from search.games import FantasistaGameSearcher
    return FantasistaGameSearcher(hash_mb=1).think(g, Limits(depth=depth), lambda info: None)


def test_search_takes_a_free_rook():
    g = state({"5i": "K", "1a": "k", "5e": "R", "5c": "r"}, extra="f=hh")
    assert _think(g, 1).best in ("5e5c", "5e5c+")


def test_search_answers_a_target_decision():
    g = state({"5i": "K", "5a": "k", "5g": "P", "4g": "P"}, side="w", extra="f=ah;n=roll", number=16)
    g.apply("roll=3")
    assert _think(g, 2).best in ("target:4g", "target:5g")


def test_perft_without_magic_equals_shogi():
    """Before any magic the game is shogi: perft 1-4 from the start are shogi's 30, 900, 25470, 719731 (the
    kernels); the Python generator agrees on 1-2."""
    from engine.variants.fantasista.board import legal_turns
    from engine.variants.fantasista.turns import perft

    def py_perft(bd, d):
        t = legal_turns(bd)[0]
        return len(t) if d == 1 else sum(py_perft(nb, d - 1) for nb in t.values())
    g = new_game()
    assert [perft(g.bd, d) for d in (1, 2, 3, 4)] == [30, 900, 25470, 719731]
    assert [py_perft(g.bd, d) for d in (1, 2)] == [30, 900]


@pytest.mark.parametrize("pieces, hand, extra", [
    # the emblem: pawns in both hands, a pawn on file 5 (nifu for the ordinary drop only), in check by a rook
    ({"5i": "K", "1a": "k", "5e": "P", "9i": "r", "3c": "g"}, "2P", "f=aa;h=P;r=E"),
    # the emblem, a pawn drop in front of the king that would be uchifuzume (gote's king boxed in)
    ({"5i": "K", "5a": "k", "4a": "l", "6a": "l", "4c": "G", "6c": "G"}, "P", "f=aa;r=E"),
    # two sword silvers that can both take the gold on 5e in place (one outcome), dragon and sword in hand
    ({"5i": "K", "1a": "k", "4f": "W", "6f": "W", "5e": "g", "2b": "p"}, "-", "f=gg;h=DW"),
    # the gote silver on 5e shields the sente king from the rook on 5a: no capture of it in place
    ({"5i": "K", "1a": "k", "5a": "r", "5e": "s", "4f": "W"}, "-", "f=gg;h=DW"),
    # in check by the rook on 5a: a capture in place of the checker or a drop that blocks
    ({"5i": "K", "1a": "k", "5a": "r", "4b": "W", "9a": "l"}, "S", "f=gg;h=D"),
])
def test_special_one_part_turns_are_the_readable_generators(pieces, hand, extra):
    """Emblem drops, fire dragon / sword silver drops with their breath, and a sword silver's capture in place (also
    in check, with nifu and an uchifuzume square, and two sword silvers merging onto one outcome): the game layer's
    turns (the shared generator) are board.py's, names and outcomes."""
    from engine.variants.fantasista.board import legal_turns
    g = state(pieces, hand=hand, extra=extra)
    turns = g.turns()[0]
    assert {t: turns[t].key() for t in turns} == {t: b.key() for t, b in legal_turns(g.bd)[0].items()}


def test_a_mating_pawn_drop_is_no_turn():
    """A pawn drop that mates (gote's king boxed in by its lances and two golds) is not a turn; elsewhere it is."""
    g = state({"5i": "K", "5a": "k", "4a": "l", "6a": "l", "4c": "G", "6c": "G"}, hand="P")
    assert "P*5b" not in actions(g) and "P*5h" in actions(g)


def test_bench_fantasista_runs_and_reports_ratios(tmp_path):
    """``python -m bench fantasista`` (tiny perft depth) prints both tables; fantasista's start count is shogi's, and so
    are the counts of the shogi twins."""
    import json
    import subprocess
    import sys
    from pathlib import Path
    out = subprocess.run([sys.executable, "-m", "bench", "fantasista", "--depth", "2", "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=600, cwd=Path(__file__).parents[1])
    assert out.returncode == 0, out.stderr
    assert "fantasista perft" in out.stdout and "fantasista search" in out.stdout
    data = json.loads(next(tmp_path.glob("*.json")).read_text())["fantasista"]
    shogi, fan = data["perft"][:2]
    assert shogi["nodes"] == fan["nodes"] == 900 and fan["agrees"]
    assert len(data["perft"]) > 2 and all(r["nodes"] > 0 and r["ratio"] > 0 for r in data["perft"] + data["search"])
    twins = [r for r in data["perft"] if "twin" in r]  # shogi positions read as fantasista ones: the same counts
    assert len(twins) == 3 and all(r["agrees"] for r in twins)
