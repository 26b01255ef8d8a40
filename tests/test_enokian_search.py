"""Enokian expectimax against a separately written exhaustive enumeration on small end positions.

The brute force below knows nothing of the search: it walks the :class:`EnokianState` API card by card (every exact
card, no effect classes), action by action, and memoises only on the exact SFEN (minus the move number), which does
not change any value. The search groups cards into 27 effect classes, hashes class counts and runs in numba.
"""
import numpy as np
import pytest

from engine.game import NodeKind
from engine.variants.enokian import EnokianState, new_game
from engine.variants.enokian import kernels as K
from search.enokian import EnokianSearch

SUITS = "SCHD"
RANKS = "A23456789TJQK"
BONUS = K.SUBDUE_BONUS


def brute_force(state, memo):
    key = state.s[:K.O_PLY].tobytes() + state.s[K.O_PLY + 1:].tobytes()  # the exact state but the move number
    if key in memo:
        return memo[key]
    res = state.result()
    if res is not None:
        v = res[0] + (BONUS if res[1] == "subdued" else 0.0)
    elif state.node_kind() is NodeKind.CHANCE:
        v = 0.0
        for tok, p in state.chance_events():
            g = state.copy()
            g.apply(tok)
            v += p * brute_force(g, memo)
    else:
        v = -1.0
        for a in state.legal_actions():
            g = state.copy()
            g.apply(a)
            v = max(v, brute_force(g, memo))
    memo[key] = v
    return v


