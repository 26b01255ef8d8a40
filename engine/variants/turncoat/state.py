"""Turncoat shogi as a :class:`engine.game.GameState`: physical identities, secret plans, defection.

The fast kernels stay plain shogi. :class:`TurncoatGame` wraps an :class:`engine.Position` and keeps, beside it:

- ``ids``: the physical piece on every square, named by its start square (``-1`` for an empty square);
- ``hand_ids``: per side and piece type, the physical pieces in hand, oldest first (a drop uses the *last* one);
- ``plans``: each side's plan (``None`` before it is chosen, :data:`HIDDEN` in the other side's view);
- ``declared``: whether each side has used its defection;
- ``reversed``: squares of defected knights and lances that still keep their old facing (see below).

A defection rebuilds the position (flipped pieces become ordinary pieces of their new owner; the repetition history
restarts there). A *reversed* knight or lance stands on its own start square, the far rank for its new owner, where
the kernels see an ordinary piece with no move at all; its moves with the old facing are generated here and added to
the kernel's moves, the opponent's moves are filtered against its attacks, and a checking pawn drop is re-judged for
pawn-drop mate with it included. It turns when it moves.

Node sequence: ``plan:<squares>`` for sente, then for gote (decision nodes), then ordinary turns. A turn in which the
side declares is ``defect`` followed by the move (two decision nodes of the same side; ``defect,7g7f`` applies both
at once). See ``docs/turncoat.md`` for the notation, the extended SFEN and the readings.

>>> g = new_game()
>>> g.apply("plan:8b"); g.apply("plan:2h")
>>> g.apply("7g7f"); g.ids_text(g.square("7f"))
'7g'
>>> g.view(1)
['plan=?', 'plan=2h', '7g7f']
"""
from __future__ import annotations

import functools
import re

import numpy as np

from ...game import GameError, NodeKind
from ...kernels import movegen as K
from ...move import MoveParseError
from ...position import Position, Repetition
from ...variant import P_UCHIFUZUME
from ..shogi import SHOGI
from . import plans as PL

VARIANT_ID = "turncoat"
HIDDEN = "?"  # the other side's plan, as a view shows it
DECLARE_FROM_MOVE = 31  # sente's 16th move; gote's first chance is move 32
N_SQ = 81
PAWN = SHOGI.ptype_of_letter["P"]


def _tables_without_uchifuzume(T):
    """The shogi tables with the kernel's pawn-drop-mate test switched off (the same numba types)."""
    params = T.params.copy()
    params[P_UCHIFUZUME] = 0
    return T._replace(params=params)


_FREE_TABLES = _tables_without_uchifuzume(SHOGI.tables)


def _letter(code: int) -> str:
    return SHOGI.piece(code & 31).letter


def _build_position(board: np.ndarray, hands: np.ndarray, stm: int, move_number: int) -> Position:
    """A Position from raw arrays without the SFEN sanity checks (defection may create two pawns on a file, a
    knight on its far rank, or leave the enemy king attacked)."""
    pos = Position(SHOGI)
    g, T, s = SHOGI.geometry, pos.tables, pos.state
    kings = [0, 0]
    for sq in np.nonzero(board)[0]:
        sq = int(sq)
        code = int(board[sq])
        s.board[sq] = code
        w, m = g.sq_word[sq], g.sq_mask[sq]
        s.bb[code, w] |= m
        s.bb[64 + (code >> 5), w] |= m
        if T.royal[code]:
            s.st[K.ST_KSQ + (code >> 5)] = sq
            kings[code >> 5] += 1
    s.st[K.ST_ROYALS:K.ST_ROYALS + 2] = kings
    s.hands[:] = hands
    s.st[K.ST_STM] = stm
    s.st[K.ST_PLY] = 0
    s.keys[0] = pos._compute_key()
    pos.start_move_number = move_number
    pos._checks = [bool(K.in_check(s, T))]
    return pos


