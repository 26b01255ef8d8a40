"""Fantasista's own moves in the shared kernels: make/unmake of stacks and marks, riders, boarding, and the
generator for positions that the shared generator's pin and evasion masks do not describe.

These are the kernels behind :mod:`.hooks` (the shared generator calls them through its rule hooks for
:class:`.variant.FxTables` only). Move encoding: the shared one (:mod:`engine.kernels.movegen`) with the special
actions of :mod:`.variant` (``SP_BOARD``, ``SP_RIDER``) in bits 27-30.
"""
from __future__ import annotations

import numpy as np

from ...kernels import inner_kernel
from numba.cpython.unsafe.numbers import trailing_zeros

from ...kernels.movegen import (DROP, GEN_ALL, GEN_CAPTURES, HAS_MID, PROMOTE, ST_KSQ, ST_PLY, ST_STM, _clear_piece,
                                _emit, _gen_board_moves, _set_piece, _take, _untake, gen_drops, generate_standard,
                                is_attacked)
from ...variant import P_WORD_STRIDE
from . import pieces as PC
from .variant import (MARK_CARRIER, MARK_INVINCIBLE, N_RIGHTS, PT, RIGHT_EMBLEM, SP_MASK, SP_RIDER, ST_RIDERS,
                      ST_RIGHTS)

PAWN, FIRE_DRAGON, SPEAR_PAWN, SWORD_SILVER = PC.P, PC.D, PC.Y, PC.W

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
def fx_do_move(P, T, mv):
    """Play ``mv`` (assumed legal) on a fantasista position: :func:`engine.kernels.movegen.do_move` for
    :class:`.variant.FxTables`. A board move carries the piece's marks and rider along and captures a stack whole;
    a move onto an own empty carrier boards it; ``SP_RIDER`` moves the rider; a drop with PROMOTE is the emblem's."""
    st = P.st
    c = st[ST_STM]
    ply = st[ST_PLY]
    key = P.keys[ply]
    to = mv & 0xFF
    frm = (mv >> 8) & 0xFF
    rec = np.int64(0)
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
    else:
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
    P.moves[ply] = mv
    P.xundo[ply] = rec
    st[ST_STM] = 1 - c
    st[ST_PLY] = ply + 1
    P.keys[ply + 1] = key ^ T.zob_side[0]


@inner_kernel
def fx_undo_move(P, T):
    """Take back the last move played with :func:`fx_do_move`."""
    st = P.st
    ply = st[ST_PLY] - 1
    c = 1 - st[ST_STM]
    mv = P.moves[ply]
    rec = P.xundo[ply]
    to = mv & 0xFF
    frm = (mv >> 8) & 0xFF
    if mv & DROP:
        _clear_piece(P, T, P.board[to], to)
        P.hands[c, frm] += 1
        if mv & HAS_MID:
            _restore_stack(P, T, c, (mv >> 18) & 0xFF, (rec >> X_MID_SHIFT) & X_STACK_MASK)
    else:
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
    line, but the caller tests its own king. A rider may board another own empty carrier."""
    stride = T.params[P_WORD_STRIDE]
    L = T.rays.shape[2]
    board = P.board
    for w in range(P.bb.shape[1]):
        pieces = P.bb[64 + c, w]
        while pieces:
            frm = w * stride + np.int64(trailing_zeros(pieces))
            pieces &= pieces - np.uint64(1)
            rc = P.riders[frm]
            if rc == 0:
                continue
            for j in range(T.leap_list.shape[1]):
                k = T.leap_list[rc, j]
                if k < 0:
                    break
                to = T.leap_dest[frm, k]
                if to >= 0:
                    n = _rider_target(P, T, mode, out, n, c, rc, frm, to, board[to])
            for j in range(9):
                d = T.slide_list[rc, j]
                if d < 0:
                    break
                reach = T.slide_range[rc, d]
                for i in range(L):
                    to = T.rays[frm, d, i]
                    if i >= reach or to < 0:
                        break
                    tgt = board[to]
                    n = _rider_target(P, T, mode, out, n, c, rc, frm, to, tgt)
                    if tgt != 0:
                        break
    return n


@inner_kernel
def _rider_target(P, T, mode, out, n, c, rc, frm, to, tgt):
    if tgt == 0:
        if mode == GEN_CAPTURES:
            return n
        return _emit(out, n, T, mode, c, rc, frm, to, 0, SP_RIDER)
    if (tgt >> 5) == c:
        if (P.marks[to] & MARK_CARRIER) == 0 or P.riders[to] != 0 or mode == GEN_CAPTURES:
            return n
        return _emit(out, n, T, mode, c, rc, frm, to, 0, SP_RIDER)
    if not capture_allowed(P, T, rc, to, tgt):
        return n
    return _emit(out, n, T, mode, c, rc, frm, to, tgt, SP_RIDER)


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
    describe). The special captures are tried on the board too (a capture without moving can open a line)."""
    c = P.st[ST_STM]
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
    return _keep_legal(P, T, out, start, n, c)


@inner_kernel
def fx_pawn_drop_mates(P, T, c, pt, to, out):
    """Uchifuzume for fantasista: whether the enemy has no legal reply after colour ``c`` drops a pawn of kind
    ``pt`` on ``to`` (a plain drop never answers a pawn's adjacent check: the replies are board and rider moves and the
    special captures)."""
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
    fx_undo_move(P, T)
    return mated
