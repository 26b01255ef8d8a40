"""Enokian shogi rules: one test per card effect, the endings, notation, SFEN round trips and bad input.

Expected positions are worked out by hand from shared/spec/enokian.md (file 1 = east edge, rank a = north edge;
S = east dragon, C = west dragon, H = south horse, D = north horse).
"""
import numpy as np
import pytest

from engine.game import GameError, GameState, NodeKind
from engine.variants.enokian import EnokianState, new_game
from engine.variants.enokian import kernels as K
from engine.variants.enokian.state import parse_square

SUITS = "SCHD"
RANKS = "A23456789TJQK"


def deck_field(cards):
    return "/".join("".join(r for r in RANKS if r + su in cards) or "-" for su in SUITS)


def make(board, cards, side="w", heads="SwCeHnDs", pending="-"):
    return EnokianState.from_sfen(f"{board} {side} - 1 {heads}/{deck_field(cards)}/{pending}")


def at(g, square):
    """What stands on a square: '.', 'P', 'K', 'M' (Michizane), '*' (flame) or the suit of a horse/dragon."""
    c = int(g.s[parse_square(square)])
    return {0: ".", 1: "P", 2: "K", 7: "*", 8: "M"}.get(c) or SUITS[c - K.MOVER0]


def heading(g, suit):
    return int(g.s[K.O_HD + SUITS.index(suit)])


def board_of(g):
    return g.sfen().split()[0]


# ------------------------------------------------------------------ set-up
def test_start_position_and_protocol():
    g = new_game()
    assert isinstance(g, GameState)
    assert g.sfen() == ("4+b3k/9/9/3PPP3/+r2PKP2+r/3PPP3/9/9/4+b4 w - 1 "
                        "SwCeHnDs/A23456789TJQK/A23456789TJQK/A23456789TJQK/A23456789TJQK/-")
    assert g.node_kind() is NodeKind.CHANCE and g.side_to_move() == 1 and g.result() is None
    ev = g.chance_events()
    assert len(ev) == 52 and abs(sum(p for _, p in ev) - 1) < 1e-12 and ("card=TD", 1 / 52) in ev
    assert g.legal_actions() == []


def test_michizane_corner_option():
    g = new_game(michizane="9i")
    assert at(g, "9i") == "M" and at(g, "1a") == "."
    g.apply("card=KH")  # the south horse slides north onto the guard on 5f; Michizane steps north-east toward 5e
    assert at(g, "8h") == "M" and at(g, "5f") == "H"
    with pytest.raises(GameError, match="Michizane corner"):
        new_game(michizane="1i")


# ------------------------------------------------------------------ court cards
def test_court_slide_captures_first_guard_and_reverses_heading():
    g = new_game()
    g.apply("card=JS")
    assert at(g, "4e") == "S" and at(g, "1e") == "." and heading(g, "S") == -1
    assert int(g.s[K.O_NGUARD]) == 7 and g.node_kind() is NodeKind.DECISION
    assert at(g, "1a") == "M"  # J: no Michizane step
    g.apply("4d3d")
    g.apply("card=QS")  # heading now east: back to the edge
    assert at(g, "1e") == "S" and heading(g, "S") == 1


def test_court_slide_blocked_by_adjacent_red_piece_still_turns():
    g = make("9/9/9/9/+r+r2K4/9/9/9/8k", ["QC", "2H"], heads="SwCwHxDx")
    # C on 9e heads west (off the board): cannot move, heading turns east
    g.apply("card=QC")
    assert at(g, "9e") == "C" and heading(g, "C") == -1
    g.apply("5e5d")
    assert g.node_kind() is NodeKind.CHANCE


def test_slide_stops_before_a_flame():
    g = make("9/9/9/9/+r2+sK4/9/9/9/8k", ["JC", "2H"], heads="SxCeHxDx")
    g.apply("card=JC")  # C from 9e heading east: 8e, 7e, then the flame on 6e stops it
    assert at(g, "7e") == "C" and at(g, "6e") == "*" and at(g, "5e") == "K"


