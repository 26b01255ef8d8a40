"""Ousho Fantasista as an :class:`engine.game.GameState`: nodes, tokens, rolls, extended SFEN.

Nodes of one ply::

    decision  a whole turn (one token; its parts joined by commas)           side to move
    chance    "roll=N" (N = 1..20, each 1/20)  only right after ply 15k and 15k+1, for the side that just moved
    decision  "target:<sq>"                     only after ayumi 3 / yokaku 3 with an eligible piece, same side

Extended SFEN: the four standard fields (board with the letters of ``pieces.py``, side, ordinary hand, move
number = the number of the next ply) and one more field of ``key=value`` items joined by ``;`` (see
``docs/fantasista.md``)::

    lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1 f=ha
"""
from __future__ import annotations

import re

from ...game import GameError, NodeKind
from . import pieces as PC
from .board import Board, follow_wave
from .turns import find_turn, has_legal_turn, legal_turns, turn_name
from .pieces import CARRIER, INVINCIBLE, SPECIALS, TOKEN
from .magic import (FAIRIES, FAIRY_LETTERS, RESERVED_RESULTS, RIGHT_EMBLEM, TABLE_ROWS, TARGET_NONE, effect_of,
                    magic_after, normalize_reserved)

VARIANT_ID = "fantasista"
START_BOARD = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL"
RIGHT_LETTERS = "ACWE"  # awakening, curtain, wave, emblem (sente upper case, gote lower case)
#: The pre-game decision: ``fairy:<name>`` and, when the side's reserved result is not fixed, ``,reserved:<r>``.
FAIRY_TOKEN = re.compile(r"fairy:([a-z]+)(?:,reserved:([a-z0-9:-]+))?")
class FantasistaState:
    """A game of Ousho Fantasista. ``FantasistaState(("hiko", "ayumi"))`` is the start position with those fairies.

    Options: ``reserved`` (what rolls 9-18 give: one result for both sides, or a pair (sente's, gote's); see
    :data:`RESERVED_RESULTS`), ``max_plies`` (a draw after that many plies, 0 = none). A fairy or a reserved result
    given as ``None`` is not fixed: the game then starts at the pre-game decision of that side (``fairy:<name>`` /
    ``fairy:<name>,reserved:<result>``, sente first), seed rule 2.
    """

    variant_id = VARIANT_ID

    def __init__(self, fairies=("hiko", "hiko"), reserved="4-8", max_plies: int = 0) -> None:
        self.fairy = [None if f is None else FAIRIES.index(f) if isinstance(f, str) else int(f) for f in fairies]
        self._set_reserved(reserved)
        self.max_plies = max_plies
        self.bd = Board()
        self.move_number = 1
        self.phase = "move"  # "move", "roll", "target"
        self.pending = ""  # "i" (invincible) or "c" (carrier) while phase == "target"
        self._hist: list[tuple] = []  # key of every move-phase position reached (for repetition)
        self._checks: list[bool] = []
        self._memo = None
        self._load_board(START_BOARD + " b -")
        self._record()

    # ------------------------------------------------------------ creation
    @classmethod
    def from_sfen(cls, sfen: str, reserved="4-8", max_plies: int = 0) -> "FantasistaState":
        """A state from an extended SFEN; ``reserved`` applies when the SFEN has no ``s=`` item."""
        g = cls.__new__(cls)
        g.max_plies = max_plies
        g._reserved_default = reserved
        g.bd = Board()
        g.phase, g.pending = "move", ""
        g._hist, g._checks, g._memo = [], [], None
        fields = sfen.split()
        if len(fields) != 5:
            raise GameError(f"a fantasista SFEN has 5 fields (board side hand move-number state), got {sfen!r}")
        g._load_board(" ".join(fields[:3]))
        if not fields[3].isdigit() or int(fields[3]) < 1:
            raise GameError(f"bad move number {fields[3]!r}")
        g.move_number = int(fields[3])
        g._load_extra(fields[4])
        del g._reserved_default
        g._validate()
        g._record()
        return g

    def copy(self) -> "FantasistaState":
        g = FantasistaState.__new__(FantasistaState)
        g.fairy, g.reserved, g.max_plies = self.fairy[:], self.reserved[:], self.max_plies
        g.bd = self.bd.copy()
        g.move_number, g.phase, g.pending = self.move_number, self.phase, self.pending
        g._hist, g._checks, g._memo = self._hist[:], self._checks[:], None
        return g

    def _load_board(self, text: str) -> None:
        board_text, side, hand_text = text.split()
        bd = self.bd
        ranks = board_text.split("/")
        if len(ranks) != 9:
            raise GameError(f"the board has {len(ranks)} ranks, expected 9")
        for r, rank_text in enumerate(ranks):
            f = 8
            for tok in re.findall(r"\d|\+?[A-Za-z]|.", rank_text):
                if tok.isdigit():
                    f -= int(tok)
                    continue
                pt = PC.LETTER_TO_PT.get(tok.upper())
                if pt is None or f < 0:
                    raise GameError(f"bad piece {tok!r} or too many files on rank {r + 1}")
                s = PC.square(f, r)
                bd.b[s] = pt + (0 if tok[-1].isupper() else 32)
                bd.m[s] = TOKEN if pt in SPECIALS else 0
                f -= 1
            if f != -1:
                raise GameError(f"rank {r + 1} does not cover 9 files")
        if side not in ("b", "w"):
            raise GameError(f"side to move must be b or w, not {side!r}")
        bd.stm = 0 if side == "b" else 1
        _parse_hand(hand_text, bd.hand, allowed=PC.HAND_ORDER)

    def _load_extra(self, text: str) -> None:
        items = {}
        for item in text.split(";"):
            if "=" not in item:
                raise GameError(f"bad state item {item!r} (expected key=value)")
            k, v = item.split("=", 1)
            if k in items or k not in "frmhns" or len(k) != 1:
                raise GameError(f"unknown or repeated state item {k!r}")
            items[k] = v
        f = items.get("f", "")
        if len(f) != 2 or any(ch not in FAIRY_LETTERS + "-" for ch in f):
            raise GameError(f"f= needs two fairy letters from {FAIRY_LETTERS!r} (- not chosen yet), got {f!r}")
        self.fairy = [None if ch == "-" else FAIRY_LETTERS.index(ch) for ch in f]
        if "s" in items:
            parts = items["s"].split(",")
            if len(parts) != 2:
                raise GameError(f"s= needs two reserved results (sente's, gote's), got {items['s']!r}")
            try:
                self._set_reserved(tuple(_reserved_from_sfen(x) for x in parts))
            except ValueError as exc:
                raise GameError(str(exc)) from None
        else:
            try:
                self._set_reserved(self._reserved_default)
            except ValueError as exc:
                raise GameError(str(exc)) from None
        bd = self.bd
        for count, letter in _hand_tokens(items.get("r", "")):
            c = 0 if letter.isupper() else 1
            i = RIGHT_LETTERS.find(letter.upper())
            if i < 0:
                raise GameError(f"unknown right {letter!r}")
            if i == 3:
                bd.emblem[c] = True
            else:
                bd.rights[c][i] += count
        for entry in filter(None, items.get("m", "").split(",")):
            mt = re.fullmatch(r"(\d[a-i])('?)(!?)(?:@(?:(\+?[A-Za-z])('?)(!?))?)?", entry)
            if not mt:
                raise GameError(f"bad mark entry {entry!r}")
            s = PC.parse_square(mt.group(1))
            if not bd.b[s]:
                raise GameError(f"mark on the empty square {mt.group(1)}")
            bd.m[s] |= (TOKEN if mt.group(2) else 0) | (INVINCIBLE if mt.group(3) else 0)
            if "@" in entry:
                bd.m[s] |= CARRIER
                if mt.group(4):
                    pt = PC.LETTER_TO_PT.get(mt.group(4).upper())
                    if pt is None or pt == PC.K:
                        raise GameError(f"bad rider {mt.group(4)!r}")
                    bd.r[s] = pt + (bd.b[s] & 32)
                    bd.rm[s] = (TOKEN if mt.group(5) or pt in SPECIALS else 0) | (INVINCIBLE if mt.group(6) else 0)
        _parse_hand(items.get("h", ""), bd.th, allowed=PC.TOKEN_HAND_ORDER)
        n = items.get("n", "")
        if n == "roll":
            self.phase = "roll"
        elif n in ("target:i", "target:c"):
            self.phase, self.pending = "target", n[-1]
        elif n:
            raise GameError(f"bad node item n={n!r}")

    def _validate(self) -> None:
        bd = self.bd
        for c in (0, 1):
            kings = sum(1 for s in range(81) if bd.b[s] == PC.K + 32 * c)
            if kings > 1:
                raise GameError("a side has two kings")
        for s in range(81):
            pt, mk = bd.b[s] & 31, bd.m[s]
            if mk & CARRIER and pt not in (PC.B, PC.PB):
                raise GameError(f"carrier on {PC.square_name(s)} is not a bishop or horse")
            if mk & INVINCIBLE and pt not in (PC.P, PC.PP):
                raise GameError(f"invincible piece on {PC.square_name(s)} is not a pawn or tokin")
            if bd.b[s] and PC.must_promote(pt, bd.b[s] >> 5, s):
                raise GameError(f"piece on {PC.square_name(s)} could never move")
        if self.phase == "move" and bd.in_check(1 - bd.stm):
            raise GameError("the side not to move is in check")

    # ---------------------------------------------------------------- output
    def sfen(self) -> str:
        bd = self.bd
        rows = []
        for r in range(9):
            row, empty = "", 0
            for f in range(8, -1, -1):
                code = bd.b[PC.square(f, r)]
                if not code:
                    empty += 1
                    continue
                if empty:
                    row, empty = row + str(empty), 0
                row += _letter(code)
            rows.append(row + (str(empty) if empty else ""))
        hand = _format_hand(bd.hand, PC.HAND_ORDER) or "-"
        items = ["f=" + "".join("-" if x is None else FAIRY_LETTERS[x] for x in self.fairy)]
        if self.reserved != ["4-8", "4-8"]:
            items.append("s=" + ",".join(_reserved_to_sfen(x) for x in self.reserved))
        rights = ""
        for c in (0, 1):
            for i, letter in enumerate(RIGHT_LETTERS):
                n = int(bd.emblem[c]) if i == 3 else bd.rights[c][i]
                if n:
                    rights += (str(n) if n > 1 else "") + (letter if c == 0 else letter.lower())
        if rights:
            items.append("r=" + rights)
        marks = []
        for r in range(9):
            for f in range(8, -1, -1):
                s = PC.square(f, r)
                mk = bd.m[s]
                if not bd.b[s] or not (mk & (INVINCIBLE | CARRIER) or (mk & TOKEN and (bd.b[s] & 31) not in SPECIALS)):
                    continue
                e = PC.square_name(s) + _flags(bd.b[s], mk)
                if mk & CARRIER:
                    e += "@"
                    if bd.r[s]:
                        e += _letter(bd.r[s]) + _flags(bd.r[s], bd.rm[s])
                marks.append(e)
        if marks:
            items.append("m=" + ",".join(marks))
        th = _format_hand(bd.th, PC.TOKEN_HAND_ORDER)
        if th:
            items.append("h=" + th)
        if self.phase == "roll":
            items.append("n=roll")
        elif self.phase == "target":
            items.append("n=target:" + self.pending)
        return f"{'/'.join(rows)} {'bw'[bd.stm]} {hand} {self.move_number} {';'.join(items)}"

    def __repr__(self) -> str:
        return f"FantasistaState.from_sfen({self.sfen()!r})"

    # ---------------------------------------------------------------- nodes
    # ------------------------------------------------------------ pre-game decision
    def _set_reserved(self, reserved) -> None:
        """Both sides' reserved results from one value or a pair; ``None`` = to be chosen at the pre-game node."""
        pair = (reserved, reserved) if reserved is None or isinstance(reserved, str) else tuple(reserved)
        if len(pair) != 2:
            raise ValueError(f"reserved is one result or a pair (sente's, gote's), not {reserved!r}")
        self.reserved = [None if r is None else normalize_reserved(
            r, None if self.fairy[c] is None else FAIRIES[self.fairy[c]]) for c, r in enumerate(pair)]

    def pregame_side(self) -> int | None:
        """The side whose pre-game decision (fairy, reserved result) is due, sente first; None once both are set."""
        for c in (0, 1):
            if self.fairy[c] is None or self.reserved[c] is None:
                return c
        return None

    def pregame_actions(self) -> list[str]:
        """The pre-game decision tokens of :meth:`pregame_side`: ``fairy:<name>`` for a fixed reserved result
        (the fixed fairy only, when it is fixed), with ``,reserved:<result>`` for every result when it is not."""
        c = self.pregame_side()
        if c is None:
            return []
        names = FAIRIES if self.fairy[c] is None else (FAIRIES[self.fairy[c]],)
        out = []
        for f in names:
            if self.reserved[c] is not None:
                out.append(f"fairy:{f}")
            else:
                out += [f"fairy:{f},reserved:{r}" for r in RESERVED_RESULTS if r != f"{f}:4-8"]
        return out

    def _apply_pregame(self, token: str) -> None:
        m = FAIRY_TOKEN.fullmatch(token)
        c = self.pregame_side()
        if not m or m.group(1) not in FAIRIES:
            raise GameError(f"the pre-game decision of {'sente' if c == 0 else 'gote'} is due: fairy:<{'|'.join(FAIRIES)}>"
                            f"[,reserved:<result>], not {token!r}")
        f = FAIRIES.index(m.group(1))
        if self.fairy[c] is not None and self.fairy[c] != f:
            raise GameError(f"this side's fairy is fixed ({FAIRIES[self.fairy[c]]}), not {m.group(1)}")
        try:
            res = normalize_reserved(m.group(2), m.group(1)) if m.group(2) else None
        except ValueError as exc:
            raise GameError(str(exc)) from None
        if self.reserved[c] is not None and res is not None and res != self.reserved[c]:
            raise GameError(f"this side's reserved result is fixed ({self.reserved[c]}), not {m.group(2)}")
        self.fairy[c] = f
        if self.reserved[c] is None:
            self.reserved[c] = res if res is not None else "4-8"

    # ---------------------------------------------------------------- nodes
    def node_kind(self) -> NodeKind:
        if self.phase == "roll":
            return NodeKind.CHANCE
        if self.phase == "target" or self.pregame_side() is not None:
            return NodeKind.DECISION
        return NodeKind.TERMINAL if self.result() is not None else NodeKind.DECISION

    def side_to_move(self) -> int:
        """The side to decide: the roller while a magic target is chosen, the choosing side before the game, else the
        side whose turn it is."""
        pre = self.pregame_side()
        if pre is not None:
            return pre
        return 1 - self.bd.stm if self.phase in ("roll", "target") else self.bd.stm

    def turns(self) -> tuple[dict[str, Board], dict[str, str], dict[tuple, str]]:
        """Legal turns (cached): see :func:`.board.legal_turns`."""
        if self.phase != "move":
            return {}, {}, {}
        known = self._known()
        if "list" not in known:
            known["list"] = legal_turns(self.bd)
        return known["list"]

    def _known(self) -> dict:
        """What has been worked out about this position's turns, kept until the board changes: ``list`` (:meth:`turns`),
        ``has_turn``, ``names`` (outcome key -> text). Playing or judging a position does not list its turns: with a
        silver wave right they are tens of thousands, and naming them all took most of a second (``apply``,
        ``result`` and :meth:`turn_to` ask the generator for one turn instead)."""
        if self._memo is None or self._memo[0] is not self.bd:
            self._memo = (self.bd, {})
        return self._memo[1]

    def _listed(self) -> bool:
        """Whether this position's turns are listed already (:meth:`turns`)."""
        return "list" in self._known()

    def _has_turn(self) -> bool:
        """Whether the side to move has a legal turn (from the list when it is made, else the generator stops at
        the first)."""
        known = self._known()
        if "has_turn" not in known:
            table = known["list"][0] if "list" in known else None
            if table is not None and (table or not table.truncated):
                known["has_turn"] = bool(table)
            else:
                known["has_turn"] = has_legal_turn(self.bd)
        return known["has_turn"]

    def turn_to(self, after: Board) -> str | None:
        """The canonical text of the turn that leads to ``after`` (None if no listed turn does); remembered for the
        position, as the search names its answer at every report."""
        known = self._known()
        key = after.key()
        if "list" in known:
            return known["list"][2].get(key)
        names = known.setdefault("names", {})
        if key not in names:
            names[key] = turn_name(self.bd, after)
        return names[key]

    def target_squares(self) -> list[int]:
        """Squares eligible for the pending magic target (ayumi 3: own pawn/tokin not yet invincible, riders
        included; yokaku 3: own bishop/horse not yet a carrier)."""
        bd, c = self.bd, 1 - self.bd.stm
        out = []
        for s in range(81):
            if self.pending == "i":
                for code, mk in ((bd.b[s], bd.m[s]), (bd.r[s], bd.rm[s])):
                    if code and code >> 5 == c and code & 31 in (PC.P, PC.PP) and not mk & INVINCIBLE:
                        out.append(s)
            elif self.pending == "c":
                code = bd.b[s]
                if code and code >> 5 == c and code & 31 in (PC.B, PC.PB) and not bd.m[s] & CARRIER:
                    out.append(s)
        return out

    def legal_actions(self) -> list[str]:
        if self.pregame_side() is not None:
            return self.pregame_actions()
        if self.phase == "target":
            return [f"target:{PC.square_name(s)}" for s in self.target_squares()]
        if self.phase != "move" or self.result() is not None:
            return []
        return list(self.turns()[0])

    def chance_events(self) -> list[tuple[str, float]]:
        if self.phase != "roll":
            return []
        return [(f"roll={n}", 0.05) for n in range(1, 21)]

    # ---------------------------------------------------------------- moves
    def apply(self, token: str) -> None:
        if not isinstance(token, str):
            raise GameError(f"a token must be a string, not {type(token).__name__}")
        token = token.strip()
        if self.pregame_side() is not None:
            self._apply_pregame(token)
            return
        if self.phase == "roll":
            m = re.fullmatch(r"roll=(\d{1,2})", token)
            if not m or not 1 <= int(m.group(1)) <= 20:
                raise GameError(f"a roll (roll=1..20) is due, not {token!r}")
            self._receive(int(m.group(1)))
            return
        if self.phase == "target":
            if token not in self.legal_actions():
                raise GameError(f"{token!r} is not an eligible target (expected one of {self.legal_actions()})")
            s = PC.parse_square(token.split(":")[1])
            bd = self.bd.copy()
            if self.pending == "i":
                if bd.b[s] & 31 in (PC.P, PC.PP) and bd.b[s] >> 5 == 1 - bd.stm:
                    bd.m[s] |= INVINCIBLE
                else:
                    bd.rm[s] |= INVINCIBLE
            else:
                bd.m[s] |= CARRIER
            self.bd, self.phase, self.pending = bd, "move", ""
            self._hist[-1] = self.bd.key()
            return
        if self.result() is not None:
            raise GameError(f"the game is over ({self.result()[1]})")
        after = None if self._listed() else find_turn(self.bd, token)
        if after is None:  # from the list: another spelling (a wave in another order), an unlisted wave, an error
            text = self.canonical(token)
            turns = self.turns()[0]
            after = turns[text] if text in turns else self._unlisted[text]
        self.bd = after
        ply = self.move_number
        self.move_number += 1
        if magic_after(ply):
            self.phase = "roll"
        self._record()

    def canonical(self, token: str) -> str:
        """The canonical spelling of a legal turn token (raises :class:`GameError` if it is not legal)."""
        turns, alias, by_key = self.turns()
        text = alias.get(token, token)
        if text not in turns and token.startswith("wave:"):
            nb = follow_wave(self.bd, token)  # another order of the same silver moves
            text = by_key.get(nb.key(), token) if nb is not None else token
            if text not in turns and nb is not None and turns.truncated:
                # too many waves to list in this position (turns.LEVELS): the wave is played as spelt
                self._unlisted = {token: nb}
                return token
        if text not in turns:
            raise GameError(f"illegal or malformed turn {token!r} in {self.sfen()}")
        return text

    def _receive(self, n: int) -> None:
        """The side that just moved receives the magic of roll ``n`` in its fairy's table (:mod:`.magic`)."""
        c = 1 - self.bd.stm
        bd = self.bd.copy()
        effect = effect_of(n, FAIRIES[self.fairy[c]], self.reserved[c])
        self.phase = "move"
        for kind, count in effect.tokens:
            bd.th[c][kind] += count
        for right in effect.rights:
            if right == RIGHT_EMBLEM:
                bd.emblem[c] = True
            else:
                bd.rights[c][right] += 1
        if effect.target != TARGET_NONE:
            self.phase, self.pending = "target", effect.target
        self.bd = bd
        if self.phase == "target" and not self.target_squares():
            self.phase, self.pending = "move", ""  # no eligible piece: the magic is nothing
        self._hist[-1] = self.bd.key()
        self._memo = None

    def _record(self) -> None:
        self._hist.append(self.bd.key())
        self._checks.append(self.bd.in_check(self.bd.stm))
        self._memo = None

    # ---------------------------------------------------------------- result
    def repetition(self) -> str | None:
        """"draw", "win" or "loss" (for the side to move) at the fourth occurrence of a position, else None."""
        keys = self._hist
        ply = len(keys) - 1
        same = [i for i in range(ply - 4, -1, -2) if keys[i] == keys[ply]]
        if len(same) < 3:
            return None
        first = same[2]
        if all(self._checks[i] for i in range(first + 2, ply + 1, 2)):
            return "win"
        if all(self._checks[i] for i in range(first + 1, ply + 1, 2)):
            return "loss"
        return "draw"

    def result(self) -> tuple[float, str] | None:
        if self.phase != "move" or self.pregame_side() is not None:
            return None
        c = self.bd.stm
        lose = 1.0 if c == 1 else 0.0
        if not self._has_turn():
            return lose, "checkmate" if self.bd.in_check(c) else "no legal turn"
        rep = self.repetition()
        if rep == "draw":
            return 0.5, "sennichite"
        if rep is not None:
            return (1.0 - lose if rep == "win" else lose), "perpetual check"
        if self.max_plies and self.move_number > self.max_plies:
            return 0.5, "move limit"
        return None


