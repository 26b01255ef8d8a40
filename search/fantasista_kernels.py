"""numba part of the Ousho Fantasista search: a frontier node (full width at depth 1) and the quiescence below it.

Almost every node of a search is a depth-1 node, one of its children or a quiescence node below them, so running
that bottom of the tree in one kernel call takes the Python node loop of :mod:`search.fantasista` off the hot path
(each Python node cost several kernel calls with their argument unboxing plus the bookkeeping). The kernel does
exactly what the Python code does for such a node, in the same order, and counts the same nodes, so a search gives
the same turn, value and node count either way (tested):

* the node's turns (:func:`legal_turns_k`) ordered by :func:`_order` — the static value of each child for the
  opponent, lowest first, the hint (TT best turn) first, ties in generation order;
* each child is a depth-0 decision node: counted, scored 0 if its key is on the search path or in the game's
  history, otherwise its quiescence value (stand pat, then captures only, ``qdepth`` <= 2 plies);
* fail-hard bookkeeping as in Python: the best value, alpha raised, a cut at beta.

The caller keeps what needs Python: the node's own count, repetition and TT probe, the TT store, nodes followed by
a roll (chance nodes of the aware engine) and the budget / clock / ``stop`` checks between calls. The kernel stops
when the node budget is exceeded (``F_STATUS`` = ``STOP_BUDGET``) or a generation buffer is too small
(``STOP_OVERFLOW``: the caller then searches the node in Python, which grows the buffers).
"""
from __future__ import annotations

import numpy as np

from engine.kernels import kernel
from engine.variants.fantasista import kernels as FK

MATE = 30000
#: ``info`` slots: nodes counted so far (in: the search's count; out: updated), the node budget (0 = none), the best
#: child's index (out), the status (out), chance nodes visited (in / out).
F_NODES, F_LIMIT, F_BEST, F_STATUS, F_CHANCE = range(5)
OK, STOP_BUDGET, STOP_OVERFLOW = 0, 1, 2
#: Width of the child index in an ordering key (buffers hold at most 1 << 14 outcomes).
IDX_BITS = 14
HINT_SCORE = -10 ** 9


@kernel
def _order(G, n, E, parent, scores, caps, keys, hint):
    """``keys[:n]`` = the children's indexes, best first for the side to move in ``parent``: ascending static value
    for the opponent (``scores``), the child with key ``hint`` first, ties in generation order (as a stable argsort
    would give). Each key packs (score, index), so all keys differ and a Shell sort gives that order."""
    FK.evaluate_many(G.out, n, E, 0, 0, parent, scores, caps)
    for i in range(n):
        s = scores[i]
        if hint != 0 and G.oh[i] == hint:
            s = HINT_SCORE
        keys[i] = ((s + (1 << 31)) << IDX_BITS) | i
    gap = 1
    while gap * 3 + 1 < n:
        gap = gap * 3 + 1
    while gap > 0:
        for i in range(gap, n):
            x = keys[i]
            j = i
            while j >= gap and keys[j - gap] > x:
                keys[j] = keys[j - gap]
                j -= gap
            keys[j] = x
        gap //= 3
    mask = (1 << IDX_BITS) - 1
    for i in range(n):
        keys[i] &= mask


@kernel
def _count(info):
    """One more node; False when that exceeds the budget (the status says so)."""
    info[F_NODES] += 1
    if info[F_LIMIT] != 0 and info[F_NODES] > info[F_LIMIT]:
        info[F_STATUS] = STOP_BUDGET
        return False
    return True


@kernel
def _repeated(h, history, n_history, path, n_path):
    """``h`` is a position of the game before the root (``history[:n_history]``, sorted) or on the search path."""
    for k in range(n_path):
        if path[k] == h:
            return True
    if n_history > 0:
        j = np.searchsorted(history[:n_history], h)
        if j < n_history and history[j] == h:
            return True
    return False


@kernel
def _quiesce_last(st, h, T, E, G, Gu, scores, caps, keys, alpha, beta, ply, max_ply, info):
    """Quiescence of one ply: stand pat, then each capture valued by its static value (read from the ordering
    scores: a quiescence of 0 plies is the static value). ``G``: this ply's generation buffer; ``Gu``: the
    uchifuzume scratch of :func:`legal_turns_k`."""
    stand = FK.evaluate_k(st, E, 0, 0)
    if stand >= beta or ply >= max_ply:
        return stand
    if alpha < stand:
        alpha = stand
    n = FK.legal_turns_k(st, h, T, G, Gu, 0)
    if n < 0:
        info[F_STATUS] = STOP_OVERFLOW
        return 0
    if n == 0:
        return -MATE
    _order(G, n, E, st, scores, caps, keys, np.uint64(0))
    best = stand
    for k in range(n):
        i = keys[k]
        if not caps[i]:
            continue
        if not _count(info):
            return 0
        v = -scores[i]
        if v > best:
            best = v
        if alpha < v:
            alpha = v
        if alpha >= beta:
            break
    return best


