"""SFEN and USI move notation, and clear errors for bad input that leave the position unchanged."""
import pytest

from engine import (IllegalMoveError, Move, MoveParseError, Position, SfenError, available_variants,
                    get_variant, new_game)
from engine.geometry import BoardGeometry


@pytest.mark.parametrize("text", ["7g7f", "8h2b+", "P*5e", "R*1a", "1a9i"])
def test_usi_move_round_trip(text):
    assert Move.from_usi(text).usi() == text


def test_two_digit_files_on_13x13():
    g = BoardGeometry(13, 13)
    m = Move.from_usi("13m12l", g)
    assert m.usi() == "13m12l" and g.file_of(m.from_sq) == 12


@pytest.mark.parametrize("text, fragment", [
    ("7g7", "unparseable"), ("0a1a", "off the"), ("7j7f", "off the"), ("K*5e", "not a piece that can be dropped"),
    ("", "unparseable"), ("7g7f++", "unparseable"), ("p*5e", "unparseable"),
])
def test_malformed_moves_raise_clear_errors(text, fragment):
    with pytest.raises(MoveParseError, match=fragment):
        Move.from_usi(text)


def test_illegal_move_leaves_position_unchanged():
    pos = Position.startpos()
    pos.push("7g7f")
    before, key = pos.sfen(), pos.key
    for bad in ("7g7f", "2h2a", "P*5e", "8h2b+", "5i5g", "3g3f", "xyz"):
        with pytest.raises((IllegalMoveError, MoveParseError)):
            pos.push(bad)
        assert pos.sfen() == before and pos.key == key and pos.ply == 1


@pytest.mark.parametrize("sfen, fragment", [
    ("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1 b - 1", "ranks"),
    ("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSN b - 1", "covers 8 files"),
    ("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNLL b - 1", "more than 9 files"),
    ("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGXGSNL b - 1", "unknown piece"),
    ("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL x - 1", "side to move"),
    ("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b K 1", "cannot be in hand"),
    ("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b 2 1", "malformed hand"),
    ("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - x", "move number"),
    ("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL", "fields"),
    ("lnsgkgsnl/1r5b1/ppppppppp/9/9/4P4/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1", "nifu"),
    ("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKKSNL b - 1", "more than one king"),
    ("4k4/4R4/9/9/9/9/9/9/4K4 w - 1", "4k4/4R4/9/9/9/9/9/9/4K4 w - 1"),  # legal: gote to move in check
    ("4k4/4R4/9/9/9/9/9/9/4K4 b - 1", "not to move is in check"),
    ("+k8/9/9/9/9/9/9/9/4K4 b - 1", "unknown piece"),
])
def test_malformed_sfen(sfen, fragment):
    if fragment == sfen:
        assert Position.from_sfen(sfen).sfen() == sfen
        return
    with pytest.raises(SfenError, match=fragment):
        Position.from_sfen(sfen)


def test_unknown_variant_is_a_clear_error():
    assert "shogi" in available_variants()
    with pytest.raises(ValueError, match="unknown variant 'chess'"):
        get_variant("chess")
    with pytest.raises(ValueError, match="new_game"):
        Position.startpos("enokian")  # a GameState game, not a shogi position
    with pytest.raises(ValueError, match="unknown variant"):
        new_game("chess")


def test_sfen_with_hands_round_trips_in_standard_order():
    sfen = "l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w RGgsn5p 1"
    assert Position.from_sfen(sfen).sfen() == sfen
    # Hands written in another order are accepted and normalised (R B G S N L P, sente first).
    assert Position.from_sfen(sfen.replace("RGgsn5p", "5pGsnRg")).sfen() == sfen


def test_push_pop_restores_everything():
    pos = Position.from_sfen("l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w RGgsn5p 1")
    start, key = pos.sfen(), pos.key
    for code in pos.legal_codes():
        pos.push_unchecked(int(code))
        assert pos.key == Position.from_sfen(pos.sfen()).key
        pos.pop()
        assert pos.sfen() == start and pos.key == key
    with pytest.raises(IndexError):
        Position.startpos().pop()