def new_game(fairies=("hiko", "hiko"), reserved="4-8", max_plies: int = 0) -> FantasistaState:
    return FantasistaState(fairies, reserved, max_plies)


def _reserved_to_sfen(r: str | None) -> str:
    """``s=`` entry: ``-`` 4-8 (nothing added), ``n`` nothing, ``?`` not chosen yet, else table letter + row digit
    (``4`` for 4-8): ``g1`` = ginsara's 1, silver curtain."""
    if r is None:
        return "?"
    if r in ("4-8", "nothing"):
        return "-" if r == "4-8" else "n"
    table, row = r.split(":")
    return FAIRY_LETTERS[FAIRIES.index(table)] + row[0]


def _reserved_from_sfen(x: str) -> str | None:
    if x == "?":
        return None
    if x in ("-", "n"):
        return "4-8" if x == "-" else "nothing"
    if len(x) == 2 and x[0] in FAIRY_LETTERS and x[1] in "1234":
        return f"{FAIRIES[FAIRY_LETTERS.index(x[0])]}:{TABLE_ROWS['1234'.index(x[1])]}"
    raise GameError(f"bad reserved entry {x!r} in s= (- 4-8, n nothing, ? not chosen, or a table letter and 1-4)")


# ------------------------------------------------------------------ helpers
def _add(arr, i, n):
    arr[i] += n


def _letter(code: int) -> str:
    x = PC.LETTERS[code & 31]
    return x if code >> 5 == 0 else x.lower()


def _flags(code: int, mark: int) -> str:
    tok = "'" if mark & TOKEN and (code & 31) not in SPECIALS else ""
    return tok + ("!" if mark & INVINCIBLE else "")


def _hand_tokens(text: str):
    toks = re.findall(r"(\d*)([A-Za-z])", text)
    if "".join(n + ch for n, ch in toks) != text:
        raise GameError(f"malformed count list {text!r}")
    return [(int(n) if n else 1, ch) for n, ch in toks]


def _parse_hand(text: str, hands, allowed) -> None:
    if text in ("-", ""):
        return
    for count, letter in _hand_tokens(text):
        pt = PC.LETTER_TO_PT.get(letter.upper())
        if pt is None or pt not in allowed:
            raise GameError(f"{letter!r} cannot be in this hand")
        hands[0 if letter.isupper() else 1][pt] += count


def _format_hand(hands, order) -> str:
    out = ""
    for c in (0, 1):
        for pt in order:
            n = hands[c][pt]
            if n:
                x = PC.LETTERS[pt]
                out += (str(n) if n > 1 else "") + (x if c == 0 else x.lower())
    return out