def test_slide_into_the_emperor_loses():
    g = make("9/9/9/9/4K3+r/9/9/9/8k", ["KS", "2H"], heads="SwCxHxDx")
    g.apply("card=KS")
    assert g.result() == (0.0, "emperor killed") and g.node_kind() is NodeKind.TERMINAL
    with pytest.raises(GameError, match="game is over"):
        g.apply("card=2H")


def test_king_moves_michizane_diagonally_then_straight_and_captures_a_guard():
    # S is gone: the K of spades still moves Michizane
    g = make("8k/9/9/9/4K4/9/9/9/9", ["KS", "KC", "2H"], heads="SxCxHxDx")
    g.apply("card=KS")
    assert at(g, "2b") == "M"
    g2 = make("9/9/9/9/4KPk2/9/9/9/9", ["KS", "2H"], heads="SxCxHxDx")
    g2.apply("card=KS")  # same rank: straight west onto the guard on 4e
    assert at(g2, "4e") == "M" and int(g2.s[K.O_NGUARD]) == 0


def test_king_step_blocked_by_a_red_piece():
    g = make("8k/7+s1/9/9/4K4/9/9/9/9", ["KH", "2H"], heads="SxCxHxDx")
    g.apply("card=KH")
    assert at(g, "1a") == "M" and at(g, "2b") == "*"


def test_king_step_onto_the_emperor_loses():
    g = make("9/9/9/3k5/4K4/9/9/9/9", ["KD", "2H"], heads="SxCxHxDx")
    g.apply("card=KD")
    assert g.result()[0] == 0.0


# ------------------------------------------------------------------ tens
def test_ten_two_pieces_meeting_are_cancelled():
    # S on 4e and C on 6e both step onto 5e: both stay; D on 5c steps south to 5d and takes the guard there;
    # H on 5i steps north to 5h.
    g = make("K8/9/4+b4/4P4/3+r1+r3/9/9/9/4+b3k", ["TS", "2H"], heads="SwCeHnDs")
    g.apply("card=TS")
    assert at(g, "4e") == "S" and at(g, "6e") == "C" and at(g, "5e") == "."
    assert at(g, "5d") == "D" and at(g, "5h") == "H" and int(g.s[K.O_NGUARD]) == 0
    # headings afterwards point away from the centre (back where each came from), cancelled or not
    assert heading(g, "S") == -1 and heading(g, "C") == 1 and heading(g, "D") == -1 and heading(g, "H") == 1


def test_ten_step_into_red_piece_cancelled_and_centre_piece_steps_by_heading():
    # D sits on 5e (the centre) heading south: it steps to 5f. S on 4e would step into D (red, judged before the
    # move): cancelled. C on 9e steps to 8e. H on 5h would step into 5g which holds a flame: cancelled.
    g = make("K8/9/9/9/+r3+b+r3/9/4+s4/4+b4/8k", ["TH", "2H"], heads="SwCeHnDs")
    g.apply("card=TH")
    assert at(g, "5f") == "D" and at(g, "4e") == "S" and at(g, "8e") == "C" and at(g, "5h") == "H"
    # D stepped off the centre: it heads on away from it, south (the direction it stepped)
    assert heading(g, "D") == 1 and heading(g, "S") == -1 and heading(g, "C") == 1 and heading(g, "H") == 1


# The three cases of issue 23 (spec "The ten": a step off the centre keeps its direction; a centre step is opposite
# to the last *move*, which a blocked court card is not; a cancelled centre step heads back where it came from).
def test_dragon_stepping_off_the_centre_heads_on_away_from_it():
    # the S dragon on 5e arrived moving west (so it heads east): the ten steps it east to 4e, the J slides it on
    g = make("K7k/9/9/9/4+r4/9/9/9/9", ["TS", "JS", "2H"], heads="SeCxHxDx")
    g.apply("card=TS")
    assert at(g, "4e") == "S" and heading(g, "S") == -1
    g.apply("9a9b")
    g.apply("card=JS")
    assert at(g, "1e") == "S" and at(g, "9e") == "."


