"""The typed Python API over the kernels: :class:`Position`.

>>> pos = Position.startpos()
>>> len(pos.legal_moves())
30
>>> pos.push("7g7f").usi()
'7g7f'
>>> pos.sfen()
'lnsgkgsnl/1r5b1/ppppppppp/9/9/2P6/PP1PPPPPP/1B5R1/LNSGKGSNL w - 2'
>>> pos.pop().usi()
'7g7f'
"""
from __future__ import annotations

import enum
import re
from typing import Iterator

import numpy as np

from .game import GameError, NodeKind
from .kernels import movegen as K
from .move import Move, MoveParseError
from .variant import COLOR_SHIFT, MAX_HAND, Variant
from .variants import get_variant

BLACK, WHITE = 0, 1  # sente, gote
COLOR_NAMES = ("sente", "gote")
_GEN_MODES = {"all": K.GEN_ALL, "search": K.GEN_SEARCH, "captures": K.GEN_CAPTURES}


class SfenError(ValueError):
    """A malformed or impossible SFEN."""


class IllegalMoveError(ValueError):
    """A move that is not legal in the position (the position is left unchanged)."""


class Repetition(enum.IntEnum):
    """Result of :meth:`Position.repetition`, from the point of view of the side to move."""

    NONE = 0
    DRAW = 1  # sennichite: the same position (board, hands, side to move) for the fourth time
    WIN = 2  # ... reached by the opponent checking on every move of the cycle: the opponent loses
    LOSS = 3  # ... reached by the side to move checking on every move of the cycle: it loses


class EnteringKingRule(str, enum.Enum):
    """Which entering-king declaration rule applies (USI option ``EnteringKingRule``)."""

    NONE = "NoEnteringKing"
    CSA27 = "CSARule27"  # sente 28 points, gote 27 (the default, as in CSA tournaments)
    CSA24 = "CSARule24"  # 31 points for either side

    @property
    def needed_points(self) -> tuple[int, int]:
        return {"CSARule27": (28, 27), "CSARule24": (31, 31)}.get(self.value, (10**9, 10**9))


