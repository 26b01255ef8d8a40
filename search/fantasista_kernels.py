"""numba part of the Ousho Fantasista search: the bottom of the tree (nodes of depth 3, 2 and 1, their rolls, the
quiescence) in one kernel call.

Almost every node of a search is within three plies of the horizon or in the quiescence below it, so running that
part of the tree in one kernel call takes the Python node loop of :mod:`search.fantasista` off the hot path (each
Python node cost several kernel calls with their argument unboxing plus the bookkeeping). The kernels do exactly
what the Python loop does, in the same order, and count the same nodes, so a search gives the same turn, value and
node count either way (``tests/test_fantasista_frontier.py``):

* a node's turns (:func:`legal_turns_k`) ordered by :func:`_order` — the static value of each child for the
  opponent, lowest first, the hint (TT best turn) first, ties in generation order;
* :func:`node3_k`: a depth-3 node; each child is a depth-2 node (:func:`_decision2`: counted, a draw if repeated,
  TT probe, :func:`_node2`, TT store), through a main-outcome chance node as below (no late-move reduction);
* :func:`node2_k`: a depth-2 node; each child is a depth-1 node (:func:`_decision1`: counted, a draw if repeated,
  TT probe, :func:`_frontier`, TT store), through a main-outcome chance node (:func:`_chance_child`) when the engine
  is chance-aware and a roll follows the turn; with late-move reduction, a late quiet turn is first searched as a
  depth-0 node with a null window (:func:`_leaf_child`);
* :func:`frontier_k` / :func:`_frontier`: a depth-1 node; each child (or its main roll outcome) is a depth-0 node:
  counted, scored 0 if its key is on the search path or in the game's history, otherwise its quiescence value
  (stand pat, then captures only, ``qdepth`` <= 2 plies, :func:`_quiesce2` / :func:`_quiesce_last`; with
  ``F_QCHECKS`` also the checks at its first ply, and every evasion in check);
* fail-hard bookkeeping as in Python: the best value, alpha raised, a cut at beta.

The caller (``FantasistaSearcher._kernel_node``) keeps the node's own count, repetition test, TT probe and store,
and the clock / ``stop`` checks between calls. The kernels stop when the node budget is exceeded (``F_STATUS`` =
``STOP_BUDGET``) or a generation buffer is too small (``STOP_OVERFLOW``: the caller then searches the node in
Python, which grows the buffers). Nodes with every roll outcome searched (``expand_every_outcome``) stay in Python.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from engine.kernels import inline_kernel, inner_kernel, kernel
from engine.variants.fantasista import kernels as FK

from .kernels import MATE  # the one mate score (a mate here is flat: no distance)
#: ``info`` slots: nodes counted so far (in: the search's count; out: updated), the node budget (0 = none), the best
#: child's index (out), the status (out), chance nodes visited (in / out); the searcher's settings: whose rolls are
#: chance nodes (bit c set: colour c's; 0 = roll-blind, 3 = chance-aware), chance nodes counted as nodes, quiescence
#: plies (0-2), the last ply of the buffers, late-move reduction on, checks in the quiescence, twin drops pruned
#: (:func:`prune_twin_drops`).
(F_NODES, F_LIMIT, F_BEST, F_STATUS, F_CHANCE, F_AWARE, F_COUNT_CHANCE, F_QDEPTH, F_MAX_PLY, F_LMR,
 F_QCHECKS, F_TWIN_DROPS) = range(12)
INFO_SIZE = 12
OK, STOP_BUDGET, STOP_OVERFLOW = 0, 1, 2
EXACT, LOWER, UPPER = 0, 1, 2

#: The transposition table, shared by the Python loop and the kernels: one entry per slot ``key & (size - 1)``,
#: replaced by every store; ``key`` 0 = empty. ``key`` is the position key mixed with the move number
#: (:func:`tt_key`); ``move`` the best child's key (the ordering hint).
TTable = namedtuple("TTable", ["key", "val", "move", "depth", "flag"])
#: The search's arrays: per ply ``scores`` / ``caps`` / ``keys`` (int64 / int8 / int64 [plies, 1 << 14]) and ``work``
#: (int8 [plies, 2, S]: the main roll outcomes of a node's children and scratch), ``path`` (uint64 [plies]: the
#: decision node's key at each ply of the current line), ``history`` (the game's earlier positions, sorted),
#: ``mkeys`` (uint64 [31]: move-number keys), the d20 rows (``roll_p`` [R]; ``roll_kind`` / ``roll_a`` / ``roll_b``
#: [colour, R], see :func:`_receive_into`) and ``info``.
SearchArrays = namedtuple("SearchArrays", ["scores", "caps", "keys", "work", "path", "history", "mkeys", "roll_p",
                                           "roll_kind", "roll_a", "roll_b", "info"])

#: Late-move reduction: at a node of depth 2 or more (not the root, not in check), the turns ordered after the first
#: LMR_FULL_TURNS that capture nothing are searched one ply shallower with a null window first, and at full depth
#: only if that beats alpha (``FantasistaSearcher.late_move_reduction``).
LMR_FULL_TURNS = 4

#: Width of the child index in an ordering key (buffers hold at most 1 << 14 outcomes).
IDX_BITS = 14
HINT_SCORE = -10 ** 9


@kernel
def _order(G, n, E, parent, scores, caps, keys, hint):
    """``keys[:n]`` = the children's indexes, best first for the side to move in ``parent``: ascending static value
    for the opponent (``scores``), the child with key ``hint`` first, ties in generation order (as a stable argsort
    would give). Each key packs (score, index), so all keys differ and a Shell sort gives that order."""
    FK.evaluate_many(G.out, G.odesc, n, E, 0, 0, parent, scores, caps)
    for i in range(n):
        s = scores[i]
        if hint != 0 and G.oh[i] == hint:
            s = HINT_SCORE
        keys[i] = ((s + (1 << 31)) << IDX_BITS) | i
    _sort_keys(keys, n)


@inner_kernel
def _sort_keys(keys, n):
    """Sort ``keys[:n]`` (all different) ascending by a Shell sort, then keep their index bits."""
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


#: Which children a quiescence node searches (:func:`_order_quiet`): those that took material; those or that give
#: check (the first quiescence ply with ``F_QCHECKS``); all (in check with ``F_QCHECKS``).
Q_CAPTURES, Q_CHECKS, Q_ALL = 0, 1, 2


@inner_kernel
def _order_quiet(G, n, E, T, parent, scores, caps, keys, which):
    """The quiescence's ordering: ``keys[:m]`` = the children it searches (``which``, see :data:`Q_CAPTURES`;
    ``caps`` = took material), in :func:`_order`'s order; returns ``m``. The scores and captures come from
    :func:`evaluate_many` (the parent's board terms plus the squares a turn changed), not from a pass over the board
    per child; a check is tested only for a quiet child at the first ply with ``F_QCHECKS``."""
    if n == 0:  # nothing to take: no pass over the parent's board
        return 0
    FK.evaluate_many(G.out, G.odesc, n, E, 0, 0, parent, scores, caps)
    m = 0
    for i in range(n):
        keep = caps[i] == 1 or which == Q_ALL
        if not keep and which == Q_CHECKS:
            child = G.out[i]
            keep = FK.in_check(child, T, np.int64(child[FK.ST_STM]))
        if keep:
            keys[m] = ((scores[i] + (1 << 31)) << IDX_BITS) | i
            m += 1
    _sort_keys(keys, m)
    return m


@kernel
def prune_twin_drops(st, G, n):
    """Remove from the ``n`` turns in ``G`` every drop of an ordinary piece while the side to move also holds
    a token of that type (the ordinary drop's twin, the token dropped on the same square, is in the list: the same
    legality and the same static value); returns the number kept, the others compacted in generation order.

    The token drop is the better of the two almost always: a token captured leaves the game, the ordinary piece
    would go to the captor's hand, and what stays in hand is the same piece either way. Without this the search
    spent a second subtree of equal static value on each such drop, most of all in the positions a chance-aware
    search reaches right after a roll, where the tokens just received sit in hand next to ordinary pieces of the same
    type (ayumi 4-18: two pawns and a gold; ginsara: two silvers)."""
    th = FK.ST_TH + 21 * st[FK.ST_STM]
    twins = False
    for pt in range(1, 8):  # only pieces of the ordinary hand (P L N S G B R) have ordinary twins
        if st[th + pt] > 0:
            twins = True
    if not twins:  # most positions: no token of those types in hand, nothing to look for
        return n
    j = 0
    for i in range(n):
        d = G.odesc[i]
        if d[0] == 1 and d[1] == FK.PART_DROP and (d[4] & 1) == 0 and st[th + d[2]] > 0:
            continue
        if j != i:
            for x in range(FK.S):
                G.out[j, x] = G.out[i, x]
            G.oh[j] = G.oh[i]
            G.oflag[j] = G.oflag[i]
            for x in range(1 + 5 * G.odesc[i, 0]):
                G.odesc[j, x] = G.odesc[i, x]
        j += 1
    G.info[FK.I_N] = j
    return j


@inner_kernel
def _count(info):
    """One more node; False when that exceeds the budget (the status says so)."""
    info[F_NODES] += 1
    if info[F_LIMIT] != 0 and info[F_NODES] > info[F_LIMIT]:
        info[F_STATUS] = STOP_BUDGET
        return False
    return True


@inner_kernel
def _repeated(h, history, path, n_path):
    """``h`` is a position of the game before the root (``history``, sorted) or on the search path
    (``path[:n_path]``)."""
    for k in range(n_path):
        if path[k] == h:
            return True
    j = np.searchsorted(history, h)
    return j < len(history) and history[j] == h


@inner_kernel
def _quiesce_open(st, h, stand, T, E, G, Gu, scores, caps, keys, beta, ply, max_ply, info, first):
    """The start of a quiescence node whose static value is ``stand`` (the parent's ordering score of this child,
    or :func:`.kernels.evaluate_k`): (stand pat, number of children ordered in ``keys``), or (its value, -1)
    when it ends here: stand pat at or above ``beta`` or at the last ply, in check with no legal turn (mated), or
    a buffer overflow (the status says so). Out of check only the turns that may take material are generated
    (:func:`capture_turns_k`), so a side without a legal turn but not in check stands pat here.

    With ``F_QCHECKS``: at the quiescence's ``first`` ply the turns that give check are searched too (all turns
    generated), and a side in check does not stand pat: its "stand pat" is -MATE and every evasion is searched."""
    qchecks = info[F_QCHECKS] != 0
    if ply >= max_ply:
        return stand, -1
    checked = False
    if qchecks or stand < beta:
        checked = FK.in_check(st, T, np.int64(st[FK.ST_STM]))
    evasions = qchecks and checked
    if stand >= beta and not evasions:
        return stand, -1
    if checked:
        n = FK.legal_turns_k(st, h, T, G, Gu, FK.NO_SPELL)
        which = Q_ALL if evasions else Q_CAPTURES
    elif qchecks and first:
        n = FK.legal_turns_k(st, h, T, G, Gu, FK.NO_SPELL)
        which = Q_CHECKS
    else:
        n = FK.capture_turns_k(st, h, T, G, Gu)
        which = Q_CAPTURES
    if n < 0:
        info[F_STATUS] = STOP_OVERFLOW
        return 0, -1
    if (checked or which == Q_CHECKS) and info[F_TWIN_DROPS] != 0:  # all turns generated, as by the loop's _gen
        n = prune_twin_drops(st, G, n)
    if n == 0 and checked:
        return -MATE, -1
    if evasions:
        stand = -MATE
    return stand, _order_quiet(G, n, E, T, st, scores, caps, keys, which)


@inner_kernel
def _quiesce_last(st, h, stand, T, E, G, Gu, scores, caps, keys, alpha, beta, ply, max_ply, info, first):
    """Quiescence of one ply: stand pat, then each capture valued by its static value (read from the ordering
    scores: a quiescence of 0 plies is the static value). ``G``: this ply's generation buffer; ``Gu``: the
    uchifuzume scratch of :func:`legal_turns_k`; ``stand``: ``st``'s static value; ``first``: the quiescence's
    first ply (see :func:`_quiesce_open`)."""
    stand, m = _quiesce_open(st, h, stand, T, E, G, Gu, scores, caps, keys, beta, ply, max_ply, info, first)
    if m < 0:
        return stand
    if alpha < stand:
        alpha = stand
    best = stand
    for k in range(m):
        i = keys[k]
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


@inner_kernel
def _quiesce2(st, h, stand, T, E, G, G1, Gu, scores, caps, keys, alpha, beta, ply, max_ply, info):
    """Quiescence of two plies: as :func:`_quiesce_last`, each capture searched by it (buffers: ``G`` and row
    ``ply`` of ``scores`` / ``caps`` / ``keys`` for this ply, ``G1`` and row ``ply + 1`` for the next)."""
    stand, m = _quiesce_open(st, h, stand, T, E, G, Gu, scores[ply], caps[ply], keys[ply], beta, ply, max_ply,
                             info, np.bool_(True))
    if m < 0:
        return stand
    if alpha < stand:
        alpha = stand
    best = stand
    for k in range(m):
        i = keys[ply, k]
        if not _count(info):
            return 0
        v = -_quiesce_last(G.out[i], G.oh[i], scores[ply, i], T, E, G1, Gu, scores[ply + 1], caps[ply + 1],
                           keys[ply + 1], -beta, -alpha, ply + 1, max_ply, info, np.bool_(False))
        if info[F_STATUS] != OK:
            return 0
        if v > best:
            best = v
        if alpha < v:
            alpha = v
        if alpha >= beta:
            break
    return best


#: Kinds of roll rows (``roll_kind``): nothing, ``b`` tokens of type ``a``, two pawn and one gold tokens, right
#: ``a``, the emblem, and the two target choices (an invincible pawn / tokin, a carrier bishop / horse).
R_NOTHING, R_TOKENS, R_PAWNS_GOLD, R_RIGHT, R_EMBLEM, R_INVINCIBLE, R_CARRIER = range(7)


@inner_kernel
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


@inner_kernel
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


@inner_kernel
def _magic_after(ply):
    """A roll follows ply ``ply`` (:func:`engine.variants.fantasista.state.magic_after`)."""
    return ply >= 15 and (ply % 15 == 0 or ply % 15 == 1)


@kernel
def _rolls(info, ply, roller):
    """The search has a chance node after ply ``ply``, played by ``roller``: a roll follows it and the engine
    searches that colour's rolls (``F_AWARE``)."""
    return (info[F_AWARE] >> roller) & 1 != 0 and _magic_after(ply)