def random_end_position(rng, n_cards=6, max_guards=2):
    """Emperor, up to two guards, some horses/dragons, flames and Michizane, and ``n_cards`` cards left."""
    board = np.zeros(81, dtype=int)  # 0 empty, 1 P, 2 K, 3 +s, 4 k, 5 +r, 6 +b
    free = list(range(81))

    def put(code, sq=None):
        if sq is None:
            sq = free[int(rng.integers(len(free)))]
        free.remove(sq)
        board[sq] = code
        return sq

    heads = ""
    for suit in range(4):
        line = [f * 9 + 4 for f in range(9)] if suit < 2 else [36 + r for r in range(9)]
        if rng.random() < 0.5:
            cand = [q for q in line if q in free]
            # keep S east of C and D north of H: S takes the east half, C the west, D the north, H the south
            cand = [q for q in cand if ((q // 9 if suit < 2 else q % 9) <= 3) == (suit in (0, 3))]
            put(5 if suit < 2 else 6, cand[int(rng.integers(len(cand)))])
            heads += SUITS[suit] + ("ew" if suit < 2 else "ns")[int(rng.integers(2))]
        else:
            heads += SUITS[suit] + "x"
    e = put(2, int(rng.choice([q for q in free if 2 <= q // 9 <= 6 and 2 <= q % 9 <= 6])))
    for _ in range(int(rng.integers(0, max_guards + 1))):
        near = [q for q in free if max(abs(q // 9 - e // 9), abs(q % 9 - e % 9)) <= 2]
        put(1, near[int(rng.integers(len(near)))])
    for _ in range(int(rng.integers(0, 3))):
        put(3)
    put(4)
    rows = []
    for r in range(9):
        row, empty = "", 0
        for f in range(8, -1, -1):
            c = board[f * 9 + r]
            if c == 0:
                empty += 1
                continue
            if empty:
                row += str(empty)
                empty = 0
            row += ["", "P", "K", "+s", "k", "+r", "+b"][c]
        rows.append(row + (str(empty) if empty else ""))
    cards = set(rng.choice(52, n_cards, replace=False).tolist())
    deck = "/".join("".join(RANKS[r] for r in range(13) if s * 13 + r in cards) or "-" for s in range(4))
    return EnokianState.from_sfen(f"{'/'.join(rows)} w - 1 {heads}/{deck}/-")


def check_against_brute_force(seed, max_guards):
    rng = np.random.default_rng(100 + seed)
    searcher = EnokianSearch(tt_bits=16)
    for _ in range(2):
        g = random_end_position(rng, 6, max_guards)
        exact = brute_force(g, {})
        assert searcher.value(g) == pytest.approx(exact, abs=1e-12), g.sfen()
        # and at the decision node after the first draw, the root search agrees move by move
        if g.result() is None:
            tok = g.chance_events()[int(rng.integers(6))][0]
            g.apply(tok)
            while g.node_kind() is NodeKind.CHANCE:
                g.apply(g.chance_events()[0][0])
            if g.node_kind() is NodeKind.DECISION:
                r = searcher.search(g)
                assert r.exact
                memo = {}
                for a, v in r.values.items():
                    h = g.copy()
                    h.apply(a)
                    assert v == pytest.approx(brute_force(h, memo), abs=1e-12), (g.sfen(), a)
                assert r.score == pytest.approx(brute_force(g, memo), abs=1e-12)


@pytest.mark.parametrize("seed", (0, 1, 2, 4))
def test_expectimax_equals_exhaustive_enumeration_last_six_cards(seed):
    check_against_brute_force(seed, max_guards=1)


@pytest.mark.slow
@pytest.mark.parametrize("seed", (3, *range(5, 25)))
def test_expectimax_equals_exhaustive_enumeration_last_six_cards_more(seed):
    check_against_brute_force(seed, max_guards=2)


def test_value_of_a_chance_node_with_a_pending_card():
    # the emperor on 5e, one card drawn (5S pending): the pair (5S, 5H) hits 5e; 5C is a stand-off
    g = EnokianState.from_sfen("9/9/9/9/4K4/9/9/9/8k w - 1 SxCxHxDx/-/5/5/-/5S")
    assert EnokianSearch(tt_bits=10).value(g) == pytest.approx(0.5)
    assert brute_force(g, {}) == pytest.approx(0.5)


def test_tie_break_prefers_subduing():
    # the last flame next to the emperor, Michizane next to it: taking the flame then Michizane subdues
    g = EnokianState.from_sfen("9/9/9/9/9/9/9/7+sK/8k b - 1 SxCxHxDx/2/3/-/-/-")
    r = EnokianSearch(tt_bits=10).search(g)
    assert r.best == "1h2h" and r.score == pytest.approx(1 + BONUS)


def test_memo_does_not_change_values_and_depths_are_monotone_in_work():
    g = new_game()
    for tok in ("card=JS", "4d3d", "card=4H", "card=8C"):
        g.apply(tok)
    a = EnokianSearch(tt_bits=18)
    b = EnokianSearch(tt_bits=18)
    r1 = a.search(g, depth=1)
    r1b = a.search(g, depth=1)  # from the table
    r2 = b.search(g, depth=1)
    assert r1.values == r2.values == r1b.values
    assert r1b.nodes < r1.nodes
    assert 0.0 < r1.winprob <= 1.0


def test_rollout_leaves_give_a_probability():
    g = new_game()
    g.apply("card=KS")
    r = EnokianSearch(tt_bits=12, seed=3).search(g, depth=1, leaf="rollout", rollouts=2)
    assert 0.0 <= r.winprob <= 1.0 and r.best in g.legal_actions()


def test_time_limited_search_returns_a_legal_move():
    g = new_game()
    g.apply("card=TS")
    r = EnokianSearch(tt_bits=16).search(g, max_time=0.05)
    assert r.best in g.legal_actions() and r.depth >= 1


def test_node_limit_keeps_the_last_complete_iteration():
    g = new_game()
    g.apply("card=TS")
    r = EnokianSearch(tt_bits=16).search(g, depth=3, max_nodes=20000)
    assert r.depth == 1 and r.best in g.legal_actions()


def _opening_decision():
    g = new_game()
    g.apply("card=KS")  # a court card: resolved at once, the player decides
    assert g.node_kind() is NodeKind.DECISION
    return g


def test_should_stop_before_the_search_leaves_depth_one():
    """A stop requested before the search began (the USI loop's, seen through should_stop) still holds: the search
    resets its own stop flag as it starts, so EnokianSearch.stop() alone would be lost there."""
    import time

    s = EnokianSearch()
    g = _opening_decision()
    s.stop()  # before the search: reset as it starts
    t0 = time.perf_counter()
    r = s.search(g, depth=3, should_stop=lambda: True)
    assert r.depth == 1 and r.best in g.legal_actions() and time.perf_counter() - t0 < 30


def test_should_stop_aborts_a_running_iteration():
    """should_stop turning true while depth 2 runs (seconds from the opening) aborts it: depth 1 answers."""
    import time

    s = EnokianSearch()
    g = _opening_decision()
    t0 = time.perf_counter()
    r = s.search(g, depth=3, should_stop=lambda: time.perf_counter() - t0 > 0.2)
    assert r.depth == 1 and time.perf_counter() - t0 < 30


def test_max_time_may_change_while_the_search_runs():
    """max_time as a function is read after each iteration (a ponderhit brings a clock to a running search)."""
    s = EnokianSearch()
    g = _opening_decision()
    reads = []

    def budget():
        reads.append(1)
        return 0.01  # far below the predicted cost of depth 2

    r = s.search(g, max_time=budget)
    assert r.depth == 1 and reads
