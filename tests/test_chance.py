"""Chance nodes in the shared search kernel (issue 50): Star1 against plain expectimax.

On small random trees, a Python mirror of the kernel's chance block (with the kernel's own threshold, window and
cutoff arithmetic: :func:`search.kernels.probe_threshold`, :func:`search.kernels.chance_window`,
:func:`search.kernels.chance_cut`) against a brute-force expectiminimax; on fantasista positions where rolls fall
inside the tree, the kernel's Star1 against the same kernel expanding every outcome in the full window.
"""
from __future__ import annotations

import random

import numpy as np
import pytest

from engine.kernels import callable_from_python
from engine.kernels.movegen import ST_STM
from engine.variants.fantasista.movers import legal_moves
from engine.variants.fantasista.state import new_game
from engine.variants.fantasista.position import to_pos
from engine.variants.fantasista.variant import FANTASISTA, PENDING_ROLL, ST_PENDING, fx_tables, table_ids
from eval import build_eval_tables
from search.alphabeta import Searcher
from search.kernels import (CHANCE_BLIND, CHANCE_BOUND, CHANCE_EXPAND, CHANCE_MAIN, CHANCE_STAR1, CTL_CHANCE,
                            CTL_CHANCE_FROM, CTL_CHANCE_GAIN, CTL_CHANCE_TO, CTL_NODE_LIMIT, CTL_NODES, CTL_ROOT_N, INF,
                            TUNE_CHANCE_MAIN_REDUCTION, TUNE_CHANCE_REDUCTION, TUNE_DELTA_MARGIN, TUNE_FUT_DEPTH,
                            TUNE_LMP_DEPTH, TUNE_RFP_DEPTH, chance_cut, chance_window, probe_threshold, search)
from search.params import default_tune

TOTAL = 20  # the d20


# ------------------------------------------------------------------ random trees
def _tree(rng: random.Random, depth: int, chance: bool):
    """Alternating decision and chance levels; a decision child flips the side (negamax); leaves in
    [-CHANCE_BOUND, CHANCE_BOUND], a tenth of them at the bounds (mates). A chance outcome carries a static guess
    of its value (its rounded value, off by up to 400), as the probing tests read one."""
    if depth == 0:
        x = rng.random()
        if x < 0.05:
            return CHANCE_BOUND
        if x < 0.1:
            return -CHANCE_BOUND
        return rng.randint(-3000, 3000)
    if chance:
        n = rng.randint(1, 5)
        cuts = sorted(rng.sample(range(1, TOTAL), n - 1))
        weights = [b - a for a, b in zip([0] + cuts, cuts + [TOTAL])]
        weights.sort(reverse=True)
        kids = [_tree(rng, depth - 1, False) for _ in weights]
        return ("chance", [(w, min(max(_rounded(c), -CHANCE_BOUND), CHANCE_BOUND) + rng.randint(-400, 400), c)
                           for w, c in zip(weights, kids)])
    return ("decision", [_tree(rng, depth - 1, True) for _ in range(rng.randint(1, 3))])


def _expectimax(node) -> float:
    """The exact value (the side to move's view): negamax over decisions, the mean over chance outcomes."""
    if isinstance(node, int):
        return node
    kind, children = node
    if kind == "chance":
        return sum(w * _expectimax(c) for w, _, c in children) / TOTAL
    return max(-_expectimax(c) for c in children)


def _rounded(node) -> int:
    """What the kernel computes exactly: :func:`_expectimax` with each chance node's mean rounded (halves up)."""
    if isinstance(node, int):
        return node
    kind, children = node
    if kind == "chance":
        return (2 * sum(w * min(max(_rounded(c), -CHANCE_BOUND), CHANCE_BOUND) for w, _, c in children)
                + TOTAL) // (2 * TOTAL)
    return max(-_rounded(c) for c in children)


def _clip(v: int) -> int:
    return min(max(v, -CHANCE_BOUND), CHANCE_BOUND)