@kernel
def tt_key(h, mnum, mkeys):
    """The TT key of position key ``h`` with ``mnum`` the next ply's number: mixed with the move number modulo 30
    (whether and how soon rolls come; the first 30 plies apart), so a board before and after a roll differs."""
    return h ^ mkeys[mnum % 30 if mnum > 30 else mnum]


@inner_kernel
def _tt_store(TT, key, depth, v, flag, move):
    i = key & np.uint64(len(TT.key) - 1)
    TT.key[i] = key
    TT.val[i] = v
    TT.move[i] = move
    TT.depth[i] = depth
    TT.flag[i] = flag


@inner_kernel
def _tt_probe(TT, key, depth, alpha, beta):
    """(the entry cuts the node: its depth is enough and its bound settles the window, its value, its best child's
    key as the ordering hint; 0 when there is no entry), as the Python loop probes."""
    slot = key & np.uint64(len(TT.key) - 1)
    if TT.key[slot] != key:
        return False, 0.0, np.uint64(0)
    v = TT.val[slot]
    f = TT.flag[slot]
    cut = TT.depth[slot] >= depth and (f == EXACT or (f == LOWER and v >= beta) or (f == UPPER and v <= alpha))
    return cut, v, TT.move[slot]


@inner_kernel
def _tt_store_result(TT, key, depth, best_v, alpha, beta, G, info):
    """Store a node's result (``alpha`` / ``beta``: its window on entry) unless it was stopped or had no legal
    turn (-MATE, not stored, as in Python); the best child is ``G``'s turn ``info[F_BEST]``."""
    best = info[F_BEST]
    if info[F_STATUS] != OK or best < 0:
        return
    flag = EXACT if alpha < best_v < beta else (LOWER if best_v >= beta else UPPER)
    _tt_store(TT, key, depth, best_v, flag, G.oh[best])