@kernel
def _quiesce2(st, h, T, E, G, G1, Gu, scores, caps, keys, alpha, beta, ply, max_ply, info):
    """Quiescence of two plies: as :func:`_quiesce_last`, each capture searched by it (buffers: ``G`` and row 0
    of ``scores`` / ``caps`` / ``keys`` for this ply, ``G1`` and row 1 for the next)."""
    stand = FK.evaluate_k(st, E, 0, 0)
    if stand >= beta or ply >= max_ply:
        return stand
    if alpha < stand:
        alpha = stand
    n = FK.legal_turns_k(st, h, T, G, Gu, 0)
    if n < 0:
        info[F_STATUS] = STOP_OVERFLOW
        return 0
    if n == 0:
        return -MATE
    _order(G, n, E, st, scores[0], caps[0], keys[0], np.uint64(0))
    best = stand
    for k in range(n):
        i = keys[0, k]
        if not caps[0, i]:
            continue
        if not _count(info):
            return 0
        v = -_quiesce_last(G.out[i], G.oh[i], T, E, G1, Gu, scores[1], caps[1], keys[1], -beta, -alpha, ply + 1,
                           max_ply, info)
        if info[F_STATUS] != OK:
            return 0
        if v > best:
            best = v
        if alpha < v:
            alpha = v
        if alpha >= beta:
            break
    return best


#: Kinds of roll rows (``roll_kind``): nothing, ``a`` x ``b`` tokens of type ``a``... see :func:`_receive_into`.
R_NOTHING, R_TOKENS, R_PAWNS_GOLD, R_RIGHT, R_EMBLEM, R_INVINCIBLE, R_CARRIER = range(7)


@kernel
def _receive_into(row, kind, a, b, c, dst):
    """``dst`` = ``row`` after colour ``c`` (the roller) receives a roll row of kind ``kind`` that has no target
    choice: ``b`` tokens of type ``a`` (R_TOKENS), two pawn and one gold tokens, right ``a``, the emblem."""
    FK._copy(row, dst)
    if kind == R_TOKENS:
        dst[FK.ST_TH + 21 * c + a] += b
    elif kind == R_PAWNS_GOLD:
        dst[FK.ST_TH + 21 * c + FK.P_] += 2
        dst[FK.ST_TH + 21 * c + FK.G_] += 1
    elif kind == R_RIGHT:
        dst[FK.ST_RIGHTS + 3 * c + a] += 1
    elif kind == R_EMBLEM:
        dst[FK.ST_EMBLEM + c] = 1


@kernel
def _roll_row_static(row, kind, a, b, c, E, work, keep):
    """The static value (for the side to move in ``row``, the roller's opponent) of the position after the roller
    ``c`` receives this roll row; a target row (invincible pawn / tokin, carrier bishop) is the minimum over the
    eligible targets (the roller picks), in the order of the Python search (square, then board before rider), the
    row itself when none is eligible. With ``keep`` the position of that value is left in ``work[0]`` (the first
    one reaching the minimum); ``work[1]`` is scratch. Returns (value, whether the position differs from ``row``)."""
    if kind == R_NOTHING:
        if keep:
            FK._copy(row, work[0])
        return FK.evaluate_k(row, E, 0, 0), False
    if kind < R_INVINCIBLE:
        dst = work[0] if keep else work[1]
        _receive_into(row, kind, a, b, c, dst)
        return FK.evaluate_k(dst, E, 0, 0), True
    best = 0
    found = False
    for s in range(81):
        for layer in range(2 if kind == R_INVINCIBLE else 1):
            base = FK.ST_B if layer == 0 else FK.ST_R
            mbase = FK.ST_M if layer == 0 else FK.ST_RM
            code = row[base + s]
            if code == 0 or (code >> 5) != c:
                continue
            pt = code & 31
            if kind == R_INVINCIBLE:
                if (pt != FK.P_ and pt != FK.PP_) or (row[mbase + s] & FK.INVINCIBLE) != 0:
                    continue
                mark = FK.INVINCIBLE
            else:
                if (pt != FK.B_ and pt != FK.PB_) or (row[mbase + s] & FK.CARRIER) != 0:
                    continue
                mark = FK.CARRIER
            FK._copy(row, work[1])
            work[1, mbase + s] = row[mbase + s] | mark
            v = FK.evaluate_k(work[1], E, 0, 0)
            if not found or v < best:
                best = v
                found = True
                if keep:
                    FK._copy(work[1], work[0])
    if not found:
        if keep:
            FK._copy(row, work[0])
        return FK.evaluate_k(row, E, 0, 0), False
    return best, True


