"""numba kernels of the race: one action, turn generation (a DP over runner states), race tables.

All take arrays and scalars in sente's frame (see :mod:`.board`) and never allocate (``engine.kernels.kernel``, NRT
off): the Python layer passes every buffer in.

Action numbering of a state: ``0 .. n_targets-1`` are the moves to ``targets[r, sq, f, :]`` (by square), then
``n_targets .. n_targets+2`` turn to the three other facings in the order n, e, s, w.
"""
from __future__ import annotations

import numpy as np

from ...kernels import inner_kernel, kernel

_NSQ = 81
_NF = 4
_NC = 5
_DONE = 4
_NS = 7 * 81 * 4 * 5
_WIN = _NS
_WIN2 = 2 * _NS
_START = 8  # 1i
_C0 = 0  # 1a
_C1 = 72  # 9a
_C2 = 80  # 9i


@inner_kernel
def n_actions(s2, n_targets):
    """Number of actions of turn-state ``s2`` (0 for WIN2)."""
    if s2 >= _WIN2:
        return 0
    s = s2 >> 1
    f = (s // _NC) % _NF
    sq = (s // (_NC * _NF)) % _NSQ
    r = s // (_NC * _NF * _NSQ)
    return n_targets[r, sq, f] + 3


@kernel
def step(s2, a, targets, n_targets, enemy_sq, enemy_rank):
    """Turn-state after action ``a`` of ``s2``; ``_WIN2`` when the king's leg completes; -1 if ``a`` is no action.

    ``enemy_sq`` / ``enemy_rank`` (sente's frame) decide stomps; pass ``enemy_rank = -1`` for no stomps.
    """
    if s2 >= _WIN2 or a < 0:
        return -1
    stomp = s2 & 1
    s = s2 >> 1
    c = s % _NC
    f = (s // _NC) % _NF
    sq = (s // (_NC * _NF)) % _NSQ
    r = s // (_NC * _NF * _NSQ)
    nt = n_targets[r, sq, f]
    if a < nt:
        t = np.int64(targets[r, sq, f, a])
        relay = False
        if t == _START:
            relay = c == _DONE
        else:
            i = -1
            if t == _C0:
                i = 0
            elif t == _C1:
                i = 1
            elif t == _C2:
                i = 2
            if i >= 0:
                if c == 0:
                    c = 1 + i
                elif c != 1 + i:
                    c = _DONE
        if not relay and t == enemy_sq and enemy_rank > r and stomp == 0:
            relay = True
            stomp = 1
        if relay:
            if r == 6:
                return _WIN2
            return ((((r + 1) * _NSQ + _START) * _NF + 0) * _NC + 0) * 2 + stomp
        return (((r * _NSQ + t) * _NF + f) * _NC + c) * 2 + stomp
    k = a - nt
    if k >= 3:
        return -1
    nf = k if k < f else k + 1
    return (((r * _NSQ + sq) * _NF + nf) * _NC + c) * 2 + stomp


@kernel
def best_by_steps(start2, nmax, enemy_sq, enemy_rank, targets, n_targets, value2, best, mark, cur, nxt):
    """``best[m, k]`` = the highest ``value2[m]`` over end states reachable in exactly k actions, k = 0..nmax.

    ``value2`` holds one or more value vectors over turn-states (rows). A win reached after k actions ends the turn,
    so it counts for every N >= k (``best[m, N] = value2[m, WIN2]``). Returns the first k at which the win is
    reachable (nmax + 1 if none). ``mark``, ``cur`` and ``nxt`` (int32, >= 2*N_STATES+1 long) are scratch.
    """
    n_vec = value2.shape[0]
    for i in range(mark.shape[0]):
        mark[i] = -1
    n_cur = 1
    cur[0] = start2
    for m in range(n_vec):
        best[m, 0] = value2[m, start2]
    kwin = nmax + 1
    for k in range(1, nmax + 1):
        n_nxt = 0
        for m in range(n_vec):
            best[m, k] = -1e300
        won = False
        for i in range(n_cur):
            s2 = cur[i]
            na = n_actions(s2, n_targets)
            for a in range(na):
                t = step(s2, a, targets, n_targets, enemy_sq, enemy_rank)
                if t == _WIN2:
                    won = True
                    continue
                if mark[t] != k:
                    mark[t] = k
                    nxt[n_nxt] = t
                    n_nxt += 1
                    for m in range(n_vec):
                        v = value2[m, t]
                        if v > best[m, k]:
                            best[m, k] = v
        if won:
            kwin = k
            for m in range(n_vec):
                for j in range(k, nmax + 1):
                    best[m, j] = value2[m, _WIN2]
            return kwin
        for i in range(n_nxt):
            cur[i] = nxt[i]
        n_cur = n_nxt
    return kwin


@kernel
def reach_paths(start2, n, enemy_sq, enemy_rank, targets, n_targets, parent, mark, cur, nxt, ends):
    """Distinct end states of a turn of exactly ``n`` actions, with back-pointers for one path to each.

    ``parent[k, t] = pred * 32 + action`` for each turn-state t first reached after k actions (the first
    predecessor in the sweep order wins, which makes the path canonical). The win is recorded once, at the first k
    it is reachable; it ends the turn. Writes the end turn-states (those reached after n actions, then WIN2 if
    reachable) to ``ends`` and returns ``(count, kwin)`` with kwin = -1 if the win is out of reach.
    """
    for i in range(mark.shape[0]):
        mark[i] = -1
    n_cur = 1
    cur[0] = start2
    mark[start2] = 0
    kwin = -1
    for k in range(1, n + 1):
        n_nxt = 0
        for i in range(n_cur):
            s2 = cur[i]
            na = n_actions(s2, n_targets)
            for a in range(na):
                t = step(s2, a, targets, n_targets, enemy_sq, enemy_rank)
                if t == _WIN2:
                    if kwin < 0:
                        kwin = k
                        parent[k, _WIN2] = s2 * 32 + a
                    continue
                if mark[t] != k:
                    mark[t] = k
                    parent[k, t] = s2 * 32 + a
                    nxt[n_nxt] = t
                    n_nxt += 1
        for i in range(n_nxt):
            cur[i] = nxt[i]
        n_cur = n_nxt
    count = 0
    for i in range(n_cur):
        ends[count] = cur[i]
        count += 1
    if n == 0:
        ends[0] = start2
        count = 1
    if kwin > 0:
        ends[count] = _WIN2
        count += 1
    return count, kwin


@kernel
def trace_path(parent, k_end, t_end, out):
    """Write the actions of the recorded path to turn-state ``t_end`` after ``k_end`` actions into ``out[:k_end]``
    as (turn-state before, action) pairs: ``out[j, 0]``, ``out[j, 1]``."""
    t = t_end
    for k in range(k_end, 0, -1):
        p = parent[k, t]
        out[k - 1, 0] = p >> 5
        out[k - 1, 1] = p & 31
        t = p >> 5


# ------------------------------------------------------------------ race tables (solitaire, no stomps)
@kernel
def solitaire_successors(targets, n_targets, succ, deg):
    """``succ[s, j]`` for every runner state (stomp-free; WIN has no successors listed, it is absorbing)."""
    for s in range(_NS):
        s2 = s * 2
        na = n_actions(s2, n_targets)
        deg[s] = na
        for a in range(na):
            t = step(s2, a, targets, n_targets, -1, -1)
            succ[s, a] = _NS if t == _WIN2 else (t >> 1)


@kernel
def distance_to_win(succ, deg, dist):
    """Fewest actions from each state to the win (Bellman-Ford relaxation; 1e9 where unreachable)."""
    for s in range(_NS):
        dist[s] = 1000000000
    dist[_NS] = 0
    changed = True
    while changed:
        changed = False
        for s in range(_NS - 1, -1, -1):
            d = dist[s]
            for j in range(deg[s]):
                v = dist[succ[s, j]] + 1
                if v < d:
                    d = v
            if d < dist[s]:
                dist[s] = d
                changed = True


@inner_kernel
def min_over_steps(succ, deg, lo, hi, values, vk, arg, kmax):
    """For states ``lo <= s < hi``: ``vk[k, s]`` = min of ``values`` over states reachable in exactly k actions
    (k = 0..kmax; WIN, index N_STATES, is absorbing with its own value) and ``arg[k, s]`` the state achieving it.

    Rows ``vk[k-1, t]`` of the successors outside [lo, hi) must already be filled (they are later blocks)."""
    for s in range(lo, hi):
        vk[0, s] = values[s]
        arg[0, s] = s
    vk[0, _NS] = values[_NS]
    arg[0, _NS] = _NS
    for k in range(1, kmax + 1):
        vk[k, _NS] = values[_NS]
        arg[k, _NS] = _NS
        for s in range(lo, hi):
            b = 1e300
            ba = -1
            for j in range(deg[s]):
                t = succ[s, j]
                v = vk[k - 1, t]
                if v < b:
                    b = v
                    ba = arg[k - 1, t]
            vk[k, s] = b
            arg[k, s] = ba


@kernel
def expected_turns_block(succ, deg, lo, hi, steps, probs, tail_p, e, vk, arg, kmax, tol, max_iter):
    """Value iteration of ``e[s] = 1 + sum_N p(N) min_{R_N(s)} e`` on the block [lo, hi), later blocks fixed.

    ``steps``/``probs``: the throw's support (N <= kmax) and probabilities; ``tail_p``: probability of N > kmax (all
    those throws win). Rows of vk/arg for the block are left consistent with the final ``e``. Returns iterations.
    """
    it = 0
    while it < max_iter:
        it += 1
        min_over_steps(succ, deg, lo, hi, e, vk, arg, kmax)
        delta = 0.0
        for s in range(lo, hi):
            if e[s] >= 1e200:
                continue
            v = 1.0
            for i in range(steps.shape[0]):
                v += probs[i] * vk[steps[i], s]
            v += tail_p * e[_NS]
            d = abs(v - e[s])
            if d > delta:
                delta = d
            e[s] = v
        if delta < tol:
            break
    min_over_steps(succ, deg, lo, hi, e, vk, arg, kmax)
    return it


@kernel
def turn_cdf(policy, probs, tail_p, valid, cdf):
    """``cdf[t, s]`` = P(state s finishes within t turns) under ``policy[i, s]`` (the end state after the i-th
    support value of the throw; throws beyond the support win, with probability ``tail_p``)."""
    n_t = cdf.shape[0]
    for s in range(_NS + 1):
        cdf[0, s] = 0.0
    cdf[0, _NS] = 1.0
    for t in range(1, n_t):
        cdf[t, _NS] = 1.0
        for s in range(_NS):
            if not valid[s]:
                cdf[t, s] = 0.0
                continue
            v = tail_p
            for i in range(probs.shape[0]):
                v += probs[i] * cdf[t - 1, policy[i, s]]
            cdf[t, s] = v
