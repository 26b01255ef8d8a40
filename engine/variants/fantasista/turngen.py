"""Python side of the fantasista kernels: conversion between :class:`.board.Board` and the kernel row, turn names,
buffers with retry on overflow, and :func:`legal_turns` (the kernel twin of :func:`.board.legal_turns`)."""
from __future__ import annotations

import re
import threading
from collections.abc import Mapping

import numpy as np

from . import kernels as FK
from .board import RIGHT_WAVE, Board, follow_wave
from .pieces import SPECIALS, parse_square, square_name

_TABLES: FK.FTables | None = None


def tables() -> FK.FTables:
    global _TABLES
    if _TABLES is None:
        _TABLES = FK.make_tables()
    return _TABLES


def key(st: np.ndarray) -> np.uint64:
    """The Zobrist key of kernel row ``st`` as the kernels take it. (``FK.zhash`` called from Python returns a Python
    int, which numba would type as int64 or uint64 depending on its value: two compiles of every kernel it reaches.)"""
    return np.uint64(FK.zhash(st, tables()))


def _wave_field(st: np.ndarray) -> int:
    """The index of the side to move's silver-wave right in kernel row ``st``."""
    return FK.ST_RIGHTS + 3 * int(st[FK.ST_STM]) + RIGHT_WAVE


def to_array(bd: Board, out: np.ndarray | None = None) -> np.ndarray:
    st = np.zeros(FK.S, np.int8) if out is None else out
    st[FK.ST_B:FK.ST_B + 81] = bd.b
    st[FK.ST_M:FK.ST_M + 81] = bd.m
    st[FK.ST_R:FK.ST_R + 81] = bd.r
    st[FK.ST_RM:FK.ST_RM + 81] = bd.rm
    for c in (0, 1):
        st[FK.ST_HAND + 21 * c:FK.ST_HAND + 21 * c + 21] = bd.hand[c]
        st[FK.ST_TH + 21 * c:FK.ST_TH + 21 * c + 21] = bd.th[c]
        st[FK.ST_RIGHTS + 3 * c:FK.ST_RIGHTS + 3 * c + 3] = bd.rights[c]
        st[FK.ST_EMBLEM + c] = int(bd.emblem[c])
        st[FK.ST_KSQ + c] = bd.king_square(c)
    st[FK.ST_STM] = bd.stm
    return st


def to_board(row: np.ndarray) -> Board:
    x = row.tolist()
    o = Board.__new__(Board)
    o.b, o.m, o.r, o.rm = x[0:81], x[81:162], x[162:243], x[243:324]
    o.hand = [x[324:345], x[345:366]]
    o.th = [x[366:387], x[387:408]]
    o.rights = [x[408:411], x[411:414]]
    o.emblem = [bool(x[414]), bool(x[415])]
    o.stm = x[416]
    return o


_DROP_LETTER = {1: "P", 2: "L", 3: "N", 4: "S", 5: "G", 6: "B", 7: "R",
                15: "D", 16: "O", 17: "Y", 18: "T", 19: "H", 20: "W"}


def _move_text(frm, end, via, flags) -> str:
    leg = square_name(frm) + square_name(via if via >= 0 else end)
    if via >= 0:
        leg += "," + square_name(via) + square_name(end)
    return ("rider:" if flags & 2 else "") + leg + ("+" if flags & 1 else "")


def desc_text(d) -> str:
    """The notation of a part descriptor row (see :mod:`.kernels`)."""
    d = [int(x) for x in d[:1 + 5 * int(d[0])]]
    text = ""
    after_marker = False
    for k in range(d[0]):
        kind, a, b, c, e = d[1 + 5 * k:6 + 5 * k]
        if kind == FK.PART_MOVE:
            s = _move_text(a, b, c, e)
        elif kind == FK.PART_DROP:
            s = _DROP_LETTER[a] + ("'" if c & 1 and a not in SPECIALS else "") + "*" + square_name(b)
            s += ("+" if c & 2 else "") + (":x" + square_name(e) if e >= 0 else "")
        elif kind == FK.PART_CIP:
            s = square_name(a) + ":x" + square_name(b)
        elif kind == FK.PART_CURTAIN:
            s = "curtain:" + ",".join(square_name(q) for q in (a, b) if q >= 0)
        else:
            s = "wave:"
        if k == 0 or after_marker:
            text += s
        else:
            text += "," + s
        after_marker = kind == FK.PART_WAVE
    return text


