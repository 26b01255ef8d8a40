"""One focused test per rule of standard shogi."""
import pytest

from engine import BLACK, WHITE, EnteringKingRule, IllegalMoveError, Position, Repetition, SfenError


def usi_moves(sfen):
    pos = Position.from_sfen(sfen)
    return {pos.move_usi(m) for m in pos.legal_codes()}


# ------------------------------------------------------------------ drops
def test_nifu_forbids_second_pawn_on_a_file():
    moves = usi_moves("4k4/9/9/9/9/9/4P4/9/4K4 b P 1")
    assert "P*5e" not in moves  # own unpromoted pawn on file 5
    assert "P*4e" in moves


def test_tokin_does_not_count_for_nifu():
    moves = usi_moves("4k4/9/9/9/9/9/4+P4/9/4K4 b P 1")
    assert "P*5e" in moves


def test_dead_piece_in_sfen_is_rejected():
    with pytest.raises(SfenError, match="could never move"):
        Position.from_sfen("4k4/8N/9/9/9/9/9/9/4K4 b - 1")


def test_dead_drops_are_illegal():
    moves = usi_moves("4k4/9/9/9/9/9/9/9/4K4 b PLN 1")
    assert not any(m.endswith("a") for m in moves if m[0] in "PLN")
    assert not any(m.endswith("b") for m in moves if m[0] == "N")
    assert "N*5c" in moves and "L*5b" in moves and "P*5b" in moves


def test_uchifuzume_pawn_drop_mate_is_illegal():
    # Gote king in the corner, its escape squares covered: P*1b would mate, so it is illegal.
    sfen = "8k/6S2/7G1/9/9/9/9/9/4K4 b P 1"
    moves = usi_moves(sfen)
    assert "P*1b" not in moves
    pos = Position.from_sfen(sfen)
    with pytest.raises(IllegalMoveError):
        pos.push("P*1b")
    assert pos.sfen() == sfen


def test_pawn_drop_check_that_is_not_mate_is_legal():
    assert "P*1b" in usi_moves("8k/9/9/9/9/9/9/9/4K4 b P 1")  # the king can take the pawn or step aside


def test_uchifuzume_not_when_the_pawn_can_be_captured():
    # The gote silver on 2a can take the pawn on 1b: not mate, so the drop is legal.
    assert "P*1b" in usi_moves("7sk/6S2/7G1/9/9/9/9/9/4K4 b P 1")


def test_drop_mate_with_another_piece_is_legal():
    sfen = "8k/6S2/7G1/9/9/9/9/9/4K4 b G 1"
    pos = Position.from_sfen(sfen)
    pos.push("G*1b")
    assert pos.is_checkmate()


def test_pawn_push_mate_is_legal():
    pos = Position.from_sfen("8k/9/7GP/9/9/9/9/9/4K4 b - 1")
    pos.push("1c1b+")  # a pawn *moved* (not dropped) may mate; here it also promotes
    assert pos.is_checkmate()


# -------------------------------------------------------------- promotion
def test_forced_promotion_on_last_ranks():
    moves = usi_moves("4k4/P8/8L/9/9/9/9/9/4K4 b - 1")
    assert "9b9a+" in moves and "9b9a" not in moves  # pawn
    assert "1c1b+" in moves and "1c1a+" in moves and "1c1a" not in moves and "1c1b" in moves  # lance
    moves = usi_moves("4k4/9/9/8N/9/9/9/9/4K4 b - 1")
    assert "1d2b+" in moves and "1d2b" not in moves  # knight on the 2nd rank must promote


def test_optional_promotion_in_and_out_of_zone():
    moves = usi_moves("4k4/9/2S6/9/9/9/9/9/4K4 b - 1")
    assert {"7c7b", "7c7b+", "7c8d", "7c8d+"} <= moves  # leaving the zone may promote too
    moves = usi_moves("4k4/9/9/2S6/9/9/9/9/4K4 b - 1")
    assert "7d7c+" in moves and "7d7e+" not in moves


def test_gold_and_king_never_promote():
    moves = usi_moves("4k4/9/9/2G6/9/9/9/9/4K4 b - 1")
    assert not any(m.endswith("+") for m in moves)


def test_search_mode_skips_pawn_non_promotion_but_all_mode_has_it():
    pos = Position.from_sfen("4k4/9/9/2P6/9/9/9/9/4K4 b - 1")
    all_moves = {pos.move_usi(m) for m in pos.legal_codes("all")}
    search_moves = {pos.move_usi(m) for m in pos.legal_codes("search")}
    assert "7d7c" in all_moves and "7d7c" not in search_moves and "7d7c+" in search_moves


# ------------------------------------------------------------------ checks
def test_pinned_piece_moves_only_along_the_pin():
    # Sente silver on 5h pinned by the gote rook on 5a against the king on 5i.
    moves = usi_moves("4r3k/9/9/9/9/9/9/4S4/4K4 b - 1")
    assert {m for m in moves if m.startswith("5h")} == {"5h5g"}  # not 4g/6g/4i/6i, which leave the file
    moves = usi_moves("4r3k/9/9/9/9/9/9/4R4/4K4 b - 1")  # a rook pinned on the file may slide along it
    assert {"5h5g", "5h5a"} <= moves and "5h4h" not in moves


def test_discovered_check():
    pos = Position.from_sfen("4k4/9/9/9/4S4/9/9/9/4R3K b - 1")
    pos.push("5e4d")
    assert pos.is_check() and pos.checkers() == [pos.variant.geometry.parse_square("5i")]