@inner_kernel
def _chance_child(child, ch, c, E, T, A, work):
    """The main-outcome chance node after ``child``'s turn (key ``ch``, roller ``c``), as
    ``FantasistaSearcher._chance_main``: counted in ``F_CHANCE`` (and as a node with ``F_COUNT_CHANCE``); the most
    probable row's position is left in ``work[0]``. Returns the shift ``sum p(r) * (static(r) - static(main))``
    over the other rows (rounded as in Python), the main position's key, False when the budget ran out, and the
    main position's static value."""
    info = A.info
    info[F_CHANCE] += 1
    if info[F_COUNT_CHANCE] != 0 and not _count(info):
        return 0, ch, False, 0
    main_static, changed = _roll_row_static(child, A.roll_kind[c, 0], A.roll_a[c, 0], A.roll_b[c, 0], c, E, work,
                                            True)
    acc = 0.0
    for r in range(1, len(A.roll_p)):
        sr, _ = _roll_row_static(child, A.roll_kind[c, r], A.roll_a[c, r], A.roll_b[c, r], c, E, work, False)
        acc += A.roll_p[r] * (sr - main_static)
    return np.int64(np.rint(acc)), (FK.zhash(work[0], T) if changed else ch), True, main_static


@inline_kernel
def _open_child(st, G, i, ply, roll, c, E, T, A, work):
    """Child ``i`` of the full-width node ``st`` at ``ply`` (its turns in ``G``) as the node's loop searches it:
    (the position, its key, the roll's shift, its static value, False when the budget ran out). The row is made if
    the generator left it unmade; when a roll follows the turn (``roll``, roller ``c``) the child is the main roll
    outcome in ``work[0]`` (:func:`_chance_child`), else the turn's outcome with its ordering score."""
    FK.make_lazy_row(st, G, i)
    if not roll:
        return G.out[i], G.oh[i], np.int64(0), A.scores[ply, i], True
    shift, ch, counted, static = _chance_child(G.out[i], G.oh[i], c, E, T, A, work)
    return work[0], ch, shift, static, counted