#: The most outcomes (and spellings / 4) one generator run keeps: past it the turns are generated part by part.
MAX_CAP = 1 << 14
#: The most parts a listing takes (each part runs the whole wave again): past 16 x 16,384 turns the waves are not
#: listed (``TurnTable.truncated``) but accepted when played, and a mate test still searches them.
MAX_PARTS = 16
#: The largest silver-wave seen-set (slots; half can be used: about 4 million wave positions, ~100 MB).
MAX_WAVE = 1 << 23


class TooManyTurns(RuntimeError):
    """A position whose silver waves pass :data:`MAX_WAVE` positions: a clear error instead of a silent cut."""


def grow_wave(G: FK.GenBuf, G2: FK.GenBuf) -> tuple[FK.GenBuf, FK.GenBuf]:
    """``G`` and ``G2`` with a silver-wave seen-set four times larger (after ``I_OVERFLOW`` = ``OVERFLOW_WAVE``:
    the wave left nothing out, it stopped); :class:`TooManyTurns` past :data:`MAX_WAVE`."""
    size = 4 * max(len(G.wkeys), len(G2.wkeys))
    if size > MAX_WAVE:
        raise TooManyTurns(f"fantasista: a silver wave with more than {MAX_WAVE // 2} positions in one turn")
    G3 = FK.make_genbuf(int(G.info[FK.I_CAP]), int(G.info[FK.I_SCAP]), size)
    G3.info[FK.I_PARTS], G3.info[FK.I_PART] = G.info[FK.I_PARTS], G.info[FK.I_PART]
    return G3, FK.make_genbuf(int(G2.info[FK.I_CAP]), 0, size)


class Generator:
    """Kernel buffers for one caller, grown when a position has more turns, spellings or silver-wave positions
    than they hold. A position with more than :data:`MAX_CAP` outcomes (a silver wave of many silvers: each silver
    moves or stays, up to a product of 6^k) is generated *part by part*: run ``p`` of ``P`` keeps the outcomes whose
    key falls in part ``p`` (:func:`.kernels.in_part`), so every turn is listed, none is dropped."""

    def __init__(self, cap: int = 1024, spell_cap: int = 4096) -> None:
        self.T = tables()
        self.G = FK.make_genbuf(cap, spell_cap)
        self.G2 = FK.make_genbuf(256)

    def run(self, st: np.ndarray, spell: bool, parts: int = 1, part: int = 0) -> int | None:
        """Generate the turns of ``st`` (only part ``part`` of ``parts``) into ``self.G``; their number, or None
        when they are more than :data:`MAX_CAP` (the caller splits them into more parts)."""
        h = key(st)
        try:
            while True:
                self.G.info[FK.I_PARTS], self.G.info[FK.I_PART] = parts, part
                n = FK.legal_turns_k(st, h, self.T, self.G, self.G2, int(spell))
                if n >= 0:
                    return n
                if self.G.info[FK.I_OVERFLOW] == FK.OVERFLOW_WAVE:
                    self.G, self.G2 = grow_wave(self.G, self.G2)
                    continue
                cap = int(self.G.info[FK.I_CAP])
                scap = int(self.G.info[FK.I_SCAP])
                if cap >= MAX_CAP:
                    return None
                self.G = FK.make_genbuf(cap * 2, scap * 2, len(self.G.wkeys))
        finally:
            self.G.info[FK.I_PARTS], self.G.info[FK.I_PART] = 1, 0


#: One generator per thread: its buffers are overwritten by every run, and the USI reader (``position``, ``d``) and
#: the search thread both generate turns at the same time.
_LOCAL = threading.local()


def generator() -> Generator:
    """This thread's generator."""
    gen = getattr(_LOCAL, "gen", None)
    if gen is None:
        gen = _LOCAL.gen = Generator()
    return gen


