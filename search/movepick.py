"""Staged move picker of the alpha-beta kernel (any board size, drops or not).

Stages per node (state in ``S.mp[ply]``):

1. **TT move**, before any generation: a transposition-table hit is keyed by the full 64-bit Zobrist key, so the
   stored move was legal in this very position; :func:`tt_move_ok` still checks the cheap part of
   pseudo-legality (our piece on the origin, or one in hand; the target not ours) so that a key collision cannot
   corrupt the board. When the TT move cuts off, no move is ever generated.
2. **Generation** of every legal search move (``GEN_SEARCH``; the generator is fully legal, so no later test is
   needed), minus the TT move, each scored into a band:
   good captures and promotions (``ORD_CAPTURE`` + MVV/LVA + promotion gain; good = SEE >= 0) > killer 1 > killer 2
   > counter-move (the quiet move that last refuted the opponent's previous move) > quiet moves by history (plus
   the continuation history after the opponent's previous move, feature ``conthist``) > losing captures
   (``ORD_BAD_CAPTURE``, SEE < 0).
3. **Picking**: the first few moves by selection, the rest sorted once (with 100-200 legal moves in shogi,
   drops included, repeated selection was the biggest cost).

Because the generator is legal and produces all moves at once (the generator is shared with perft and the rules),
stages after the TT move are score bands of one list rather than separate generation steps.
"""
from __future__ import annotations

from engine.kernels import inline_kernel, inner_kernel, kernel
from engine.kernels.hooks import tt_move_allowed
from engine.kernels.movegen import DROP, GEN_SEARCH, PROMOTE, ST_STM, generate

from .see import see_ge

# Move-ordering bands (a move's ordering score says which stage it belongs to).
ORD_TT = 1 << 30
ORD_CAPTURE = 1 << 28
ORD_KILLER = 1 << 27          # killer 1 is ORD_KILLER + 1, killer 2 ORD_KILLER
ORD_COUNTER = ORD_KILLER - 1
ORD_BAD_CAPTURE = -(1 << 29)  # captures that lose material (SEE < 0): after every quiet move
HISTORY_MAX = 1 << 14         # |history| stays below this (gravity), so quiet moves stay inside their band
N_SELECT = 4                  # moves picked by selection before the rest is sorted once

# Columns of S.mp[ply]. MP_CONT: the continuation-history row of the previous move (-1: none, or the feature off).
MP_STAGE, MP_IDX, MP_N, MP_TT, MP_SCORE, MP_COUNTER, MP_SEE, MP_CONT = 0, 1, 2, 3, 4, 5, 6, 7
MP_COLS = 8
#: Piece kinds of the continuation history: a piece code's low five bits (its side dropped).
CONT_KINDS = 32
STAGE_TT, STAGE_GEN, STAGE_PICK = 0, 1, 2


@inner_kernel
def tt_move_ok(P, T, mv):
    """Cheap pseudo-legality of a TT move (see the module docstring): the mover's piece is there (or in hand for a
    drop) and the target holds no piece of its own (a drop: no piece at all)."""
    if mv == 0 or not tt_move_allowed(T, mv):
        return False
    board = P.board
    n_sq = board.shape[0]
    us = P.st[ST_STM]
    to = mv & 0xFF
    if to >= n_sq:
        return False
    t = board[to]
    if t != 0 and (t >> 5) == us:
        return False
    if mv & DROP:
        pt = (mv >> 8) & 0xFF
        return pt < P.hands.shape[1] and P.hands[us, pt] > 0 and t == 0
    frm = (mv >> 8) & 0xFF
    if frm >= n_sq:
        return False
    pc = board[frm]
    return pc != 0 and (pc >> 5) == us


@inner_kernel
def cont_index(code, to, n_sq):
    """Continuation-history index (row of a previous move, column of a reply) of a piece ``code`` on ``to``: the
    piece's kind (:data:`CONT_KINDS`) and target square."""
    return (code & (CONT_KINDS - 1)) * n_sq + to


@inner_kernel
def moving_code(P, mv):
    """Piece code of the side to move that makes ``mv`` (the dropped piece for a drop)."""
    if mv & DROP:
        return ((mv >> 8) & 0xFF) + (P.st[ST_STM] << 5)
    return P.board[(mv >> 8) & 0xFF]