@kernel
def _roll_gain(st, c, E, A, work):
    """How much colour ``c``'s coming roll is expected to change the static value of ``st`` for its side to move
    (``c``'s opponent): sum over the rows r of p(r) * (static(r) - static(st)), rounded as in Python (a target row
    at the roller's choice, :func:`_roll_row_static`; ``work[1]`` is scratch)."""
    s0 = FK.evaluate_k(st, E, 0, 0)
    acc = 0.0
    for r in range(len(A.roll_p)):
        sr, _ = _roll_row_static(st, A.roll_kind[c, r], A.roll_a[c, r], A.roll_b[c, r], c, E, work, False)
        acc += A.roll_p[r] * (sr - s0)
    return np.int64(np.rint(acc))


@inner_kernel
def _open_node(st, h, ply, hint, T, E, G, Gu, A):
    """A full-width node's turns generated into ``G`` and ordered into ``A.keys[ply]`` (:func:`_order`): their
    number, 0 when mated, -1 on a buffer overflow (the status says so). ``F_BEST`` is reset to -1.

    The ordinary drops' rows are left unmade (``I_LAZY``; :func:`.kernels.evaluate_many` values them from ``st``):
    a node with pieces in hand has a hundred or more, most of them never searched, and the caller makes a child's
    row (:func:`.kernels.make_lazy_row`) only when it reaches it. Not with the king-exposure term, which reads the
    child's row."""
    A.info[F_BEST] = -1
    G.info[FK.I_LAZY] = 1 if E.extra[5] == 0 else 0
    n = FK.legal_turns_k(st, h, T, G, Gu, FK.NO_SPELL)
    G.info[FK.I_LAZY] = 0
    if n < 0:
        A.info[F_STATUS] = STOP_OVERFLOW
        return -1
    if A.info[F_TWIN_DROPS] != 0:
        n = prune_twin_drops(st, G, n)
    if n > 0:
        _order(G, n, E, st, A.scores[ply], A.caps[ply], A.keys[ply], hint)
    return n


