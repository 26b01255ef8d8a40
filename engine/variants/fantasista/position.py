"""Fantasista's :class:`.board.Board` on the shared position arrays and back: :func:`to_pos` / :func:`set_position`
(the board loaded by a kernel, :func:`.movers.load_board`, which also computes the key), :func:`to_board`, and the
outcome rows the game layer's boards come from (:func:`pos_row`, :func:`row_board`)."""
from __future__ import annotations

import numpy as np

from ...geometry import SHOGI_GEOMETRY
from ...kernels.movegen import ST_PLY, ST_STM
from . import pieces as PC
from .board import Board
from .magic import RIGHT_EMBLEM
from .movers import load_board
from .variant import (HASH_SLOTS, MAX_RIGHT, N_RIGHTS, ORDINARY_OF, OUT_BOARD, OUT_HANDS, OUT_MARKS, OUT_RIDER_MARKS,
                      OUT_RIDERS, OUT_RIGHTS, OUT_SIZE, PENDING_CARRIER, PENDING_INVINCIBLE, PENDING_OF_PHASE,
                      ST_GENERATION, ST_MOVENO, ST_PENDING, ST_RIGHTS, ST_SEEN_LIMIT, ST_TABLE, TOKEN_OF, FxPosState,
                      fx_tables, new_pos, shared_kind)


def _kind_table() -> np.ndarray:
    """``[token mark, code & 31]`` -> the shared kind (:func:`shared_kind`), -1 where a code has no token kind."""
    table = np.zeros((2, 32), np.int8)
    for pt in range(32):
        table[0, pt] = pt
        table[1, pt] = pt if pt in PC.SPECIALS or pt == 0 else TOKEN_OF.get(pt, -1)
    return table


_KIND_TABLE = _kind_table()


def _kind_or_none(code: int, mark: int) -> int | None:
    """:func:`shared_kind`, or None where a code has no token kind."""
    try:
        return shared_kind(code, mark)
    except ValueError:
        return None


_HAND_KINDS = np.array(PC.HAND_ORDER)  # ordinary hand: Board index = shared kind
_TOKEN_HAND_CODES = np.array(PC.TOKEN_HAND_ORDER)  # token hand: Board index ...
_TOKEN_HAND_KINDS = np.array([shared_kind(pt, PC.TOKEN) for pt in PC.TOKEN_HAND_ORDER])  # ... and its shared kind


