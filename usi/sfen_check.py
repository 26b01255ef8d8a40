"""Checks of a ``position`` SFEN that are the same for every variant, in one place (the variants' parsers check
their own syntax; these catch what parses but cannot be a position of the game).

- the move number (fourth field), when given, is an integer in 1..:data:`MAX_MOVE_NUMBER` (checked before the
  variant's parser runs, so that none of them meets a 20-digit number);
- no kind of piece appears more often than the game's set holds: pieces on the board and in both hands, a promoted
  piece counted with the kind it promotes from (:func:`family_limits`; dai shogi's kinds that many pieces promote
  into, such as gold, share one limit with all of them); fantasista tokens and special pieces are extra pieces
  (created by magic) and not counted;
- every side has its king, except the side to move in a tsume problem: the side *not* to move must have at least one
  royal piece, the side to move may have none (it attacks; ``go mate`` and ``go`` search such positions), and in a
  game with one king a side (all but dai shogi) neither side has two. The start of a game between two engines (a match
  opening) passes ``tsume_ok=False``: there both sides need their king.

Mawarikudoi (a race of one runner a side, no king) and enokian (a solitaire against the deck) get the move-number
check here; their parsers already refuse pieces their games cannot hold.

>>> check_sfen_text("shogi", "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b 40P 1")
Traceback (most recent call last):
...
usi.sfen_check.SfenCheckError: 58 pawns (with their promoted forms), but the set has 18
>>> check_sfen_text("shogi", "4k4/9/9/9/9/9/9/9/9 b 2G 1")       # a tsume problem: the attacker has no king
"""
from __future__ import annotations

import re
from collections import Counter
from functools import cache

#: The largest move number accepted (the fourth SFEN field); a longer game than this is not a game.
MAX_MOVE_NUMBER = 100_000

#: Variants whose first three SFEN fields are a board of pieces and the hands, as in shogi.
BOARD_VARIANTS = ("shogi", "daishogi2017", "turncoat", "fantasista")
#: Variants that keep standard shogi's piece set (their own letters beyond it are tokens / special pieces).
_SET_OF = {"shogi": "shogi", "turncoat": "shogi", "fantasista": "shogi", "daishogi2017": "daishogi2017"}

_BOARD_TOKEN = re.compile(r"\d+|\+?[A-Za-z]|/")
_HAND_TOKEN = re.compile(r"(\d*)(\+?[A-Za-z])")


class SfenCheckError(ValueError):
    """A position the game cannot have; the message says what is wrong in words."""


def check_move_number(sfen: str) -> None:
    """The fourth field, if there is one, must be a move number in 1..:data:`MAX_MOVE_NUMBER`."""
    fields = sfen.split()
    if len(fields) < 4:
        return
    text = fields[3]
    if not (text.isascii() and text.isdigit()):
        raise SfenCheckError(f"the move number (fourth field) must be a positive integer, not {text[:30]!r}")
    if len(text) > 9 or not 1 <= int(text) <= MAX_MOVE_NUMBER:
        raise SfenCheckError(f"the move number {text[:30]} is out of range (1..{MAX_MOVE_NUMBER})")


@cache
def _variant_info(set_id: str) -> tuple[dict[str, str], dict[str, int], frozenset[str], bool, dict[str, str]]:
    """``(family of each letter, limit of each family, royal letters, one king a side?, name of each family)``
    of a set, from the variant's pieces and start position."""
    import engine

    v = engine.get_variant(set_id)
    parent = {p.letter: p.letter for p in v.pieces}

    def root(x: str) -> str:
        while parent[x] != x:
            x = parent[x]
        return x

    for p in v.pieces:  # a piece and what it promotes to are one family
        if p.promotes_to and p.promotes_to in parent:
            parent[root(p.promotes_to)] = root(p.letter)
    family = {x: root(x) for x in parent}
    board, hands = _count_text(v.start_sfen)
    limits: Counter = Counter()
    for (letter, _), n in list(board.items()) + list(hands.items()):
        limits[family[letter]] += n
    members: dict[str, list[str]] = {}
    for p in v.pieces:
        members.setdefault(family[p.letter], []).append(p.letter)
    names = {}
    for p in v.pieces:
        f = family[p.letter]
        in_start = [x for x in members[f] if (x, 0) in board or (x, 1) in board or (x, 0) in hands]
        if f in names:
            continue
        if len(members[f]) == 1:
            names[f] = p.name.split(" (")[0] + "s"
        elif len(in_start) <= 1:
            names[f] = p.name.split(" (")[0] + "s (with their promoted forms)"
        else:  # several kinds promote into one (dai shogi's gold): one limit for all of them
            names[f] = f"pieces of the kinds {' '.join(members[f])} (one limit: they promote into a shared kind)"
    royals = frozenset(p.letter for p in v.pieces if p.royal)
    return family, dict(limits), royals, v.royal_rule == "check", names