@inner_kernel
def _leaf_child(child, ch, roll, shift, alpha, beta, ply, static, T, E, G1, G2, Gu, A):
    """Value, for the parent at ``ply`` (window ``alpha``, ``beta``), of its child ``child`` (key ``ch``; with
    ``roll``, the main roll outcome, to be shifted by ``shift``) searched as a depth-0 node at ``ply + 1``: counted,
    0 if its key is on the path or in the game's history, otherwise its quiescence (``static``: the child's
    static value, its ordering score or, with ``roll``, that of the main outcome). On a stop (``F_STATUS`` != OK)
    the value means nothing."""
    info = A.info
    if not _count(info):
        return 0.0
    qdepth = info[F_QDEPTH]
    if _repeated(ch, A.history, A.path, ply + 1):
        v = 0.0  # a repetition: a draw
    elif qdepth >= 2:
        v = -_quiesce2(child, ch, static, T, E, G1, G2, Gu, A.scores, A.caps, A.keys, -beta - shift,
                       -alpha - shift, ply + 1, info[F_MAX_PLY], info)
    elif qdepth == 1:
        v = -_quiesce_last(child, ch, static, T, E, G1, Gu, A.scores[ply + 1], A.caps[ply + 1], A.keys[ply + 1],
                           -beta - shift, -alpha - shift, ply + 1, info[F_MAX_PLY], info, np.bool_(True))
    else:
        v = -float(static)
    if roll and -MATE < v < MATE:  # -(v(main) + shift); a mate stays a mate
        v -= shift
    return v


