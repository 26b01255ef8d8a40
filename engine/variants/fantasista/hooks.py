"""Fantasista's rule hooks in the shared kernels (:mod:`engine.kernels.hooks`), compiled for :class:`.variant.FxTables`.

Capture immunities (the king-god dragon, the thunder horse, the invincible mark; ``FxTables.capture_ok``), pawn
tokens and rider pawns in nifu and uchifuzume, the emblem's tokin drops, boarding, riders' attacks, and fantasista's
own generator, make/unmake and uchifuzume test; in the search, the rolls as chance nodes (and the coming pair's
static preview), the TT key with the magic schedule, no null move while a magic target is pending, no multi-part
turn as a TT move before generation (its arena row is only filled by the generation). The kernels are in
:mod:`.movers`. Every overload is inlined (``inline="always"``): each is one call of a kernel, and a wrapper of its
own is a compiled function that carries a copy of everything below it (a wrapper of the generator cost 6 s of the
cold compile). An inlined body has no branch of its own (``x if c else y``): numba's inliner warns on the value
it merges.
"""
from __future__ import annotations

from numba.extending import overload

from ...kernels import hooks
from . import pieces as PC
from .movers import (can_board, capture_allowed, chance_rows, chance_weight, do_roll, emblem_drops, end_preview,
                     fx_do_move, fx_generate, fx_pawn_drop_mates, fx_undo_move, preview_roll, rider_attacks,
                     rider_pawns, rolls_done, rolls_horizon, tt_key, undo_roll)
from .variant import PENDING_NONE, PT, SP_BOARD, SP_MASK, SP_TURN, ST_PENDING, FxTables

PAWN = PC.P


def _fx(T) -> bool:
    return getattr(T, "instance_class", None) is FxTables


@overload(hooks.can_capture, inline="always")
def _can_capture(P, T, code, to, tgt):
    if _fx(T):
        return lambda P, T, code, to, tgt: capture_allowed(P, T, code, to, tgt)


@overload(hooks.pawns_on, inline="always")
def _pawns_on(P, T, c, w):
    if _fx(T):
        return lambda P, T, c, w: P.bb[PAWN + (c << 5), w] | P.bb[PT + (c << 5), w] | rider_pawns(P, T, c, w)


@overload(hooks.is_pawn_drop, inline="always")
def _is_pawn_drop(T, pt):
    if _fx(T):
        return lambda T, pt: pt == PAWN or pt == PT


@overload(hooks.extra_drops, inline="always")
def _extra_drops(P, T, mode, out, n, c, ksq, n_chk, chk_sq):
    if _fx(T):
        return lambda P, T, mode, out, n, c, ksq, n_chk, chk_sq: emblem_drops(P, T, out, n, c, ksq, n_chk, chk_sq)


@overload(hooks.boarding, inline="always")
def _boarding(P, T, code, frm, to):
    if _fx(T):
        return lambda P, T, code, frm, to: SP_BOARD * int(can_board(P, T, code, frm, to))


@overload(hooks.extra_attacks, inline="always")
def _extra_attacks(P, T, sq, by):
    if _fx(T):
        return lambda P, T, sq, by: rider_attacks(P, T, sq, by)


@overload(hooks.variant_pawn_drop_mates, inline="always")
def _pawn_drop_mates(P, T, c, pt, to, out):
    if _fx(T):
        return lambda P, T, c, pt, to, out: int(fx_pawn_drop_mates(P, T, c, pt, to, out))


@overload(hooks.variant_generate, inline="always")
def _variant_generate(P, T, mode, out):
    if _fx(T):
        return lambda P, T, mode, out: fx_generate(P, T, mode, out)


@overload(hooks.variant_do_move, inline="always")
def _variant_do_move(P, T, mv):
    if _fx(T):
        def impl(P, T, mv):
            fx_do_move(P, T, mv)
            return True
        return impl


@overload(hooks.variant_undo_move, inline="always")
def _variant_undo_move(P, T):
    if _fx(T):
        def impl(P, T):
            fx_undo_move(P, T)
            return True
        return impl


@overload(hooks.search_key, inline="always")
def _search_key(P, T, aply):
    if _fx(T):
        return lambda P, T, aply: tt_key(P, T, aply)


@overload(hooks.chance_rows, inline="always")
def _chance_rows(P, T):
    if _fx(T):
        return lambda P, T: chance_rows(P, T)


@overload(hooks.chance_weight, inline="always")
def _chance_weight(P, T, r):
    if _fx(T):
        return lambda P, T, r: chance_weight(P, T, r)


@overload(hooks.play_chance, inline="always")
def _play_chance(P, T, r):
    if _fx(T):
        return lambda P, T, r: do_roll(P, T, r)


@overload(hooks.unplay_chance, inline="always")
def _unplay_chance(P, T):
    if _fx(T):
        return lambda P, T: undo_roll(P, T)


@overload(hooks.chance_count, inline="always")
def _chance_count(P, T):
    if _fx(T):
        return lambda P, T: rolls_done(P)


@overload(hooks.chance_horizon, inline="always")
def _chance_horizon(P, T):
    if _fx(T):
        return lambda P, T: rolls_horizon(P)


@overload(hooks.preview_chance, inline="always")
def _preview_chance(P, T, j):
    if _fx(T):
        return lambda P, T, j: preview_roll(P, j)


@overload(hooks.end_preview, inline="always")
def _end_preview(P, T, saved):
    if _fx(T):
        return lambda P, T, saved: end_preview(P, saved)


@overload(hooks.null_move_allowed, inline="always")
def _null_move_allowed(P, T):
    if _fx(T):
        return lambda P, T: P.st[ST_PENDING] == PENDING_NONE


@overload(hooks.tt_move_allowed, inline="always")
def _tt_move_allowed(T, mv):
    if _fx(T):
        return lambda T, mv: (mv & SP_MASK) != SP_TURN
