"""numba kernels: attacks, legal move generation, make/unmake and perft.

Every kernel takes a :data:`PosState` (the mutable arrays of one position) and the variant's
:class:`engine.variant.Tables`; both are namedtuples of numpy arrays, so the kernels are cached on disk and hold no
globals. Generation is mailbox driven (rays and leap tables give targets square by square, which works unchanged for
13x13 boards and range-limited sliders) while bitboards serve what they are best at: iterating a side's pieces,
drop targets, nifu files and check-evasion masks.

Legality is decided without make/unmake: the king's checkers and the pinned pieces are found first, then each
candidate is filtered by the evasion mask and its pin line, and king moves are tested with the king lifted off the
board. Only a pawn drop that gives check is tried on the board, to test uchifuzume.

Move encoding (``int32``), see also :mod:`engine.move`::

    bits  0-7   to square
    bits  8-15  from square, or the dropped piece type when DROP is set
    bit   16    PROMOTE
    bit   17    DROP
    bits 18-25  middle square of a two-step move (valid when HAS_MID is set)
    bit   26    HAS_MID
    bits 27-30  special action (0 = none), defined per variant
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from ..variant import (MAX_MOVES, P_DROPS, P_LAST_ROYAL, P_NIFU, P_TRY, P_UCHIFUZUME, P_WORD_STRIDE,  # noqa: F401
                       SPECIAL_LION, SPECIAL_PASS_DIAGONAL, SPECIAL_PASS_ORTHOGONAL)
from . import inline_kernel, inner_kernel, kernel
from .hooks import (boarding, can_capture, extra_attacks, extra_drops, is_pawn_drop, pawns_on, variant_do_move,
                    variant_generate, variant_pawn_drop_mates, variant_undo_move)

PROMOTE = 1 << 16
DROP = 1 << 17
HAS_MID = 1 << 26

# Generation modes. GEN_ALL is what perft counts; search uses the smaller sets.
GEN_ALL = 0  # every legal move, including non-promotions that are never better
GEN_SEARCH = 1  # legal moves minus the non-promotions of pawn, bishop and rook
GEN_CAPTURES = 2  # legal captures and promotions (for quiescence search), search-style promotions

# State vector indices.
ST_STM, ST_PLY = 0, 1
ST_KSQ = 2  # ST_KSQ + colour: that side's king square (-1: none; only kept for one-king variants)
ST_ROYALS = 4  # ST_ROYALS + colour: number of that side's royal pieces on the board

# Undo-record flags.
U_EXCHANGE_TO = 1  # the captured exchange piece on `to` was converted and the captor removed
U_EXCHANGE_MID = 2  # the captured exchange piece on the middle square was converted in place


PosState = namedtuple("PosState", [
    "board",  # int8[n_sq]: piece code per square, 0 = empty
    "hands",  # int8[2, 32]: pieces in hand per colour and piece type
    "bb",     # uint64[66, W]: rows 0-63 per piece code, 64 + c = all pieces of colour c
    "st",     # int64[8]: side to move, ply from the root, king squares
    "keys",   # uint64[capacity]: Zobrist key of the position at each ply (keys[st[ST_PLY]] is current)
    "moves",  # int32[capacity]: move made at each ply
    "undo",   # int32[capacity]: per ply: captured code | captured-at-middle << 8 | U_* flags << 16 | mover << 24
    "scratch",  # int64[SCRATCH_LEVELS, 64]: work space of the kernels (they may not allocate)
])
SCRATCH_LEVELS = 2  # generate() uses level 0, the uchifuzume test inside it level 1
# Columns of a scratch row.
SC_PIN_SQ, SC_PIN_DIR, SC_CHECKERS = 0, 8, 16


# ------------------------------------------------------------------ bitboards
@inner_kernel
def bb_has(bb_row, T, sq):
    return (bb_row[T.sq_word[sq]] & T.sq_mask[sq]) != 0


@inner_kernel
def _set_piece(P, T, code, sq):
    w = T.sq_word[sq]
    m = T.sq_mask[sq]
    P.board[sq] = code
    P.bb[code, w] |= m
    P.bb[64 + (code >> 5), w] |= m


@inner_kernel
def _clear_piece(P, T, code, sq):
    w = T.sq_word[sq]
    m = ~T.sq_mask[sq]
    P.board[sq] = 0
    P.bb[code, w] &= m
    P.bb[64 + (code >> 5), w] &= m


# -------------------------------------------------------------------- attacks
@kernel
def is_attacked(P, T, sq, by):
    """Whether colour ``by`` attacks square ``sq`` on the current mailbox (and a variant's other attackers)."""
    return attacked_on_board(P.board, T, sq, by, -1) or extra_attacks(P, T, sq, by)


@inner_kernel
def attacked_on_board(board, T, sq, by, skip):
    """Whether a piece of colour ``by`` on ``board`` (a mailbox), other than the one on square ``skip`` (-1: none),
    attacks ``sq`` (the evaluation's king-zone term asks it of stored boards too, and without the king)."""
    K = T.leap_dest.shape[1]
    for k in range(K):
        src = T.leap_dest[sq, T.rev_leap[k]]
        if src >= 0 and src != skip:
            pc = board[src]
            if pc != 0 and (pc >> 5) == by and T.leap_ok[pc, k]:
                return True
    L = T.rays.shape[2]
    for d in range(8):
        rd = (d + 4) & 7
        for i in range(L):
            s = T.rays[sq, d, i]
            if s < 0:
                break
            pc = board[s]
            if pc != 0:
                if s != skip and (pc >> 5) == by and T.slide_range[pc, rd] > i:
                    return True
                break
    return False


@kernel
def attackers_to(P, T, sq, by, out):
    """Write the squares of colour ``by``'s pieces attacking ``sq`` into ``out``; return how many."""
    board = P.board
    n = 0
    K = T.leap_dest.shape[1]
    for k in range(K):
        src = T.leap_dest[sq, T.rev_leap[k]]
        if src >= 0:
            pc = board[src]
            if pc != 0 and (pc >> 5) == by and T.leap_ok[pc, k]:
                out[n] = src
                n += 1
    L = T.rays.shape[2]
    for d in range(8):
        rd = (d + 4) & 7
        for i in range(L):
            s = T.rays[sq, d, i]
            if s < 0:
                break
            pc = board[s]
            if pc != 0:
                if (pc >> 5) == by and T.slide_range[pc, rd] > i:
                    out[n] = s
                    n += 1
                break
    return n


@kernel
def in_check(P, T):
    """Whether the side to move's king (in last-royal variants: any of its royals) is attacked."""
    c = P.st[ST_STM]
    if T.params[P_LAST_ROYAL] != 0:
        for i in range(P.st[ST_ROYALS + c]):
            if is_attacked(P, T, royal_square(P, T, c, i), 1 - c):
                return True
        return False
    ksq = P.st[ST_KSQ + c]
    return ksq >= 0 and is_attacked(P, T, ksq, 1 - c)


@inner_kernel
def _find_pins(P, T, c, ksq, row):
    """Record colour ``c``'s pieces pinned to its king in scratch ``row`` (squares, directions); return how many."""
    board = P.board
    sc = P.scratch
    n = 0
    L = T.rays.shape[2]
    for d in range(8):
        rd = (d + 4) & 7
        cand = -1
        for i in range(L):
            s = T.rays[ksq, d, i]
            if s < 0:
                break
            pc = board[s]
            if pc == 0:
                continue
            if cand < 0:
                if (pc >> 5) != c:
                    break
                cand = s
            else:
                if (pc >> 5) != c and T.slide_range[pc, rd] > i:
                    sc[row, SC_PIN_SQ + n] = cand
                    sc[row, SC_PIN_DIR + n] = d
                    n += 1
                break
    return n


# ------------------------------------------------------------- make / unmake
@inner_kernel
def _take(P, T, c, cap, sq, key):
    """Colour ``c`` captures ``cap`` on ``sq``: off the board, into the hand (if the variant drops), royal count."""
    _clear_piece(P, T, cap, sq)
    key ^= T.zob_board[cap, sq]
    hp = T.hand_type[cap]
    if hp != 0:
        n = P.hands[c, hp]
        key ^= T.zob_hand[c, hp, n] ^ T.zob_hand[c, hp, n + 1]
        P.hands[c, hp] = n + 1
    if T.royal[cap]:
        P.st[ST_ROYALS + 1 - c] -= 1
        if P.st[ST_KSQ + 1 - c] == sq:
            P.st[ST_KSQ + 1 - c] = -1
    return key


@inner_kernel
def _untake(P, T, c, cap, sq):
    """Inverse of :func:`_take` (the key is restored from history, not recomputed)."""
    _set_piece(P, T, cap, sq)
    hp = T.hand_type[cap]
    if hp != 0:
        P.hands[c, hp] -= 1
    if T.royal[cap]:
        P.st[ST_ROYALS + 1 - c] += 1
        if P.st[ST_KSQ + 1 - c] < 0 and T.params[P_LAST_ROYAL] == 0:
            P.st[ST_KSQ + 1 - c] = sq


@kernel
def do_move(P, T, mv):
    """Play ``mv`` (assumed legal) and push it on the history arrays.

    A two-step move (HAS_MID) captures on the middle square first (lion, violent ox, flying dragon); ``to`` may equal
    the origin (igui, pass). Where the variant has an exchange piece (the drunk elephant), capturing it removes the
    captor instead and turns the captured piece to the captor's side; captured on the middle square it is converted
    in place and the mover goes on. A variant with moves of its own plays them all itself
    (:func:`.hooks.variant_do_move`).
    """
    if variant_do_move(P, T, mv):
        return
    st = P.st
    c = st[ST_STM]
    ply = st[ST_PLY]
    key = P.keys[ply]
    to = mv & 0xFF
    frm = (mv >> 8) & 0xFF
    cap = 0
    cap_mid = 0
    flags = 0
    if mv & DROP:
        pt = frm
        code = pt + (c << 5)
        mover = code
        n = P.hands[c, pt]
        key ^= T.zob_hand[c, pt, n] ^ T.zob_hand[c, pt, n - 1]
        P.hands[c, pt] = n - 1
        _set_piece(P, T, code, to)
        key ^= T.zob_board[code, to]
    else:
        code = P.board[frm]
        mover = code
        _clear_piece(P, T, code, frm)
        key ^= T.zob_board[code, frm]
        if mv & HAS_MID:
            mid = (mv >> 18) & 0xFF
            cap_mid = P.board[mid]
            if cap_mid != 0:
                key = _take(P, T, c, cap_mid, mid, key)
                if T.exchange[cap_mid]:
                    _set_piece(P, T, cap_mid ^ 32, mid)
                    key ^= T.zob_board[cap_mid ^ 32, mid]
                    flags |= U_EXCHANGE_MID
        cap = P.board[to]
        if cap != 0:
            key = _take(P, T, c, cap, to, key)
            if T.exchange[cap]:
                _set_piece(P, T, cap ^ 32, to)
                key ^= T.zob_board[cap ^ 32, to]
                flags |= U_EXCHANGE_TO
        if flags & U_EXCHANGE_TO:
            if T.royal[code]:  # the captor leaves the board
                st[ST_ROYALS + c] -= 1
                if st[ST_KSQ + c] == frm:
                    st[ST_KSQ + c] = -1
        else:
            if mv & PROMOTE:
                code = T.promote_code[code]
                if T.royal[code] and not T.royal[mover]:  # drunk elephant -> prince
                    st[ST_ROYALS + c] += 1
            _set_piece(P, T, code, to)
            key ^= T.zob_board[code, to]
            if T.royal[code] and T.params[P_LAST_ROYAL] == 0:
                st[ST_KSQ + c] = to
    P.moves[ply] = mv
    P.undo[ply] = cap | (cap_mid << 8) | (flags << 16) | (mover << 24)
    st[ST_STM] = 1 - c
    st[ST_PLY] = ply + 1
    P.keys[ply + 1] = key ^ T.zob_side[0]


@kernel
def undo_move(P, T):
    """Take back the last move played with :func:`do_move`."""
    if variant_undo_move(P, T):
        return
    st = P.st
    ply = st[ST_PLY] - 1
    c = 1 - st[ST_STM]
    mv = P.moves[ply]
    rec = P.undo[ply]
    cap = rec & 0xFF
    cap_mid = (rec >> 8) & 0xFF
    flags = (rec >> 16) & 0xFF
    mover = (rec >> 24) & 0x7F
    to = mv & 0xFF
    frm = (mv >> 8) & 0xFF
    if mv & DROP:
        _clear_piece(P, T, P.board[to], to)
        P.hands[c, frm] += 1
    else:
        placed = P.board[to]  # the mover, or the converted exchange piece
        _clear_piece(P, T, placed, to)
        if flags & U_EXCHANGE_TO:
            if T.royal[mover]:
                st[ST_ROYALS + c] += 1
        elif T.royal[placed] and not T.royal[mover]:
            st[ST_ROYALS + c] -= 1
        if cap != 0:
            _untake(P, T, c, cap, to)
        if mv & HAS_MID:
            mid = (mv >> 18) & 0xFF
            if flags & U_EXCHANGE_MID:
                _clear_piece(P, T, cap_mid ^ 32, mid)
            if cap_mid != 0:
                _untake(P, T, c, cap_mid, mid)
        _set_piece(P, T, mover, frm)
        if T.royal[mover] and T.params[P_LAST_ROYAL] == 0:
            st[ST_KSQ + c] = frm
    st[ST_STM] = c
    st[ST_PLY] = ply


# --------------------------------------------------------------- generation
@inner_kernel
def _emit(out, n, T, mode, c, code, frm, to, tgt, extra):
    """Append the move(s) of ``code`` from ``frm`` to ``to`` (capturing ``tgt``, 0 if empty), with and/or without
    promotion; ``extra`` carries the middle-square bits of a two-step move.

    In GEN_CAPTURES mode a quiet move is kept only as a promotion. Capturing an exchange piece removes the captor,
    so such a capture is generated once, unpromoted.
    """
    base = to | (frm << 8) | extra
    quiet = tgt == 0 and extra == 0
    if T.promote_code[code] != 0 and (T.zone[c, frm] or T.zone[c, to]) and not T.exchange[tgt]:
        out[n] = base | PROMOTE
        n += 1
        if not T.must_promote[code, to] and (mode == GEN_ALL or (not T.prefer_promote[code]
                                                                  and not (quiet and mode == GEN_CAPTURES))):
            out[n] = base
            n += 1
    elif not (quiet and mode == GEN_CAPTURES):
        out[n] = base
        n += 1
    return n


@inner_kernel
def _gen_special(P, T, mode, out, n, c, code, frm):
    """Moves of the special movers: passing captures (violent ox, flying dragon) and the lion's double moves.

    Their plain one- and two-square moves are Betza leaps generated elsewhere; here come only the moves that
    capture on the first square and go on (encoded with the middle square), the lion's igui (capture and return)
    and its pass (out to an empty square and back: one canonical move, via the first empty neighbour).
    """
    board = P.board
    kind = T.special[code]
    if kind == SPECIAL_PASS_ORTHOGONAL or kind == SPECIAL_PASS_DIAGONAL:
        for d in range(kind - 1, 8, 2):  # orthogonal directions are even, diagonal ones odd
            s1 = T.rays[frm, d, 0]
            if s1 < 0:
                continue
            p1 = board[s1]
            if p1 == 0 or (p1 >> 5) == c:
                continue
            s2 = T.rays[frm, d, 1]
            if s2 < 0:
                continue
            p2 = board[s2]
            if p2 != 0 and (p2 >> 5) == c:
                continue
            n = _emit(out, n, T, mode, c, code, frm, s2, p2, (s1 << 18) | HAS_MID)
    elif kind == SPECIAL_LION:
        first_empty = -1
        for d in range(8):
            mid = T.rays[frm, d, 0]
            if mid < 0:
                continue
            pm = board[mid]
            if pm == 0:
                if first_empty < 0:
                    first_empty = mid
                continue
            if (pm >> 5) == c:
                continue
            for d2 in range(8):
                to = T.rays[mid, d2, 0]
                if to < 0:
                    continue
                tgt = 0
                if to != frm:  # to == frm is igui: capture and return
                    tgt = board[to]
                    if tgt != 0 and (tgt >> 5) == c:
                        continue
                n = _emit(out, n, T, mode, c, code, frm, to, tgt, (mid << 18) | HAS_MID)
        if first_empty >= 0 and mode != GEN_CAPTURES:
            out[n] = frm | (frm << 8) | (first_empty << 18) | HAS_MID
            n += 1
    return n


@inner_kernel
def _blocks_check(T, ksq, chk_sq, to):
    """Whether a non-king move to ``to`` answers the single check from ``chk_sq`` (capture or interpose)."""
    return to == chk_sq or (T.between_bb[ksq, chk_sq, T.sq_word[to]] & T.sq_mask[to]) != 0


@inner_kernel
def _gen_board_moves(P, T, mode, out, n, c, ksq, n_chk, chk_sq, row):
    """Legal non-drop moves of colour ``c``; appends to ``out`` from index ``n`` and returns the new length.

    ``n_chk``/``chk_sq`` describe the checks on ``c``'s king (``ksq`` < 0 means no king: nothing is illegal);
    ``row`` is the scratch row to use.
    """
    board = P.board
    sc = P.scratch
    L = T.rays.shape[2]
    n_leap_cols = T.leap_list.shape[1]
    n_pin = 0
    if ksq >= 0 and n_chk < 2:
        n_pin = _find_pins(P, T, c, ksq, row)
    stride = T.params[P_WORD_STRIDE]
    for w in range(P.bb.shape[1]):
        pieces = P.bb[64 + c, w]
        while pieces:
            frm = w * stride + np.int64(trailing_zeros(pieces))
            pieces &= pieces - np.uint64(1)
            code = board[frm]
            if T.royal[code] and ksq >= 0:
                # King: every target must be safe with the king lifted off its square (sliders see through).
                board[frm] = 0
                for j in range(n_leap_cols):
                    k = T.leap_list[code, j]
                    if k < 0:
                        break
                    to = T.leap_dest[frm, k]
                    if to < 0:
                        continue
                    tgt = board[to]
                    if tgt != 0 and ((tgt >> 5) == c or not can_capture(P, T, code, to, tgt)):
                        continue
                    if mode == GEN_CAPTURES and tgt == 0:
                        continue
                    if not is_attacked(P, T, to, 1 - c):
                        out[n] = to | (frm << 8)
                        n += 1
                board[frm] = code
                continue
            if n_chk >= 2:
                continue
            pin_d = -1
            for j in range(n_pin):
                if sc[row, SC_PIN_SQ + j] == frm:
                    pin_d = sc[row, SC_PIN_DIR + j]
            # Leaps (single steps and jumps).
            for j in range(n_leap_cols):
                k = T.leap_list[code, j]
                if k < 0:
                    break
                to = T.leap_dest[frm, k]
                if to < 0:
                    continue
                tgt = board[to]
                extra = 0
                if tgt != 0:
                    if (tgt >> 5) == c:
                        extra = boarding(P, T, code, frm, to)  # onto an own piece: only where a variant lets it
                        if extra == 0 or mode == GEN_CAPTURES:
                            continue
                        tgt = 0
                    elif not can_capture(P, T, code, to, tgt):
                        continue
                if n_chk == 1 and not _blocks_check(T, ksq, chk_sq, to):
                    continue
                if pin_d >= 0 and T.line_dir[ksq, to] != pin_d:
                    continue
                n = _emit(out, n, T, mode, c, code, frm, to, tgt, extra)
            # Slides.
            for j in range(9):
                d = T.slide_list[code, j]
                if d < 0:
                    break
                if pin_d >= 0 and d != pin_d and d != ((pin_d + 4) & 7):
                    continue
                reach = T.slide_range[code, d]
                for i in range(L):
                    if i >= reach:
                        break
                    to = T.rays[frm, d, i]
                    if to < 0:
                        break
                    tgt = board[to]
                    extra = 0
                    if tgt != 0:
                        if (tgt >> 5) == c:
                            extra = boarding(P, T, code, frm, to)
                            if extra == 0 or mode == GEN_CAPTURES:
                                break
                        elif not can_capture(P, T, code, to, tgt):
                            break
                    if n_chk == 0 or _blocks_check(T, ksq, chk_sq, to):
                        n = _emit(out, n, T, mode, c, code, frm, to, 0 if extra else tgt, extra)
                    if tgt != 0:
                        break
            if T.special[code] != 0:
                n = _gen_special(P, T, mode, out, n, c, code, frm)
    return n


@kernel
def royal_square(P, T, c, index):
    """Square of colour ``c``'s ``index``-th royal piece (in type order, then square order), -1 if none."""
    stride = T.params[P_WORD_STRIDE]
    for h in range(T.royal_types.shape[0]):
        row = P.bb[T.royal_types[h] + (c << 5)]
        for w in range(row.shape[0]):
            bits = row[w]
            while bits:
                if index == 0:
                    return w * stride + np.int64(trailing_zeros(bits))
                index -= 1
                bits &= bits - np.uint64(1)
    return -1


@inner_kernel
def _two_royals_capturable(P, T, c):
    """Whether the opponent can take both of colour ``c``'s two royals in one two-step move.

    Only a passing mover (violent ox, flying dragon) or a lion captures twice, each on two adjacent squares: so the
    royals must stand next to each other, and the mover on the far side of one of them along their line (in its
    directions) or, for a lion, next to either. Two-step moves jump, so nothing in between matters.
    """
    board = P.board
    e = 1 - c
    r1 = royal_square(P, T, c, 0)
    r2 = royal_square(P, T, c, 1)
    for d in range(8):
        if T.rays[r1, d, 0] != r2:
            continue
        # r2 is r1's neighbour in direction d: a passing mover behind r1 (moving in d) or behind r2 (moving back)
        behind1 = T.rays[r1, (d + 4) & 7, 0]
        behind2 = T.rays[r2, d, 0]
        for frm in (behind1, behind2):
            if frm >= 0:
                pc = board[frm]
                kind = T.special[pc]
                if pc != 0 and (pc >> 5) == e and (kind == SPECIAL_PASS_ORTHOGONAL
                                                   or kind == SPECIAL_PASS_DIAGONAL) and (d & 1) == kind - 1:
                    return True
        for d2 in range(8):  # a lion next to either royal: one step onto it, the next onto the other
            for sq in (r1, r2):
                s = T.rays[sq, d2, 0]
                if s >= 0:
                    pc = board[s]
                    if pc != 0 and (pc >> 5) == e and T.special[pc] == SPECIAL_LION:
                        return True
        return False
    return False


@inner_kernel
def last_royal_safe(P, T, c):
    """Whether colour ``c`` keeps a royal the opponent cannot take: three or more royals, two that no single move
    takes together (see :func:`_two_royals_capturable`), or one that is not attacked."""
    n = P.st[ST_ROYALS + c]
    if n >= 3:
        return True
    if n == 2:
        return not _two_royals_capturable(P, T, c)
    if n == 0:
        return False
    return not is_attacked(P, T, royal_square(P, T, c, 0), 1 - c)


@inner_kernel
def _generate_last_royal(P, T, mode, out, c):
    """Legal moves where several royals may stand: a move is illegal if it leaves the opponent able to remove all
    the mover's royals: the last one, or the last two at once with a two-step move (or if it loses the last royal
    in an exchange).

    Only the moves that can change that are tried on the board: with one royal, the royal's own moves, moves of
    pieces standing between it and an enemy slider, two-step moves (a capture on the middle square can open a
    line), or every move while the royal is attacked; with two royals, the royals' own moves (they may end next to
    each other and a two-step mover, or lose one in an exchange), or every move while both can be taken at once
    (other moves never bring the royals or the enemy two-step movers together); with three, a royal capturing the
    exchange piece (two royals remain).
    """
    n = _gen_board_moves(P, T, mode, out, 0, c, -1, 0, -1, 0)
    royals = P.st[ST_ROYALS + c]
    if royals >= 4:
        return n
    rsq = -1
    attacked = False
    n_pin = 0
    if royals == 2:
        attacked = _two_royals_capturable(P, T, c)
    elif royals == 1:
        rsq = royal_square(P, T, c, 0)
        attacked = is_attacked(P, T, rsq, 1 - c)
        if not attacked:
            n_pin = _find_pins(P, T, c, rsq, 0)
    kept = 0
    for i in range(n):
        mv = out[i]
        frm = (mv >> 8) & 0xFF
        mover = P.board[frm]
        if royals == 3:
            test = T.royal[mover] and T.exchange[P.board[mv & 0xFF]]
        elif royals == 2:
            test = attacked or T.royal[mover]
        else:
            test = attacked or T.royal[mover] or (mv & HAS_MID) != 0
            for j in range(n_pin):
                if P.scratch[0, SC_PIN_SQ + j] == frm:
                    test = True
        if test:
            do_move(P, T, mv)
            ok = last_royal_safe(P, T, c)
            undo_move(P, T)
            if not ok:
                continue
        out[kept] = mv
        kept += 1
    return kept


@inner_kernel
def _checks_on(P, T, c, row):
    """(number of checkers on colour ``c``'s king capped at 2, the first checker square)."""
    ksq = P.st[ST_KSQ + c]
    if ksq < 0:
        return 0, -1
    n = attackers_to(P, T, ksq, 1 - c, P.scratch[row, SC_CHECKERS:])
    return min(n, 2), P.scratch[row, SC_CHECKERS]


@inner_kernel
def _pawn_drop_mates(P, T, c, pawn, to, out):
    """Whether dropping a pawn of colour ``c`` on ``to`` (which checks the enemy king) leaves no reply.

    ``out`` is move space the test may overwrite (the caller's unused tail of its own move list).
    """
    do_move(P, T, to | (pawn << 8) | DROP)
    e = 1 - c
    n_chk, chk = _checks_on(P, T, e, 1)
    n = _gen_board_moves(P, T, GEN_ALL, out, 0, e, P.st[ST_KSQ + e], n_chk, chk, 1)
    undo_move(P, T)
    return n == 0


@kernel
def generate(P, T, mode, out):
    """Fill ``out`` with the legal moves of the side to move for ``mode``; return how many. One generator serves
    every mode, a run-time value (``docs/engine.md``, "Compile time"). A variant with moves of its own generates them
    all itself (:func:`.hooks.variant_generate`), with :func:`generate_standard` and :func:`gen_drops` for the
    standard ones."""
    n = variant_generate(P, T, mode, out)
    if n >= 0:
        return n
    return generate_standard(P, T, mode, out)


@inline_kernel
def generate_standard(P, T, mode, out):
    """:func:`generate` by the standard rules (the variant's hooks inside them included). Inlined into its two
    callers, :func:`generate` and fantasista's generator, with :func:`gen_drops`: as functions of their own they
    were compiled once per mode besides (4.9 s of shogi's compile; inlined, ``generate`` takes 2.1 s more)."""
    c = P.st[ST_STM]
    if T.params[P_LAST_ROYAL] != 0:
        return _generate_last_royal(P, T, mode, out, c)
    ksq = P.st[ST_KSQ + c]
    n_chk, chk_sq = _checks_on(P, T, c, 0)
    n = _gen_board_moves(P, T, mode, out, 0, c, ksq, n_chk, chk_sq, 0)
    if n_chk >= 2 or mode == GEN_CAPTURES or T.params[P_DROPS] == 0:
        return n
    return gen_drops(P, T, mode, out, n, c, ksq, n_chk, chk_sq)


@inline_kernel
def gen_drops(P, T, mode, out, n, c, ksq, n_chk, chk_sq):
    """Append colour ``c``'s legal drops to ``out[n:]`` (``ksq``, ``n_chk``, ``chk_sq``: its king and the checks on
    it, at most one); return the new length."""
    n = extra_drops(P, T, mode, out, n, c, ksq, n_chk, chk_sq)
    has_hand = False
    for h in range(T.hand_types.shape[0]):
        if P.hands[c, T.hand_types[h]] != 0:
            has_hand = True
    if not has_hand:
        return n

    # Drops go to empty squares, or between the king and a sliding checker.
    W = P.bb.shape[1]
    stride = T.params[P_WORD_STRIDE]
    for w in range(W):
        targets = T.board_bb[w] & ~(P.bb[64, w] | P.bb[65, w])
        if n_chk == 1:
            targets &= T.between_bb[ksq, chk_sq, w]
        if targets == 0:
            continue
        for h in range(T.hand_types.shape[0]):
            pt = T.hand_types[h]
            if P.hands[c, pt] == 0:
                continue
            m = targets & T.drop_bb[c, pt, w]
            mate_sq = -1
            if is_pawn_drop(T, pt):
                if T.params[P_NIFU] != 0:  # nifu: no second unpromoted pawn on a file
                    for f in range(T.file_bb.shape[0]):
                        fw = T.file_bb[f, w]
                        if fw != 0 and (m & fw) != 0:
                            for w2 in range(W):
                                if pawns_on(P, T, c, w2) & T.file_bb[f, w2]:
                                    m &= ~fw
                                    break
                eksq = P.st[ST_KSQ + 1 - c]
                if eksq >= 0 and T.params[P_UCHIFUZUME] != 0:
                    # The one square from which a pawn would check the enemy king: test uchifuzume there.
                    k = T.leap_list[pt + (c << 5), 0]
                    mate_sq = T.leap_dest[eksq, T.rev_leap[k]]
            while m:
                to = w * stride + np.int64(trailing_zeros(m))
                m &= m - np.uint64(1)
                if to == mate_sq:
                    mates = variant_pawn_drop_mates(P, T, c, pt, to, out[n:])
                    if mates == 1 or (mates < 0 and _pawn_drop_mates(P, T, c, pt, to, out[n:])):
                        continue
                out[n] = to | (pt << 8) | DROP
                n += 1
    return n


@kernel
def perft(P, T, depth, buf):
    """Count leaf nodes ``depth`` plies deep (bulk-counted at the last ply). ``buf``: int32[depth + 1, MAX_MOVES]."""
    n = generate(P, T, GEN_ALL, buf[depth])
    if depth <= 1:
        return n if depth == 1 else 1
    total = 0
    for i in range(n):
        do_move(P, T, buf[depth, i])
        total += perft(P, T, depth - 1, buf)
        undo_move(P, T)
    return total
