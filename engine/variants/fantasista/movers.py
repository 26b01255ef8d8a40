"""Fantasista's own moves in the shared kernels: make/unmake of stacks, marks and multi-part turns, riders,
boarding, the special captures, and its whole generator (the shared one for the ordinary moves, then the rest).

These are the kernels behind :mod:`.hooks` (the shared generator calls them through its rule hooks for
:class:`.variant.FxTables` only). Move encoding: the shared one (:mod:`engine.kernels.movegen`) with the special
actions of :mod:`.variant` (``SP_BOARD``, ``SP_RIDER``, ``SP_PLACE``, ``SP_TURN``) in bits 27-30.
"""
from __future__ import annotations

import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from ...kernels import inner_kernel, kernel
from ...kernels.movegen import (DROP, GEN_ALL, GEN_CAPTURES, HAS_MID, PROMOTE, ST_KSQ, ST_PLY, ST_ROYALS, ST_STM,
                                _clear_piece,
                                _emit, _gen_board_moves, _set_piece, _take, _untake, gen_drops, generate_standard,
                                is_attacked)
from ...variant import P_WORD_STRIDE
from . import pieces as PC
from .magic import MAGIC_PERIOD
from ...variant import MAX_HAND
from .variant import (MARK_CARRIER, MARK_INVINCIBLE, MAX_RIGHT, N_RIGHTS, PENDING_CARRIER, PENDING_INVINCIBLE,
                      PENDING_NONE, PENDING_ROLL, PPT, PT, RIGHT_AWAKEN, RIGHT_CURTAIN, RIGHT_EMBLEM, RIGHT_WAVE,
                      SP_BOARD, SP_MASK, SP_PLACE, SP_RIDER, SP_TARGET, SP_TURN, ST_GENERATION, ST_MOVENO,
                      ST_PENDING, ST_RIDERS, ST_RIGHTS, ST_SEEN, ST_SEEN_LIMIT, ST_SPELL, ST_TABLE,
                      ST_TRUNCATED, TURN_SQ, OUT_BOARD, OUT_HANDS, OUT_MARKS, OUT_RIDER_MARKS, OUT_RIDERS,
                      OUT_RIGHTS)
from .variant import BT as BISHOP_TOKEN
from .variant import PBT as HORSE_TOKEN
from .variant import RT as ROOK_TOKEN
from .variant import ST as SILVER_TOKEN

PAWN, SILVER, ROOK, FIRE_DRAGON, SPEAR_PAWN, GALE_HORSE, SWORD_SILVER = PC.P, PC.S, PC.R, PC.D, PC.Y, PC.H, PC.W
TOKIN, BISHOP, HORSE = PC.PP, PC.B, PC.PB

# The xundo record of a move: the stacks captured on ``to`` and on the middle square (18 bits each: code | marks << 6 |
# rider << 9 | rider marks << 15), the mover's code, whether it boarded a carrier on ``to``.
X_TO_SHIFT, X_MID_SHIFT, X_MOVER_SHIFT = 0, 18, 36
X_STACK_MASK = (1 << 18) - 1
X_BOARDED = np.int64(1) << 42


@inner_kernel
def mark_key(T, marks, sq):
    """The Zobrist share of a lower piece's ``marks`` on ``sq``."""
    key = np.uint64(0)
    if marks & MARK_INVINCIBLE:
        key ^= T.zob_mark[0, sq]
    if marks & MARK_CARRIER:
        key ^= T.zob_mark[1, sq]
    return key


@inner_kernel
def rider_key(T, rider, rider_marks, sq):
    """The Zobrist share of a rider (and its invincible mark) on ``sq``."""
    key = T.zob_rider[rider, sq]
    if rider_marks & MARK_INVINCIBLE:
        key ^= T.zob_mark[2, sq]
    return key


@inner_kernel
def _capture_stack(P, T, c, sq, key):
    """Colour ``c`` captures what stands on ``sq`` (a stack whole); return (key, the xundo bits to restore it)."""
    tgt = P.board[sq]
    marks = P.marks[sq]
    rider = P.riders[sq]
    rider_marks = P.rider_marks[sq]
    key = _take(P, T, c, tgt, sq, key) ^ mark_key(T, marks, sq)
    P.marks[sq] = 0
    if rider != 0:
        hp = T.hand_type[rider]
        if hp != 0:
            n = P.hands[c, hp]
            key ^= T.zob_hand[c, hp, n] ^ T.zob_hand[c, hp, n + 1]
            P.hands[c, hp] = n + 1
        key ^= rider_key(T, rider, rider_marks, sq)
        P.riders[sq] = 0
        P.rider_marks[sq] = 0
        P.st[ST_RIDERS + 1 - c] -= 1
    rec = np.int64(tgt) | (np.int64(marks) << 6) | (np.int64(rider) << 9) | (np.int64(rider_marks) << 15)
    return key, rec


@inner_kernel
def _restore_stack(P, T, c, sq, rec):
    """Inverse of :func:`_capture_stack` (``rec`` = its bits)."""
    _untake(P, T, c, rec & 63, sq)
    P.marks[sq] = (rec >> 6) & 7
    rider = (rec >> 9) & 63
    if rider != 0:
        hp = T.hand_type[rider]
        if hp != 0:
            P.hands[c, hp] -= 1
        P.riders[sq] = rider
        P.rider_marks[sq] = (rec >> 15) & 7
        P.st[ST_RIDERS + 1 - c] += 1