class Position:
    """A game position with its history, supporting ``push``/``pop`` of moves.

    Construct with :meth:`startpos` or :meth:`from_sfen`. The numpy arrays in ``self.state`` are what the kernels
    see; everything else is bookkeeping (the start move number, the check flag of every ply for sennichite).
    """

    INITIAL_CAPACITY = 1024

    def __init__(self, variant: Variant | str = "shogi") -> None:
        self.variant: Variant = get_variant(variant) if isinstance(variant, str) else variant
        self.tables = self.variant.tables
        g = self.variant.geometry
        cap = self.INITIAL_CAPACITY
        self.state = K.PosState(
            board=np.zeros(g.n_squares, np.int8),
            hands=np.zeros((2, 32), np.int8),
            bb=np.zeros((66, g.n_words), np.uint64),
            st=np.zeros(8, np.int64),
            keys=np.zeros(cap, np.uint64),
            moves=np.zeros(cap, np.int32),
            undo=np.zeros(cap, np.int32),
            scratch=np.zeros((K.SCRATCH_LEVELS, 64), np.int64),
        )
        self.state.st[K.ST_KSQ:K.ST_KSQ + 2] = -1
        self.start_move_number = 1
        self.max_plies = self.variant.max_plies  # game-length cap (a draw); 0 = none
        self._checks: list[bool] = []  # _checks[ply]: side to move at that ply is in check
        self._buf = np.empty(K.MAX_MOVES, np.int32)
        self.drop_letters = "".join(p.letter if len(p.letter) == 1 else "?" for p in self.variant.pieces)

    # ------------------------------------------------------------ creation
    @classmethod
    def startpos(cls, variant: Variant | str = "shogi") -> "Position":
        v = get_variant(variant) if isinstance(variant, str) else variant
        return cls.from_sfen(v.start_sfen, v)

    @classmethod
    def from_sfen(cls, sfen: str, variant: Variant | str = "shogi") -> "Position":
        """Parse an SFEN (``startpos`` is accepted as a synonym of the start position).

        Raises :class:`SfenError` naming the problem for anything malformed or impossible.
        """
        pos = cls(variant)
        if not isinstance(sfen, str):
            raise SfenError(f"an SFEN must be a string, not {type(sfen).__name__}")
        if sfen.strip() == "startpos":
            sfen = pos.variant.start_sfen
        pos._load_sfen(sfen.strip())
        return pos

    def copy(self) -> "Position":
        """An independent copy with the same history."""
        other = Position.__new__(Position)
        other.variant, other.tables = self.variant, self.tables
        other.state = K.PosState(*(a.copy() for a in self.state))
        other.start_move_number = self.start_move_number
        other.max_plies = self.max_plies
        other._checks = list(self._checks)
        other._buf = np.empty(K.MAX_MOVES, np.int32)
        other.drop_letters = self.drop_letters
        return other

    def _load_sfen(self, sfen: str) -> None:
        v, g, T = self.variant, self.variant.geometry, self.tables
        fields = sfen.split()
        if len(fields) not in (3, 4):
            raise SfenError(f"SFEN {sfen!r} must have 3 or 4 fields (board, side, hands[, move number])")
        board_text, side, hand_text = fields[:3]
        ranks = board_text.split("/")
        if len(ranks) != g.n_ranks:
            raise SfenError(f"SFEN board has {len(ranks)} ranks, expected {g.n_ranks}")
        placed: list[tuple[int, int]] = []
        for r, rank_text in enumerate(ranks):
            f = g.n_files - 1  # SFEN ranks are written from the highest file down to file 1
            for token in re.findall(r"\d+|\+?[A-Za-z]|.", rank_text):
                if token.isdigit():
                    f -= int(token)
                    continue
                letter = token.upper()
                if letter not in v.ptype_of_letter:
                    raise SfenError(f"unknown piece {token!r} on rank {r + 1} of SFEN {sfen!r}")
                if f < 0:
                    raise SfenError(f"rank {r + 1} of SFEN {sfen!r} has more than {g.n_files} files")
                color = BLACK if token[-1].isupper() else WHITE
                placed.append((g.square(f, r), v.code(v.ptype_of_letter[letter], color)))
                f -= 1
            if f != -1:
                raise SfenError(f"rank {r + 1} of SFEN {sfen!r} covers {g.n_files - 1 - f} files, "
                                f"expected {g.n_files}")
        if side not in ("b", "w"):
            raise SfenError(f"side to move must be 'b' or 'w', not {side!r}")
        hands = np.zeros((2, 32), np.int16)
        if hand_text != "-":
            for count, letter in _tokens_or_error(hand_text, sfen):
                ptype = v.ptype_of_letter.get(letter.upper())
                if ptype is None or ptype not in v.hand_ptypes:
                    raise SfenError(f"{letter!r} cannot be in hand (SFEN {sfen!r})")
                hands[0 if letter.isupper() else 1, ptype] += count
        if hands.max() > MAX_HAND:
            raise SfenError(f"too many pieces in hand in SFEN {sfen!r}")
        move_number = 1
        if len(fields) == 4:
            if not fields[3].isdigit() or int(fields[3]) < 1:
                raise SfenError(f"move number must be a positive integer, not {fields[3]!r}")
            move_number = int(fields[3])

        # Rule checks on the placement before anything is committed.
        kings = [0, 0]
        for sq, code in placed:
            if T.royal[code]:
                kings[code >> COLOR_SHIFT] += 1
            if T.must_promote[code, sq]:
                raise SfenError(f"{v.piece(code & 31).name} on {g.square_name(sq)} could never move (SFEN {sfen!r})")
        if v.royal_rule == "check" and max(kings) > 1:
            raise SfenError(f"a side has more than one king in SFEN {sfen!r}")
        if v.nifu:
            pawn = v.ptype_of_letter[v.pawn]
            for color in (BLACK, WHITE):
                files = [g.file_of(sq) for sq, code in placed if code == v.code(pawn, color)]
                if len(files) != len(set(files)):
                    raise SfenError(f"two unpromoted {COLOR_NAMES[color]} pawns on one file (nifu) in SFEN {sfen!r}")

        s = self.state
        for sq, code in placed:
            s.board[sq] = code
            w, m = g.sq_word[sq], g.sq_mask[sq]
            s.bb[code, w] |= m
            s.bb[64 + (code >> COLOR_SHIFT), w] |= m
            if T.royal[code] and v.royal_rule == "check":
                s.st[K.ST_KSQ + (code >> COLOR_SHIFT)] = sq
        s.st[K.ST_ROYALS:K.ST_ROYALS + 2] = kings
        s.hands[:] = hands
        s.st[K.ST_STM] = 0 if side == "b" else 1
        s.st[K.ST_PLY] = 0
        s.keys[0] = self._compute_key()
        self.start_move_number = move_number
        other_king = s.st[K.ST_KSQ + 1 - s.st[K.ST_STM]]
        if other_king >= 0 and K.is_attacked(s, T, other_king, s.st[K.ST_STM]):
            raise SfenError(f"the side not to move is in check in SFEN {sfen!r}")
        self._checks = [bool(K.in_check(s, T))]

    def _compute_key(self) -> np.uint64:
        """Zobrist key from scratch (the kernels update it incrementally)."""
        s, T = self.state, self.tables
        key = np.uint64(0)
        for sq in np.nonzero(s.board)[0]:
            key ^= T.zob_board[s.board[sq], sq]
        for color in (0, 1):
            for pt in range(32):
                key ^= T.zob_hand[color, pt, s.hands[color, pt]]
        if s.st[K.ST_STM] == 1:
            key ^= T.zob_side[0]
        return key

    # ---------------------------------------------------------------- output
    def sfen(self, with_move_number: bool = True) -> str:
        v, g, s = self.variant, self.variant.geometry, self.state
        rows = []
        for r in range(g.n_ranks):
            row, empty = "", 0
            for f in range(g.n_files - 1, -1, -1):
                code = int(s.board[g.square(f, r)])
                if code == 0:
                    empty += 1
                    continue
                if empty:
                    row, empty = row + str(empty), 0
                letter = v.piece(code & 31).letter
                row += letter if code >> COLOR_SHIFT == BLACK else letter.lower()
            rows.append(row + (str(empty) if empty else ""))
        hand = ""
        for color in (BLACK, WHITE):
            for letter in v.hand_order:
                n = int(s.hands[color, v.ptype_of_letter[letter]])
                if n:
                    hand += (str(n) if n > 1 else "") + (letter if color == BLACK else letter.lower())
        out = f"{'/'.join(rows)} {'bw'[self.turn]} {hand or '-'}"
        return f"{out} {self.move_number}" if with_move_number else out

    def __repr__(self) -> str:
        return f"Position.from_sfen({self.sfen()!r}, {self.variant.id!r})"

    def __str__(self) -> str:
        """A plain-text diagram (used by the USI ``d`` command)."""
        v, g, s = self.variant, self.variant.geometry, self.state
        lines = ["  " + " ".join(f"{f + 1:>2}" for f in range(g.n_files - 1, -1, -1))]
        for r in range(g.n_ranks):
            cells = []
            for f in range(g.n_files - 1, -1, -1):
                code = int(s.board[g.square(f, r)])
                if code == 0:
                    cells.append(" .")
                else:
                    letter = v.piece(code & 31).letter
                    cells.append(f"{letter if code >> COLOR_SHIFT == BLACK else letter.lower():>2}")
            lines.append(f"{'abcdefghijklm'[r]} " + " ".join(cells))
        lines.append(f"sfen {self.sfen()}")
        lines.append(f"key {int(self.key):016x}  {COLOR_NAMES[self.turn]} to move"
                     + ("  (in check)" if self.is_check() else ""))
        return "\n".join(lines)

    # ----------------------------------------------------------- accessors
    @property
    def turn(self) -> int:
        """Side to move: 0 = sente (black), 1 = gote (white)."""
        return int(self.state.st[K.ST_STM])

    @property
    def ply(self) -> int:
        """Moves pushed since the position was set up."""
        return int(self.state.st[K.ST_PLY])

    @property
    def move_number(self) -> int:
        return self.start_move_number + self.ply

    @property
    def key(self) -> np.uint64:
        """Zobrist key of board, hands and side to move."""
        return self.state.keys[self.ply]

    @property
    def move_stack(self) -> list[Move]:
        g = self.variant.geometry
        return [Move(int(c), g) for c in self.state.moves[:self.ply]]

    def piece_at(self, sq: int) -> tuple[str, int] | None:
        """``(SFEN letter, colour)`` of the piece on ``sq``, or ``None``."""
        code = int(self.state.board[sq])
        return None if code == 0 else (self.variant.piece(code & 31).letter, code >> COLOR_SHIFT)

    def hand(self, color: int) -> dict[str, int]:
        """Pieces in ``color``'s hand by letter (only those held)."""
        v = self.variant
        return {letter: int(self.state.hands[color, v.ptype_of_letter[letter]])
                for letter in v.hand_order if self.state.hands[color, v.ptype_of_letter[letter]]}

    def king_square(self, color: int) -> int | None:
        sq = int(self.state.st[K.ST_KSQ + color])
        return None if sq < 0 else sq

    # ------------------------------------------------------------- moves
    def parse_move(self, text: str) -> Move:
        """USI string -> :class:`Move` for this variant's geometry (syntax only; see :meth:`push`)."""
        return Move.from_usi(text, self.variant.geometry, self.drop_letters)

    def move_usi(self, move: Move | int) -> str:
        code = move.code if isinstance(move, Move) else int(move)
        return Move(code, self.variant.geometry).usi(self.drop_letters)

    def legal_codes(self, mode: str = "all") -> np.ndarray:
        """Legal moves as an ``int32`` array of codes (a copy)."""
        if mode not in _GEN_MODES:
            raise ValueError(f"unknown generation mode {mode!r} (known: {', '.join(_GEN_MODES)})")
        n = K.generate(self.state, self.tables, _GEN_MODES[mode], self._buf)
        return self._buf[:n].copy()

    def legal_moves(self, mode: str = "all") -> list[Move]:
        """Legal moves of the side to move.

        ``mode``: ``"all"`` (every legal move: what perft counts), ``"search"`` (without the non-promotions of
        pawn, bishop and rook, which are never better), ``"captures"`` (captures and promotions).
        """
        g = self.variant.geometry
        return [Move(int(c), g) for c in self.legal_codes(mode)]

    def is_legal(self, move: Move | str) -> bool:
        try:
            move = self._as_move(move)
        except MoveParseError:
            return False
        return move.code in set(self.legal_codes().tolist())

    def _as_move(self, move: Move | str) -> Move:
        return self.parse_move(move) if isinstance(move, str) else move

    def push(self, move: Move | str) -> Move:
        """Play a legal move (a :class:`Move` or a USI string). Raises :class:`IllegalMoveError` otherwise."""
        move = self._as_move(move)
        if not isinstance(move, Move):
            raise IllegalMoveError(f"not a move: {move!r}")
        legal = self.legal_codes().tolist()
        if move.code not in legal and self._is_pass_form(move):
            # Any empty square may spell a lion's pass; the canonical move uses the first empty neighbour.
            passes = [c for c in legal if Move(c).middle_sq is not None and (c & 0xFF) == (c >> 8) & 0xFF
                      and (c & 0xFF) == move.to_sq and self.state.board[Move(c).middle_sq] == 0]
            if passes:
                move = Move(passes[0], self.variant.geometry)
        if move.code not in legal:
            raise IllegalMoveError(f"illegal move {self.move_usi(move)} in position {self.sfen()}")
        self.push_unchecked(move.code)
        return move

    def _is_pass_form(self, move: Move) -> bool:
        return (move.middle_sq is not None and move.from_sq == move.to_sq
                and 0 <= move.middle_sq < len(self.state.board) and self.state.board[move.middle_sq] == 0)

    def push_unchecked(self, code: int) -> None:
        """Play a move code known to be legal (from :meth:`legal_codes`), without validation."""
        self._ensure_capacity()
        K.do_move(self.state, self.tables, np.int64(code))  # int64, as kernels pass it: one compile
        self._checks.append(bool(K.in_check(self.state, self.tables)))

    def pop(self) -> Move:
        """Take back the last move and return it."""
        if self.ply == 0:
            raise IndexError("pop from a position with no moves played")
        code = int(self.state.moves[self.ply - 1])
        K.undo_move(self.state, self.tables)
        self._checks.pop()
        return Move(code, self.variant.geometry)

    def _ensure_capacity(self) -> None:
        s = self.state
        if self.ply + 2 < len(s.keys):
            return
        grow = lambda a: np.concatenate([a, np.zeros_like(a)])
        self.state = s._replace(keys=grow(s.keys), moves=grow(s.moves), undo=grow(s.undo))

    # ------------------------------------------------------------ status
    def is_check(self) -> bool:
        return bool(K.in_check(self.state, self.tables))

    def checkers(self) -> list[int]:
        """Squares of the pieces checking the side to move's king."""
        ksq = self.king_square(self.turn)
        if ksq is None:
            return []
        out = np.empty(32, np.int64)
        n = K.attackers_to(self.state, self.tables, ksq, 1 - self.turn, out)
        return sorted(int(x) for x in out[:n])

    def attackers(self, sq: int, color: int) -> list[int]:
        """Squares of ``color``'s pieces that attack ``sq``."""
        out = np.empty(64, np.int64)
        n = K.attackers_to(self.state, self.tables, sq, color, out)
        return sorted(int(x) for x in out[:n])

    def is_checkmate(self) -> bool:
        return self.is_check() and len(self.legal_codes()) == 0

    def repetition(self) -> Repetition:
        """Sennichite status of the current position (fourth occurrence), with the perpetual-check exception.

        The cycle examined runs from the first of the four occurrences to now; if every position in it after a
        move of one side had the other side in check, the checking side loses.
        """
        keys, ply = self.state.keys, self.ply
        same = [i for i in range(ply - 4, -1, -2) if keys[i] == keys[ply]]
        if len(same) < 3:
            return Repetition.NONE
        first = same[2]
        mine = range(first + 2, ply + 1, 2)  # positions where the side to move now was to move: it was checked
        theirs = range(first + 1, ply + 1, 2)  # positions after our moves: did we check every time?
        if all(self._checks[i] for i in mine):
            return Repetition.WIN
        if all(self._checks[i] for i in theirs):
            return Repetition.LOSS
        return Repetition.DRAW

    def result(self) -> tuple[float, str] | None:
        """The game result if the game is over here: ``(score for sente, reason)``; ``None`` if it goes on.

        Checked in this order: the side to move has lost its last royal (last-royal variants), the opponent has
        made a try (a royal on its far rank that no legal move of ours captures), no legal move (checkmate or
        otherwise a loss), sennichite (draw, or a loss for the side that checked throughout), the move cap (draw).
        Entering-king declarations are moves (``win``) and are judged by the referee.
        """
        c = self.turn
        lose = (1.0 if c == WHITE else 0.0)
        st = self.state.st
        if self.variant.royal_rule == "last_royal" and st[K.ST_ROYALS + c] == 0:
            return lose, "royal captured"
        legal = self.legal_codes()
        if self.variant.try_rule:
            targets = {int(c_) & 0xFF for c_ in legal} | {(int(c_) >> 18) & 0xFF for c_ in legal if c_ & K.HAS_MID}
            for i in range(int(st[K.ST_ROYALS + 1 - c])):
                sq = int(K.royal_square(self.state, self.tables, 1 - c, i))
                if self.tables.far_rank[1 - c, sq] and sq not in targets:
                    return lose, "try"
        if len(legal) == 0:
            return lose, "checkmate" if self.is_check() else "no legal moves"
        rep = self.repetition()
        if rep is Repetition.DRAW:
            return 0.5, "sennichite"
        if rep is not Repetition.NONE:
            return (1.0 - lose if rep is Repetition.WIN else lose), "perpetual check"
        if self.max_plies and self.move_number > self.max_plies:
            return 0.5, "move limit"
        return None

    # ------------------------------------------------------------ the game model (engine.game.GameState)
    @property
    def variant_id(self) -> str:
        return self.variant.id

    def node_kind(self) -> NodeKind:
        """A decision node, or terminal once :meth:`result` says the game is over (a shogi position has no chance
        nodes)."""
        return NodeKind.TERMINAL if self.result() is not None else NodeKind.DECISION

    def side_to_move(self) -> int:
        return self.turn

    def legal_actions(self) -> list[str]:
        """The legal moves as USI tokens (none once the game is over)."""
        if self.result() is not None:
            return []
        return [self.move_usi(int(c)) for c in self.legal_codes()]

    def chance_events(self) -> list[tuple[str, float]]:
        return []

    def apply(self, token: str) -> None:
        """Play a USI move; :class:`engine.game.GameError` (the position unchanged) for a malformed or illegal one."""
        try:
            self.push(token)
        except (IllegalMoveError, MoveParseError) as exc:
            raise GameError(str(exc)) from None

    def declaration_points(self, color: int) -> tuple[int, int]:
        """(points, pieces) for the entering-king declaration: own pieces in the enemy camp (king excluded)
        and in hand, big pieces (bishop, rook and their promotions) worth 5, others 1."""
        v, s, T = self.variant, self.state, self.tables
        big = {v.ptype_of_letter[x] for x in ("B", "R", "+B", "+R") if x in v.ptype_of_letter}
        points = pieces = 0
        for sq in range(v.geometry.n_squares):
            code = int(s.board[sq])
            if code and code >> COLOR_SHIFT == color and T.zone[color, sq] and not T.royal[code]:
                pieces += 1
                points += 5 if code & 31 in big else 1
        for pt in v.hand_ptypes:
            points += int(s.hands[color, pt]) * (5 if pt in big else 1)
        return points, pieces

    def can_declare_win(self, rule: EnteringKingRule | str = EnteringKingRule.CSA27) -> bool:
        """Whether the side to move may declare a win by entering king (time left is the caller's concern)."""
        rule = EnteringKingRule(rule)
        if rule is EnteringKingRule.NONE:
            return False
        c = self.turn
        ksq = self.king_square(c)
        if ksq is None or not self.tables.zone[c, ksq] or self.is_check():
            return False
        points, pieces = self.declaration_points(c)
        return pieces >= 10 and points >= rule.needed_points[c]

    def perft(self, depth: int) -> int:
        """Number of leaf nodes ``depth`` plies deep (all legal moves, bulk-counted)."""
        if depth < 0:
            raise ValueError("perft depth must be >= 0")
        self._ensure_depth(depth)
        buf = np.empty((depth + 1, K.MAX_MOVES), np.int32)
        return int(K.perft(self.state, self.tables, depth, buf))

    def divide(self, depth: int) -> dict[str, int]:
        """Perft split by first move: ``{usi: count}``."""
        out = {}
        for code in self.legal_codes():
            self.push_unchecked(int(code))
            out[self.move_usi(int(code))] = self.perft(depth - 1) if depth > 1 else 1
            self.pop()
        return out

    def _ensure_depth(self, depth: int) -> None:
        while self.ply + depth + 2 >= len(self.state.keys):
            s = self.state
            grow = lambda a: np.concatenate([a, np.zeros_like(a)])
            self.state = s._replace(keys=grow(s.keys), moves=grow(s.moves), undo=grow(s.undo))

    def __iter__(self) -> Iterator[Move]:
        return iter(self.legal_moves())


def _tokens_or_error(hand_text: str, sfen: str) -> list[tuple[int, str]]:
    tokens = re.findall(r"(\d*)([A-Za-z])", hand_text)
    if "".join(n + ch for n, ch in tokens) != hand_text:
        raise SfenError(f"malformed hand {hand_text!r} in SFEN {sfen!r}")
    return [(int(n) if n else 1, ch) for n, ch in tokens]