@inner_kernel
def score_moves(P, T, E, S, ply, n, tt_move, use_see):
    """Ordering scores of ``S.moves[ply, :n]`` into ``S.mscore[ply]`` (bands above; ``tt_move`` gets ORD_TT).
    Without ``use_see`` every capture stays in the capture band (no SEE, no losing-capture band)."""
    moves = S.moves[ply]
    sc = S.mscore[ply]
    k0 = S.killers[ply, 0]
    k1 = S.killers[ply, 1]
    cm = S.mp[ply, MP_COUNTER]
    cont_row = S.mp[ply, MP_CONT]
    n_sq = P.board.shape[0]
    for i in range(n):
        mv = moves[i]
        if mv == tt_move:
            sc[i] = ORD_TT
            continue
        to = mv & 0xFF
        if mv & DROP:
            code = ((mv >> 8) & 0xFF) + (P.st[ST_STM] << 5)
            victim = 0
        else:
            code = P.board[(mv >> 8) & 0xFF]
            victim = P.board[to]
        if victim != 0 or (mv & PROMOTE):
            s = E.value[victim] * 64 - E.value[code]
            if mv & PROMOTE:
                s += (E.value[T.promote_code[code]] - E.value[code]) * 32
            sc[i] = s + (ORD_CAPTURE if not use_see or see_ge(P, T, E, mv, 0, S.see_buf) else ORD_BAD_CAPTURE)
        elif mv == k0:
            sc[i] = ORD_KILLER + 1
        elif mv == k1:
            sc[i] = ORD_KILLER
        elif mv == cm:
            sc[i] = ORD_COUNTER
        else:
            sc[i] = S.history[code, to]
            if cont_row >= 0:
                sc[i] += S.cont[cont_row, cont_index(code, to, n_sq)]


@kernel
def pick(S, ply, i, n):
    """Selection step: move the best-scored move of [i, n) to slot i and return it."""
    moves = S.moves[ply]
    sc = S.mscore[ply]
    b = i
    bs = sc[i]
    for j in range(i + 1, n):
        if sc[j] > bs:
            bs = sc[j]
            b = j
    if b != i:
        t = moves[i]
        moves[i] = moves[b]
        moves[b] = t
        sc[b] = sc[i]
        sc[i] = bs
    return moves[i]


@inner_kernel
def sort_rest(S, ply, i, n):
    """Sort moves [i, n) by descending score once (Shell sort)."""
    moves = S.moves[ply]
    sc = S.mscore[ply]
    gap = (n - i) // 2
    while gap > 0:
        for j in range(i + gap, n):
            m = moves[j]
            v = sc[j]
            k = j
            while k - gap >= i and sc[k - gap] < v:
                moves[k] = moves[k - gap]
                sc[k] = sc[k - gap]
                k -= gap
            moves[k] = m
            sc[k] = v
        gap = (gap * 5) // 11 if gap > 2 else gap // 2
    return 0


@inner_kernel
def _generate_stage(P, T, E, S, ply, use_see):
    """Generate and score the moves; the TT move (already yielded) is taken out of the list."""
    n = generate(P, T, GEN_SEARCH, S.moves[ply])
    tt = S.mp[ply, MP_TT]
    if tt != 0:
        moves = S.moves[ply]
        for i in range(n):
            if moves[i] == tt:
                n -= 1
                moves[i] = moves[n]
                break
    score_moves(P, T, E, S, ply, n, 0, use_see)
    S.mp[ply, MP_N] = n
    S.mp[ply, MP_IDX] = 0
    S.mp[ply, MP_STAGE] = STAGE_PICK
    return n


@inner_kernel
def mp_init(P, T, E, S, ply, tt_move, counter_move, cont_row, gen_now, use_see):
    """Start picking at ``ply``. ``cont_row``: the continuation-history row of the previous move, -1 for none.
    ``gen_now``: generate at once (the TT move then stays in the list, first by its score) and return the number
    of legal search moves, for callers that need the whole list (the try rule); otherwise return -1 and generate
    only after the TT move has been tried. ``use_see``: see :func:`score_moves`."""
    S.mp[ply, MP_COUNTER] = counter_move
    S.mp[ply, MP_CONT] = cont_row
    S.mp[ply, MP_SEE] = 1 if use_see else 0
    S.mp[ply, MP_SCORE] = 0
    if gen_now:
        n = generate(P, T, GEN_SEARCH, S.moves[ply])
        score_moves(P, T, E, S, ply, n, tt_move, use_see)
        S.mp[ply, MP_TT] = 0
        S.mp[ply, MP_N] = n
        S.mp[ply, MP_IDX] = 0
        S.mp[ply, MP_STAGE] = STAGE_PICK
        return n
    S.mp[ply, MP_TT] = tt_move
    S.mp[ply, MP_STAGE] = STAGE_TT
    return -1


@inline_kernel
def mp_next(P, T, E, S, ply):
    """The next move at ``ply`` (0 when none is left); its ordering score is left in ``S.mp[ply, MP_SCORE]``."""
    stage = S.mp[ply, MP_STAGE]
    if stage == STAGE_TT:
        tt = S.mp[ply, MP_TT]
        S.mp[ply, MP_STAGE] = STAGE_GEN
        if tt_move_ok(P, T, tt):
            S.mp[ply, MP_SCORE] = ORD_TT
            return tt
        S.mp[ply, MP_TT] = 0
        stage = STAGE_GEN
    if stage == STAGE_GEN:
        _generate_stage(P, T, E, S, ply, S.mp[ply, MP_SEE] != 0)
    i = S.mp[ply, MP_IDX]
    n = S.mp[ply, MP_N]
    if i >= n:
        return 0
    if i < N_SELECT:
        mv = pick(S, ply, i, n)
    else:
        if i == N_SELECT:
            sort_rest(S, ply, i, n)
        mv = S.moves[ply, i]
    S.mp[ply, MP_SCORE] = S.mscore[ply, i]
    S.mp[ply, MP_IDX] = i + 1
    return mv
