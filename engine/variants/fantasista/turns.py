"""The game layer's turns from the shared generator: every legal turn with its canonical text, one turn found from
its text or named from its outcome, whether a side has a turn, perft.

The shared generator (:func:`.movers.legal_moves`) lists one move per outcome for the search. Naming needs every
spelling of a turn (its canonical text has the fewest commas, then comes first in string order), so the game layer
generates in *spelling* mode (``ST_SPELL``): every spelling of the multi-part turns, and each silver-wave state once,
by its smallest spelling (:func:`.movers._sort_legs`). The boards after the turns come from outcome rows
(:func:`.movers.outcome_rows`); :func:`.board.legal_turns`, the readable twin, gives the same answer (tested).
"""
from __future__ import annotations

import threading
from collections.abc import Mapping
from functools import cached_property, lru_cache

import numpy as np

from ...kernels.movegen import DROP, HAS_MID, PROMOTE, ST_STM
from ...kernels.movegen import perft as perft_kernel
from .board import RIGHT_WAVE, Board, follow_wave
from .movers import legal_moves, outcome_rows
from .pieces import square_name
from .position import pos_row, row_board, set_position
from .variant import (FANTASISTA, N_RIGHTS, OUT_RIGHTS, OUT_SIZE, RIGHT_CURTAIN, SP_MASK, SP_PLACE, SP_RIDER,
                      SP_TARGET, SP_TURN, ST_RIGHTS, ST_SPELL, ST_TRUNCATED, TURN_SQ, FxPosState, fx_tables,
                      new_pos)

#: Buffer sizes of a generation (moves and arena rows, outcome-set slots), from the first to the largest: a position
#: whose turns the first do not hold is generated again with the next. The first holds every one-part move (the
#: generator does not check the width: ``Variant.max_moves``). Past the last (262,144 spellings: a silver wave of
#: many silvers) the waves are not listed (``TurnTable.truncated``) but accepted when played.
LEVELS = ((FANTASISTA.max_moves, 1 << 15), (1 << 15, 1 << 17), (1 << 16, 1 << 19), (1 << 18, 1 << 21))


class TooManyTurns(RuntimeError):
    """A position with more turns than the largest buffers hold, waves aside: a clear error, not a silent cut."""


@lru_cache(maxsize=1 << 16)
def spell(code: int) -> str | None:
    """A one-part move (or a magic target) in the turn notation of ``docs/fantasista.md``; None for a multi-part
    turn (``SP_TURN``). Remembered: the same codes come back in position after position."""
    sp = code & SP_MASK
    if sp == SP_TURN:
        return None
    to, frm, mid = code & 0xFF, (code >> 8) & 0xFF, (code >> 18) & 0xFF
    if sp == SP_TARGET:
        return f"target:{square_name(to)}"
    plus = "+" if code & PROMOTE else ""
    if code & DROP:
        letter = FANTASISTA.pieces[frm - 1].letter
        if code & HAS_MID:  # breath, the sword silver's drop: dropped on to, captures on mid
            return f"{letter}*{square_name(to)}:x{square_name(mid)}"
        return f"{letter}*{square_name(to)}{plus}"
    rider = "rider:" if sp == SP_RIDER else ""
    if code & HAS_MID:
        if to == frm:  # the sword silver captures without moving
            return f"{square_name(frm)}:x{square_name(mid)}"
        # the spear pawn's double capture: through mid to to
        return f"{rider}{square_name(frm)}{square_name(mid)},{square_name(mid)}{square_name(to)}{plus}"
    return f"{rider}{square_name(frm)}{square_name(to)}{plus}"


def turn_text(row: np.ndarray) -> str:
    """The text of a multi-part turn from its arena row (``FxPosState.turns``: head, parts)."""
    n_parts, right = int(row[0]) & 0xFF, (int(row[0]) >> 8) - 1
    parts = [int(p) for p in row[1:1 + n_parts]]
    if right == RIGHT_CURTAIN:
        placed = [square_name(p & 0xFF) for p in parts if p & SP_MASK == SP_PLACE]
        moved = [spell(p) for p in parts if p & SP_MASK != SP_PLACE]
        return "curtain:" + ",".join(placed + moved)
    text = ",".join(spell(p) for p in parts)
    return "wave:" + text if right == RIGHT_WAVE else text


def turn_row(code: int) -> int:
    """The arena row (from its ply's first) of an ``SP_TURN`` move (``movers.turn_index`` for Python)."""
    return (code & 0xFF) + TURN_SQ * ((code >> 8) & 0xFF) + TURN_SQ * TURN_SQ * ((code >> 18) & 0xFF)


