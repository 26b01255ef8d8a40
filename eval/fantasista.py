"""Fantasista's evaluation terms beyond the board's pieces and the hands (registered as the
:func:`eval.kernels.variant_terms` hook for :class:`engine.variants.fantasista.variant.FxTables`): riders, the
invincible and carrier marks, rights and the emblem, valued from the prior of :mod:`eval.params`. Its KP sums are
not carried from move to move (:func:`eval.kernels.kp_follows_moves`): a turn may move many pieces, and the magic
none."""
from __future__ import annotations

from numba.extending import overload

from engine.kernels import inner_kernel
from engine.variants.fantasista.variant import (MARK_CARRIER, MARK_INVINCIBLE, N_RIGHTS, PT, RIGHT_EMBLEM, ST_RIGHTS,
                                                FxTables)

from . import params as EP
from .kernels import kp_follows_moves, variant_terms

PAWN = 1
RIGHT_AWAKEN_V, RIGHT_CURTAIN_V, RIGHT_WAVE_V = EP.FANTASISTA_RIGHT_VALUES


@inner_kernel
def fantasista_terms(P, T, E):
    """Riders (their piece-square value and a bonus), marks, rights and emblems: sente's view."""
    s = 0
    for sq in range(P.board.shape[0]):
        code = P.board[sq]
        if code == 0:
            continue
        sign = 1 if (code >> 5) == 0 else -1
        marks = P.marks[sq]
        if marks & MARK_INVINCIBLE:
            s += sign * EP.FANTASISTA_INVINCIBLE
        if marks & MARK_CARRIER:
            s += sign * EP.FANTASISTA_CARRIER
        rider = P.riders[sq]
        if rider != 0:
            s += E.pst[rider, sq] + sign * EP.FANTASISTA_RIDER
            if P.rider_marks[sq] & MARK_INVINCIBLE:
                s += sign * EP.FANTASISTA_INVINCIBLE
    for c in range(2):
        base = ST_RIGHTS + N_RIGHTS * c
        x = (RIGHT_AWAKEN_V * P.st[base] + RIGHT_CURTAIN_V * P.st[base + 1] + RIGHT_WAVE_V * P.st[base + 2])
        if P.st[base + RIGHT_EMBLEM] != 0:
            x += EP.FANTASISTA_EMBLEM + EP.FANTASISTA_EMBLEM_PER_PAWN * (P.hands[c, PAWN] + P.hands[c, PT])
        s += x if c == 0 else -x
    return s


@overload(variant_terms)
def _variant_terms(P, T, E):
    if getattr(T, "instance_class", None) is FxTables:
        return lambda P, T, E: fantasista_terms(P, T, E)


@overload(kp_follows_moves)
def _kp_follows_moves(T):
    if getattr(T, "instance_class", None) is FxTables:
        return lambda T: False