def _star1(node, alpha: int, beta: int, k) -> int:
    """The kernel's node logic in Python: alpha-beta at decisions; at chance nodes the chance block of
    search.kernels.search (the probing tests in a null window, then Star1 with the bounds), through its helpers
    ``k`` = (chance_window, chance_cut, probe_threshold)."""
    window, cut, threshold = k
    if isinstance(node, int):
        return node
    kind, children = node
    if kind == "decision":
        best = -INF
        for c in children:
            v = -_star1(c, -beta, -max(alpha, best), k)
            best = max(best, v)
            if best >= beta:
                break
        return best
    if alpha >= CHANCE_BOUND:
        return CHANCE_BOUND
    if beta <= -CHANCE_BOUND:
        return -CHANCE_BOUND
    n = len(children)
    lo_b, hi_b = [-CHANCE_BOUND] * n, [CHANCE_BOUND] * n
    sum_lo, sum_hi = -CHANCE_BOUND * TOTAL, CHANCE_BOUND * TOTAL
    decided, bound = 0, 0
    if beta - alpha == 1:
        aim = 0
        for r, (w, sv, c) in enumerate(children):
            rest_w = sum(x[0] for x in children[r:])
            rest_sv = sum(x[0] * x[1] for x in children[r:])
            t = threshold(sum_lo, sum_hi, rest_w, rest_sv, sv, aim, alpha, beta, TOTAL)
            v = _clip(_star1(c, t - 1, t, k))
            went = 1 if v >= t else -1
            if went > 0:
                sum_lo += w * (v - lo_b[r])
                lo_b[r] = v
            else:
                sum_hi -= w * (hi_b[r] - v)
                hi_b[r] = v
            decided, bound = cut(sum_lo, sum_hi, alpha, beta, TOTAL)
            if decided != 0:
                break
            if aim == 0:
                aim = went
            elif went != aim:
                break
    if decided == 0:
        for r, (w, _, c) in enumerate(children):
            if lo_b[r] >= hi_b[r]:
                continue
            lo, hi = window(sum_lo, sum_hi, w, lo_b[r], hi_b[r], alpha, beta, TOTAL)
            assert lo < hi
            v = _clip(_star1(c, lo, hi, k))
            new_lo, new_hi = (lo_b[r], v) if v <= lo else (v, hi_b[r]) if v >= hi else (v, v)
            sum_lo += w * (new_lo - lo_b[r])
            sum_hi += w * (new_hi - hi_b[r])
            lo_b[r], hi_b[r] = new_lo, new_hi
            decided, bound = cut(sum_lo, sum_hi, alpha, beta, TOTAL)
            if decided != 0:
                break
    if decided != 0:
        return bound
    assert sum_lo == sum_hi  # every outcome exact
    return (2 * sum_lo + TOTAL) // (2 * TOTAL)


