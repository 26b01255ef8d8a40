"""Enokian shogi (榎庵将棋): the game state, its notation and its extended SFEN.

A one-player game against a shuffled 52-card deck; see ``docs/enokian.md`` for the rules as implemented.

>>> g = EnokianState.new()
>>> g.node_kind().value, len(g.chance_events())
('chance', 52)
>>> g.apply("card=KS")          # the east dragon slides west and takes the guard on 4e; Michizane steps to 2b
>>> g.sfen()
'4+b4/7k1/9/3PPP3/+r2PK+r3/3PPP3/9/9/4+b4 b - 2 SeCeHnDs/A23456789TJQ/A23456789TJQK/A23456789TJQK/A23456789TJQK/-'
>>> g.apply("5e4e")             # the emperor takes the dragon
>>> g.result() is None, g.node_kind().value
(True, 'chance')
"""
from __future__ import annotations

import numpy as np

from ...game import GameError, NodeKind
from . import kernels as K

SUITS = "SCHD"
RANKS = "A23456789TJQK"
FILES = "123456789"
RANK_LETTERS = "abcdefghi"
#: Heading letters per suit: index 0 = heading -1, index 1 = heading +1 (S/C move along rank e, H/D along file 5).
HEADING_LETTERS = ("ew", "ew", "ns", "ns")
START_SQ = (0 * 9 + 4, 8 * 9 + 4, 4 * 9 + 8, 4 * 9 + 0)  # 1e, 9e, 5i, 5a
START_HEADING = (1, -1, -1, 1)  # each toward the opposite edge
MICHIZANE_CORNERS = {"1a": 0, "9i": 80}
CENTRE = 4 * 9 + 4  # 5e, the centre of every mover's line

_SFEN_PIECES = {K.GUARD: "P", K.EMPEROR: "K", K.FLAME: "+s", K.MICHIZANE: "k"}
_MOVER_LETTER = {0: "+r", 1: "+r", 2: "+b", 3: "+b"}


def card_index(text: str) -> int:
    """``'KS'`` -> card index (``suit * 13 + rank - 1``); raises :class:`GameError`."""
    if len(text) != 2 or text[0] not in RANKS or text[1] not in SUITS:
        raise GameError(f"bad card {text!r}: expected rank A 2-9 T J Q K then suit S C H D, e.g. 'KS', '3H', 'TD'")
    return SUITS.index(text[1]) * 13 + RANKS.index(text[0])