def centre_horse(cards):
    """The D horse on 5e, arrived moving south (heading north), a flame north of it on 5d."""
    return make("K7k/9/9/4+s4/4+b4/9/9/9/9", cards, heads="SxCxHxDn")


def test_blocked_court_card_is_no_move_for_a_ten_on_the_centre():
    g = centre_horse(["JD", "TD", "2H"])
    g.apply("card=JD")  # blocked by the flame: no move, the heading turns south
    assert at(g, "5e") == "D" and heading(g, "D") == 1
    assert g.sfen().split()[4].startswith("SxCxHxDS/")  # upper case: flipped since its last move
    again = EnokianState.from_sfen(g.sfen())
    assert np.array_equal(again.s, g.s)
    g.apply("9a9b")
    g.apply("card=TD")  # opposite to its last move (south): north into the flame, so cancelled
    assert at(g, "5e") == "D" and at(g, "5f") == "." and at(g, "5d") == "*"
    assert heading(g, "D") == -1 and g.sfen().split()[4].startswith("SxCxHxDn/")


def test_cancelled_centre_step_heads_back_where_it_came_from():
    g = centre_horse(["TD", "JD", "2H"])
    g.apply("card=TD")  # north into the flame: cancelled; it keeps heading north, where it came from
    assert at(g, "5e") == "D" and heading(g, "D") == -1
    g.apply("9a9b")
    g.apply("card=JD")  # north: blocked by the flame
    assert at(g, "5e") == "D" and at(g, "5i") == "."


def test_upper_case_heading_only_on_the_centre():
    with pytest.raises(GameError, match="only on 5e"):
        make("K7k/9/4+b4/9/9/9/9/9/9", ["2H"], heads="SxCxHxDN")
    assert at(make("K7k/9/9/9/4+b4/9/9/9/9", ["2H"], heads="SxCxHxDN"), "5e") == "D"


def test_ten_captures_the_emperor():
    g = make("9/9/9/9/3+rK4/9/9/9/8k", ["TC", "2H"], heads="SxCeHxDx")
    g.apply("card=TC")
    assert g.result()[0] == 0.0


# ------------------------------------------------------------------ number pairs
def test_number_pair_of_the_same_axis_is_a_stand_off():
    for first, second in (("4S", "7C"), ("4H", "9D"), ("2S", "3S")):
        g = new_game()
        before = board_of(g)
        g.apply(f"card={first}")
        assert g.node_kind() is NodeKind.CHANCE and g.sfen().endswith("/" + first)  # the pending card
        g.apply(f"card={second}")
        assert board_of(g) == before and g.node_kind() is NodeKind.DECISION


def test_number_then_court_card_resolves_the_court_card():
    g = new_game()
    g.apply("card=5D")
    g.apply("card=JS")
    assert at(g, "4e") == "S" and g.sfen().endswith("/-")


def test_lightning_places_a_flame_and_kills_guard_or_emperor():
    g = new_game()
    g.apply("card=4S")  # file 4 ...
    g.apply("card=9H")  # ... rank 9 (the seed's example): 4i, empty -> flame
    assert at(g, "4i") == "*" and int(g.s[K.O_NFLAME]) == 1
    g.apply("4d3d")
    g.apply("card=6C")
    g.apply("card=6D")  # 6f: a guard dies, a flame rises
    assert at(g, "6f") == "*" and int(g.s[K.O_NGUARD]) == 7


def test_lightning_on_the_emperor_loses():
    g = new_game()
    g.apply("card=5H")
    g.apply("card=5C")
    assert g.result() == (0.0, "emperor killed")


def test_lightning_on_red_piece_sparks_burn_guards_and_emperor():
    g = make("9/9/9/9/3PK+r3/3P1P3/9/9/8k", ["2S", "4S", "5H", "QH"], heads="SeCxHxDx")
    g.apply("card=4S")
    g.apply("card=5H")  # 4e holds the dragon: sparks on the eight squares around it
    assert g.result() == (0.0, "emperor killed")
    assert at(g, "4e") == "S" and at(g, "4f") == "." and at(g, "6f") == "P" and at(g, "6e") == "P"
    assert int(g.s[K.O_NFLAME]) == 0  # nothing is placed


