"""Checks-only mate search (AND/OR tree, iterative deepening over odd depths) in kernels.

OR nodes: the attacker to move tries only moves that give check; AND nodes: the defender must have an answer to every
check. A small table remembers, per position, the shortest depth at which a mate was proven and the longest at which
none exists (``DISPROVEN_ALL`` when the subtree was exhausted without reaching the horizon).
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from engine.kernels import hash_slot, inner_kernel, kernel
from engine.kernels.movegen import GEN_SEARCH, ST_PLY, do_move, generate, in_check, undo_move

from .kernels import CTL_HORIZON, CTL_NODE_LIMIT, CTL_NODES, CTL_STOP

MATE_MAX_PLY = 64
UNKNOWN_PROOF = 127
DISPROVEN_ALL = 126

MateTables = namedtuple("MateTables", [
    "ctl",       # int64[CTL_SIZE]: shared with the searcher (stop flag, node count and limit, horizon counter)
    "moves",     # int32[MATE_MAX_PLY + 1, MAX_MOVES]
    "tt_key",    # uint64[N]
    "proof",     # int8[N]: smallest depth at which the position is known to be mate (UNKNOWN_PROOF: none)
    "disproof",  # int8[N]: largest depth at which it is known not to be (-1: none; DISPROVEN_ALL: at no depth)
])


@inner_kernel
def _mtick(M):
    c = M.ctl
    c[CTL_NODES] += 1
    if c[CTL_NODES] >= c[CTL_NODE_LIMIT]:
        c[CTL_STOP] = 1
    return c[CTL_STOP] != 0


@inner_kernel
def _mt_index(M, key):
    return hash_slot(key, M.tt_key.shape[0])


@inner_kernel
def _mt_store(M, key, depth, proven, exhausted):
    i = _mt_index(M, key)
    if M.tt_key[i] != key:
        M.tt_key[i] = key
        M.proof[i] = UNKNOWN_PROOF
        M.disproof[i] = -1
    if proven:
        if depth < M.proof[i]:
            M.proof[i] = depth
    elif exhausted:
        M.disproof[i] = DISPROVEN_ALL
    elif depth > M.disproof[i]:
        M.disproof[i] = depth


@inner_kernel
def _mt_probe(M, key, depth):
    """1: proven mate within depth; 0: proven none (horizon counter bumped if it depended on the horizon); -1."""
    i = _mt_index(M, key)
    if M.tt_key[i] != key:
        return -1
    if M.proof[i] <= depth:
        return 1
    d = M.disproof[i]
    if d == DISPROVEN_ALL:
        return 0
    if d >= depth:
        M.ctl[CTL_HORIZON] += 1
        return 0
    return -1


@kernel
def mate_node(P, T, M, depth, ply, attacker):
    """One node of the AND/OR tree (a single self-recursive kernel: numba's disk cache mishandles mutual recursion).

    ``attacker`` (OR node): whether some check forces mate within ``depth`` plies (odd).
    Otherwise (AND node, the defender is in check): whether every answer loses to a mate within ``depth`` plies.
    """
    if _mtick(M):
        return False
    key = P.keys[P.st[ST_PLY]]
    r = _mt_probe(M, key, depth)
    if r >= 0:
        return r == 1
    if attacker:
        if depth < 1 or ply >= MATE_MAX_PLY:
            M.ctl[CTL_HORIZON] += 1
            return False
        h0 = M.ctl[CTL_HORIZON]
        n = generate(P, T, GEN_SEARCH, M.moves[ply])
        found = False
        for i in range(n):
            mv = M.moves[ply, i]
            do_move(P, T, mv)
            ok = False
            if in_check(P, T):
                ok = mate_node(P, T, M, depth - 1, ply + 1, not attacker)  # no literal: see search.kernels.search
            undo_move(P, T)
            if M.ctl[CTL_STOP] != 0:
                return False
            if ok:
                found = True
                break
        _mt_store(M, key, depth, found, M.ctl[CTL_HORIZON] == h0)
        return found
    n = generate(P, T, GEN_SEARCH, M.moves[ply])
    if n == 0:
        _mt_store(M, key, 0, True, False)
        return True
    if depth < 2 or ply >= MATE_MAX_PLY:
        M.ctl[CTL_HORIZON] += 1
        return False
    h0 = M.ctl[CTL_HORIZON]
    for i in range(n):
        mv = M.moves[ply, i]
        do_move(P, T, mv)
        ok = mate_node(P, T, M, depth - 1, ply + 1, not attacker)
        undo_move(P, T)
        if M.ctl[CTL_STOP] != 0:
            return False
        if not ok:
            _mt_store(M, key, depth, False, M.ctl[CTL_HORIZON] == h0)
            return False
    _mt_store(M, key, depth, True, False)
    return True