@inner_kernel
def _frontier(st, h, mnum, alpha, beta, hint, ply, T, E, G, G1, G2, Gu, A):
    """Value (negamax, fail-hard as the Python search) of the depth-1 decision node ``st`` (key ``h``, ``mnum``
    the next ply's number) at ``ply``; ``A.info[F_BEST]`` = the best child's index in ``G`` (-1: no legal turn).

    The caller has counted the node, probed the TT and put ``h`` on the path. Buffers: ``G`` / ``G1`` / ``G2``
    for plies ``ply`` to ``ply + 2``, ``Gu`` the uchifuzume scratch. Each child is a depth-0 node: counted, a draw
    if repeated, else its quiescence. When the engine is chance-aware and a roll follows this turn, each child is a
    main-outcome chance node (:func:`_chance_child`; counted as a node only with ``F_COUNT_CHANCE``) whose main
    position is that depth-0 node. On a stop (``F_STATUS`` != OK) the value means nothing."""
    info = A.info
    n = _open_node(st, h, ply, hint, T, E, G, Gu, A)
    if n <= 0:
        return -MATE if n == 0 else 0.0
    scores, keys = A.scores, A.keys
    c = np.int64(st[FK.ST_STM])  # the roller, if a roll follows this turn
    roll = _rolls(info, mnum, c)
    qdepth = info[F_QDEPTH]
    max_ply = info[F_MAX_PLY]
    best_v = -MATE - 1.0
    best_i = keys[ply, 0]
    work = A.work[ply + 1]
    for k in range(n):
        i = keys[ply, k]
        child, ch, shift, static, counted = _open_child(st, G, i, ply, roll, c, E, T, A, work)
        if not counted:
            return 0.0
        # the depth-0 child, as _leaf_child does, written out: calling it here cost ~7% of search speed (bench)
        if not _count(info):
            return 0.0
        if _repeated(ch, A.history, A.path, ply + 1):
            v = 0  # a repetition: a draw
        elif qdepth >= 2:
            v = -_quiesce2(child, ch, static, T, E, G1, G2, Gu, scores, A.caps, keys, -beta - shift, -alpha - shift,
                           ply + 1, max_ply, info)
        elif qdepth == 1:
            v = -_quiesce_last(child, ch, static, T, E, G1, Gu, scores[ply + 1], A.caps[ply + 1], keys[ply + 1],
                               -beta - shift, -alpha - shift, ply + 1, max_ply, info, np.bool_(True))
        else:
            v = -static
        if info[F_STATUS] != OK:
            return 0.0
        if roll and -MATE < v < MATE:  # -(v(main) + shift); a mate stays a mate
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