def test_sparks_around_michizane_and_flames():
    g = make("9/9/9/9/9/9/9/7PP/4K1P+sk", ["AS", "9H", "2H"], heads="SxCxHxDx")
    g.apply("card=9H")
    g.apply("card=AS")  # 1i is Michizane: sparks; the guards on 1h, 2h are burnt, 3i is out of reach
    assert at(g, "1h") == "." and at(g, "2h") == "." and at(g, "3i") == "P" and at(g, "1i") == "M"


def test_flame_supply_runs_out_and_lightning_fizzles():
    flames = "+s+s+s+s+s+s+s+s+s/+s+s+s4K1"
    g = make(f"{flames}/9/9/9/9/9/9/8k", ["3S", "3H", "4S", "9H", "2D", "5S", "5H"], heads="SxCxHxDx")
    assert int(g.s[K.O_NFLAME]) == 12
    g.apply("card=3S")
    g.apply("card=3H")  # 3c would get a flame, but the supply is empty: nothing happens
    assert at(g, "3c") == "." and int(g.s[K.O_NFLAME]) == 12
    g.apply("2b1b")
    g.apply("card=2D")
    g.apply("card=4S")  # 4b: no flame either; after a flame is put out, lightning works again
    assert at(g, "4b") == "."
    g.apply("1b1a")  # the emperor puts out the flame on 1a: back to the supply
    assert int(g.s[K.O_NFLAME]) == 11
    g.apply("card=5S")
    g.apply("card=5H")  # with a flame back in the supply, lightning strikes again
    assert at(g, "5e") == "*" and int(g.s[K.O_NFLAME]) == 12
    g.apply("1a2a")
    g.apply("card=9H")  # a lone number card drawn last: no second card, the game ends at once
    assert g.result() == (1.0, "survived") and board_of(g).startswith("+s+s+s+s+s+s+sK1/")


def test_lone_number_card_drawn_last_ends_the_game_without_a_move():
    g = make("9/9/9/9/4K4/9/9/9/8k", ["QS", "4H"], heads="SxCxHxDx")
    g.apply("card=QS")
    g.apply("5e5d")
    g.apply("card=4H")
    assert g.result() == (1.0, "survived") and g.node_kind() is NodeKind.TERMINAL and g.legal_actions() == []
    with pytest.raises(GameError, match="game is over"):
        g.apply("5d5e")
    assert EnokianState.from_sfen(g.sfen()).result() == (1.0, "survived")


# ------------------------------------------------------------------ Michizane and the endings
def test_michizane_is_invulnerable_while_a_red_piece_remains():
    g = make("9/9/9/9/9/9/9/7+sK/8k", ["2H", "3H"], side="b", heads="SxCxHxDx")
    assert "1h1i" not in g.legal_actions()
    with pytest.raises(GameError, match="cannot be captured"):
        g.apply("1h1i")
    g.apply("1h2h")  # the emperor puts out the last flame
    g.apply("card=2H")
    g.apply("card=3H")  # a stand-off
    assert "2h1i" in g.legal_actions()
    g.apply("2h1i")
    assert g.result() == (1.0, "subdued")


def test_deck_running_out_the_player_moves_after_the_last_card_then_survives():
    g = make("9/9/9/9/4K4/9/9/9/8k", ["QS"], heads="SxCxHxDx")
    g.apply("card=QS")
    assert g.node_kind() is NodeKind.DECISION and g.result() is None
    g.apply("5e5d")
    assert g.result() == (1.0, "survived") and g.node_kind() is NodeKind.TERMINAL
    assert g.sfen().split()[4] == "SxCxHxDx/-/-/-/-/-"