def _count_text(sfen: str) -> tuple[Counter, Counter]:
    """``({(letter, colour): n} on the board, {(letter, colour): n} in hand)`` of the first three fields
    (letters upper case; colour 0 = sente)."""
    fields = sfen.split()
    board: Counter = Counter()
    for tok in _BOARD_TOKEN.findall(fields[0]):
        if tok[-1].isalpha():
            board[(tok.upper(), 0 if tok[-1].isupper() else 1)] += 1
    hands: Counter = Counter()
    if len(fields) > 2 and fields[2] != "-":
        for num, letter in _HAND_TOKEN.findall(fields[2]):
            hands[(letter.upper(), 0 if letter[-1].isupper() else 1)] += int(num[:6]) if num else 1
    return board, hands


def check_inventory(set_id: str, board: Counter, hands: Counter, side_to_move: int, tsume_ok: bool = True) -> None:
    """Piece counts and kings (see the module doc). ``board`` and ``hands`` count ``(letter, colour)``; letters not
    in the set (fantasista's special pieces) are ignored. ``tsume_ok=False``: the side to move needs a king too."""
    family, limits, royals, one_king, names = _variant_info(set_id)
    counts: Counter = Counter()
    for (letter, _), n in list(board.items()) + list(hands.items()):
        if letter in family:
            counts[family[letter]] += n
    for f, n in counts.items():
        if n > limits.get(f, 0):
            raise SfenCheckError(f"{n} {names[f]}, but the set has {limits.get(f, 0)}")
    side_names = ("sente", "gote")
    for c in (0, 1):
        kings = sum(n for (letter, colour), n in board.items() if colour == c and letter in royals)
        if one_king and kings > 1:
            raise SfenCheckError(f"{side_names[c]} has {kings} kings")
        if kings == 0 and not tsume_ok:
            none = not any(letter in royals for (letter, _) in board)
            raise SfenCheckError("neither side has a king (a game needs both)" if none
                                 else f"{side_names[c]} has no king (a game needs both)")
        if kings == 0 and c != side_to_move:
            other = "neither side has a king" if not any(
                colour == side_to_move and letter in royals for (letter, colour) in board) else \
                f"{side_names[c]} (not to move) has no king"
            raise SfenCheckError(f"{other}: only the side to move, the attacker of a tsume problem, may have none")


def check_before(variant_id: str, sfen: str) -> None:
    """What is checked before the variant's parser runs: the move number."""
    check_move_number(sfen)


def check_after(variant_id: str, sfen: str, parsed: object, tsume_ok: bool = True) -> None:
    """What is checked once the variant's parser accepted ``sfen`` (``parsed`` is what it made): piece counts and
    kings, from the text (shogi, dai shogi, turncoat) or from the fantasista state. ``tsume_ok=False`` for the start
    of a game (both kings needed)."""
    if variant_id == "fantasista":
        check_fantasista(parsed, tsume_ok)
    else:
        check_sfen_text(variant_id, sfen, tsume_ok)


def check_sfen_text(variant_id: str, sfen: str, tsume_ok: bool = True) -> None:
    """The checks that read the text alone (standard first three fields): shogi, dai shogi, turncoat."""
    check_move_number(sfen)
    if variant_id not in BOARD_VARIANTS or variant_id == "fantasista":
        return
    fields = sfen.split()
    if len(fields) < 2:
        return  # the parser says what is missing
    board, hands = _count_text(sfen)
    check_inventory(_SET_OF[variant_id], board, hands, 0 if fields[1] == "b" else 1, tsume_ok)


def check_fantasista(state, tsume_ok: bool = True) -> None:
    """Piece counts and kings of a parsed fantasista state: ordinary pieces (not tokens) on the board, riding on a
    carrier and in the ordinary hand against standard shogi's set; tokens and special pieces are extra."""
    from engine.variants.fantasista import pieces as PC

    bd = state.bd
    board: Counter = Counter()
    for s in range(PC.N_SQ):
        for code, mark in ((bd.b[s], bd.m[s]), (bd.r[s], bd.rm[s])):
            pt = code & 31
            if code and pt not in PC.SPECIALS and not mark & PC.TOKEN:
                board[(PC.LETTERS[pt], code >> 5)] += 1
    hands: Counter = Counter()
    for c in (0, 1):
        for pt, n in enumerate(bd.hand[c]):
            if n and pt:
                hands[(PC.LETTERS[pt], c)] += n
    check_inventory("shogi", board, hands, bd.stm, tsume_ok)