def card_name(index: int) -> str:
    return RANKS[index % 13] + SUITS[index // 13]


def square_name(sq: int) -> str:
    return FILES[sq // 9] + RANK_LETTERS[sq % 9]


def parse_square(text: str) -> int:
    if len(text) != 2 or text[0] not in FILES or text[1] not in RANK_LETTERS:
        raise GameError(f"bad square {text!r}: expected a file 1-9 and a rank a-i, e.g. '5e'")
    return FILES.index(text[0]) * 9 + RANK_LETTERS.index(text[1])


def move_name(mv: int) -> str:
    return "pass" if mv < 0 else square_name(mv // 81) + square_name(mv % 81)


def _heading_letter(s: np.ndarray, suit: int) -> str:
    """The SFEN letter of a mover's heading: ``x`` when captured; upper case on 5e when a court card that could not
    move it has flipped the heading since its last move (a ten there then steps against the heading)."""
    if s[K.O_MSQ + suit] < 0:
        return "x"
    letter = HEADING_LETTERS[suit][(s[K.O_HD + suit] + 1) // 2]
    return letter.upper() if s[K.O_FLIP + suit] else letter


def full_deck_state() -> np.ndarray:
    """A state vector with the whole deck and an empty board (the caller places the pieces)."""
    s = np.zeros(K.STATE_LEN, dtype=np.int32)
    for i in range(4):
        s[K.O_MSQ + i] = -1
        s[K.O_HD + i] = START_HEADING[i]
    s[K.O_MICH] = s[K.O_EMP] = s[K.O_PEND] = s[K.O_PENDCARD] = -1
    s[K.O_SIDE] = 1
    s[K.O_NCARDS] = 52
    for c in range(52):
        s[K.O_DECK + c] = 1
        s[K.O_CC + K.card_class(c)] += 1
    return s


class EnokianState:
    """The state of a game of Enokian shogi; implements :class:`engine.game.GameState`.

    Tokens: the player's move is ``<from><to>`` in USI squares (``5e5d``; ``pass`` only when no move exists); a draw
    is ``card=<rank><suit>`` (``card=KS``, ``card=3H``, ``card=TD``). Side 0 is the player; at chance nodes
    :meth:`side_to_move` answers 1 (the deck plays gote).
    """

    variant_id = "enokian"
    __slots__ = ("s",)

    def __init__(self, s: np.ndarray):
        self.s = s

    # ------------------------------------------------------------------ construction
    @classmethod
    def new(cls, michizane: str = "1a") -> "EnokianState":
        """The start position; ``michizane='9i'`` puts Michizane in the south-west corner (the 裏鬼門 option)."""
        if michizane not in MICHIZANE_CORNERS:
            raise GameError(f"bad Michizane corner {michizane!r}: expected '1a' or '9i'")
        s = full_deck_state()
        for f in range(3, 6):
            for r in range(3, 6):
                s[f * 9 + r] = K.GUARD
        s[40] = K.EMPEROR
        s[K.O_EMP] = 40
        s[K.O_NGUARD] = 8
        for i in range(4):
            s[START_SQ[i]] = K.MOVER0 + i
            s[K.O_MSQ + i] = START_SQ[i]
        m = MICHIZANE_CORNERS[michizane]
        s[m] = K.MICHIZANE
        s[K.O_MICH] = m
        return cls(s)

    def copy(self) -> "EnokianState":
        return EnokianState(self.s.copy())

    # ------------------------------------------------------------------ GameState
    def node_kind(self) -> NodeKind:
        if K.terminal(self.s) != K.T_NONE:
            return NodeKind.TERMINAL
        return NodeKind.CHANCE if self.s[K.O_SIDE] == 1 else NodeKind.DECISION

    def side_to_move(self) -> int:
        return int(self.s[K.O_SIDE])

    def legal_codes(self) -> list[int]:
        if self.node_kind() is not NodeKind.DECISION:
            return []
        buf = np.empty(128, dtype=np.int32)
        n = K.gen_moves(self.s, buf)
        return [int(m) for m in buf[:n]] if n else [-1]

    def legal_actions(self) -> list[str]:
        return [move_name(m) for m in self.legal_codes()]

    def remaining_cards(self) -> list[str]:
        return [card_name(c) for c in range(52) if self.s[K.O_DECK + c]]

    def chance_events(self) -> list[tuple[str, float]]:
        if self.node_kind() is not NodeKind.CHANCE:
            return []
        cards = self.remaining_cards()
        return [(f"card={c}", 1.0 / len(cards)) for c in cards]

    def apply(self, token: str) -> None:
        kind = self.node_kind()
        if kind is NodeKind.TERMINAL:
            raise GameError(f"the game is over ({self.result()[1]}); {token!r} cannot be played")
        if token.startswith("card="):
            if kind is not NodeKind.CHANCE:
                raise GameError(f"{token!r}: the player is to move, no card is drawn now")
            c = card_index(token[5:])
            if not self.s[K.O_DECK + c]:
                raise GameError(f"{token!r}: the card {token[5:]} is not in the draw pile (already drawn)")
            self.s[K.O_DECK + c] = 0
            cls = K.card_class(c)
            K.draw_class(self.s, cls, np.empty(4, dtype=np.int32))
            if self.s[K.O_PEND] >= 0:
                self.s[K.O_PENDCARD] = c
            return
        if kind is not NodeKind.DECISION:
            raise GameError(f"{token!r}: a card must be drawn now (an event 'card=<rank><suit>')")
        codes = self.legal_codes()
        if token == "pass":
            if codes != [-1]:
                raise GameError("'pass' is only allowed when the player has no move")
            K.do_move(self.s, -1)
            return
        if len(token) != 4:
            raise GameError(f"bad action {token!r}: expected a move like '5e5d' or an event like 'card=KS'")
        mv = parse_square(token[:2]) * 81 + parse_square(token[2:])
        if mv not in codes:
            fr = int(self.s[mv // 81])
            if fr not in (K.GUARD, K.EMPEROR):
                raise GameError(f"illegal move {token!r}: no guard or emperor on {token[:2]}")
            if self.s[mv % 81] == K.MICHIZANE:
                raise GameError(f"illegal move {token!r}: Michizane cannot be captured while a red piece is on the board")
            raise GameError(f"illegal move {token!r}: guards step one square orthogonally, the emperor one square "
                            "in any direction, never onto their own side")
        K.do_move(self.s, mv)

    def result(self) -> tuple[float, str] | None:
        t = K.terminal(self.s)
        if t == K.T_NONE:
            return None
        return {K.T_LOSS: (0.0, "emperor killed"), K.T_SURVIVED: (1.0, "survived"),
                K.T_SUBDUED: (1.0, "subdued")}[t]

    # ------------------------------------------------------------------ SFEN
    def sfen(self) -> str:
        s = self.s
        rows = []
        for r in range(9):
            row, empty = "", 0
            for f in range(8, -1, -1):
                c = int(s[f * 9 + r])
                if c == K.EMPTY:
                    empty += 1
                    continue
                if empty:
                    row += str(empty)
                    empty = 0
                row += _MOVER_LETTER[c - K.MOVER0] if K.MOVER0 <= c < K.FLAME else _SFEN_PIECES[c]
            if empty:
                row += str(empty)
            rows.append(row)
        side = "w" if s[K.O_SIDE] == 1 else "b"
        heads = "".join(SUITS[i] + _heading_letter(s, i) for i in range(4))
        decks = ["".join(RANKS[r] for r in range(13) if s[K.O_DECK + i * 13 + r]) or "-" for i in range(4)]
        pend = card_name(int(s[K.O_PENDCARD])) if s[K.O_PEND] >= 0 else "-"
        extra = "/".join([heads, *decks, pend])
        return f"{'/'.join(rows)} {side} - {int(s[K.O_PLY]) + 1} {extra}"

    @classmethod
    def from_sfen(cls, text: str) -> "EnokianState":
        """Parse an extended SFEN; raises :class:`GameError` on anything malformed or impossible."""
        fields = text.split()
        if fields and fields[0] == "sfen":
            fields = fields[1:]
        if len(fields) != 5:
            raise GameError(f"bad enokian SFEN {text!r}: expected 5 fields (board, side, hand, move number, "
                            "variant state)")
        board, side, hand, number, extra = fields
        s = full_deck_state()
        for i in range(52):
            s[K.O_DECK + i] = 0
        s[K.O_NCARDS] = 0
        s[K.O_CC:K.O_CC + K.N_CLASSES] = 0
        rows = board.split("/")
        if len(rows) != 9:
            raise GameError(f"bad SFEN board {board!r}: expected 9 ranks")
        dragons, horses = [], []
        for r, row in enumerate(rows):
            f, i = 8, 0
            while i < len(row):
                ch = row[i]
                if ch.isdigit():
                    f -= int(ch)
                    i += 1
                    continue
                tok = row[i:i + 2] if ch == "+" else ch
                i += len(tok)
                if f < 0:
                    raise GameError(f"bad SFEN board: rank {RANK_LETTERS[r]} is longer than 9 squares")
                sq = f * 9 + r
                if tok == "P":
                    s[sq] = K.GUARD
                    s[K.O_NGUARD] += 1
                elif tok == "K":
                    if s[K.O_EMP] >= 0:
                        raise GameError("bad SFEN board: two emperors")
                    s[sq] = K.EMPEROR
                    s[K.O_EMP] = sq
                elif tok == "k":
                    if s[K.O_MICH] >= 0:
                        raise GameError("bad SFEN board: two Michizanes")
                    s[sq] = K.MICHIZANE
                    s[K.O_MICH] = sq
                elif tok in ("+s", "+n", "+l"):
                    s[sq] = K.FLAME
                    s[K.O_NFLAME] += 1
                elif tok == "+r":
                    if r != 4:
                        raise GameError(f"bad SFEN board: a dragon on {square_name(sq)} (dragons live on rank e)")
                    dragons.append(sq)
                elif tok == "+b":
                    if f != 4:
                        raise GameError(f"bad SFEN board: a horse on {square_name(sq)} (horses live on file 5)")
                    horses.append(sq)
                else:
                    raise GameError(f"bad SFEN board: unknown piece {tok!r} (P K k +r +b +s)")
                f -= 1
            if f != -1:
                raise GameError(f"bad SFEN board: rank {RANK_LETTERS[r]} does not have 9 squares")
        if s[K.O_NFLAME] > K.FLAME_SUPPLY:
            raise GameError(f"bad SFEN board: {int(s[K.O_NFLAME])} flames, the supply has {K.FLAME_SUPPLY}")
        if side not in ("b", "w"):
            raise GameError(f"bad SFEN side {side!r}: 'b' (the player moves) or 'w' (a card is drawn)")
        s[K.O_SIDE] = 1 if side == "w" else 0
        if hand != "-":
            raise GameError(f"bad SFEN hand {hand!r}: enokian has no pieces in hand ('-')")
        if not number.isdigit() or int(number) < 1:
            raise GameError(f"bad SFEN move number {number!r}")
        s[K.O_PLY] = int(number) - 1
        parts = extra.split("/")
        if len(parts) != 6:
            raise GameError(f"bad enokian state {extra!r}: expected headings/S/C/H/D/pending, "
                            "e.g. 'SwCeHnDs/A23456789TJQK/A23456789TJQK/A23456789TJQK/A23456789TJQK/-'")
        heads = parts[0]
        if len(heads) != 8 or heads[0::2] != SUITS:
            raise GameError(f"bad enokian headings {heads!r}: expected e.g. 'SwCeHnDs' (x = captured)")
        alive = []
        for i in range(4):
            h = heads[2 * i + 1]
            if h == "x":
                alive.append(False)
                s[K.O_HD + i] = 0
                continue
            if h.lower() not in HEADING_LETTERS[i]:
                raise GameError(f"bad heading {h!r} for {SUITS[i]}: one of {HEADING_LETTERS[i]} (upper case on "
                                "5e after a blocked court card) or x")
            alive.append(True)
            s[K.O_HD + i] = -1 if HEADING_LETTERS[i][0] == h.lower() else 1
            s[K.O_FLIP + i] = int(h.isupper())
        for pieces, suits, name in ((sorted(dragons), (0, 1), "dragons"), (sorted(horses), (3, 2), "horses")):
            live = [i for i in suits if alive[i]]
            if len(live) != len(pieces):
                raise GameError(f"bad enokian state: {len(pieces)} {name} on the board but {len(live)} alive "
                                f"in {heads!r}")
            # S (east) has the smaller file index than C; D (north) the smaller rank index than H.
            for i, sq in zip(live, pieces):
                s[sq] = K.MOVER0 + i
                s[K.O_MSQ + i] = sq
                if s[K.O_FLIP + i] and sq != CENTRE:
                    raise GameError(f"bad enokian headings {heads!r}: an upper-case heading (flipped by a blocked "
                                    f"court card since its last move) only on 5e, not {square_name(sq)}")
        for i in range(4):
            ranks = parts[1 + i]
            if ranks == "-":
                continue
            idx = [RANKS.find(ch) for ch in ranks]
            if -1 in idx or idx != sorted(set(idx)):
                raise GameError(f"bad deck {ranks!r} for {SUITS[i]}: ranks in the order {RANKS} or '-'")
            for r in idx:
                c = i * 13 + r
                s[K.O_DECK + c] = 1
                s[K.O_CC + K.card_class(c)] += 1
                s[K.O_NCARDS] += 1
        if parts[5] != "-":
            c = card_index(parts[5])
            if K.card_class(c) >= K.C_TEN:
                raise GameError(f"bad pending card {parts[5]!r}: only a number card waits for a second card")
            if s[K.O_DECK + c]:
                raise GameError(f"bad pending card {parts[5]!r}: it is also in the draw pile")
            if side != "w" or s[K.O_NCARDS] == 0:
                raise GameError("bad pending card: a second card must be due (side 'w', cards left)")
            s[K.O_PEND] = K.card_class(c)
            s[K.O_PENDCARD] = c
        if s[K.O_MICH] < 0 and s[K.O_EMP] < 0:
            raise GameError("bad SFEN board: neither the emperor nor Michizane")
        if s[K.O_EMP] >= 0 and s[K.O_MICH] >= 0 and s[K.O_NCARDS] == 0 and side == "b":
            pass  # the player's last move after the last card: legal
        return cls(s)

    # ------------------------------------------------------------------ display
    def __repr__(self) -> str:
        return f"EnokianState({self.sfen()!r})"

    def diagram(self) -> str:
        """A text board (north up, file 9 on the left) with the deck count."""
        glyph = {K.EMPTY: " .", K.GUARD: " P", K.EMPEROR: " K", K.FLAME: " *", K.MICHIZANE: " M"}
        lines = ["  9 8 7 6 5 4 3 2 1"]
        for r in range(9):
            row = ""
            for f in range(8, -1, -1):
                c = int(self.s[f * 9 + r])
                row += " " + "SCHD"[c - K.MOVER0] if K.MOVER0 <= c < K.FLAME else glyph[c]
            lines.append(row + " " + RANK_LETTERS[r])
        lines.append(f"cards left {int(self.s[K.O_NCARDS])}, flames {int(self.s[K.O_NFLAME])}/{K.FLAME_SUPPLY}")
        return "\n".join(lines)