def canonical_rank(text: str) -> tuple[int, str]:
    """The order of a turn's spellings, the first of which is its canonical text: fewest parts, then string order."""
    return text.count(","), text


class _Generation:
    """One generation's answer: the legal moves (``codes``), the position's arrays behind them (read before the
    lister's next generation), and the wave right to put back in the outcomes of a generation without the waves
    (``wave_right``, -1: none was taken away)."""

    def __init__(self, P: FxPosState, codes: np.ndarray, wave_right: int) -> None:
        self.P, self.codes, self.wave_right = P, codes, wave_right

    @cached_property
    def texts(self) -> list[str]:
        """The moves' texts (a one-part move's spelling, a multi-part turn's parts)."""
        base, turns = int(self.P.turn_base[0]), self.P.turns
        return [spell(c) if c & SP_MASK != SP_TURN else turn_text(turns[base + turn_row(c)])
                for c in self.codes.tolist()]

    def outcomes(self, index=None) -> tuple[np.ndarray, np.ndarray]:
        """The outcome rows and keys of the moves (of ``self.codes[index]``), the wave right as the position has it."""
        codes = self.codes if index is None else self.codes[index]
        rows = np.empty((len(codes), OUT_SIZE), np.int8)
        keys = np.empty(len(codes), np.uint64)
        outcome_rows(self.P, fx_tables(), codes, len(codes), rows, keys)
        if self.wave_right >= 0:
            rows[:, OUT_RIGHTS + N_RIGHTS * int(self.P.st[ST_STM]) + RIGHT_WAVE] = self.wave_right
        return rows, keys


class _Lister:
    """A thread's position arrays and move buffer for the game layer's generations (grown a level at a time when a
    position's turns do not fit, :data:`LEVELS`)."""

    def __init__(self) -> None:
        self.level = -1
        self.grow()

    def grow(self) -> None:
        self.level += 1
        moves, slots = LEVELS[self.level]
        self.P = new_pos(capacity=8, arena_rows=moves, hash_slots=slots)
        self.out = np.zeros(moves, np.int32)

    def generate(self, bd: Board, spelling: bool, wave: bool = True, whole: bool = True) -> _Generation | None:
        """The legal moves of ``bd`` (every spelling when ``spelling``; without the silver wave unless ``wave``: the
        outcomes keep the wave right); None when they do not fit the largest buffers. Unless ``whole``, a generation
        that found a move is taken even if its buffers stopped it (the answer to "is there one?")."""
        kept = -1 if wave else bd.rights[bd.stm][RIGHT_WAVE]
        while True:
            P = self.P
            set_position(P, bd, move_number=2)  # no roll falls due on ply 2
            if not wave:
                P.st[ST_RIGHTS + N_RIGHTS * int(P.st[ST_STM]) + RIGHT_WAVE] = 0
            P.st[ST_SPELL] = int(spelling)
            n = legal_moves(P, fx_tables(), self.out)
            stopped = P.st[ST_TRUNCATED] or n == len(self.out)  # a full buffer may have stopped the generation
            if not stopped or (n > 0 and not whole):
                return _Generation(P, self.out[:n].copy(), kept)
            if self.level + 1 == len(LEVELS):
                return None
            self.grow()


#: One lister per thread: its arrays are overwritten by every generation, and the USI reader (``position``, ``d``)
#: and the search thread both generate turns at the same time.
_LOCAL = threading.local()


def lister() -> _Lister:
    """This thread's lister."""
    found = getattr(_LOCAL, "lister", None)
    if found is None:
        found = _LOCAL.lister = _Lister()
    return found


class TurnTable(Mapping):
    """``{canonical text: Board after}`` whose boards are built from the outcome rows on first access."""

    def __init__(self, names: list[str], rows: np.ndarray, stm: int, truncated: bool = False) -> None:
        self.names, self.rows, self.stm = names, rows, stm
        self.index = {t: i for i, t in enumerate(names)}
        self._boards: dict[int, Board] = {}
        #: True only when the waves are too many to list (:data:`LEVELS`): the table then holds the other turns; a
        #: wave is accepted when played (``FantasistaState.canonical``) and counted by the mate test.
        self.truncated = truncated

    def __getitem__(self, text: str) -> Board:
        i = self.index[text]
        b = self._boards.get(i)
        if b is None:
            b = self._boards[i] = row_board(self.rows[i], self.stm)
        return b

    def __iter__(self):
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)

    def __contains__(self, text) -> bool:
        return text in self.index


