"""Rule hooks of the shared kernels: the points where a variant's own rules join the shared generator.

Each hook is a plain function that kernels call. What it does is chosen by the type of the tables when numba compiles
a kernel (``numba.extending.overload(..., inline="always")``): for the plain :class:`engine.variant.Tables` (shogi,
dai shogi, turncoat) the overloads here are no-ops or the standard rule, folded away by the compiler, so those
games' machine code is what it was without hooks. A variant with its own tables class registers overloads for it in
its own package (fantasista: :mod:`engine.variants.fantasista.hooks`), and that module must be imported before a
kernel is first compiled for those tables (fantasista's package imports it).

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


def extra_drops(P, T, mode, out, n, c, ksq, n_chk, chk_sq):
    """Append the variant's drops that the standard drop loop does not make; return the new length."""
    return n


def variant_pawn_drop_mates(P, T, c, pt, to, out):
    """The variant's uchifuzume test: 1 if colour ``c`` dropping a pawn of kind ``pt`` on ``to`` (checking the enemy
    king) leaves the enemy no reply, 0 if not, -1: the standard test (``out``: move space it may overwrite)."""
    return -1


def boarding(P, T, code, frm, to):
    """The special-action bits of ``code`` on ``frm`` moving onto the own piece on ``to``; 0: it may not."""
    return 0


def extra_attacks(P, T, sq, by):
    """Whether colour ``by`` attacks ``sq`` with pieces the mailbox does not show (riders)."""
    return False


def variant_generate(P, T, mode, out):
    """The variant's whole generator, or -1: the standard one (:func:`engine.kernels.movegen.generate`)."""
    return -1


def variant_do_move(P, T, mv):
    """Whether the variant played ``mv`` itself (then :func:`engine.kernels.movegen.do_move` does nothing more)."""
    return False


def variant_undo_move(P, T):
    """Whether the variant took back the last move itself."""
    return False


# ------------------------------------------------------------------ the search's hooks (search/kernels.py)
def search_key(P, T, aply):
    """The transposition-table key of the position at absolute ply ``aply`` (the position key, plus what else tells
    nodes apart: fantasista's magic schedule and pending node)."""
    return P.keys[aply]


def chance_rows(P, T):
    """The number of outcomes of the chance event due at this node; 0: a decision node."""
    return 0


def chance_weight(P, T, r):
    """The weight of outcome ``r`` (its probability in units: the weights of a node's outcomes sum to its total)."""
    return 0


def play_chance(P, T, r):
    """Push outcome ``r`` of the chance event due, as a pseudo-ply (``moves[ply] = 0``)."""
    return None


def unplay_chance(P, T):
    """Take back the outcome pushed by :func:`play_chance`."""
    return None


def chance_count(P, T):
    """How many chance events the game has had at this node (0 in a game without them)."""
    return 0


def chance_horizon(P, T):
    """The events a search from this node anticipates at its leaves are numbers [chance_count, this)."""
    return 0


def preview_chance(P, T, j):
    """Make event number ``j`` the one due at this node (chance_rows / play_chance then act for it), for a static
    look at its outcomes; return what :func:`end_preview` takes to restore the node."""
    return 0


def end_preview(P, T, saved):
    """Undo :func:`preview_chance`."""
    return None


def null_move_allowed(P, T):
    """Whether the side to move may pass in the search's null-move test (not while a decision inside a turn is
    pending)."""
    return True


def tt_move_allowed(T, mv):
    """Whether ``mv`` may be tried as a transposition-table move before the node's moves are generated (a move that
    only means something after generation may not)."""
    return True


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


@overload(extra_drops, inline="always")
def _extra_drops_plain(P, T, mode, out, n, c, ksq, n_chk, chk_sq):
    if plain_tables(T):
        return lambda P, T, mode, out, n, c, ksq, n_chk, chk_sq: n


@overload(variant_pawn_drop_mates, inline="always")
def _variant_pawn_drop_mates_plain(P, T, c, pt, to, out):
    if plain_tables(T):
        return lambda P, T, c, pt, to, out: -1


@overload(boarding, inline="always")
def _boarding_plain(P, T, code, frm, to):
    if plain_tables(T):
        return lambda P, T, code, frm, to: 0


@overload(extra_attacks, inline="always")
def _extra_attacks_plain(P, T, sq, by):
    if plain_tables(T):
        return lambda P, T, sq, by: False


@overload(variant_generate, inline="always")
def _variant_generate_plain(P, T, mode, out):
    if plain_tables(T):
        return lambda P, T, mode, out: -1


@overload(variant_do_move, inline="always")
def _variant_do_move_plain(P, T, mv):
    if plain_tables(T):
        return lambda P, T, mv: False


@overload(variant_undo_move, inline="always")
def _variant_undo_move_plain(P, T):
    if plain_tables(T):
        return lambda P, T: False


@overload(search_key, inline="always")
def _search_key_plain(P, T, aply):
    if plain_tables(T):
        return lambda P, T, aply: P.keys[aply]


@overload(chance_rows, inline="always")
def _chance_rows_plain(P, T):
    if plain_tables(T):
        return lambda P, T: 0


@overload(chance_weight, inline="always")
def _chance_weight_plain(P, T, r):
    if plain_tables(T):
        return lambda P, T, r: 0


@overload(play_chance, inline="always")
def _play_chance_plain(P, T, r):
    if plain_tables(T):
        return lambda P, T, r: None


@overload(unplay_chance, inline="always")
def _unplay_chance_plain(P, T):
    if plain_tables(T):
        return lambda P, T: None


@overload(chance_count, inline="always")
def _chance_count_plain(P, T):
    if plain_tables(T):
        return lambda P, T: 0


@overload(chance_horizon, inline="always")
def _chance_horizon_plain(P, T):
    if plain_tables(T):
        return lambda P, T: 0


@overload(preview_chance, inline="always")
def _preview_chance_plain(P, T, j):
    if plain_tables(T):
        return lambda P, T, j: 0


@overload(end_preview, inline="always")
def _end_preview_plain(P, T, saved):
    if plain_tables(T):
        return lambda P, T, saved: None


@overload(null_move_allowed, inline="always")
def _null_move_allowed_plain(P, T):
    if plain_tables(T):
        return lambda P, T: True


@overload(tt_move_allowed, inline="always")
def _tt_move_allowed_plain(T, mv):
    if plain_tables(T):
        return lambda T, mv: True