@inner_kernel
def fx_apply(P, T, c, mv, key):
    """Play one part ``mv`` of colour ``c``'s turn on the board (the side to move, the ply and the history stay):
    a board move carries the piece's marks and rider along and captures a stack whole; a move onto an own empty
    carrier boards it; ``SP_RIDER`` moves the rider; a drop with PROMOTE is the emblem's; a drop with HAS_MID
    captures without moving (breath, sword silver); ``SP_PLACE`` puts a silver token from outside the game (the
    curtain). Return (the key updated, the record :func:`fx_unapply` needs)."""
    st = P.st
    to = mv & 0xFF
    frm = (mv >> 8) & 0xFF
    rec = np.int64(0)
    if (mv & SP_MASK) == SP_PLACE:
        code = frm + (c << 5)
        _set_piece(P, T, code, to)
        return key ^ T.zob_board[code, to], rec
    if mv & DROP:
        code = frm + (c << 5)
        n = P.hands[c, frm]
        key ^= T.zob_hand[c, frm, n] ^ T.zob_hand[c, frm, n - 1]
        P.hands[c, frm] = n - 1
        if mv & PROMOTE:
            code = T.promote_code[code]
        _set_piece(P, T, code, to)
        key ^= T.zob_board[code, to]
        if mv & HAS_MID:  # breath or the sword silver's drop: a capture without moving
            key, mid_rec = _capture_stack(P, T, c, (mv >> 18) & 0xFF, key)
            rec |= mid_rec << X_MID_SHIFT
        return key, rec
    rider = 0
    rider_marks = 0
    if (mv & SP_MASK) == SP_RIDER:
        code = P.riders[frm]
        marks = P.rider_marks[frm]
        key ^= rider_key(T, code, marks, frm)
        P.riders[frm] = 0
        P.rider_marks[frm] = 0
        st[ST_RIDERS + c] -= 1
    else:
        code = P.board[frm]
        marks = P.marks[frm]
        rider = P.riders[frm]
        rider_marks = P.rider_marks[frm]
        _clear_piece(P, T, code, frm)
        key ^= T.zob_board[code, frm] ^ mark_key(T, marks, frm)
        P.marks[frm] = 0
        if rider != 0:
            key ^= rider_key(T, rider, rider_marks, frm)
            P.riders[frm] = 0
            P.rider_marks[frm] = 0
    rec |= np.int64(code) << X_MOVER_SHIFT
    if mv & HAS_MID:  # the spear pawn's first capture, or the sword silver's capture in place (to == frm)
        key, mid_rec = _capture_stack(P, T, c, (mv >> 18) & 0xFF, key)
        rec |= mid_rec << X_MID_SHIFT
    placed = T.promote_code[code] if mv & PROMOTE else code
    tgt = P.board[to]
    if tgt != 0 and (tgt >> 5) == c:  # boarding an own empty carrier
        P.riders[to] = placed
        P.rider_marks[to] = marks & MARK_INVINCIBLE
        key ^= rider_key(T, placed, marks, to)
        st[ST_RIDERS + c] += 1
        rec |= X_BOARDED
    else:
        if tgt != 0:
            key, to_rec = _capture_stack(P, T, c, to, key)
            rec |= to_rec << X_TO_SHIFT
        _set_piece(P, T, placed, to)
        P.marks[to] = marks
        key ^= T.zob_board[placed, to] ^ mark_key(T, marks, to)
        if rider != 0:
            P.riders[to] = rider
            P.rider_marks[to] = rider_marks
            key ^= rider_key(T, rider, rider_marks, to)
        if T.royal[placed]:
            st[ST_KSQ + c] = to
    return key, rec


@inner_kernel
def fx_unapply(P, T, c, mv, rec):
    """Take back the part ``mv`` of colour ``c`` that :func:`fx_apply` played (``rec``: its record)."""
    st = P.st
    to = mv & 0xFF
    frm = (mv >> 8) & 0xFF
    if (mv & SP_MASK) == SP_PLACE:
        _clear_piece(P, T, P.board[to], to)
        return
    if mv & DROP:
        _clear_piece(P, T, P.board[to], to)
        P.hands[c, frm] += 1
        if mv & HAS_MID:
            _restore_stack(P, T, c, (mv >> 18) & 0xFF, (rec >> X_MID_SHIFT) & X_STACK_MASK)
        return
    mover = (rec >> X_MOVER_SHIFT) & 63
    rider = 0
    rider_marks = 0
    if rec & X_BOARDED:
        marks = P.rider_marks[to]
        P.riders[to] = 0
        P.rider_marks[to] = 0
        st[ST_RIDERS + c] -= 1
    else:
        marks = P.marks[to]
        rider = P.riders[to]
        rider_marks = P.rider_marks[to]
        _clear_piece(P, T, P.board[to], to)
        P.marks[to] = 0
        P.riders[to] = 0
        P.rider_marks[to] = 0
        if (rec >> X_TO_SHIFT) & 63:
            _restore_stack(P, T, c, to, (rec >> X_TO_SHIFT) & X_STACK_MASK)
    if (mv & SP_MASK) == SP_RIDER:
        P.riders[frm] = mover
        P.rider_marks[frm] = marks & MARK_INVINCIBLE
        st[ST_RIDERS + c] += 1
    else:
        _set_piece(P, T, mover, frm)
        P.marks[frm] = marks
        P.riders[frm] = rider
        P.rider_marks[frm] = rider_marks
        if T.royal[mover]:
            st[ST_KSQ + c] = frm
    if mv & HAS_MID:
        _restore_stack(P, T, c, (mv >> 18) & 0xFF, (rec >> X_MID_SHIFT) & X_STACK_MASK)