def test_star1_is_expectimax_on_random_trees():
    k = (callable_from_python(chance_window), callable_from_python(chance_cut), callable_from_python(probe_threshold))
    rng = random.Random(2033)
    for i in range(300):
        depth, chance = rng.randint(2, 5), i % 2 == 0
        root = _tree(rng, depth, chance)
        exact = _expectimax(root)
        # each chance level rounds its mean to the nearest centipawn
        tol = ((depth + 1) // 2 if chance else depth // 2) / 2
        rounded = _rounded(root)
        assert abs(rounded - exact) <= tol, i
        assert _star1(root, -INF, INF, k) == rounded, i
        # a narrow window (a null window probes): a fail low or high is a true bound, a value inside it the value
        a = rng.randint(-3000, 3000)
        b = a + rng.choice((1, 1, 2, 50, 400))
        v = _star1(root, a, b, k)
        if v <= a:
            assert rounded <= v, i
        elif v >= b:
            assert rounded >= v, i
        else:
            assert v == rounded, i


# ------------------------------------------------------------------ fantasista positions
def _positions() -> list:
    """Shared positions a ply or two before a roll (plies 14-16, so rolls fall inside a depth 2-3 tree), every
    fairy as the roller at least once, one with the roll due at the root's child asking for a target."""
    out = []
    rng = random.Random(50)
    pairs = (("hiko", "ayumi"), ("yokaku", "ginsara"), ("ayumi", "yokaku"), ("ginsara", "hiko"))
    for i, fairies in enumerate(pairs):
        reserved = ("ayumi:3", "yokaku:3") if i == 2 else ("4-8", "4-8")
        g = new_game(fairies, reserved=reserved)
        stop = 14 + i % 3
        while g.move_number < stop or g.phase != "move":
            if g.phase == "roll":
                g.apply(f"roll={rng.randint(1, 20)}")
            else:
                g.apply(rng.choice(g.legal_actions()))
        out.append(to_pos(g.bd, g.move_number, g.phase, g.pending, table_ids(fairies, reserved)))
    return out


def _searcher() -> Searcher:
    s = Searcher(hash_mb=4, features=0)
    # no reverse futility, futility, late-move or delta pruning (which depend on the window): both searches see
    # the same tree (null move and late-move reductions need depth 3 below the root, so they never act here)
    tune = default_tune("shogi")
    tune[[TUNE_RFP_DEPTH, TUNE_FUT_DEPTH, TUNE_LMP_DEPTH]] = 0
    tune[TUNE_DELTA_MARGIN] = 10 * CHANCE_BOUND
    s._use_tune(tune)
    return s


def _root_value(s: Searcher, P, depth: int, mode: int) -> tuple[int, int]:
    T, E = fx_tables(), build_eval_tables(FANTASISTA, "hand")
    S = s._build_tables(np.zeros(len(P.keys), np.int8))
    s.clear()
    s._ctl[:] = 0
    s._ctl[CTL_NODE_LIMIT] = 1 << 40
    s._ctl[CTL_CHANCE] = mode
    out = np.zeros(1 << 14, np.int32)
    n = legal_moves(P, T, out)
    s._root_moves[:n] = out[:n]
    s._ctl[CTL_ROOT_N] = n
    v = search(P, T, E, S, -INF, INF, depth, 0, False, False, True)
    return int(v), int(s._ctl[CTL_NODES])


@pytest.mark.parametrize("depth", [2, 3])
def test_star1_is_full_expansion_on_fantasista_positions(depth):
    s = _searcher()
    saved = 0
    for P in _positions():
        board = P.board.copy()
        v_star, n_star = _root_value(s, P, depth, CHANCE_STAR1)
        v_full, n_full = _root_value(s, P, depth, CHANCE_EXPAND)
        assert v_star == v_full
        assert (P.board == board).all() and P.st[ST_PENDING] != PENDING_ROLL
        saved += n_full - n_star
    assert saved > 0  # the bounds cut some outcomes


def test_chance_reduction_searches_the_less_probable_results_shallower():
    s = _searcher()
    P = _positions()[0]
    _, exact = _root_value(s, P, 3, CHANCE_STAR1)
    s._tune[TUNE_CHANCE_REDUCTION] = 2
    v, reduced = _root_value(s, P, 3, CHANCE_STAR1)
    assert reduced < exact and -CHANCE_BOUND < v < CHANCE_BOUND


def test_main_searches_one_result_a_roll_and_shifts_by_the_others():
    # CHANCE_MAIN: one subtree a roll (the most probable result, whose extra pieces in hand widen it), valued with the
    # others' static differences: a few times the roll-blind search's nodes, far fewer than Star1's, and not the
    # roll-blind value
    s = _searcher()
    differs = 0
    for P in _positions():
        v_blind, n_blind = _root_value(s, P, 3, CHANCE_BLIND)
        v_main, n_main = _root_value(s, P, 3, CHANCE_MAIN)
        _, n_star = _root_value(s, P, 3, CHANCE_STAR1)
        assert 10 * n_main < n_star and n_main < 4 * n_blind
        differs += v_main != v_blind
    assert differs > 0


def test_chance_main_reduction_searches_the_main_result_shallower():
    # ChanceMainReduction: CHANCE_MAIN's one subtree a roll searched that many plies shallower than the chance node
    s = _searcher()
    for P in _positions():
        _, full = _root_value(s, P, 3, CHANCE_MAIN)
        s._tune[TUNE_CHANCE_MAIN_REDUCTION] = 1
        v, reduced = _root_value(s, P, 3, CHANCE_MAIN)
        s._tune[TUNE_CHANCE_MAIN_REDUCTION] = 0
        assert reduced < full and abs(v) < CHANCE_BOUND


def test_leaves_before_a_roll_count_its_expected_gain():
    # far from a roll every leaf of a chance-aware search counts the coming pair's expected static gain: its root
    # value is the roll-blind one moved by exactly that sum (the search's bound arrays say it), which is not 0
    s = _searcher()
    rng = random.Random(7)
    shifts = []
    for fairies in (("ayumi", "hiko"), ("ginsara", "yokaku")):
        g = new_game(fairies)
        while g.move_number < 6:
            g.apply(rng.choice(g.legal_actions()))
        P = to_pos(g.bd, g.move_number, g.phase, g.pending, table_ids(fairies, ("4-8", "4-8")))
        v_blind, _ = _root_value(s, P, 2, CHANCE_BLIND)
        assert s._ctl[CTL_CHANCE_TO] == s._ctl[CTL_CHANCE_FROM] == 0  # the blind search anticipates nothing
        v_main, _ = _root_value(s, P, 2, CHANCE_MAIN)
        assert (s._ctl[CTL_CHANCE_FROM], s._ctl[CTL_CHANCE_TO]) == (0, 2)
        gain = int(s._ctl[CTL_CHANCE_GAIN] + s._ctl[CTL_CHANCE_GAIN + 1])  # sente's view
        assert v_main - v_blind == (gain if P.st[ST_STM] == 0 else -gain)
        shifts.append(gain)
    assert all(shifts)
