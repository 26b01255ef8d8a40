"""Fantasista's rule hooks in the shared kernels (:mod:`engine.kernels.hooks`), compiled for :class:`.variant.FxTables`.

What is here so far (issue 50, single-part turns): capture immunities (the king-god dragon, the thunder horse, the
invincible mark; ``FxTables.capture_ok``), pawn tokens in nifu and uchifuzume, the emblem's tokin drops, and square
marks that move with their piece.
"""
from __future__ import annotations

import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import overload

from ...kernels import hooks, inner_kernel
from ...kernels.movegen import DROP, PROMOTE
from ...variant import P_WORD_STRIDE
from . import pieces as PC
from .variant import MARK_CARRIER, MARK_INVINCIBLE, N_RIGHTS, PT, RIGHT_EMBLEM, ST_RIGHTS, FxTables

PAWN = PC.P


def _fx(T) -> bool:
    return getattr(T, "instance_class", None) is FxTables


@overload(hooks.can_capture)
def _can_capture(P, T, code, to, tgt):
    if _fx(T):
        def impl(P, T, code, to, tgt):
            if (P.marks[to] & MARK_INVINCIBLE) != 0:
                return T.royal[code]  # an invincible piece falls only to the king
            return T.capture_ok[code, tgt]
        return impl


@overload(hooks.pawns_on, inline="always")
def _pawns_on(P, T, c, w):
    if _fx(T):
        return lambda P, T, c, w: P.bb[PAWN + (c << 5), w] | P.bb[PT + (c << 5), w]


@overload(hooks.is_pawn_drop, inline="always")
def _is_pawn_drop(T, pt):
    if _fx(T):
        return lambda T, pt: pt == PAWN or pt == PT


@overload(hooks.drop_code)
def _drop_code(T, code, mv):
    if _fx(T):
        return lambda T, code, mv: T.promote_code[code] if mv & PROMOTE else code


@overload(hooks.extra_drops)
def _extra_drops(P, T, mode, out, n, c, ksq, n_chk, chk_sq):
    if _fx(T):
        def impl(P, T, mode, out, n, c, ksq, n_chk, chk_sq):
            # The emblem: a pawn (token or not) dropped as a tokin on any empty square, nifu and uchifuzume aside.
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
        return impl


@inner_kernel
def _mark_key(T, marks, sq):
    """The Zobrist share of ``marks`` on ``sq``."""
    key = np.uint64(0)
    if marks & MARK_INVINCIBLE:
        key ^= T.zob_mark[0, sq]
    if marks & MARK_CARRIER:
        key ^= T.zob_mark[1, sq]
    return key


@overload(hooks.move_marks)
def _move_marks(P, T, frm, to, key):
    if _fx(T):
        def impl(P, T, frm, to, key):
            captured = P.marks[to]  # leaves with the captured piece (to the undo bits)
            moved = P.marks[frm]
            if captured:
                key ^= _mark_key(T, captured, to)
            if moved:
                key ^= _mark_key(T, moved, frm) ^ _mark_key(T, moved, to)
            P.marks[to] = moved
            P.marks[frm] = 0
            return key, np.int64(captured)
        return impl


@overload(hooks.unmove_marks, inline="always")
def _unmove_marks(P, T, frm, to, bits):
    if _fx(T):
        def impl(P, T, frm, to, bits):
            P.marks[frm] = P.marks[to]
            P.marks[to] = bits & (MARK_INVINCIBLE | MARK_CARRIER)
            return 0
        return impl