def test_pass_only_when_there_is_no_move():
    g = new_game()
    g.apply("card=JS")
    assert "pass" not in g.legal_actions()
    with pytest.raises(GameError, match="only allowed when the player has no move"):
        g.apply("pass")


# ------------------------------------------------------------------ notation and bad input
BAD_TOKENS = ["card=1S", "card=KX", "card=K", "5e5c", "5e", "9a9b", "pass", "move=5e5d", "card=KSX"]


@pytest.mark.parametrize("token", BAD_TOKENS)
def test_bad_tokens_raise_and_leave_state_unchanged(token):
    g = new_game()
    g.apply("card=JS")  # now a decision node
    before = g.sfen()
    with pytest.raises(GameError):
        g.apply(token)
    assert g.sfen() == before


def test_card_at_a_decision_node_and_move_at_a_chance_node_are_errors():
    g = new_game()
    with pytest.raises(GameError, match="card must be drawn"):
        g.apply("5e5d")
    g.apply("card=JS")
    with pytest.raises(GameError, match="player is to move"):
        g.apply("card=2S")


def test_card_already_drawn_is_an_error():
    g = new_game()
    g.apply("card=JS")
    g.apply("4d3d")
    before = g.sfen()
    with pytest.raises(GameError, match="not in the draw pile"):
        g.apply("card=JS")
    assert g.sfen() == before


BAD_SFENS = [
    "9/9/9/9/4K4/9/9/9/8k w - 1 SxCxHxDx/-/-/-/-",  # five deck parts
    "9/9/9/9/4K4/9/9/9/8k w - 1 SxCxHxDx/A/-/-/-/-/-",
    "9/9/9/9/4K4/9/9/9/8k x - 1 SxCxHxDx/A/-/-/-/-",
    "9/9/9/9/4K4/9/9/9/8k w P 1 SxCxHxDx/A/-/-/-/-",
    "9/9/9/9/4K4/9/9/9/8k w - 1 SwCxHxDx/A/-/-/-/-",  # S alive but no dragon
    "9/9/9/+r8/4K4/9/9/9/8k w - 1 SwCxHxDx/A/-/-/-/-",  # dragon off rank e
    "9/9/9/9/4K4/9/9/9/8k w - 1 SnCxHxDx/A/-/-/-/-",  # bad heading letter
    "9/9/9/9/4K4/9/9/9/8k w - 1 SxCxHxDx/2A/-/-/-/-",  # ranks out of order
    "9/9/9/9/4K4/9/9/9/8k w - 1 SxCxHxDx/A/-/-/-/AS",  # pending card still in the pile
    "9/9/9/9/4K4/9/9/9/8k w - 1 SxCxHxDx/A/-/-/-/KS",  # a king cannot be pending
    "9/9/9/9/4K5/9/9/9/8k w - 1 SxCxHxDx/A/-/-/-/-",  # 10 squares
    "9/9/9/9/4K4/9/9/9/8g w - 1 SxCxHxDx/A/-/-/-/-",
    "9/9/9/9/4K4/9/9/9/8k w - 1",
]


@pytest.mark.parametrize("sfen", BAD_SFENS)
def test_bad_sfen(sfen):
    with pytest.raises(GameError):
        EnokianState.from_sfen(sfen)


def test_sfen_round_trip_over_random_games():
    rng = np.random.default_rng(9)
    seen = 0
    for game in range(40):
        deck = [RANKS[i % 13] + SUITS[i // 13] for i in rng.permutation(52)]
        g = new_game(michizane="1a" if game % 2 else "9i")
        top = 0
        while g.result() is None:
            text = g.sfen()
            again = EnokianState.from_sfen(text)
            assert again.sfen() == text
            assert np.array_equal(again.s, g.s)
            seen += 1
            if g.node_kind() is NodeKind.CHANCE:
                g.apply("card=" + deck[top])
                top += 1
            else:
                acts = g.legal_actions()
                g.apply(acts[int(rng.integers(len(acts)))])
        assert EnokianState.from_sfen(g.sfen()).result() == g.result()
    assert seen > 1000