@kernel
def frontier_k(st, h, T, E, G, G1, G2, Gu, scores, caps, keys, history, n_history, path, n_path, alpha, beta,
               hint, ply, max_ply, qdepth, roll_p, roll_kind, roll_a, roll_b, count_chance, work, info):
    """Value (negamax, fail-hard as the Python search) of the depth-1 decision node ``st`` (key ``h``) at ``ply``,
    whose turn is not followed by a roll; ``info[F_BEST]`` = the best child's index in ``G`` (-1: no legal turn).

    The caller has counted the node and probed the TT. Buffers: ``G`` / ``G1`` / ``G2`` and rows 0 / 1 / 2 of
    ``scores``, ``caps``, ``keys`` for plies ``ply``, ``ply + 1`` and ``ply + 2``; ``Gu`` is the uchifuzume scratch.
    ``path[:n_path]``: keys of the decision nodes on the search path, this one included; ``history[:n_history]``:
    the game's earlier positions, sorted. ``qdepth``: the quiescence plies below the children (0, 1 or 2).

    A roll after this node's turn (``roll_p`` not empty: the merged rows of the side to move's d20, most probable
    first, with ``roll_kind`` / ``roll_a`` / ``roll_b``) makes each child a main-outcome chance node as in
    ``FantasistaSearcher._chance_main``: the most probable row's position is searched (a depth-0 node), every
    other row adds ``p * (static(row) - static(main))``; counted as a node only with ``count_chance``
    (``info[F_CHANCE]`` counts them all); ``work`` (int8[2, S]) holds the main position.
    On a stop (``info[F_STATUS]`` != OK) the value means nothing."""
    info[F_STATUS] = OK
    info[F_BEST] = -1
    n = FK.legal_turns_k(st, h, T, G, Gu, 0)
    if n < 0:
        info[F_STATUS] = STOP_OVERFLOW
        return 0
    if n == 0:
        return -MATE
    _order(G, n, E, st, scores[0], caps[0], keys[0], hint)
    best_v = -MATE - 1
    best_i = keys[0, 0]
    c = np.int64(st[FK.ST_STM])  # the roller, if a roll follows this turn
    for k in range(n):
        i = keys[0, k]
        if len(roll_p) == 0 and not _count(info):
            return 0
        child = G.out[i]
        ch = G.oh[i]
        shift = 0
        if len(roll_p) > 0:
            # The child is a chance node: its main outcome (work[0]) is the depth-0 node searched below.
            info[F_CHANCE] += 1
            if count_chance and not _count(info):
                return 0
            main_static, changed = _roll_row_static(child, roll_kind[0], roll_a[0], roll_b[0], c, E, work, True)
            acc = 0.0
            for r in range(1, len(roll_p)):
                sr, _ = _roll_row_static(child, roll_kind[r], roll_a[r], roll_b[r], c, E, work, False)
                acc += roll_p[r] * (sr - main_static)
            shift = np.int64(np.rint(acc))
            child = work[0]
            if changed:
                ch = FK.zhash(child, T)
            if not _count(info):
                return 0
        if _repeated(ch, history, n_history, path, n_path):
            v = 0  # a repetition: a draw
        elif qdepth >= 2:
            v = -_quiesce2(child, ch, T, E, G1, G2, Gu, scores[1:], caps[1:], keys[1:], -beta - shift,
                           -alpha - shift, ply + 1, max_ply, info)
        elif qdepth == 1:
            v = -_quiesce_last(child, ch, T, E, G1, Gu, scores[1], caps[1], keys[1], -beta - shift, -alpha - shift,
                               ply + 1, max_ply, info)
        elif len(roll_p) > 0:
            v = -FK.evaluate_k(child, E, 0, 0)
        else:
            v = -scores[0, i]
        if info[F_STATUS] != OK:
            return 0
        if len(roll_p) > 0 and v < MATE and v > -MATE:  # -(v(main) + shift); a mate stays a mate
            v -= shift
        if v > best_v:
            best_v = v
            best_i = i
        if alpha < v:
            alpha = v
        if alpha >= beta:
            break
    info[F_BEST] = best_i
    return best_v