@inner_kernel
def turn_move(i):
    """The SP_TURN move of row ``i`` of its ply's turns (spelt in square fields: :data:`.variant.TURN_SQ`)."""
    return SP_TURN | (i % TURN_SQ) | ((i // TURN_SQ % TURN_SQ) << 8) | ((i // (TURN_SQ * TURN_SQ)) << 18)


@inner_kernel
def turn_index(mv):
    """The row (from its ply's first) of an SP_TURN move's turn."""
    return (mv & 0xFF) + TURN_SQ * ((mv >> 8) & 0xFF) + TURN_SQ * TURN_SQ * ((mv >> 18) & 0xFF)


@inner_kernel
def magic_due(ply):
    """Does a roll follow ply number ``ply`` (from 1)? After plies 15k and 15k + 1 (:func:`.magic.magic_after`)."""
    return ply >= MAGIC_PERIOD and (ply % MAGIC_PERIOD == 0 or ply % MAGIC_PERIOD == 1)


@inner_kernel
def rolls_done(P):
    """How many rolls the game has had at this node: one after each of plies 15k and 15k + 1 played, less the one
    still pending."""
    played = P.st[ST_MOVENO] - 1
    n = 2 * (played // MAGIC_PERIOD) - (1 if played >= MAGIC_PERIOD and played % MAGIC_PERIOD == 0 else 0)
    return n - (1 if P.st[ST_PENDING] == PENDING_ROLL else 0)


@inner_kernel
def rolls_horizon(P):
    """The rolls a search from this node anticipates are numbers [rolls_done, this): the coming pair (both sides'
    rolls after plies 15k and 15k + 1), or the second of it when the first is done."""
    n = rolls_done(P)
    return n + 2 if n % 2 == 0 else n + 1


@inner_kernel
def preview_roll(P, j):
    """Make roll number ``j`` (from 0) the chance event due here, for a static look at its results: its roller's
    table, the other side to move. Return what :func:`end_preview` restores."""
    st = P.st
    target = st[ST_PENDING] != PENDING_NONE and st[ST_PENDING] != PENDING_ROLL
    mover = 1 - st[ST_STM] if target else st[ST_STM]  # who plays ply ST_MOVENO
    ply = MAGIC_PERIOD * (j // 2 + 1) + j % 2  # the roll follows this ply
    roller = mover if (ply - st[ST_MOVENO]) % 2 == 0 else 1 - mover
    saved = st[ST_STM] + 2 * st[ST_PENDING]
    st[ST_STM] = 1 - roller
    st[ST_PENDING] = PENDING_ROLL
    return saved


@inner_kernel
def end_preview(P, saved):
    """Undo :func:`preview_roll`."""
    P.st[ST_STM] = saved % 2
    P.st[ST_PENDING] = saved // 2


@inner_kernel
def schedule_point(move_number):
    """Where the magic schedule stands before ply ``move_number``: the number itself up to 15, then the place in
    the 15-ply cycle (16 + (n - 16) % 15), so that positions equally far from the next roll share it."""
    first = MAGIC_PERIOD + 1
    return move_number if move_number < first else first + (move_number - first) % MAGIC_PERIOD


@inner_kernel
def tt_key(P, T, aply):
    """The transposition-table key at ``aply``: the position key (what repetition compares) with the schedule point
    and the pending node (a chance node, a magic target, a move) mixed in."""
    return P.keys[aply] ^ T.zob_sched[schedule_point(P.st[ST_MOVENO]), P.st[ST_PENDING]]


@inner_kernel
def _push(P, ply, mv):
    """Push ``mv`` (0: a roll) on the history at ``ply``: the next ply's turns start after this ply's."""
    P.moves[ply] = mv
    P.turn_base[ply + 1] = P.turn_top[ply]
    P.turn_top[ply + 1] = P.turn_top[ply]
    P.st[ST_PLY] = ply + 1


@inner_kernel
def _pass_turn(P, T, ply, key, pending):
    """The other side moves next (``key``: the position's key before the side changes), ``pending`` after it."""
    P.st[ST_PENDING] = pending
    P.st[ST_STM] = 1 - P.st[ST_STM]
    P.keys[ply + 1] = key ^ T.zob_side[0]


# ------------------------------------------------------------------ magic: rolls and targets
@inner_kernel
def chance_rows(P, T):
    """Distinct results of the roll due at this node (its roller's table); 0 when no roll is due."""
    if P.st[ST_PENDING] != PENDING_ROLL:
        return 0
    t = P.st[ST_TABLE + 1 - P.st[ST_STM]]
    return T.ch_n[t] if t >= 0 else 0


@inner_kernel
def chance_weight(P, T, r):
    """Faces of the d20 (of 20) that give result ``r`` of the roll due."""
    return T.ch_w[P.st[ST_TABLE + 1 - P.st[ST_STM]], r]


@inner_kernel
def _target_ok(P, T, c, pending, sq, rider):
    """May colour ``c`` put the mark of ``pending`` on its piece on ``sq`` (the rider there with ``rider``)?"""
    if rider:
        code = P.riders[sq]
        marks = P.rider_marks[sq]
    else:
        code = P.board[sq]
        marks = P.marks[sq]
    if code == 0 or (code >> 5) != c:
        return False
    kind = code & 31
    if pending == PENDING_INVINCIBLE:
        return (kind == PAWN or kind == TOKIN or kind == PT or kind == PPT) and (marks & MARK_INVINCIBLE) == 0
    return (not rider and (kind == BISHOP or kind == HORSE or kind == BISHOP_TOKEN or kind == HORSE_TOKEN)
            and (marks & MARK_CARRIER) == 0)


@inner_kernel
def gen_targets(P, T, out):
    """The SP_TARGET moves of the pending magic target: every square of the roller's eligible pieces (ayumi 3: its
    pawns and tokins, riders too, not yet invincible; yokaku 3: its bishops and horses not yet carriers)."""
    c = P.st[ST_STM]
    pending = P.st[ST_PENDING]
    n = 0
    for sq in range(P.board.shape[0]):
        if _target_ok(P, T, c, pending, sq, False) or _target_ok(P, T, c, pending, sq, True):
            out[n] = SP_TARGET | sq
            n += 1
    return n


@inner_kernel
def _do_target(P, T, mv):
    """The roller marks its piece on ``to``; the turn passes to the other side (the move number stays)."""
    st = P.st
    ply = st[ST_PLY]
    c = st[ST_STM]
    sq = mv & 0xFF
    key = P.keys[ply]
    if st[ST_PENDING] == PENDING_CARRIER:
        P.marks[sq] |= MARK_CARRIER
        key ^= T.zob_mark[1, sq]
        P.xundo[ply, 0] = 1
    elif _target_ok(P, T, c, PENDING_INVINCIBLE, sq, False):
        P.marks[sq] |= MARK_INVINCIBLE
        key ^= T.zob_mark[0, sq]
        P.xundo[ply, 0] = 0
    else:
        P.rider_marks[sq] |= MARK_INVINCIBLE
        key ^= T.zob_mark[2, sq]
        P.xundo[ply, 0] = 2
    _push(P, ply, mv)
    _pass_turn(P, T, ply, key, PENDING_NONE)


@inner_kernel
def _undo_target(P, mv):
    st = P.st
    ply = st[ST_PLY] - 1
    sq = mv & 0xFF
    which = P.xundo[ply, 0]
    if which == 1:
        P.marks[sq] &= ~MARK_CARRIER
    elif which == 0:
        P.marks[sq] &= ~MARK_INVINCIBLE
    else:
        P.rider_marks[sq] &= ~MARK_INVINCIBLE
    st[ST_STM] = 1 - st[ST_STM]
    st[ST_PLY] = ply


@inner_kernel
def do_roll(P, T, r):
    """Result ``r`` of the roll due: the side that just moved (the roller) receives its magic, as a pseudo-ply
    (``moves[ply] = 0``, which ends the repetition scan like a null move). A result that asks for a target with an
    eligible piece leaves that target pending and the roller to choose it (``st[ST_STM]`` = the roller); otherwise
    the other side moves next. Hand counts stop at MAX_HAND and rights at MAX_RIGHT (their Zobrist tables' size).

    ``xundo[ply]``: 0-3 the roller's rights before, 4 the number of hand kinds changed, 5.. (kind, count before)."""
    st = P.st
    ply = st[ST_PLY]
    c = 1 - st[ST_STM]
    t = st[ST_TABLE + c]
    key = P.keys[ply]
    x = P.xundo[ply]
    changed = 0
    for kind in range(32):
        d = T.ch_hand[t, r, kind]
        if d != 0:
            old = P.hands[c, kind]
            new = min(old + d, MAX_HAND)
            P.hands[c, kind] = new
            key ^= T.zob_hand[c, kind, old] ^ T.zob_hand[c, kind, new]
            x[5 + 2 * changed] = kind
            x[6 + 2 * changed] = old
            changed += 1
    x[4] = changed
    for i in range(N_RIGHTS):
        old = st[ST_RIGHTS + N_RIGHTS * c + i]
        x[i] = old
        d = T.ch_right[t, r, i]
        if d != 0:
            new = min(old + d, 1 if i == RIGHT_EMBLEM else MAX_RIGHT)
            st[ST_RIGHTS + N_RIGHTS * c + i] = new
            key ^= T.zob_right[c, i, old] ^ T.zob_right[c, i, new]
    _push(P, ply, 0)
    P.undo[ply] = st[ST_PENDING]
    st[ST_PENDING] = PENDING_NONE
    target = T.ch_target[t, r]
    if target != PENDING_NONE:
        for sq in range(P.board.shape[0]):
            if _target_ok(P, T, c, target, sq, False) or _target_ok(P, T, c, target, sq, True):
                st[ST_PENDING] = target
                st[ST_STM] = c
                key ^= T.zob_side[0]
                break
    P.keys[ply + 1] = key


@inner_kernel
def undo_roll(P, T):
    """Take back the roll pushed by :func:`do_roll`."""
    st = P.st
    ply = st[ST_PLY] - 1
    if st[ST_PENDING] != PENDING_NONE:  # a target was pending: the roller was to choose
        st[ST_STM] = 1 - st[ST_STM]
    st[ST_PENDING] = P.undo[ply]
    c = 1 - st[ST_STM]
    x = P.xundo[ply]
    for j in range(x[4]):
        P.hands[c, x[5 + 2 * j]] = x[6 + 2 * j]
    for i in range(N_RIGHTS):
        st[ST_RIGHTS + N_RIGHTS * c + i] = x[i]
    st[ST_PLY] = ply


@inner_kernel
def spend_right(P, T, c, right, key):
    """Colour ``c`` uses one of its ``right`` (an awakening, a curtain, a wave); return the key updated."""
    i = ST_RIGHTS + N_RIGHTS * c + right
    n = P.st[i]
    P.st[i] = n - 1
    return key ^ T.zob_right[c, right, n] ^ T.zob_right[c, right, n - 1]


@inner_kernel
def fx_do_move(P, T, mv):
    """Play ``mv`` (assumed legal) on a fantasista position and push it on the history arrays:
    :func:`engine.kernels.movegen.do_move` for :class:`.variant.FxTables`. A one-part move is a part of
    :func:`fx_apply`; ``SP_TURN`` plays the multi-part turn of this ply's turn arena row it names."""
    st = P.st
    c = st[ST_STM]
    ply = st[ST_PLY]
    key = P.keys[ply]
    P.undo[ply] = st[ST_PENDING]
    if (mv & SP_MASK) == SP_TARGET:
        _do_target(P, T, mv)
        return
    if (mv & SP_MASK) == SP_TURN:
        row = P.turn_base[ply] + turn_index(mv)
        head = P.turns[row, 0]
        right = (head >> 8) - 1
        if right >= 0:
            key = spend_right(P, T, c, right, key)
        for j in range(head & 0xFF):
            key, rec = fx_apply(P, T, c, P.turns[row, 1 + j], key)
            P.xundo[ply, j] = rec
    else:
        key, rec = fx_apply(P, T, c, mv, key)
        P.xundo[ply, 0] = rec
    _push(P, ply, mv)
    _pass_turn(P, T, ply, key, PENDING_ROLL if magic_due(st[ST_MOVENO]) else PENDING_NONE)
    st[ST_MOVENO] += 1


@inner_kernel
def fx_undo_move(P, T):
    """Take back the last move played with :func:`fx_do_move`."""
    st = P.st
    ply = st[ST_PLY] - 1
    c = 1 - st[ST_STM]
    mv = P.moves[ply]
    st[ST_PENDING] = P.undo[ply]
    if (mv & SP_MASK) == SP_TARGET:
        _undo_target(P, mv)
        return
    st[ST_MOVENO] -= 1
    if (mv & SP_MASK) == SP_TURN:
        row = P.turn_base[ply] + turn_index(mv)
        head = P.turns[row, 0]
        for j in range((head & 0xFF) - 1, -1, -1):
            fx_unapply(P, T, c, P.turns[row, 1 + j], P.xundo[ply, j])
        right = (head >> 8) - 1
        if right >= 0:
            P.st[ST_RIGHTS + N_RIGHTS * c + right] += 1
    else:
        fx_unapply(P, T, c, mv, P.xundo[ply, 0])
    st[ST_STM] = c
    st[ST_PLY] = ply


@inner_kernel
def emblem_drops(P, T, out, n, c, ksq, n_chk, chk_sq):
    """Append the emblem's drops: a pawn (token or not) dropped as a tokin on any empty square, nifu, the last rank
    and uchifuzume aside (``n_chk`` = 1: only between the king ``ksq`` and its checker ``chk_sq``)."""
    if P.st[ST_RIGHTS + N_RIGHTS * c + RIGHT_EMBLEM] == 0:
        return n
    stride = T.params[P_WORD_STRIDE]
    for pt in (PAWN, PT):
        if P.hands[c, pt] == 0:
            continue
        for w in range(P.bb.shape[1]):
            targets = T.board_bb[w] & ~(P.bb[64, w] | P.bb[65, w])
            if n_chk == 1:
                targets &= T.between_bb[ksq, chk_sq, w]
            while targets:
                to = w * stride + np.int64(trailing_zeros(targets))
                targets &= targets - np.uint64(1)
                out[n] = to | (pt << 8) | DROP | PROMOTE
                n += 1
    return n


@inner_kernel
def can_board(P, T, code, frm, to):
    """Whether the lower piece ``code`` on ``frm`` may board the own piece on ``to``: an empty carrier, the mover
    not a king and not itself a carrier."""
    return ((P.marks[to] & MARK_CARRIER) != 0 and P.riders[to] == 0 and not T.royal[code]
            and (P.marks[frm] & MARK_CARRIER) == 0)


@inner_kernel
def rider_pawns(P, T, c, w):
    """Word ``w`` of the bitboard of the squares where colour ``c`` has a pawn (token or not) riding (nifu)."""
    bits = np.uint64(0)
    if P.st[ST_RIDERS + c] == 0:
        return bits
    stride = T.params[P_WORD_STRIDE]
    pieces = P.bb[64 + c, w]
    while pieces:
        b = pieces & (~pieces + np.uint64(1))
        s = w * stride + np.int64(trailing_zeros(pieces))
        pieces ^= b
        rt = P.riders[s] & 31
        if rt == PAWN or rt == PT:
            bits |= b
    return bits


@inner_kernel
def rider_attacks(P, T, sq, by):
    """Whether a rider of colour ``by`` attacks ``sq`` (from its carrier's square)."""
    if P.st[ST_RIDERS + by] == 0:
        return False
    stride = T.params[P_WORD_STRIDE]
    L = T.rays.shape[2]
    for w in range(P.bb.shape[1]):
        pieces = P.bb[64 + by, w]
        while pieces:
            s = w * stride + np.int64(trailing_zeros(pieces))
            pieces &= pieces - np.uint64(1)
            rc = P.riders[s]
            if rc == 0 or s == sq:
                continue
            for j in range(T.leap_list.shape[1]):
                k = T.leap_list[rc, j]
                if k < 0:
                    break
                if T.leap_dest[s, k] == sq:
                    return True
            d = T.line_dir[s, sq]
            if d >= 0 and T.slide_range[rc, d] > 0:
                for i in range(L):
                    t = T.rays[s, d, i]
                    if t == sq:
                        if T.slide_range[rc, d] > i:
                            return True
                        break
                    if t < 0 or P.board[t] != 0:
                        break
    return False


@inner_kernel
def _gen_rider_moves(P, T, mode, out, n, c):
    """Append the moves of colour ``c``'s riders (``SP_RIDER``), pseudo-legal: a rider leaving its carrier opens no
    line, but the caller tests its own king. A rider may board another own empty carrier. (A riding spear pawn's
    double capture is one of the special captures.)"""
    stride = T.params[P_WORD_STRIDE]
    for w in range(P.bb.shape[1]):
        pieces = P.bb[64 + c, w]
        while pieces:
            frm = w * stride + np.int64(trailing_zeros(pieces))
            pieces &= pieces - np.uint64(1)
            if P.riders[frm] != 0:
                n = _piece_moves(P, T, mode, c, frm, True, out, n)
    return n


@inner_kernel
def capture_allowed(P, T, code, to, tgt):
    """Whether ``code`` may capture the enemy stack on ``to`` whose lower piece is ``tgt``: the immunities of
    ``FxTables.capture_ok``, and an invincible piece falls only to the king."""
    if (P.marks[to] & MARK_INVINCIBLE) != 0:
        return T.royal[code]
    return T.capture_ok[code, tgt]


@inner_kernel
def king_safe_after(P, T, c):
    """Whether colour ``c``'s king is not attacked (after ``c`` moved)."""
    ksq = P.st[ST_KSQ + c]
    return ksq < 0 or not is_attacked(P, T, ksq, 1 - c)


@inner_kernel
def _captures_in_place(P, T, out, n, c, code, sq, base):
    """Append ``base | target << 18 | HAS_MID`` for each enemy piece that ``code`` standing on ``sq`` attacks and may
    capture (breath, the sword silver: a capture without moving; never a king)."""
    board = P.board
    for j in range(T.leap_list.shape[1]):
        k = T.leap_list[code, j]
        if k < 0:
            break
        t = T.leap_dest[sq, k]
        if t >= 0:
            tgt = board[t]
            if tgt != 0 and (tgt >> 5) != c and capture_allowed(P, T, code, t, tgt):
                out[n] = base | (t << 18) | HAS_MID
                n += 1
    for j in range(9):
        d = T.slide_list[code, j]
        if d < 0:
            break
        reach = T.slide_range[code, d]
        for i in range(T.rays.shape[2]):
            t = T.rays[sq, d, i]
            if i >= reach or t < 0:
                break
            tgt = board[t]
            if tgt != 0:
                if (tgt >> 5) != c and capture_allowed(P, T, code, t, tgt):
                    out[n] = base | (t << 18) | HAS_MID
                    n += 1
                break
    return n


@inner_kernel
def _spear_captures(P, T, mode, out, n, c, code, frm, extra):
    """Append the spear pawn ``code``'s double captures from ``frm``: its capture straight ahead, then one more step
    onto the next square's capturable enemy (``extra``: SP_RIDER for a riding spear pawn)."""
    board = P.board
    d = T.slide_list[code, 0]  # its one direction, straight ahead
    for i in range(T.rays.shape[2]):
        via = T.rays[frm, d, i]
        if via < 0:
            return n
        tgt = board[via]
        if tgt != 0:
            if (tgt >> 5) == c or not capture_allowed(P, T, code, via, tgt):
                return n
            to = T.rays[via, d, 0]
            if to >= 0:
                t2 = board[to]
                if t2 != 0 and (t2 >> 5) != c and capture_allowed(P, T, code, to, t2):
                    n = _emit(out, n, T, mode, c, code, frm, to, t2, extra | (via << 18) | HAS_MID)
            return n
    return n


@inner_kernel
def _gen_capture_specials(P, T, mode, out, n, c):
    """Append colour ``c``'s special captures, pseudo-legal: breath and the sword silver's drop-and-capture, the
    sword silver's capture in place, the spear pawn's double capture (its riders' too)."""
    for kind in (FIRE_DRAGON, SWORD_SILVER):
        if P.hands[c, kind] == 0:
            continue
        code = kind + (c << 5)
        stride = T.params[P_WORD_STRIDE]
        for w in range(P.bb.shape[1]):
            empty = T.board_bb[w] & ~(P.bb[64, w] | P.bb[65, w]) & T.drop_bb[c, kind, w]
            while empty:
                to = w * stride + np.int64(trailing_zeros(empty))
                empty &= empty - np.uint64(1)
                n = _captures_in_place(P, T, out, n, c, code, to, to | (kind << 8) | DROP)
    stride = T.params[P_WORD_STRIDE]
    for w in range(P.bb.shape[1]):
        pieces = P.bb[64 + c, w]
        while pieces:
            frm = w * stride + np.int64(trailing_zeros(pieces))
            pieces &= pieces - np.uint64(1)
            code = P.board[frm]
            kind = code & 31
            if kind == SWORD_SILVER:
                n = _captures_in_place(P, T, out, n, c, code, frm, frm | (frm << 8))
            elif kind == SPEAR_PAWN:
                n = _spear_captures(P, T, mode, out, n, c, code, frm, 0)
            if (P.riders[frm] & 31) == SPEAR_PAWN:
                n = _spear_captures(P, T, mode, out, n, c, P.riders[frm], frm, SP_RIDER)
    return n


@inner_kernel
def _keep_legal(P, T, out, start, n, c):
    """Keep the moves of ``out[start:n]`` that leave colour ``c``'s king unattacked (tried on the board); return the
    new length."""
    kept = start
    for i in range(start, n):
        mv = out[i]
        fx_do_move(P, T, mv)
        ok = king_safe_after(P, T, c)
        fx_undo_move(P, T)
        if ok:
            out[kept] = mv
            kept += 1
    return kept


@inner_kernel
def fx_generate(P, T, mode, out):
    """Legal moves of the side to move: :func:`engine.kernels.movegen.generate` for :class:`.variant.FxTables`.

    Without riders the shared generator makes the ordinary moves and drops; where riders stand every candidate is
    tried on the board (a stack's two pieces attack, check and pin from one square, which the shared masks do not
    describe). The special captures are tried on the board too (a capture without moving can open a line). The
    multi-part turns come last (not in GEN_CAPTURES): :func:`gen_turns`."""
    c = P.st[ST_STM]
    ply = P.st[ST_PLY]
    P.turn_top[ply] = P.turn_base[ply]
    if P.st[ST_PENDING] == PENDING_INVINCIBLE or P.st[ST_PENDING] == PENDING_CARRIER:
        return gen_targets(P, T, out)
    if P.st[ST_RIDERS] + P.st[ST_RIDERS + 1] == 0:
        start = generate_standard(P, T, mode, out)
        n = start
    else:
        start = 0
        n = _gen_board_moves(P, T, mode, out, 0, c, -1, 0, -1, 0)
        n = _gen_rider_moves(P, T, mode, out, n, c)
        if mode != GEN_CAPTURES:
            n = gen_drops(P, T, mode, out, n, c, -1, 0, -1)
    n = _gen_capture_specials(P, T, mode, out, n, c)
    n = _keep_legal(P, T, out, start, n, c)
    if mode != GEN_CAPTURES:
        n = gen_turns(P, T, out, n, c, out.shape[0], P.turn_work[0])
    return n


@inner_kernel
def fx_pawn_drop_mates(P, T, c, pt, to, out):
    """Uchifuzume for fantasista: whether the enemy has no legal reply after colour ``c`` drops a pawn of kind
    ``pt`` on ``to`` (a plain drop never answers a pawn's adjacent check: the replies are board and rider moves, the
    special captures and the multi-part turns)."""
    fx_do_move(P, T, to | (pt << 8) | DROP)
    e = 1 - c
    n = _gen_board_moves(P, T, GEN_ALL, out, 0, e, -1, 0, -1, 1)
    n = _gen_rider_moves(P, T, GEN_ALL, out, n, e)
    n = _gen_capture_specials(P, T, GEN_ALL, out, n, e)
    mated = True
    for i in range(n):
        fx_do_move(P, T, out[i])
        ok = king_safe_after(P, T, e)
        fx_undo_move(P, T)
        if ok:
            mated = False
            break
    if mated:  # a right may answer (the curtain's silver takes the pawn, the awakened rook reaches it)
        ply = P.st[ST_PLY]
        P.turn_top[ply] = P.turn_base[ply]
        mated = gen_turns(P, T, out, 0, e, 1, P.turn_work[1]) == 0
    fx_undo_move(P, T)
    return mated


# ------------------------------------------------------------------ multi-part turns
# Columns of a turn_work row: the turn's parts, the wave's silvers, candidate first and second parts, wave parts by
# depth (WAVE_LEGS per depth).
W_PARTS, W_SILVERS, W_FIRST, W_SECOND, W_WAVE = 0, 16, 32, 96, 160
WAVE_LEGS = 16
WAVE_SALT = np.uint64(0x9E3779B97F4A7C15)


@inner_kernel
def _seen_add(P, key):
    """Add ``key`` to this generation's set; return whether it was new. A set 3/4 full, or holding its budget
    (``ST_SEEN_LIMIT``), takes no more (the generation is marked truncated)."""
    tag = P.st[ST_GENERATION]
    mask = P.seen_keys.shape[0] - 1
    i = np.int64(key & np.uint64(mask))
    while P.seen_tags[i] == tag:
        if P.seen_keys[i] == key:
            return False
        i = (i + 1) & mask
    cap = 3 * P.seen_keys.shape[0] // 4
    if 0 < P.st[ST_SEEN_LIMIT] < cap:
        cap = P.st[ST_SEEN_LIMIT]
    if P.st[ST_SEEN] >= cap:
        P.st[ST_TRUNCATED] = 1
        return False
    P.st[ST_SEEN] += 1
    P.seen_tags[i] = tag
    P.seen_keys[i] = key
    return True


@inner_kernel
def _part_target(P, T, mode, out, n, c, code, frm, to, extra, may_board):
    """Append the move(s) of ``code`` from ``frm`` to ``to`` (the promotion choices of ``mode``) if the rules allow
    one: onto an empty square, an own empty carrier (``may_board``) or a capturable enemy."""
    tgt = P.board[to]
    if tgt == 0:
        if mode == GEN_CAPTURES:
            return n
        return _emit(out, n, T, mode, c, code, frm, to, 0, extra)
    if (tgt >> 5) == c:
        if may_board and mode != GEN_CAPTURES and (P.marks[to] & MARK_CARRIER) != 0 and P.riders[to] == 0:
            return _emit(out, n, T, mode, c, code, frm, to, 0, extra if extra != 0 else SP_BOARD)
        return n
    if capture_allowed(P, T, code, to, tgt):
        return _emit(out, n, T, mode, c, code, frm, to, tgt, extra)
    return n


@inner_kernel
def _piece_moves(P, T, mode, c, frm, rider, out, n):
    """Append the moves of colour ``c``'s piece on ``frm`` (``rider``: the rider standing there), pseudo-legal:
    moves and captures (immunities; never a king), boarding an own empty carrier, a carrier carrying its rider."""
    code = P.riders[frm] if rider else P.board[frm]
    extra = SP_RIDER if rider else 0
    may_board = rider or ((P.marks[frm] & MARK_CARRIER) == 0 and not T.royal[code])
    for j in range(T.leap_list.shape[1]):
        k = T.leap_list[code, j]
        if k < 0:
            break
        to = T.leap_dest[frm, k]
        if to >= 0:
            n = _part_target(P, T, mode, out, n, c, code, frm, to, extra, may_board)
    for j in range(9):
        d = T.slide_list[code, j]
        if d < 0:
            break
        reach = T.slide_range[code, d]
        for i in range(T.rays.shape[2]):
            to = T.rays[frm, d, i]
            if i >= reach or to < 0:
                break
            n = _part_target(P, T, mode, out, n, c, code, frm, to, extra, may_board)
            if P.board[to] != 0:
                break
    return n


@inner_kernel
def piece_parts(P, T, c, frm, rider, out, n):
    """Append every move of colour ``c``'s piece on ``frm`` (``rider``: the rider standing there) as a part of a
    turn, every promotion choice: :func:`_piece_moves` and the spear pawn's double capture."""
    n = _piece_moves(P, T, GEN_ALL, c, frm, rider, out, n)
    code = P.riders[frm] if rider else P.board[frm]
    if (code & 31) == SPEAR_PAWN:
        n = _spear_captures(P, T, GEN_ALL, out, n, c, code, frm, SP_RIDER if rider else 0)
    return n


@inner_kernel
def _emit_turn(P, T, c, work, n_parts, right, key, out, n):
    """The parts ``work[0:n_parts]`` have been played (``key``: the key after them, the right not yet spent): append
    the turn if it is legal (own king safe, no pass in disguise) and its outcome new (any outcome when spelling:
    ``ST_SPELL``). Return the new length; when
    the buffer or the arena is full, set ST_TRUNCATED instead."""
    ply = P.st[ST_PLY]
    if not king_safe_after(P, T, c):
        return n
    if key == P.keys[ply] and not (right == RIGHT_CURTAIN and n_parts == 0):
        return n  # the position as it was: a pass in disguise (the only pass is the curtain with no free square)
    outcome = key
    if right >= 0:
        i = P.st[ST_RIGHTS + N_RIGHTS * c + right]
        outcome ^= T.zob_right[c, right, i] ^ T.zob_right[c, right, i - 1]
    if P.st[ST_SPELL] == 0 and not _seen_add(P, outcome):
        return n
    row = P.turn_top[ply]
    if n >= out.shape[0] or row >= P.turns.shape[0]:
        P.st[ST_TRUNCATED] = 1
        return n
    P.turns[row, 0] = n_parts | ((right + 1) << 8)
    for j in range(n_parts):
        P.turns[row, 1 + j] = work[W_PARTS + j]
    P.turn_top[ply] = row + 1
    out[n] = turn_move(row - P.turn_base[ply])
    return n + 1


@inner_kernel
def _stop(P, n, limit):
    return n >= limit or P.st[ST_TRUNCATED] != 0


@inner_kernel
def _gale_singles_seen(P, T, c, work, frm, rider, key):
    """Put the outcomes of the gale horse's single moves in this generation's set: a second move that ends where one
    move could, having captured nothing on the way, is that move (spelt without a comma)."""
    n1 = piece_parts(P, T, c, frm, rider, work[W_FIRST:W_SECOND], 0)
    for a in range(n1):
        k, r = fx_apply(P, T, c, work[W_FIRST + a], key)
        _seen_add(P, k)
        fx_unapply(P, T, c, work[W_FIRST + a], r)


@inner_kernel
def _two_leg_turns(P, T, c, work, frm, rider, kind, right, key, out, n, limit):
    """Turns of two parts of one piece, or of a carrier and then its rider: the gale horse (a first move of 4+
    squares), the awakened rook (``right``), the carrier carrying its rider (then the rider's own move)."""
    n1 = piece_parts(P, T, c, frm, rider, work[W_FIRST:W_SECOND], 0)
    for a in range(n1):
        p1 = work[W_FIRST + a]
        to = p1 & 0xFF
        if kind == GALE_HORSE:
            df = abs(to // 9 - frm // 9)
            dr = abs(to % 9 - frm % 9)
            if max(df, dr) < 4:
                continue
        boards = P.board[to] != 0 and (P.board[to] >> 5) == c
        k1, r1 = fx_apply(P, T, c, p1, key)
        work[W_PARTS] = p1
        if kind == -1:  # the carrier moved with its rider: the rider may move
            n2 = piece_parts(P, T, c, to, True, work[W_SECOND:W_WAVE], 0)
        else:  # the same piece again, from where it stands (riding if it boarded)
            n2 = piece_parts(P, T, c, to, boards, work[W_SECOND:W_WAVE], 0)
        for b in range(n2):
            p2 = work[W_SECOND + b]
            k2, r2 = fx_apply(P, T, c, p2, k1)
            work[W_PARTS + 1] = p2
            n = _emit_turn(P, T, c, work, 2, right, k2, out, n)
            fx_unapply(P, T, c, p2, r2)
            if _stop(P, n, limit):
                break
        fx_unapply(P, T, c, p1, r1)
        if _stop(P, n, limit):
            break
    return n


@inner_kernel
def _curtain_turns(P, T, c, work, key, out, n, limit):
    """The silver curtain: silver tokens on min(2, free) of the squares around the own king, then optionally one
    move of one of them (with no free square, the turn passes)."""
    ksq = P.st[ST_KSQ + c]
    if ksq < 0:
        return n
    free = work[W_FIRST:W_SECOND]
    n_free = 0
    for s in range(P.board.shape[0]):  # in square order, as the notation lists them
        if P.board[s] == 0 and T.line_dir[ksq, s] >= 0 and T.rays[ksq, T.line_dir[ksq, s], 0] == s:
            free[n_free] = s
            n_free += 1
    if n_free == 0:
        return _emit_turn(P, T, c, work, 0, RIGHT_CURTAIN, key, out, n)
    placed = min(2, n_free)
    for a in range(n_free):
        for b in range(a + 1, n_free if placed == 2 else a + 2):  # the pairs; with one free square, it alone
            k = key
            for j in range(placed):
                s = free[a] if j == 0 else free[b]
                work[W_PARTS + j] = s | (SILVER_TOKEN << 8) | DROP | SP_PLACE
                k, _ = fx_apply(P, T, c, work[W_PARTS + j], k)
            n = _emit_turn(P, T, c, work, placed, RIGHT_CURTAIN, k, out, n)
            for j in range(placed):
                if _stop(P, n, limit):
                    break
                s = work[W_PARTS + j] & 0xFF
                n2 = piece_parts(P, T, c, s, False, work[W_SECOND:W_WAVE], 0)
                for m in range(n2):
                    p2 = work[W_SECOND + m]
                    k2, r2 = fx_apply(P, T, c, p2, k)
                    work[W_PARTS + placed] = p2
                    n = _emit_turn(P, T, c, work, placed + 1, RIGHT_CURTAIN, k2, out, n)
                    fx_unapply(P, T, c, p2, r2)
                    if _stop(P, n, limit):
                        break
            for j in range(placed - 1, -1, -1):
                fx_unapply(P, T, c, work[W_PARTS + j], np.int64(0))
            if _stop(P, n, limit):
                return n
    return n


@inner_kernel
def _sort_legs(legs, n):
    """Sort one silver's moves ``legs[:n]`` by their text (destination square, then the promotion): with the
    silvers in the order of their squares, the first path to each wave state is then its smallest spelling."""
    for a in range(1, n):
        mv = legs[a]
        rank = 2 * (mv & 0xFF) + (1 if mv & PROMOTE else 0)
        b = a - 1
        while b >= 0 and 2 * (legs[b] & 0xFF) + (1 if legs[b] & PROMOTE else 0) > rank:
            legs[b + 1] = legs[b]
            b -= 1
        legs[b + 1] = mv


@inner_kernel
def _wave(P, T, c, work, n_silvers, done, depth, key, out, n, limit):
    """The silver wave from a state where the silvers in ``done`` have moved (``depth`` parts so far): each other
    silver may move next. States reached in another order are searched once (when spelling, ``ST_SPELL``, by the
    first and smallest spelling: the legs in text order)."""
    legs = work[W_WAVE + depth * WAVE_LEGS:W_WAVE + (depth + 1) * WAVE_LEGS]
    for i in range(n_silvers):
        if (done >> i) & 1:
            continue
        s = work[W_SILVERS + i]
        n_legs = piece_parts(P, T, c, s & 0xFF, s >> 8 != 0, legs, 0)
        if P.st[ST_SPELL] != 0:
            _sort_legs(legs, n_legs)
        for a in range(n_legs):
            p = legs[a]
            k, r = fx_apply(P, T, c, p, key)
            d2 = done | (1 << i)
            if _seen_add(P, k ^ (np.uint64(d2) * WAVE_SALT)):
                work[W_PARTS + depth] = p
                n = _emit_turn(P, T, c, work, depth + 1, RIGHT_WAVE, k, out, n)
                if not _stop(P, n, limit) and depth + 1 < n_silvers:
                    n = _wave(P, T, c, work, n_silvers, d2, depth + 1, k, out, n, limit)
            fx_unapply(P, T, c, p, r)
            if _stop(P, n, limit):
                return n
    return n


@inner_kernel
def gen_turns(P, T, out, n, c, limit, work):
    """Append colour ``c``'s legal multi-part turns to ``out[n:]`` as ``SP_TURN`` moves whose parts go to this
    ply's rows of the turn arena, at most ``limit`` moves in ``out`` in all: the gale horse's second move, the rook
    awakening, a carrier's rider moving after it, the silver curtain and the silver wave. Turns with the same outcome
    are one (the first found is kept), unless ``ST_SPELL``: then every spelling is listed (a wave's states reached
    in another order still once). Return the new length."""
    if P.st[ST_GENERATION] >= 0x7FFFFFFF:  # the int32 tags wrap: start the tags again
        P.seen_tags[:] = 0
        P.st[ST_GENERATION] = 0
    P.st[ST_GENERATION] += 1
    P.st[ST_SEEN] = 0
    P.st[ST_TRUNCATED] = 0
    ply = P.st[ST_PLY]
    key = P.keys[ply]
    awaken = P.st[ST_RIGHTS + N_RIGHTS * c + RIGHT_AWAKEN] > 0
    stride = T.params[P_WORD_STRIDE]
    for w in range(P.bb.shape[1]):
        pieces = P.bb[64 + c, w]
        while pieces:
            frm = w * stride + np.int64(trailing_zeros(pieces))
            pieces &= pieces - np.uint64(1)
            for layer in range(2):
                rider = layer == 1
                if rider and P.riders[frm] == 0:
                    continue
                code = P.riders[frm] if rider else P.board[frm]
                kind = code & 31
                if not rider and P.riders[frm] != 0:
                    n = _two_leg_turns(P, T, c, work, frm, False, -1, -1, key, out, n, limit)
                elif kind == GALE_HORSE:
                    if P.st[ST_SPELL] == 0:  # spelling: these turns are listed, named by their single moves
                        _gale_singles_seen(P, T, c, work, frm, rider, key)
                    n = _two_leg_turns(P, T, c, work, frm, rider, kind, -1, key, out, n, limit)
                if awaken and (kind == ROOK or kind == ROOK_TOKEN) and not _stop(P, n, limit):
                    n = _two_leg_turns(P, T, c, work, frm, rider, kind, RIGHT_AWAKEN, key, out, n, limit)
                if _stop(P, n, limit):
                    return n
    if P.st[ST_RIGHTS + N_RIGHTS * c + RIGHT_CURTAIN] > 0:
        n = _curtain_turns(P, T, c, work, key, out, n, limit)
        if _stop(P, n, limit):
            return n
    if P.st[ST_RIGHTS + N_RIGHTS * c + RIGHT_WAVE] > 0:
        n_silvers = 0
        passes = 2 if P.st[ST_SPELL] != 0 else 1  # spelling: the silvers in text order, riders ("rider:") last
        for p in range(passes):
            for s in range(P.board.shape[0]):
                for layer in range(2):
                    if passes == 2 and layer != p:
                        continue
                    code = P.riders[s] if layer else P.board[s]
                    if code != 0 and (code >> 5) == c and ((code & 31) == SILVER or (code & 31) == SILVER_TOKEN):
                        if n_silvers < W_FIRST - W_SILVERS:
                            work[W_SILVERS + n_silvers] = s | (layer << 8)
                            n_silvers += 1
        if n_silvers > 0:
            n = _wave(P, T, c, work, n_silvers, 0, 0, key, out, n, limit)
    return n


@kernel
def legal_moves(P, T, out):
    """Every legal move of the side to move (:func:`fx_generate` in GEN_ALL) for a Python caller: the game layer and
    the tests (``out`` as long as the turns may be many: a silver wave has tens of thousands)."""
    return fx_generate(P, T, GEN_ALL, out)



@kernel
def outcome_rows(P, T, moves, n, rows, keys):
    """For each of the legal ``moves[:n]`` just generated: play it, copy the position after it into ``rows[i]``
    (:data:`.variant.OUT_BOARD` and the other ``OUT_*`` columns) and its key into ``keys[i]``, take it back. The game layer's boards come from these rows."""
    ply = P.st[ST_PLY]
    for i in range(n):
        fx_do_move(P, T, moves[i])
        row = rows[i]
        for sq in range(81):
            row[OUT_BOARD + sq] = P.board[sq]
            row[OUT_MARKS + sq] = P.marks[sq]
            row[OUT_RIDERS + sq] = P.riders[sq]
            row[OUT_RIDER_MARKS + sq] = P.rider_marks[sq]
        for c in range(2):
            for k in range(32):
                row[OUT_HANDS + 32 * c + k] = P.hands[c, k]
            for r in range(N_RIGHTS):
                row[OUT_RIGHTS + N_RIGHTS * c + r] = P.st[ST_RIGHTS + N_RIGHTS * c + r]
        keys[i] = P.keys[ply + 1]
        fx_undo_move(P, T)


@kernel
def load_board(P, T, cells, hands, kind_of):
    """Put a :class:`.board.Board` on the position arrays ``P`` whose ``st`` is set (side, rights): ``cells`` its
    lower codes, marks, rider codes and rider marks (four rows of 81), ``hands`` both hands by shared kind,
    ``kind_of[token mark, code & 31]`` the shared kind (-1: none). Fills the board, bitboards, marks, riders, king
    squares and the key from scratch (``P.keys[0]``); returns the first square with a code of no shared kind, or -1.
    """
    P.board[:] = 0
    P.bb[:] = 0
    P.marks[:] = 0
    P.riders[:] = 0
    P.rider_marks[:] = 0
    stride = T.params[P_WORD_STRIDE]
    key = np.uint64(0)
    for c in range(2):
        P.st[ST_KSQ + c] = -1
        P.st[ST_ROYALS + c] = 0
        P.st[ST_RIDERS + c] = 0
    for sq in range(81):
        code = cells[sq]
        if code == 0:
            continue
        c = code >> 5
        kind = kind_of[1 if cells[81 + sq] & PC.TOKEN else 0, code & 31]
        if kind < 0:
            return sq
        piece = kind + (code & 32)
        P.board[sq] = piece
        bit = np.uint64(1) << np.uint64(sq % stride)
        P.bb[piece, sq // stride] |= bit
        P.bb[64 + c, sq // stride] |= bit
        marks = cells[81 + sq] & (MARK_INVINCIBLE | MARK_CARRIER)
        P.marks[sq] = marks
        key ^= T.zob_board[piece, sq] ^ mark_key(T, marks, sq)
        rider = cells[162 + sq]
        if rider != 0:
            kind = kind_of[1 if cells[243 + sq] & PC.TOKEN else 0, rider & 31]
            if kind < 0:
                return sq
            P.riders[sq] = kind + (rider & 32)
            P.rider_marks[sq] = cells[243 + sq] & MARK_INVINCIBLE
            P.st[ST_RIDERS + c] += 1
            key ^= rider_key(T, P.riders[sq], P.rider_marks[sq], sq)
        if (code & 31) == PC.K:
            P.st[ST_KSQ + c] = sq
            P.st[ST_ROYALS + c] += 1
    for c in range(2):
        for k in range(32):  # counts of 0 hashed too, as engine.position does (the kernels swap count keys)
            P.hands[c, k] = hands[c, k]
            key ^= T.zob_hand[c, k, hands[c, k]]
        for r in range(N_RIGHTS):
            key ^= T.zob_right[c, r, P.st[ST_RIGHTS + N_RIGHTS * c + r]]
    if P.st[ST_STM] != 0:
        key ^= T.zob_side[0]
    P.keys[0] = key
    return -1