class TurnTable(Mapping):
    """``{canonical text: Board after}`` whose boards are built from the kernel rows on first access."""

    def __init__(self, names: list[str], rows: np.ndarray, keys: np.ndarray) -> None:
        self.names, self.rows, self.keys = names, rows, keys
        self.index = {t: i for i, t in enumerate(names)}
        self._boards: dict[int, Board] = {}
        self.parts = 1  # how many generator runs listed the turns (see Generator)

    #: True only when the waves are too many to list even part by part (:data:`MAX_PARTS`): the table then holds the
    #: other turns; a wave is accepted when played (``FantasistaState.canonical``) and counted by the mate test.
    truncated = False

    def __getitem__(self, text: str) -> Board:
        i = self.index[text]
        b = self._boards.get(i)
        if b is None:
            b = self._boards[i] = to_board(self.rows[i])
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
    """Same answer as :func:`.board.legal_turns` (canonical texts, aliases, outcome keys), from the kernels; part by
    part when the turns are more than one run holds (see :class:`Generator`)."""
    gen = generator()
    st = to_array(bd)
    wave = _wave_field(st)
    truncated = False
    try:
        parts, chunks = _listed(gen, st, MAX_PARTS)
    except TooManyTurns:
        parts, chunks = MAX_PARTS * 4, None
    if chunks is None:  # too many waves to list: the other turns, the wave right kept in their rows
        if st[wave] == 0:
            raise TooManyTurns("fantasista: more turns than can be listed in one position")
        saved, st2 = int(st[wave]), st.copy()
        st2[wave] = 0
        parts, chunks = _listed(gen, st2, MAX_PARTS)
        if chunks is None:
            raise TooManyTurns("fantasista: more turns than can be listed in one position")
        T = tables()
        for c in chunks:
            c[1][:, wave] = saved
            c[2][:] = [np.uint64(FK.zhash(r, T)) for r in c[1]]
        truncated = True
    names = [t for c in chunks for t in c[0]]
    rows = chunks[0][1] if len(chunks) == 1 else np.concatenate([c[1] for c in chunks])
    keys = chunks[0][2] if len(chunks) == 1 else np.concatenate([c[2] for c in chunks])
    table = TurnTable(names, rows, keys)
    table.parts, table.truncated = parts, truncated
    alias = {t: a for c in chunks for t, a in c[3].items()}
    return table, alias, _ByKey(table)


def _listed(gen: Generator, st: np.ndarray, max_parts: int) -> tuple[int, list | None]:
    """(parts, named chunks) of every turn of ``st``, in 1, 4, 16, ... parts; (parts, None) past ``max_parts``."""
    chunks, parts = [], 1
    for run_parts, n in _runs(gen, st, max_parts):
        if run_parts != parts:  # the turns did not fit in fewer parts: start again
            chunks, parts = [], run_parts
        chunks.append(_named(gen.G, n))
    return parts, (chunks if len(chunks) == parts else None)


#: Multiplier of the square-trail hash (FNV-1a's 64-bit prime): see :func:`square_trail`.
_TRAIL_MUL = 0x100000001B3
_U64 = (1 << 64) - 1
_SQUARE = re.compile(r"[1-9][a-i]")


def square_trail(desc: np.ndarray) -> np.ndarray:
    """For each spelling row of ``desc`` (``GenBuf.sp_desc``), a hash of the squares its text names, in the order
    :func:`desc_text` writes them: a text names the same squares as its row, so a token is looked for only among the
    few rows that share its trail (:func:`text_trail`) instead of writing out every spelling."""
    n = desc.shape[0]
    h = np.zeros(n, np.uint64)
    mul = np.uint64(_TRAIL_MUL)

    def add(rows: np.ndarray, squares: np.ndarray) -> None:
        h[rows] = h[rows] * mul + (squares[rows] + 1).astype(np.uint64)

    parts = desc[:, 0]
    for k in range(int(parts.max()) if n else 0):
        kind, a, b, c, e = (desc[:, 1 + 5 * k + j] for j in range(5))
        live = parts > k
        move, via = live & (kind == FK.PART_MOVE), c >= 0
        add(move, a)
        add(move, np.where(via, c, b))
        add(move & via, c)
        add(move & via, b)
        drop = live & (kind == FK.PART_DROP)
        add(drop, b)
        add(drop & (e >= 0), e)
        cip = live & (kind == FK.PART_CIP)
        add(cip, a)
        add(cip, b)
        curtain = live & (kind == FK.PART_CURTAIN)
        add(curtain & (a >= 0), a)
        add(curtain & (b >= 0), b)
    return h


def text_trail(text: str) -> int:
    """The :func:`square_trail` hash of the squares a turn text names."""
    h = 0
    for name in _SQUARE.findall(text):
        h = (h * _TRAIL_MUL + parse_square(name) + 1) & _U64
    return h


def _runs(gen: Generator, st: np.ndarray, max_parts: int = MAX_PARTS):
    """Spell-mode runs over every turn of ``st``, in 1, 4, 16, ... parts (:class:`Generator`): yields (parts, number
    of outcomes) after each run, ``gen.G`` holding that part; a split that does not fit is given up for the next, and
    past ``max_parts`` parts the runs stop."""
    parts = 1
    while parts <= max_parts:
        for part in range(parts):
            n = gen.run(st, True, parts, part)
            if n is None:
                break
            yield parts, n
        else:
            return
        parts *= 4