def test_king_cannot_step_along_the_checking_line():
    moves = usi_moves("4r3k/9/9/9/9/9/9/9/4K4 b - 1")
    assert "5i5h" not in moves and {"5i4h", "5i6i"} <= moves


def test_double_check_only_king_moves():
    pos = Position.from_sfen("4k4/9/9/9/9/9/2b6/9/r3K2G1 b G 1")
    assert pos.is_check() and len(pos.checkers()) == 2
    assert all(pos.move_usi(m).startswith("5i") for m in pos.legal_codes())


def test_evasions_by_drop_block_slider_check():
    moves = usi_moves("4r3k/9/9/9/9/9/9/9/4K4 b G 1")
    assert {"G*5b", "G*5h"} <= moves and "G*4h" not in moves


def test_checkmate_and_no_moves():
    pos = Position.from_sfen("4k4/4G4/4P4/9/9/9/9/9/4K4 w - 1")
    assert pos.is_check() and pos.is_checkmate()
    assert not Position.startpos().is_checkmate()


# ----------------------------------------------------------- repetition
def test_sennichite_is_a_draw_on_the_fourth_occurrence():
    pos = Position.startpos()
    cycle = ["5i4h", "5a4b", "4h5i", "4b5a"]
    for i in range(11):
        pos.push(cycle[i % 4])
        assert pos.repetition() is Repetition.NONE
    pos.push(cycle[3])
    assert pos.repetition() is Repetition.DRAW


def test_perpetual_check_loses():
    # Sente's rook checks on every move: 9b9a+, 1a1b, 9a9b+, 1b1a, ...
    pos = Position.from_sfen("8k/r8/9/9/9/9/9/9/4K4 b - 1".replace("r8", "R8"))
    cycle = ["9b9a", "1a1b", "9a9b", "1b1a"]
    for i in range(12):
        pos.push(cycle[i % 4])
    # Back to the start position for the 4th time, sente to move: sente gave every check, sente loses.
    assert pos.turn == BLACK
    assert pos.repetition() is Repetition.LOSS
    pos.pop()  # from gote's point of view one ply earlier nothing has repeated four times yet
    assert pos.repetition() is Repetition.NONE


def test_perpetual_check_seen_from_the_checked_side_wins():
    pos = Position.from_sfen("8k/R8/9/9/9/9/9/9/4K4 w - 1".replace("8k/R8", "8k/R8"))
    # Gote moves first here so the 4th occurrence happens with gote to move after sente's check.
    pos = Position.from_sfen("7k1/R8/9/9/9/9/9/9/4K4 w - 1")
    cycle = ["2a1a", "9b9a", "1a1b", "9a9b", "1b1a"]
    pos.push(cycle[0])
    for i in range(12):
        pos.push(cycle[1 + i % 4])
    pos.push("9b9a")  # checks again: position after 9b9a (gote to move, in check) is now repeated 4 times
    assert pos.turn == WHITE and pos.is_check()
    assert pos.repetition() is Repetition.WIN


# ---------------------------------------------------------- entering king
ZONE = "9/B3K3R/PPPPPPPPP/9/9/9/9/4k4/9 b {hand} 1"


def test_entering_king_declaration_points():
    pos = Position.from_sfen(ZONE.format(hand="2G2S2N2L"))
    assert pos.declaration_points(BLACK) == (27, 11)
    assert not pos.can_declare_win(EnteringKingRule.CSA27)  # sente needs 28
    pos = Position.from_sfen(ZONE.format(hand="2G2S2N2LP"))
    assert pos.can_declare_win(EnteringKingRule.CSA27)
    assert not pos.can_declare_win(EnteringKingRule.CSA24)  # 31 needed
    assert not pos.can_declare_win(EnteringKingRule.NONE)


def test_entering_king_needs_ten_pieces_and_no_check():
    few = Position.from_sfen("9/B3K3R/PPPP5/9/9/9/9/4k4/9 b 2R2B2G2S2N2L 1")
    assert few.declaration_points(BLACK)[1] == 6 and not few.can_declare_win()
    checked = Position.from_sfen("4r4/B3K3R/PPPP1PPPP/9/9/9/9/4k4/9 b 2G2S2N2L4P 1")
    assert checked.is_check() and not checked.can_declare_win()


@pytest.mark.parametrize("variant", ["shogi", "daishogi2017"])
def test_position_is_a_game_state(variant):
    """Position implements engine.game.GameState: the same tokens, node kinds and results as its own API, and an
    illegal or malformed token is a GameError that leaves the position as it was."""
    from engine.game import GameError, GameState, NodeKind
    p = Position.startpos(variant)
    assert isinstance(p, GameState) and p.variant_id == variant and p.chance_events() == []
    assert p.node_kind() is NodeKind.DECISION and p.side_to_move() == 0
    assert p.legal_actions() == [p.move_usi(int(c)) for c in p.legal_codes()]
    first = p.legal_actions()[0]
    p.apply(first)
    assert p.side_to_move() == 1 and p.ply == 1
    before = p.sfen()
    for bad in (first, "9z9z", "", "P*"):
        with pytest.raises(GameError):
            p.apply(bad)
        assert p.sfen() == before
    mated = Position.from_sfen("8k/7G1/7G1/9/9/9/9/9/4K4 w - 1")  # gote, to move, is mated
    assert mated.node_kind() is NodeKind.TERMINAL and mated.legal_actions() == []
    assert mated.result() == (1.0, "checkmate")