class TurncoatGame:
    """The true state (or one side's view) of a game of turncoat shogi."""

    variant_id = VARIANT_ID

    def __init__(self) -> None:
        start = PL.start_pieces()
        board = np.zeros(N_SQ, np.int8)
        self.ids = np.full(N_SQ, -1, np.int16)
        for sq, (letter, color) in start.items():
            board[sq] = SHOGI.code(SHOGI.ptype_of_letter[letter], color)
            self.ids[sq] = sq
        self.pos = _build_position(board, np.zeros((2, 32), np.int8), 0, 1)
        self.hand_ids: list[dict[int, list[int]]] = [{}, {}]
        self.plans: list = [None, None]
        self.declared = [False, False]
        self.reversed: dict[int, int] = {}  # square -> owner colour
        self.over: tuple[float, str] | None = None
        self.record: list[str] = []
        self._undo: list = []
        # The extended SFEN the record starts from, or None for the standard start (``from_sfen`` sets it).
        self.start_sfen: str | None = None

    # ------------------------------------------------------------------ helpers
    @staticmethod
    def square(name: str) -> int:
        return PL.parse_square(name)

    def ids_text(self, sq: int) -> str | None:
        """Start square of the physical piece on ``sq`` (``None`` if empty)."""
        pid = int(self.ids[sq])
        return None if pid < 0 else PL.square_name(pid)

    def copy(self) -> "TurncoatGame":
        other = TurncoatGame.__new__(TurncoatGame)
        other.pos = self.pos.copy()
        other.ids = self.ids.copy()
        other.hand_ids = [{k: list(v) for k, v in h.items()} for h in self.hand_ids]
        other.plans = list(self.plans)
        other.declared = list(self.declared)
        other.reversed = dict(self.reversed)
        other.over = self.over
        other.record = list(self.record)
        other._undo = []
        other.start_sfen = self.start_sfen
        return other

    def _restore(self, snap: "TurncoatGame") -> None:
        self.__dict__.update(snap.__dict__)

    @property
    def turn(self) -> int:
        return self.pos.turn

    @property
    def move_number(self) -> int:
        return self.pos.move_number

    def plan_node_side(self) -> int | None:
        """The side choosing its plan now, or ``None`` once both plans are set."""
        for side in (0, 1):
            if self.plans[side] is None:
                return side
        return None

    def can_declare(self, side: int | None = None) -> bool:
        """Whether ``side`` (default: the side to move, at its turn) may declare defection now."""
        side = self.turn if side is None else side
        return (self.over is None and self.plan_node_side() is None and side == self.turn
                and not self.declared[side] and isinstance(self.plans[side], tuple)
                and self.move_number >= DECLARE_FROM_MOVE)

    # ---------------------------------------------------- reversed knights/lances
    def _rev_targets(self, rsq: int, occupancy: bool = True) -> list[int]:
        """Squares a reversed piece on ``rsq`` attacks (old facing)."""
        board = self.pos.state.board
        code = int(board[rsq])
        owner = code >> 5
        dr = 1 if owner == 0 else -1  # the old owner's forward direction in rank index
        f, r = divmod(rsq, 9)
        out = []
        if _letter(code) == "N":
            for df in (-1, 1):
                f2, r2 = f + df, r + 2 * dr
                if 0 <= f2 < 9 and 0 <= r2 < 9:
                    out.append(f2 * 9 + r2)
        else:  # lance
            r2 = r + dr
            while 0 <= r2 < 9:
                t = f * 9 + r2
                out.append(t)
                if board[t] != 0:
                    break
                r2 += dr
        return out

    def _rev_live(self, owner: int) -> list[int]:
        """Reversed pieces of ``owner`` still standing on their squares."""
        board = self.pos.state.board
        return [sq for sq, c in self.reversed.items()
                if c == owner and board[sq] != 0 and (int(board[sq]) >> 5) == owner]

    def _rev_attacks(self, target: int, by: int) -> bool:
        return any(target in self._rev_targets(sq) for sq in self._rev_live(by))

    def attacked(self, sq: int, by: int) -> bool:
        """Whether ``by`` attacks ``sq``, counting reversed pieces."""
        return bool(K.is_attacked(self.pos.state, self.pos.tables, sq, by)) or self._rev_attacks(sq, by)

    def in_check(self, side: int | None = None) -> bool:
        side = self.turn if side is None else side
        ksq = self.pos.king_square(side)
        return ksq is not None and self.attacked(ksq, 1 - side)

    def _reversed_moves(self, rsq: int) -> list[int]:
        T = self.pos.tables
        board = self.pos.state.board
        code = int(board[rsq])
        c = code >> 5
        out = []
        for t in self._rev_targets(rsq):
            if board[t] != 0 and (int(board[t]) >> 5) == c:
                continue
            base = t | (rsq << 8)
            if T.promote_code[code] and (T.zone[c, rsq] or T.zone[c, t]):
                out.append(base | K.PROMOTE)
            if not T.must_promote[code, t]:
                out.append(base)
        return out

    def _pawn_drop_mate_code(self) -> int | None:
        """The pawn drop of the side to move that would check the enemy king (the only drop uchifuzume concerns),
        if the side has a pawn in hand and that square is on the board and empty."""
        pos = self.pos
        me = pos.turn
        if pos.state.hands[me, PAWN] == 0:
            return None
        eksq = pos.king_square(1 - me)
        if eksq is None:
            return None
        f, r = divmod(eksq, 9)
        r += 1 if me == 0 else -1  # a sente pawn attacks toward rank a (rank index - 1)
        if not 0 <= r < 9 or pos.state.board[f * 9 + r] != 0:
            return None
        return (f * 9 + r) | (PAWN << 8) | K.DROP

    def _pawn_drop_mate_fixed(self, codes: list[int]) -> list[int]:
        """Kernel moves with the pawn-drop-mate (uchifuzume) test redone here, reversed pieces included.

        The kernel judges a checking pawn drop without the reversed knights and lances (a defender's reversed
        piece that could take the pawn, a dropper's reversed piece that guards it or covers the king's flight
        squares). The drop is legal, as far as uchifuzume goes, iff after it the defender has a
        legal move (:meth:`legal_codes`, reversed pieces included). **[reading]** the defender's possible
        declaration is not a reply (the declaration is not a move; see ``docs/turncoat.md``). Whether the drop
        leaves the dropper's own king attacked is left to the caller's filter."""
        d = self._pawn_drop_mate_code()
        if d is None:
            return codes
        pos = self.pos
        buf = np.empty(K.MAX_MOVES, np.int32)
        n = K.generate(pos.state, _FREE_TABLES, K.GEN_ALL, buf)
        if d not in buf[:n]:  # not a legal drop for another reason (nifu, a check it does not answer, ...)
            return codes
        self.push(d)
        try:
            mates = not self.legal_codes()
        finally:
            self.pop()
        if mates:
            return [m for m in codes if m != d]
        return codes if d in codes else codes + [d]

    def legal_codes(self) -> list[int]:
        """Legal move codes of the side to move (kernel moves, filtered and extended for reversed pieces)."""
        codes = self.pos.legal_codes("all").tolist()
        if not self.reversed:
            return codes
        me = self.turn
        enemy_rev = self._rev_live(1 - me)
        mine = self._rev_live(me)
        if not enemy_rev and not mine:
            return codes
        codes = self._pawn_drop_mate_fixed(codes)
        candidates = codes + [m for sq in mine for m in self._reversed_moves(sq)]
        out = []
        pos, T = self.pos, self.pos.tables
        for m in candidates:
            kernel_move = m in codes if mine else True
            if kernel_move and not enemy_rev:
                out.append(m)
                continue
            pos._ensure_capacity()
            K.do_move(pos.state, T, np.int64(m))
            ksq = pos.king_square(me)
            bad = ksq is not None and ((not kernel_move and bool(K.is_attacked(pos.state, T, ksq, 1 - me)))
                                       or self._rev_attacks(ksq, 1 - me))
            K.undo_move(pos.state, T)
            if not bad:
                out.append(m)
        return out

    # --------------------------------------------------------------- moves
    def push(self, code: int) -> None:
        """Play a move code known to be legal (from :meth:`legal_codes`), keeping identities."""
        pos = self.pos
        c = pos.turn
        to, frm = code & 0xFF, (code >> 8) & 0xFF
        board = pos.state.board
        rev_removed = []
        if code & K.DROP:
            pid = self.hand_ids[c][frm].pop()
            self.ids[to] = pid
            entry = ("drop", code, pid)
        else:
            cap = int(self.ids[to])
            if cap >= 0:
                pt = int(pos.tables.hand_type[board[to]])
                self.hand_ids[c].setdefault(pt, []).append(cap)
            self.ids[to] = self.ids[frm]
            self.ids[frm] = -1
            for sq in (frm, to):
                if sq in self.reversed:
                    rev_removed.append((sq, self.reversed.pop(sq)))
            entry = ("move", code, cap, rev_removed)
        pos.push_unchecked(code)
        self._undo.append(entry)

    def pop(self) -> None:
        """Take back the last :meth:`push` or :meth:`declare`."""
        entry = self._undo.pop()
        if entry[0] == "defect":
            self._restore_core(entry[1])
            return
        self.pos.pop()
        c = self.pos.turn
        code = entry[1]
        to, frm = code & 0xFF, (code >> 8) & 0xFF
        if entry[0] == "drop":
            self.hand_ids[c][frm].append(entry[2])
            self.ids[to] = -1
        else:
            self.ids[frm] = self.ids[to]
            cap = entry[2]
            self.ids[to] = cap
            if cap >= 0:
                pt = int(self.pos.tables.hand_type[self.pos.state.board[to]])
                self.hand_ids[c][pt].pop()
            for sq, owner in entry[3]:
                self.reversed[sq] = owner

    def _core(self):
        return (self.pos, self.ids.copy(), dict(self.reversed), list(self.declared), list(self.plans), self.over)

    def _restore_core(self, core) -> None:
        self.pos, self.ids, self.reversed, self.declared, self.plans, self.over = core

    def defected_board(self, side: int, plan) -> tuple[np.ndarray, list[int], list[int]]:
        """(board after ``side`` declares with ``plan``, squares flipped, squares that stay reversed)."""
        board = self.pos.state.board.copy()
        flipped, rev = [], []
        for pid in plan:
            where = np.nonzero(self.ids == pid)[0]
            if len(where) == 0:
                continue  # in a hand
            sq = int(where[0])
            code = int(board[sq])
            if code >> 5 != 1 - side:
                continue  # already the declarer's
            board[sq] = code ^ 32
            flipped.append(sq)
            if sq == pid and _letter(code) in ("N", "L"):
                rev.append(sq)
        return board, flipped, rev

    def declare(self, side: int | None = None) -> list[int]:
        """Defection by the side to move: flip its named pieces (see the module doc). Returns the flipped squares."""
        side = self.turn if side is None else side
        if not self.can_declare(side):
            raise GameError(self._why_no_declare(side))
        core = self._core()
        board, flipped, rev = self.defected_board(side, self.plans[side])
        pos = self.pos
        self.pos = _build_position(board, pos.state.hands.copy(), side, pos.move_number)
        self.pos.max_plies = pos.max_plies
        for sq in rev:
            self.reversed[sq] = side
        self.declared[side] = True
        ksq = self.pos.king_square(1 - side)
        if ksq is not None and self.attacked(ksq, side):
            self.over = (1.0 if side == 0 else 0.0, "defection: the enemy king can be captured")
        self._undo.append(("defect", core))
        return flipped

    def _why_no_declare(self, side: int) -> str:
        if self.over is not None:
            return "the game is over"
        if self.plan_node_side() is not None:
            return "defection is not possible before both plans are chosen"
        if self.declared[side]:
            return f"{'sente' if side == 0 else 'gote'} has already declared defection (once per game)"
        if self.plans[side] == HIDDEN:
            return "the plan of that side is hidden here: write defect=<squares>"
        if self.move_number < DECLARE_FROM_MOVE:
            return (f"defection is allowed from move {DECLARE_FROM_MOVE} (sente) / {DECLARE_FROM_MOVE + 1} (gote) "
                    f"on; this is move {self.move_number}")
        return "defection is not possible now"

    # ----------------------------------------------------------- GameState API
    def node_kind(self) -> NodeKind:
        return NodeKind.TERMINAL if self.result() is not None else NodeKind.DECISION

    def side_to_move(self) -> int:
        side = self.plan_node_side()
        return self.turn if side is None else side

    def legal_actions(self) -> list[str]:
        side = self.plan_node_side()
        if side is not None:
            return ["plan:" + PL.plan_text(p) for p in sorted(PL.all_plans(side), key=PL.plan_text)]
        if self.result() is not None:
            return []
        out = sorted(self.pos.move_usi(c) for c in self.legal_codes())
        return (["defect"] if self.can_declare() else []) + out

    def chance_events(self) -> list[tuple[str, float]]:
        return []

    def apply(self, token: str) -> None:
        """Play an action or event token (see the module doc); :class:`GameError` leaves the state unchanged."""
        if not isinstance(token, str) or not token or token != token.strip():
            raise GameError(f"not a token: {token!r}")
        snap = self.copy()
        snap._undo = self._undo
        try:
            self._apply(token)
        except GameError:
            self._restore(snap)
            raise

    def _apply(self, token: str) -> None:
        side = self.plan_node_side()
        if side is not None:
            m = re.fullmatch(r"plan([:=])(.+)", token)
            if not m:
                raise GameError(f"{'sente' if side == 0 else 'gote'} must choose a plan first "
                                f"(plan:<squares>, e.g. plan:8b), not {token!r}")
            if m.group(2) == HIDDEN:
                if m.group(1) != "=":
                    raise GameError("a hidden plan is written plan=? (an event of a view), not plan:?")
                self.plans[side] = HIDDEN
                self.record.append("plan=?")
            else:
                self.plans[side] = PL.parse_plan(m.group(2), side)
                self.record.append("plan:" + PL.plan_text(self.plans[side]))
            return
        if self.result() is not None:
            raise GameError(f"the game is over ({self.result()[1]}): {token!r} not allowed")
        if not token.startswith("defect"):
            self._play_usi(token)
            return
        parts = token.split(",")
        head, plan_parts = parts[0], []
        if head.startswith("defect="):
            plan_parts = [head[len("defect="):]]
            while len(parts) > 1 and len(parts[1]) == 2:  # further plan squares (a move is longer)
                plan_parts.append(parts.pop(1))
        elif head != "defect":
            raise GameError(f"not an action: {token!r} (defect, defect=<squares>, or defect,<move>)")
        rest = parts[1:]
        if len(rest) > 1 or (rest and not rest[0]):
            raise GameError(f"malformed declaring turn {token!r} (defect,<move> or defect=<squares>,<move>)")
        me = self.turn
        if plan_parts:
            plan = PL.parse_plan(",".join(plan_parts), me)
            if self.plans[me] == HIDDEN:
                self.plans[me] = plan
            elif self.plans[me] != plan:
                raise GameError(f"{token!r} does not match the plan of {'sente' if me == 0 else 'gote'}")
        self.declare(me)
        self._undo.pop()  # apply() is not undone with pop()
        self.record.append("defect=" + PL.plan_text(self.plans[me]))
        if rest:
            if self.over is not None:
                raise GameError("the declaration ends the game (the enemy king can be captured); no move follows")
            self._play_usi(rest[0])

    def _play_usi(self, text: str) -> None:
        try:
            move = self.pos.parse_move(text)
        except MoveParseError as e:
            raise GameError(f"not an action: {text!r} ({e})") from None
        if move.code not in self.legal_codes():
            # the mover's view, not the true state: whoever passes the error on (an engine's error line, a runner's
            # log, the GUI) must not show the other side's undeclared plan
            raise GameError(f"illegal move {text} at move {self.move_number} ({self.sfen(self.turn)})")
        self.push(move.code)
        self._undo.pop()
        self.record.append(self.pos.move_usi(move.code))

    def result(self) -> tuple[float, str] | None:
        if self.over is not None:
            return self.over
        if self.plan_node_side() is not None:
            return None
        c = self.turn
        lose = 1.0 if c == 1 else 0.0
        hidden_right = (self.plans[c] == HIDDEN and not self.declared[c] and self.move_number >= DECLARE_FROM_MOVE)
        if not self.legal_codes() and not self.can_declare() and not hidden_right:  # (a hidden plan may save it)
            return lose, "checkmate" if self.in_check() else "no legal moves"
        rep = self.pos.repetition()
        if rep is Repetition.DRAW:
            return 0.5, "sennichite"
        if rep is not Repetition.NONE:
            return (1.0 - lose if rep is Repetition.WIN else lose), "perpetual check"
        if self.pos.max_plies and self.pos.move_number > self.pos.max_plies:
            return 0.5, "move limit"
        return None

    # ------------------------------------------------------------ views and SFEN
    def _record_plan_sides(self) -> list[int]:
        """The sides whose plan tokens the record holds, in order: those with no plan at the start (``-``)."""
        if self.start_sfen is None:
            return [0, 1]
        fields = self.start_sfen.split()[4].split(";")
        return [side for side in (0, 1) if fields[1 + side] == "-"]

    def view(self, side: int) -> list[str]:
        """The record as ``side`` may see it: its own plan as ``plan=<squares>``, the other's as ``plan=?``."""
        owners = iter(self._record_plan_sides())
        out = []
        for tok in self.record:
            if tok.startswith("plan"):
                out.append("plan=" + tok[5:] if next(owners, None) == side else "plan=?")
            else:
                out.append(tok)
        return out

    def start_view_sfen(self, side: int) -> str | None:
        """The start position as ``side`` may see it (the other side's undeclared plan ``?``), or ``None`` for the
        standard start."""
        if self.start_sfen is None:
            return None
        return TurncoatGame.from_sfen(self.start_sfen).sfen(side)

    def position_command(self, side: int) -> str:
        """The USI ``position`` line the referee sends to ``side`` (``USI_Variant`` = turncoat): ``startpos``, or
        ``sfen <start>`` when the game began elsewhere, then ``side``'s view of the record."""
        tokens = self.view(side)
        start = self.start_view_sfen(side)
        head = "position startpos" if start is None else f"position sfen {start}"
        return head + (" moves " + " ".join(tokens) if tokens else "")

    def _plan_field(self, side: int, viewer: int | None) -> str:
        p = self.plans[side]
        if p is None:
            return "-"
        if p == HIDDEN or (viewer is not None and viewer != side and not self.declared[side]):
            return HIDDEN
        return ("!" if self.declared[side] else "") + PL.plan_text(p)

    def sfen(self, side: int | None = None) -> str:
        """Extended SFEN: the four standard fields, then ``<ids>;<sente plan>;<gote plan>;<reversed>``.

        With ``side``, that side's view (the other side's undeclared plan is ``?``)."""
        s = self.pos.state
        ids = []
        for r in range(9):
            for f in range(8, -1, -1):
                sq = f * 9 + r
                if s.board[sq]:
                    ids.append(PL.square_name(int(self.ids[sq])))
        for color in (0, 1):
            for letter in SHOGI.hand_order:
                ids += [PL.square_name(p) for p in self.hand_ids[color].get(SHOGI.ptype_of_letter[letter], [])]
        rev = ",".join(PL.square_name(sq) for sq in sorted(self.reversed)) or "-"
        extra = ";".join(["".join(ids), self._plan_field(0, side), self._plan_field(1, side), rev])
        return f"{self.pos.sfen()} {extra}"

    @classmethod
    def from_sfen(cls, text: str) -> "TurncoatGame":
        """Parse an extended SFEN written by :meth:`sfen`. Raises :class:`GameError` naming the problem."""
        fields = text.split() if isinstance(text, str) else []
        if len(fields) != 5:
            raise GameError(f"a turncoat SFEN has 5 fields (board side hands move-number extra), got {text!r}")
        board_text, side, hand_text, number, extra = fields
        board = np.zeros(N_SQ, np.int8)
        rows = board_text.split("/")
        if len(rows) != 9:
            raise GameError(f"the board of {text!r} must have 9 ranks")
        for r, row in enumerate(rows):
            f = 8
            for tok in re.findall(r"\d|\+?[A-Za-z]|.", row):
                if tok.isdigit():
                    f -= int(tok)
                    continue
                if tok.upper() not in SHOGI.ptype_of_letter or f < 0:
                    raise GameError(f"bad piece {tok!r} on rank {r + 1} of {text!r}")
                board[f * 9 + r] = SHOGI.code(SHOGI.ptype_of_letter[tok.upper()], 0 if tok[-1].isupper() else 1)
                f -= 1
            if f != -1:
                raise GameError(f"rank {r + 1} of {text!r} does not cover 9 files")
        if side not in ("b", "w") or not number.isdigit() or int(number) < 1:
            raise GameError(f"bad side or move number in {text!r}")
        hands = np.zeros((2, 32), np.int8)
        hand_seq: list[tuple[int, int]] = []
        if hand_text != "-":
            toks = re.findall(r"(\d*)([A-Za-z])", hand_text)
            if "".join(n + ch for n, ch in toks) != hand_text:
                raise GameError(f"malformed hand {hand_text!r}")
            for n, ch in toks:
                pt = SHOGI.ptype_of_letter.get(ch.upper())
                if pt is None or pt not in SHOGI.hand_ptypes:
                    raise GameError(f"{ch!r} cannot be in hand")
                color = 0 if ch.isupper() else 1
                hands[color, pt] += int(n) if n else 1
        for color in (0, 1):
            for letter in SHOGI.hand_order:
                pt = SHOGI.ptype_of_letter[letter]
                hand_seq += [(color, pt)] * int(hands[color, pt])
        parts = extra.split(";")
        if len(parts) != 4:
            raise GameError(f"the extra field of {text!r} must be <ids>;<sente plan>;<gote plan>;<reversed>")
        id_text, p0, p1, rev_text = parts
        names = [id_text[i:i + 2] for i in range(0, len(id_text), 2)]
        occupied = [f * 9 + r for r in range(9) for f in range(8, -1, -1) if board[f * 9 + r]]
        if len(names) != len(occupied) + len(hand_seq):
            raise GameError(f"{len(names)} identities for {len(occupied) + len(hand_seq)} pieces in {text!r}")
        g = cls.__new__(cls)
        g.ids = np.full(N_SQ, -1, np.int16)
        g.hand_ids = [{}, {}]
        seen = set()
        T = SHOGI.tables
        for i, name in enumerate(names):
            pid = PL.parse_square(name)
            if pid not in PL.start_pieces() or pid in seen:
                raise GameError(f"identity {name!r} is not a start square or is used twice in {text!r}")
            seen.add(pid)
            if i < len(occupied):
                sq = occupied[i]
                code = int(board[sq])
                base = "K" if T.royal[code] else SHOGI.piece(int(T.hand_type[code])).letter
                g.ids[sq] = pid
            else:
                color, pt = hand_seq[i - len(occupied)]
                base = SHOGI.piece(pt).letter
                g.hand_ids[color].setdefault(pt, []).append(pid)
            if PL.kind_of(pid) != base:
                raise GameError(f"identity {name} is a {PL.kind_of(pid)}, not a {base}, in {text!r}")
        g.plans, g.declared = [None, None], [False, False]
        for s_, p in enumerate((p0, p1)):
            if p in ("-", HIDDEN):
                g.plans[s_] = None if p == "-" else HIDDEN
                continue
            if p.startswith("!"):
                g.declared[s_], p = True, p[1:]
            g.plans[s_] = PL.parse_plan(p, s_)
            if PL.plan_text(g.plans[s_]) != p:
                raise GameError(f"plan {p!r} is not written canonically ({PL.plan_text(g.plans[s_])})")
        g.reversed = {}
        if rev_text != "-":
            for name in rev_text.split(","):
                sq = PL.parse_square(name)
                code = int(board[sq])
                if not code or _letter(code) not in ("N", "L") or int(g.ids[sq]) != sq:
                    raise GameError(f"{name} cannot hold a reversed knight or lance in {text!r}")
                g.reversed[sq] = code >> 5
        g.pos = _build_position(board, hands, 0 if side == "b" else 1, int(number))
        g.over = None
        g.record = []
        g._undo = []
        ksq = g.pos.king_square(1 - g.turn)
        if ksq is not None and g.attacked(ksq, g.turn):
            g.over = (1.0 if g.turn == 0 else 0.0, "defection: the enemy king can be captured")
        own = g.sfen()
        g.start_sfen = None if own == _standard_start_sfen() else own
        return g

    @classmethod
    def replay(cls, tokens) -> "TurncoatGame":
        """A new game with ``tokens`` applied (a full record or one side's view)."""
        g = new_game()
        for tok in tokens:
            g.apply(tok)
        return g

    def __repr__(self) -> str:
        return f"TurncoatGame.from_sfen({self.sfen()!r})"


@functools.lru_cache(maxsize=1)
def _standard_start_sfen() -> str:
    return TurncoatGame().sfen()


def new_game() -> TurncoatGame:
    """The start of a game: sente chooses its plan first."""
    return TurncoatGame()