def to_pos(bd: Board, move_number: int = 1, phase: str = "move", pending: str = "",
           tables: tuple[int, int] = (-1, -1), capacity: int = 256, outcomes: int = 0) -> FxPosState:
    """The shared position of a :class:`.board.Board` (``phase``/``pending`` as in :class:`.state.FantasistaState`;
    ``tables``: each side's magic table id, -1 before the game). While a target is pending, the side to move is the
    roller (the board's side to move is the side whose turn comes next). ``outcomes``: the most outcomes a generation
    looks at (``ST_SEEN_LIMIT``, its set sized to hold them; 0: every one, in a set of :data:`HASH_SLOTS`)."""
    slots = HASH_SLOTS if outcomes <= 0 else 1 << (4 * outcomes // 3).bit_length()
    P = new_pos(capacity, hash_slots=min(slots, HASH_SLOTS))
    set_position(P, bd, move_number, phase, pending, tables)
    P.st[ST_SEEN_LIMIT] = max(outcomes, 0)
    return P


def set_position(P: FxPosState, bd: Board, move_number: int = 1, phase: str = "move", pending: str = "",
                 tables: tuple[int, int] = (-1, -1)) -> None:
    """Load a :class:`.board.Board` into the position arrays ``P`` (as :func:`to_pos` makes them), at ply 0; what
    a generation needs kept (its tag, ``ST_GENERATION``: the outcome set's slots carry old tags) stays."""
    if (phase, pending) not in PENDING_OF_PHASE:
        raise ValueError(f"unknown node {phase!r} {pending!r}")
    generation = P.st[ST_GENERATION]
    P.st[:] = 0
    P.st[ST_GENERATION] = generation
    P.turn_base[0] = P.turn_top[0] = 0
    for c in (0, 1):
        for i in range(3):
            if not 0 <= bd.rights[c][i] <= MAX_RIGHT:
                raise ValueError(f"a side holds 0-{MAX_RIGHT} uses of a right, not {bd.rights[c][i]}")
            P.st[ST_RIGHTS + N_RIGHTS * c + i] = bd.rights[c][i]
        P.st[ST_RIGHTS + N_RIGHTS * c + RIGHT_EMBLEM] = int(bd.emblem[c])
        P.st[ST_TABLE + c] = tables[c]
    # while a magic target is pending the roller (the side that just moved) decides: it is the side to move
    P.st[ST_STM] = 1 - bd.stm if pending else bd.stm
    P.st[ST_PLY] = 0
    P.st[ST_MOVENO] = move_number
    P.st[ST_PENDING] = PENDING_OF_PHASE[phase, pending]
    hands = np.zeros((2, 32), np.int64)
    hands[:, _HAND_KINDS] = np.array(bd.hand)[:, _HAND_KINDS]
    hands[:, _TOKEN_HAND_KINDS] = np.array(bd.th)[:, _TOKEN_HAND_CODES]
    bad = load_board(P, fx_tables(), np.array(bd.b + bd.m + bd.r + bd.rm, np.int64), hands, _KIND_TABLE)
    if bad >= 0:
        code = bd.b[bad] if _kind_or_none(bd.b[bad], bd.m[bad]) is None else bd.r[bad]
        raise ValueError(f"no token kind of {PC.LETTERS[code & 31]}")


def pos_row(P: FxPosState) -> np.ndarray:
    """The outcome row (``OUT_*`` columns) of the position ``P`` stands at, as ``movers.outcome_rows`` writes it."""
    n = SHOGI_GEOMETRY.n_squares
    row = np.zeros(OUT_SIZE, np.int8)
    for column, values in ((OUT_BOARD, P.board), (OUT_MARKS, P.marks), (OUT_RIDERS, P.riders),
                           (OUT_RIDER_MARKS, P.rider_marks)):
        row[column:column + n] = values
    row[OUT_HANDS:OUT_HANDS + P.hands.size] = P.hands.ravel()
    row[OUT_RIGHTS:OUT_RIGHTS + 2 * N_RIGHTS] = P.st[ST_RIGHTS:ST_RIGHTS + 2 * N_RIGHTS]
    return row


def to_board(P: FxPosState) -> Board:
    """The :class:`.board.Board` of a shared position (the inverse of :func:`to_pos`)."""
    stm = int(P.st[ST_STM]) ^ (1 if P.st[ST_PENDING] in (PENDING_INVINCIBLE, PENDING_CARRIER) else 0)
    return row_board(pos_row(P), stm)


def row_board(row: np.ndarray, stm: int) -> Board:
    """The :class:`.board.Board` of an outcome row (``OUT_*`` columns), ``stm`` to move."""
    n = SHOGI_GEOMETRY.n_squares
    lower, riders = row[OUT_BOARD:OUT_BOARD + n], row[OUT_RIDERS:OUT_RIDERS + n]
    bd = Board.__new__(Board)
    bd.b, bd.r = _BOARD_CODE[lower].tolist(), _BOARD_CODE[riders].tolist()
    bd.m = (_BOARD_MARK[lower] | row[OUT_MARKS:OUT_MARKS + n]).tolist()
    bd.rm = (_BOARD_MARK[riders] | row[OUT_RIDER_MARKS:OUT_RIDER_MARKS + n]).tolist()
    hands = row[OUT_HANDS:OUT_HANDS + 64].reshape(2, 32)
    bd.hand, bd.th = [[0] * 21, [0] * 21], [[0] * 21, [0] * 21]
    for c in (0, 1):
        for pt in PC.HAND_ORDER:
            bd.hand[c][pt] = int(hands[c, pt])
        for pt, kind in zip(PC.TOKEN_HAND_ORDER, _TOKEN_HAND_KINDS.tolist()):
            bd.th[c][pt] = int(hands[c, kind])
    rights = row[OUT_RIGHTS:OUT_RIGHTS + 2 * N_RIGHTS].reshape(2, N_RIGHTS).tolist()
    bd.rights = [rights[0][:3], rights[1][:3]]
    bd.emblem = [bool(rights[0][RIGHT_EMBLEM]), bool(rights[1][RIGHT_EMBLEM])]
    bd.stm = stm
    return bd


def _board_tables() -> tuple[np.ndarray, np.ndarray]:
    """Shared piece code (kind + 32 * colour) -> the :class:`.board.Board` code and its token mark (0 -> 0)."""
    code, mark = np.zeros(64, np.int64), np.zeros(64, np.int64)
    for c in range(1, 64):
        if c & 31:
            code[c] = ORDINARY_OF.get(c & 31, c & 31) | (c & 32)
            mark[c] = PC.TOKEN if (c & 31) in ORDINARY_OF or (c & 31) in PC.SPECIALS else 0
    return code, mark


_BOARD_CODE, _BOARD_MARK = _board_tables()