class _ByKey:
    """``{Board.key(): canonical text}``, built on first use (only a wave spelt in another order needs it)."""

    def __init__(self, table: TurnTable) -> None:
        self.table = table
        self._d: dict | None = None

    def get(self, key, default=None):
        if self._d is None:
            self._d = {self.table[t].key(): t for t in self.table.names}
        return self._d.get(key, default)

    def __getitem__(self, key):
        v = self.get(key)
        if v is None:
            raise KeyError(key)
        return v

    def __len__(self) -> int:
        return len(self.table)


def legal_turns(bd: Board) -> tuple[TurnTable, dict[str, str], _ByKey]:
    """Same answer as :func:`.board.legal_turns` (canonical texts, aliases, outcome keys), from the kernels."""
    gen = lister().generate(bd, True)
    truncated = gen is None
    if truncated:  # too many waves to list: the other turns (their rows keep the wave right)
        if not bd.rights[bd.stm][RIGHT_WAVE]:
            raise TooManyTurns("fantasista: more turns than can be listed in one position")
        gen = lister().generate(bd, True, wave=False)
        if gen is None:
            raise TooManyTurns("fantasista: more turns than can be listed in one position")
    rows, keys = gen.outcomes()
    texts, keys = gen.texts, keys.tolist()
    best: dict[int, int] = {}  # outcome key -> index of its canonical spelling
    for i, (text, key) in enumerate(zip(texts, keys)):
        j = best.get(key)
        if j is None or canonical_rank(text) < canonical_rank(texts[j]):
            best[key] = i
    order = sorted(best.values())
    names = [texts[i] for i in order]
    alias = {t: texts[best[k]] for t, k in zip(texts, keys) if texts[best[k]] != t}
    table = TurnTable(names, rows[order], 1 - bd.stm, truncated)
    return table, alias, _ByKey(table)


def find_turn(bd: Board, text: str) -> Board | None:
    """The board after the turn spelt ``text``, found without naming every turn. A silver wave is played part by part
    (:func:`.board.follow_wave`, any order); any other turn is looked for among the spellings generated without the
    waves (a wave right makes tens of thousands of turns; the other turns keep it). None when no spelling is
    ``text``: :meth:`.state.FantasistaState.canonical` then says why."""
    if text.startswith("wave:"):
        return follow_wave(bd, text)
    gen = lister().generate(bd, True, wave=False)
    if gen is None:
        raise TooManyTurns("fantasista: more turns than can be listed in one position")
    for i, t in enumerate(gen.texts):
        if t == text:
            rows, _ = gen.outcomes([i])
            return row_board(rows[0], 1 - bd.stm)
    return None


def turn_name(bd: Board, after: Board) -> str | None:
    """The canonical text of the turn of ``bd`` that leads to ``after`` (None if no legal turn does), found without
    naming every turn: the waves are generated only when the turn spends the wave right."""
    wave = after.rights[bd.stm][RIGHT_WAVE] != bd.rights[bd.stm][RIGHT_WAVE]
    gen = lister().generate(bd, True, wave=wave)
    if gen is None:
        return None
    rows, _ = gen.outcomes()
    target = board_row(after)
    hits = np.flatnonzero(np.all(rows == target, axis=1))
    return min((gen.texts[i] for i in hits), key=canonical_rank) if len(hits) else None


def board_row(bd: Board) -> np.ndarray:
    """The outcome row (:data:`.variant.OUT_BOARD` and the other ``OUT_*`` columns) of a board."""
    P = new_pos(capacity=2, arena_rows=1, hash_slots=1)
    set_position(P, bd)
    return pos_row(P)


def has_legal_turn(bd: Board) -> bool:
    """Whether the side to move of ``bd`` has a legal turn (the first buffer that finds one answers; they grow only
    while a silver wave has more positions than they hold and no turn is found): the mate test of a position whose
    turns are not listed."""
    gen = lister().generate(bd, False, whole=False)
    if gen is None:
        raise TooManyTurns("fantasista: a silver wave with more positions than can be searched in one turn")
    return len(gen.codes) > 0


def perft(bd: Board, depth: int) -> int:
    """Number of turn sequences ``depth`` turns deep (rolls not played), counted by the shared kernels
    (:func:`engine.kernels.movegen.perft`, the leaves bulk-counted)."""
    P = new_pos(capacity=depth + 8)
    set_position(P, bd, move_number=2)
    if depth + 2 > 15:
        raise ValueError("perft counts turns before the first roll: at most 13 plies deep")
    return int(perft_kernel(P, fx_tables(), depth, np.zeros((depth + 1, FANTASISTA.max_moves), np.int32)))
