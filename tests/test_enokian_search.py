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


def random_end_position(rng, n_cards=6, max_guards=2, flames=None):
    """Emperor, up to ``max_guards`` guards near him, some horses/dragons, flames (0-2, or ``flames``) and Michizane,
    and ``n_cards`` cards left, at a chance node."""
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
    for _ in range(int(rng.integers(0, 3)) if flames is None else flames):
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


def test_depth_one_is_finished_however_often_a_stop_cuts_it():
    """Depth 1 always completes: a stop that cuts it is undone and depth 1 runs again, and so is a second stop that
    cuts the rerun (the USI loop stops again every 0.5 s while a search runs). The fuzz test met that: the search
    returned no result and the thinker failed with 'NoneType' object has no attribute 'best'."""
    s = EnokianSearch()
    g = _opening_decision()
    real, calls, finished = s._root, [], []

    def stopped_twice(*args):
        calls.append(1)
        if len(calls) <= 2:
            return -1  # as the kernel answers a stop
        nm = real(*args)
        finished.append(nm)
        return nm

    s._root = stopped_twice
    # the search's stop watcher polls should_stop every few ms: it turns true only once the third run has finished
    # (turned true earlier, the watcher could stop that run too, a race with the kernel's speed)
    r = s.search(g, depth=3, should_stop=lambda: bool(finished))
    assert len(calls) == 3 and r is not None and r.depth == 1 and r.best in g.legal_actions()


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


# ------------------------------------------------------------------ depth-limited search against a plain expectimax
def plain_expectimax(s, depth, memo):
    """The depth-limited expectimax the search computes, written plainly over the search state ``s``: one card at a
    time (a number card's pair is a second chance node), each card class with probability count / cards left, the
    player's best move, the static evaluation at a decision ``depth`` decisions away; memoised on the exact state
    but the move number (which changes no value). No merged outcomes, no outcomes evaluated together, no
    transposition table, no numba loop: only the rules' kernels and the evaluation, called one by one."""
    key = (s[:K.O_PLY].tobytes(), s[K.O_PLY + 1:].tobytes(), depth)
    if key in memo:
        return memo[key]
    t = K.terminal(s)
    if t != K.T_NONE:
        v = K.terminal_score(t)
    elif s[K.O_SIDE] == 1:
        v = 0.0
        for cls in range(K.N_CLASSES):
            if s[K.O_CC + cls]:
                child = s.copy()
                K.draw_class(child, cls, np.zeros(4, dtype=np.int32))
                v += s[K.O_CC + cls] / s[K.O_NCARDS] * plain_expectimax(child, depth, memo)
    elif depth == 0:
        v = K.static_eval(s, K.EVAL_PARAMS, np.zeros(K.SF_LEN, dtype=np.int32))
    else:
        moves = np.zeros(128, dtype=np.int32)
        v = -1.0
        for mv in moves[:K.gen_moves(s, moves)].tolist() or [-1]:
            child = s.copy()
            K.do_move(child, mv)
            v = max(v, plain_expectimax(child, depth - 1, memo))
    memo[key] = v
    return v


def check_moves_against_plain(g, depth, searcher=None):
    """Every move's value at ``depth`` (and the root's) equals the plain expectimax's."""
    r = (searcher or EnokianSearch(tt_bits=16)).search(g, depth=depth)
    assert r.depth == depth
    memo = {}
    for a, v in r.values.items():
        h = g.copy()
        h.apply(a)
        assert v == pytest.approx(plain_expectimax(h.s[:K.SEARCH_LEN].copy(), depth - 1, memo), abs=1e-12), (g.sfen(), a)
    assert r.score == pytest.approx(plain_expectimax(g.s[:K.SEARCH_LEN].copy(), depth, memo), abs=1e-12)


def game_decisions(n: int, seed: int = 1) -> list[str]:
    """SFENs of the first ``n`` decision nodes of a seeded game (cards drawn at random, the engine at depth 1)."""
    import random

    rng, searcher, state, out = random.Random(seed), EnokianSearch(), new_game(), []
    while state.result() is None and len(out) < n:
        if state.node_kind() is NodeKind.CHANCE:
            events = state.chance_events()
            state.apply(rng.choices([t for t, _ in events], [p for _, p in events])[0])
        else:
            out.append(state.sfen())
            state.apply(searcher.search(state, depth=1).best)
    return out


def test_depth_1_equals_plain_expectimax_over_a_game():
    """Depth 1 (a decision, then every draw, then the static evaluation) from every fourth decision of a game."""
    searcher = EnokianSearch(tt_bits=16)
    for sfen in game_decisions(40)[::4]:
        check_moves_against_plain(EnokianState.from_sfen(sfen), 1, searcher)


#: Late in a game (13 cards, four guards): every depth up to 3 is cheap (also used by tests/test_usi_limits.py).
LATE = "9/9/9/4P4/+r2PKP2k/4P4/9/9/9 b - 1 SxCeHxDx/A29/JQK/3T/48/-"


def test_depth_2_equals_plain_expectimax_with_thirteen_cards_and_four_guards():
    check_moves_against_plain(EnokianState.from_sfen(LATE), 2)


@pytest.mark.parametrize("seed", range(3))
def test_depths_2_and_3_equal_plain_expectimax_near_the_end(seed):
    rng = np.random.default_rng(500 + seed)
    done = 0
    while done < 2:
        g = random_end_position(rng, int(rng.integers(6, 9)), max_guards=3)
        g.apply(g.chance_events()[0][0])
        while g.result() is None and g.node_kind() is NodeKind.CHANCE:
            g.apply(g.chance_events()[-1][0])
        if g.result() is not None:
            continue
        check_moves_against_plain(g, 2)
        if int(g.s[K.O_NCARDS]) <= 5:
            check_moves_against_plain(g, 3)
        done += 1


@pytest.mark.parametrize("flames", (0, 2, 6, 11, 12))
def test_the_draw_before_the_horizon_equals_the_plain_expectation(flames):
    """The draw whose decision is beyond the horizon is evaluated by boards (a court card alone or after any number,
    every stand-off, a lightning that changes nothing or adds a far flame): it equals the plain expectation card by
    card, with flames near the emperor and guards, with the flame supply one short of empty (the next flame empties
    it) and empty (lightning fizzles), with a few cards and a full deck, and with a pending card."""
    rng = np.random.default_rng(900 + flames)
    searcher = EnokianSearch(tt_bits=12)
    for n_cards in (1, 2, 3, 12, 30, 52):
        for _ in range(3):
            g = random_end_position(rng, n_cards, max_guards=8, flames=flames)
            if g.result() is not None:
                continue
            assert searcher.value(g, depth=0) == pytest.approx(
                plain_expectimax(g.s[:K.SEARCH_LEN].copy(), 0, {}), abs=1e-12), g.sfen()
            number = [tok for tok, _ in g.chance_events() if tok[5] in "A23456789"]
            if number and n_cards > 1:
                g.apply(number[0])  # a pending card: the second draw of the pair
                assert searcher.value(g, depth=0) == pytest.approx(
                    plain_expectimax(g.s[:K.SEARCH_LEN].copy(), 0, {}), abs=1e-12), g.sfen()
