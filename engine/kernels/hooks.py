"""Rule hooks of the shared kernels: the points where a variant's own rules join the shared generator.

Each hook is a plain function that kernels call. What it does is chosen by the type of the tables when numba compiles
a kernel (``numba.extending.overload(..., inline="always")``): for the plain :class:`engine.variant.Tables` (shogi,
dai shogi, turncoat) the overloads here are no-ops or the standard rule, folded away by the compiler, so those
games' machine code is what it was without hooks. A variant with its own tables class registers overloads for it in
its own package (fantasista: :mod:`engine.variants.fantasista.hooks`), and that module must be imported before a
kernel is first compiled for those tables (the variant's tables builder imports it).

A hook's file is part of the kernels that inline it: it is listed in
:data:`engine.kernels.cache.ENGINE_SHARED_SOURCES`, so an edit drops the compiled cache.
"""
from __future__ import annotations

from numba import types
from numba.extending import overload

from ..variant import P_PAWN, Tables


def plain_tables(T) -> bool:
    """Whether numba type ``T`` is the plain :class:`engine.variant.Tables` (the overloads below apply)."""
    return isinstance(T, types.BaseNamedTuple) and T.instance_class is Tables


# ------------------------------------------------------------------ the hooks (Python bodies: the plain rule)
def can_capture(P, T, code, to, tgt):
    """Whether piece ``code`` may capture the enemy piece ``tgt`` standing on ``to`` (immunities)."""
    return True


def pawns_on(P, T, c, w):
    """Word ``w`` of the bitboard of colour ``c``'s pieces that count for nifu."""
    return P.bb[T.params[P_PAWN] + (c << 5), w]


def is_pawn_drop(T, pt):
    """Whether a drop of hand kind ``pt`` is a pawn drop (nifu, uchifuzume)."""
    return pt == T.params[P_PAWN]


def drop_code(T, code, mv):
    """The code a drop ``mv`` of ``code`` (the hand kind with its colour) places on the board."""
    return code


def extra_drops(P, T, mode, out, n, c, ksq, n_chk, chk_sq):
    """Append the variant's drops that the standard drop loop does not make; return the new length."""
    return n


def move_marks(P, T, frm, to, key):
    """Square marks follow a board move from ``frm`` to ``to``: return (the key updated, the undo bits)."""
    return key, 0


def unmove_marks(P, T, frm, to, bits):
    """Undo :func:`move_marks` (``bits`` as it returned them)."""
    return 0


# ------------------------------------------------------------------ their plain overloads
@overload(can_capture, inline="always")
def _can_capture_plain(P, T, code, to, tgt):
    if plain_tables(T):
        return lambda P, T, code, to, tgt: True


@overload(pawns_on, inline="always")
def _pawns_on_plain(P, T, c, w):
    if plain_tables(T):
        return lambda P, T, c, w: P.bb[T.params[P_PAWN] + (c << 5), w]


@overload(is_pawn_drop, inline="always")
def _is_pawn_drop_plain(T, pt):
    if plain_tables(T):
        return lambda T, pt: pt == T.params[P_PAWN]


@overload(drop_code, inline="always")
def _drop_code_plain(T, code, mv):
    if plain_tables(T):
        return lambda T, code, mv: code


@overload(extra_drops, inline="always")
def _extra_drops_plain(P, T, mode, out, n, c, ksq, n_chk, chk_sq):
    if plain_tables(T):
        return lambda P, T, mode, out, n, c, ksq, n_chk, chk_sq: n


@overload(move_marks, inline="always")
def _move_marks_plain(P, T, frm, to, key):
    if plain_tables(T):
        return lambda P, T, frm, to, key: (key, 0)


@overload(unmove_marks, inline="always")
def _unmove_marks_plain(P, T, frm, to, bits):
    if plain_tables(T):
        return lambda P, T, frm, to, bits: 0