@kernel
def frontier_k(st, h, mnum, alpha, beta, hint, ply, T, E, G, G1, G2, Gu, A):
    """:func:`_frontier` called from Python (the status cleared first)."""
    A.info[F_STATUS] = OK
    return _frontier(st, h, mnum, alpha, beta, hint, ply, T, E, G, G1, G2, Gu, A)


@inner_kernel
def _decision1(st, h, mnum, alpha, beta, ply, T, E, G, G1, G2, Gu, TT, A):
    """A whole depth-1 decision node as ``FantasistaSearcher._decision`` runs it: counted, a draw if repeated, the
    TT probed (a cut returns its value, else its move orders the turns), :func:`_frontier`, the TT stored."""
    info = A.info
    if not _count(info):
        return 0.0
    if _repeated(h, A.history, A.path, ply):
        return 0.0
    key = tt_key(h, mnum, A.mkeys)
    cut, v, hint = _tt_probe(TT, key, 1, alpha, beta)
    if cut:
        return v
    A.path[ply] = h
    best_v = _frontier(st, h, mnum, alpha, beta, hint, ply, T, E, G, G1, G2, Gu, A)
    _tt_store_result(TT, key, 1, best_v, alpha, beta, G, info)
    return best_v


@inner_kernel
def _node2(st, h, mnum, alpha, beta, hint, ply, T, E, G, G1, G2, G3, Gu, TT, A):
    """Value of the depth-2 decision node ``st`` at ``ply`` (the caller has counted it, probed the TT and put
    ``h`` on the path; it stores the result): its turns ordered as in Python, each child a depth-1 node
    (:func:`_decision1`), through a main-outcome chance node when the engine is chance-aware and a roll follows
    this turn. ``A.info[F_BEST]``: the best child's index in ``G`` (-1: no legal turn). Buffers ``G`` to ``G3``
    for plies ``ply`` to ``ply + 3``. On a stop (``F_STATUS`` != OK) the value means nothing."""
    info = A.info
    n = _open_node(st, h, ply, hint, T, E, G, Gu, A)
    if n <= 0:
        return -MATE if n == 0 else 0.0
    keys = A.keys
    c = np.int64(st[FK.ST_STM])
    roll = _rolls(info, mnum, c)
    best_v = -MATE - 1.0
    best_i = keys[ply, 0]
    work = A.work[ply + 1]
    # Late-move reduction (as in Python): when the opponent's roll follows the ply a reduction cuts off, the
    # reduced searches end before that roll and the full ones after it, so they are shifted by its static gain.
    reduce_from = n
    lmr_gain = 0
    if info[F_LMR] != 0 and not FK.in_check(st, T, c):
        reduce_from = LMR_FULL_TURNS
        if _rolls(info, mnum + 1, 1 - c):
            lmr_gain = _roll_gain(st, 1 - c, E, A, work)
    for k in range(n):
        i = keys[ply, k]
        child, ch, shift, static, counted = _open_child(st, G, i, ply, roll, c, E, T, A, work)
        if not counted:
            return 0.0
        if k >= reduce_from and A.caps[ply, i] == 0:  # a late quiet turn: a null-window depth-0 search first
            v = _leaf_child(child, ch, roll, shift, alpha - lmr_gain, alpha - lmr_gain + 1, ply, static,
                            T, E, G1, G2, Gu, A)
            if info[F_STATUS] != OK:
                return 0.0
            if -MATE < v < MATE:
                v += lmr_gain
            if v <= alpha:  # not better: no full search
                if v > best_v:
                    best_v = v
                    best_i = i
                continue
            if roll:  # the full search passes the chance node again (counted again, as in Python)
                info[F_CHANCE] += 1
                if info[F_COUNT_CHANCE] != 0 and not _count(info):
                    return 0.0
        v = -_decision1(child, ch, mnum + 1, -beta - shift, -alpha - shift, ply + 1, T, E, G1, G2, G3, Gu, TT, A)
        if info[F_STATUS] != OK:
            return 0.0
        if roll and -MATE < v < MATE:
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