def find_turn(bd: Board, text: str) -> Board | None:
    """The board after the turn spelt ``text``, found without naming every turn. A silver wave is played part by part
    (:func:`.board.follow_wave`, any order); any other turn is looked for among the spellings whose squares are the
    text's, generated without the waves (a wave right makes tens of thousands of turns; the other turns keep it).
    None when no spelling is ``text``: :meth:`.state.FantasistaState.canonical` then says why."""
    if text.startswith("wave:"):
        return follow_wave(bd, text)
    gen = generator()
    st = to_array(bd)
    wave = _wave_field(st)
    kept, st[wave] = int(st[wave]), 0
    trail = np.uint64(text_trail(text))
    for _ in _runs(gen, st):
        G = gen.G
        ns = int(G.info[FK.I_NS])
        outcome = G.sp_out[:ns]
        for i in np.flatnonzero((square_trail(G.sp_desc[:ns]) == trail) & (outcome >= 0)):
            if desc_text(G.sp_desc[i]) == text:
                row = G.out[outcome[i]].copy()
                row[wave] = kept
                return to_board(row)
    return None


def turn_name(bd: Board, after: Board) -> str | None:
    """The canonical text of the turn of ``bd`` that leads to ``after`` (None if no listed turn does), found without
    naming every turn: only that outcome's spellings are written out, and the waves are generated only when the
    turn spends the wave right."""
    gen = generator()
    st = to_array(bd)
    target = to_array(after)[:FK.ST_KSQ]
    wave = _wave_field(st)
    if target[wave] == st[wave]:  # not a wave
        st[wave] = target[wave] = 0
    for _, n in _runs(gen, st):
        G = gen.G
        hit = np.flatnonzero(np.all(G.out[:n, :FK.ST_KSQ] == target, axis=1))
        if len(hit):
            ns = int(G.info[FK.I_NS])
            texts = {desc_text(G.sp_desc[i]) for i in np.flatnonzero(G.sp_out[:ns] == hit[0])}
            return min(texts, key=canonical_rank) if texts else None
    return None


def has_legal_turn(bd: Board) -> bool:
    """Whether the side to move of ``bd`` has a legal turn (stops at the first; waves included, their seen-set
    grown as needed): the mate test of a position whose waves are too many to list."""
    gen = generator()
    st = to_array(bd)
    h = key(st)
    while True:
        r = FK.has_legal_turn(st, h, gen.T, gen.G, gen.G2)
        if r >= 0:
            return r == 1
        gen.G, gen.G2 = grow_wave(gen.G, gen.G2)


def canonical_rank(text: str) -> tuple[int, str]:
    """The order of a turn's spellings, the first of which is its canonical text: fewest parts, then string order."""
    return text.count(","), text


def _named(G: FK.GenBuf, n: int) -> tuple[list[str], np.ndarray, np.ndarray, dict[str, str]]:
    """The canonical names, rows and keys of the ``n`` outcomes of a spell-mode run, and the other spellings."""
    ns = int(G.info[FK.I_NS])
    best: list = [None] * n
    spellings: dict[str, int] = {}
    sp_out = G.sp_out[:ns].tolist()
    for i in range(ns):
        text = desc_text(G.sp_desc[i])
        if text in spellings:
            continue
        o = sp_out[i]
        if o < 0:
            continue  # a pawn drop found to be uchifuzume
        spellings[text] = o
        rank = canonical_rank(text)
        if best[o] is None or rank < best[o]:
            best[o] = rank
    names = [b[1] for b in best]
    alias = {t: names[o] for t, o in spellings.items() if names[o] != t}
    return names, G.out[:n].copy(), G.oh[:n].copy(), alias


def perft(bd: Board, depth: int) -> int:
    """Number of turn sequences ``depth`` turns deep (rolls are not played), counted by the kernels: the last three
    plies in one kernel call (:func:`.kernels.perft3_k`; the leaves bulk-counted), the plies above in Python."""
    T = tables()
    bufs = [FK.make_genbuf(2048) for _ in range(max(depth, 3) + 1)]
    g2 = FK.make_genbuf(256)

    def rec(st, h, d):
        if d == 0:
            return 1
        if d == 1:
            n = FK.legal_turns_k(st, h, T, bufs[1], g2, 0)
        elif d == 2:
            n = FK.perft2_k(st, h, T, bufs[2], bufs[1], g2)
        elif d == 3:
            n = FK.perft3_k(st, h, T, bufs[3], bufs[2], bufs[1], g2)
        else:
            G = bufs[d]
            k = FK.legal_turns_k(st, h, T, G, g2, 0)
            if k < 0:
                raise RuntimeError("fantasista perft: buffer overflow")
            return sum(rec(G.out[i], G.oh[i], d - 1) for i in range(k))
        if n < 0:
            raise RuntimeError("fantasista perft: buffer overflow")
        return n

    st = to_array(bd)
    return rec(st, key(st), depth)