@kernel
def node2_k(st, h, mnum, alpha, beta, hint, ply, T, E, G, G1, G2, G3, Gu, TT, A):
    """:func:`_node2` called from Python (the status cleared first)."""
    A.info[F_STATUS] = OK
    return _node2(st, h, mnum, alpha, beta, hint, ply, T, E, G, G1, G2, G3, Gu, TT, A)


@inner_kernel
def _decision2(st, h, mnum, alpha, beta, ply, T, E, G, G1, G2, G3, Gu, TT, A):
    """A whole depth-2 decision node, as :func:`_decision1` is a depth-1 one: counted, a draw if repeated, the TT
    probed, :func:`_node2`, the TT stored."""
    info = A.info
    if not _count(info):
        return 0.0
    if _repeated(h, A.history, A.path, ply):
        return 0.0
    key = tt_key(h, mnum, A.mkeys)
    cut, v, hint = _tt_probe(TT, key, 2, alpha, beta)
    if cut:
        return v
    A.path[ply] = h
    best_v = _node2(st, h, mnum, alpha, beta, hint, ply, T, E, G, G1, G2, G3, Gu, TT, A)
    _tt_store_result(TT, key, 2, best_v, alpha, beta, G, info)
    return best_v


@kernel
def node3_k(st, h, mnum, alpha, beta, hint, ply, T, E, G, G1, G2, G3, G4, Gu, TT, A):
    """Value of the depth-3 decision node ``st`` at ``ply``, as :func:`node2_k` is of a depth-2 one (the caller
    counts, probes, stores), each child a depth-2 node (:func:`_decision2`) through a main-outcome chance node when
    a roll follows. No late-move reduction: with ``F_LMR`` the caller searches depth-3 nodes in Python. Buffers
    ``G`` to ``G4`` for plies ``ply`` to ``ply + 4``. Taking this ply off the Python loop leaves it about one call
    per thousand nodes, where each depth-3 node's children had cost a Python call each."""
    info = A.info
    info[F_STATUS] = OK
    n = _open_node(st, h, ply, hint, T, E, G, Gu, A)
    if n <= 0:
        return -MATE if n == 0 else 0.0
    keys = A.keys
    c = np.int64(st[FK.ST_STM])
    roll = _rolls(info, mnum, c)
    best_v = -MATE - 1.0
    best_i = keys[ply, 0]
    work = A.work[ply + 1]
    for k in range(n):
        i = keys[ply, k]
        child, ch, shift, _, counted = _open_child(st, G, i, ply, roll, c, E, T, A, work)
        if not counted:
            return 0.0
        v = -_decision2(child, ch, mnum + 1, -beta - shift, -alpha - shift, ply + 1, T, E, G1, G2, G3, G4, Gu, TT,
                        A)
        if info[F_STATUS] != OK:
            return 0.0
        if roll and -MATE < v < MATE:
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
