"""Mawarikudoi shogi rules: throws, turns (against a separately written brute force), relays, stomps, SFEN, errors.

Expected throw values come from shared/spec/mawarikudoi.md (gold mean 5.740125, P(N=1) = 0.164025; mixed with 4
silvers mean 18.3323, P(N>=10) = 0.56027; with 3 silvers 16.9586 and 0.51572).
"""
import itertools
import math
import random

import numpy as np
import pytest

from engine.game import GameError, GameState, NodeKind
from engine.variants.mawarikudoi import MawarikudoiState, ThrowProbabilities, new_game
from engine.variants.mawarikudoi import throws as T

# ------------------------------------------------------------------ throws
FACES = {"x": 100, "v": 10, "s": 5, "u": 1, "d": 0}
P = {"u": 0.45, "d": 0.45, "s": 0.08, "v": 0.018, "x": 0.002}


def brute_group(n):
    """(score, probability) of every ordered way n pieces can land."""
    for faces in itertools.product("xvsud", repeat=n):
        score = 20 if all(f == "d" for f in faces) else sum(FACES[f] for f in faces)
        yield score, math.prod(P[f] for f in faces)


def brute_distribution(n_silvers):
    out = np.zeros(401)
    golds = list(brute_group(4))
    if n_silvers is None:
        for g, p in golds:
            out[g] += p
        return out
    silvers = list(brute_group(n_silvers))
    for g, pg in golds:
        for s, ps in silvers:
            out[min(g * s, 50)] += pg * ps
    return out


def test_gold_throw_matches_brute_force_and_spec():
    d = T.gold_distribution()
    assert d.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(d, brute_distribution(None), atol=1e-15)
    assert T.mean(d) == pytest.approx(5.740125, abs=1e-9)
    assert d[1] == pytest.approx(0.164025, abs=1e-12)
    assert d[0] == 0.0 and d[20] > 0.45 ** 4  # four face down score 20, never 0


@pytest.mark.parametrize("n_silvers,mean,p10", [(4, 18.3323, 0.56027), (3, 16.9586, 0.51572), (2, None, None),
                                                (1, None, None)])
def test_mixed_throw_matches_brute_force_and_spec(n_silvers, mean, p10):
    d = T.mixed_distribution(n_silvers)
    assert d.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(d, brute_distribution(n_silvers)[:51], atol=1e-15)
    assert len(d) == 51 and d[0] == 0.0  # the cap: never more than 50
    if mean is not None:
        assert T.mean(d) == pytest.approx(mean, abs=5e-5)
        assert d[10:].sum() == pytest.approx(p10, abs=5e-6)


def test_cap_and_all_face_down():
    assert T.throw_value("dddd", None) == 20
    assert T.throw_value("dddd", "dddd") == 50  # 20 x 20 = 400, capped
    assert T.throw_value("xxxx", None) == 400  # the gold throw alone is not capped
    assert T.throw_value("uddd", "ddd") == 20  # 1 x 20: three silvers all face down score 20
    assert T.throw_value("suud", "uddd") == 7
    assert T.throw_value("vuud", "ud") == 12


def test_chance_events_sum_to_one_and_agree_with_distribution():
    for n_silvers in (None, 3, 4):
        events = T.throw_events(n_silvers)
        assert sum(p for _, p in events) == pytest.approx(1.0, abs=1e-12)
        assert len({tok for tok, _ in events}) == len(events)
        agg = np.zeros(401)
        for tok, p in events:
            agg[T.throw_value(*T.parse_throw(tok))] += p
        want = T.gold_distribution() if n_silvers is None else T.mixed_distribution(n_silvers)
        np.testing.assert_allclose(agg[:len(want)], want, atol=1e-14)


def test_face_probabilities_are_options():
    probs = ThrowProbabilities(face_up=0.5, face_down=0.5, side=0.0, upright=0.0, upside_down=0.0)
    d = T.gold_distribution(probs)
    assert T.mean(d) == pytest.approx(4 * 0.5 + 20 / 16)
    g = new_game(face_up=0.5, face_down=0.5, side=0.0, upright=0.0, upside_down=0.0)
    assert len(g.chance_events()) == 5  # 0..4 face up
    with pytest.raises(ValueError, match="sum to 1"):
        ThrowProbabilities(face_up=0.5)
    with pytest.raises(ValueError, match="unknown"):
        new_game(colour="red")


# ------------------------------------------------------------------ reference rules (written separately)
RUNNERS = "PLNSBRK"
FWD = {"n": (0, -1), "e": (-1, 0), "s": (0, 1), "w": (1, 0)}  # (d file, d rank)
RIGHT = {"n": "e", "e": "s", "s": "w", "w": "n"}
KING8 = [(a, b) for a in (-1, 0, 1) for b in (-1, 0, 1) if (a, b) != (0, 0)]
STEPS = {"P": [(0, 1)], "N": [(1, 2), (-1, 2)], "S": [(0, 1), (1, 1), (-1, 1), (1, -1), (-1, -1)], "K": KING8}
RIDES = {"L": [(0, 1)], "B": [(1, 1), (1, -1), (-1, 1), (-1, -1)], "R": [(0, 1), (0, -1), (1, 0), (-1, 0)]}
START = {0: (1, 9), 1: (9, 1)}
CORNERS = {(1, 1), (9, 1), (9, 9), (1, 9)}


def ref_targets(runner, pos, facing):
    f, r = FWD[facing]
    rf, rr = FWD[RIGHT[facing]]
    out = set()

    def board(dx, dy):
        return dx * rf + dy * f, dx * rr + dy * r

    for dx, dy in STEPS.get(runner, []):
        bx, by = board(dx, dy)
        t = (pos[0] + bx, pos[1] + by)
        if 1 <= t[0] <= 9 and 1 <= t[1] <= 9:
            out.add(t)
    for dx, dy in RIDES.get(runner, []):
        bx, by = board(dx, dy)
        t = (pos[0] + bx, pos[1] + by)
        while 1 <= t[0] <= 9 and 1 <= t[1] <= 9:
            out.add(t)
            t = (t[0] + bx, t[1] + by)
    return out


def ref_end_states(side, me, enemy, n):
    """All end states of every path of exactly n actions (fewer when the king wins), by plain recursion.

    ``me`` = (runner letter, (file, rank), facing, frozenset of other corners touched); enemy = (letter, (file, rank)).
    """
    home = START[side]
    ends = set()

    def rec(state, left, stomped):
        if state == "WIN":
            ends.add("WIN")
            return
        if left == 0:
            runner, pos, facing, seen = state
            ends.add((runner, pos, facing, frozenset(seen) if len(seen) < 2 else "done"))
            return
        runner, pos, facing, seen = state
        for f in "nesw":
            if f != facing:
                rec((runner, pos, f, seen), left - 1, stomped)
        for t in ref_targets(runner, pos, facing):
            new_seen = seen | {t} if t in CORNERS and t != home else seen
            relay, new_stomped = False, stomped
            if t == home and len(seen) >= 2:
                relay = True
            elif enemy and t == enemy[1] and RUNNERS.index(enemy[0]) > RUNNERS.index(runner) and not stomped:
                relay, new_stomped = True, True
            if relay:
                if runner == "K":
                    rec("WIN", 0, new_stomped)
                else:
                    nxt = RUNNERS[RUNNERS.index(runner) + 1]
                    rec((nxt, home, "n" if side == 0 else "s", frozenset()), left - 1, new_stomped)
            else:
                rec((runner, t, facing, new_seen), left - 1, new_stomped)

    rec(me, n, False)
    return ends


def sq_name(pos):
    return f"{pos[0]}{'abcdefghi'[pos[1] - 1]}"


def parse_sq(text):
    return int(text[0]), "abcdefghi".index(text[1]) + 1


def side_field(side, runner, pos, facing, seen, right="m"):
    letter = runner if side == 0 else runner.lower()
    corners = "-" if not seen else ("*" if len(seen) >= 2 else sq_name(next(iter(seen))))
    return f"{letter}{sq_name(pos)}:{facing}:{corners}:{right}"


def board_field(runners):
    """runners: {(file, rank): letter}; sente's letter wins a shared square (as the engine draws it)."""
    rows = []
    for rank in range(1, 10):
        row, empty = "", 0
        for file in range(9, 0, -1):
            c = runners.get((file, rank))
            if c:
                row += (str(empty) if empty else "") + c
                empty = 0
            else:
                empty += 1
        rows.append(row + (str(empty) if empty else ""))
    return "/".join(rows)


def make_sfen(mover, other, side, phase):
    """mover/other: (runner, pos, facing, seen); side = the side to move."""
    fields = {side: side_field(side, *mover), 1 - side: side_field(1 - side, *other)}
    cells = {}
    for s in (1, 0):
        st = mover if s == side else other
        cells[st[1]] = st[0] if s == 0 else st[0].lower()
    return f"{board_field(cells)} {'bw'[side]} - 5 {fields[0]}/{fields[1]}/{phase}"


def random_runner(rng, side):
    runner = rng.choice(RUNNERS)
    while True:
        pos = (rng.randint(1, 9), rng.randint(1, 9))
        if runner != "B" or (pos[0] + pos[1]) % 2 == 0:
            break
    others = sorted(CORNERS - {START[side]})
    seen = set(rng.sample(others, rng.choice([0, 0, 1, 1, 2])))
    if pos in others and pos not in seen:
        seen.add(pos)
    return runner, pos, rng.choice("nesw"), frozenset(seen)


def engine_end(state, token):
    """Apply a turn token to a copy and read the mover's resulting runner in the reference's terms."""
    g = state.copy()
    side = g.side
    g.apply(token)
    me = g.sides[side]
    if g.result() is not None:
        return "WIN"
    sfen_side = g.sfen().split(" ")[4].split("/")[side]
    head, facing, corners, _ = sfen_side.split(":")
    seen = frozenset() if corners == "-" else ("done" if corners == "*" else frozenset({parse_sq(corners)}))
    return head[0].upper(), parse_sq(head[1:]), facing, seen


@pytest.mark.parametrize("seed", range(12))
def test_turn_generation_matches_brute_force(seed):
    rng = random.Random(seed)
    for _ in range(6):
        side = rng.randint(0, 1)
        mover, other = random_runner(rng, side), random_runner(rng, 1 - side)
        targets = sorted(ref_targets(mover[0], mover[1], mover[2]) - CORNERS)
        if targets and rng.random() < 0.5:  # put the enemy where the mover can step, to provoke stomps
            t = rng.choice(targets)
            if other[0] != "B" or sum(t) % 2 == 0:
                other = (other[0], t, other[2], other[3])
        n = rng.choice([1, 2, 3, 3, 4])
        sfen = make_sfen(mover, other, side, f"t{n}")
        state = MawarikudoiState.from_sfen(sfen)
        assert state.sfen() == sfen
        tokens = state.legal_actions()
        got = [engine_end(state, tok) for tok in tokens]
        assert len(got) == len(set(got)), f"two tokens for one end state in {sfen}"
        want = ref_end_states(side, mover, (other[0], other[1]), n)
        want = {w if w == "WIN" or isinstance(w[3], str) else (*w[:3], frozenset(w[3])) for w in want}
        assert set(got) == want, sfen
        ends = state.turn_ends()
        for end, tok in zip(ends, tokens):
            assert state.turn_token(end.state) == tok


def test_deep_turns_agree_with_brute_force_for_fast_runners():
    # lance, bishop and rook legs are short: these cross relays
    for sfen_mover, n in ((("L", (1, 1), "w", frozenset({(1, 1)})), 5), (("B", (5, 5), "n", frozenset({(1, 1), (9, 1)})), 4),
                          (("R", (9, 1), "s", frozenset({(9, 1), (1, 1)})), 4)):
        other = ("K", (5, 1), "s", frozenset())
        state = MawarikudoiState.from_sfen(make_sfen(sfen_mover, other, 0, f"t{n}"))
        got = {engine_end(state, tok) for tok in state.legal_actions()}
        want = ref_end_states(0, sfen_mover, ("K", (5, 1)), n)
        assert got == {w if w == "WIN" or isinstance(w[3], str) else (*w[:3], frozenset(w[3])) for w in want}


# ------------------------------------------------------------------ rules in play
def test_start_position_and_protocol_shape():
    g = new_game()
    assert isinstance(g, GameState) and g.variant_id == "mawarikudoi"
    assert g.sfen() == "p8/9/9/9/9/9/9/9/8P b - 1 P1i:n:-:m/p9a:s:-:m/g"
    assert g.node_kind() is NodeKind.CHANCE and g.legal_actions() == []  # level runners: no choice of throw
    g.apply("throw=duud")  # any order is accepted
    assert g.node_kind() is NodeKind.DECISION and g.sfen().endswith("/t2")
    acts = g.legal_actions()
    assert "1i1h,1h1g" in acts and len(acts) == len(set(acts))
    g.apply("1i1h,1h1g")
    assert g.side_to_move() == 1 and g.sfen() == "p8/9/9/9/9/9/8P/9/9 w - 2 P1g:n:-:m/p9a:s:-:m/g"


def test_relay_carries_remaining_steps():
    g = MawarikudoiState.from_sfen("p8/9/9/9/9/9/9/9/L8 b - 3 L9i:e:*:m/p9a:s:-:m/t3")
    g.apply("9i1i,1i2g,turn:w")  # the lance relays on 1i, the knight takes the two remaining actions
    assert g.sfen().split(" ")[4] == "N2g:w:-:m/p9a:s:-:m/c"  # knight above pawn: gote may throw mixed


def test_several_relays_in_one_turn():
    g = MawarikudoiState.from_sfen("p8/9/9/9/4B4/9/9/9/9 b - 9 B5e:n:*:m/p9a:s:-:m/t11")
    g.apply("5e1i,1i1a,1a9a,9a9i,9i1i,1i1h,1h1g,1g1f,1f1e,1e1d,1d1c")  # bishop -> rook -> king
    assert g.sfen().split(" ")[4].startswith("K1c:n:-:m/")
    assert g.result() is None


def test_winning_with_the_king_mid_turn():
    sfen = "p8/9/9/9/9/9/9/7K1/9 b - 40 K2h:n:*:m/p9a:s:-:m/t6"
    g = MawarikudoiState.from_sfen(sfen)
    assert "2h1i" in g.legal_actions()  # the winning path is one action long
    with pytest.raises(GameError, match="finished after 1"):
        g.apply("2h1i,turn:e")
    assert g.sfen() == sfen
    g.apply("2h1i")
    assert g.result() == (1.0, "sente's king completed its leg")
    assert g.node_kind() is NodeKind.TERMINAL and g.legal_actions() == []
    assert g.sfen() == "p8/9/9/9/9/9/9/9/9 b - 41 done:m/p9a:s:-:m/end"
    assert MawarikudoiState.from_sfen(g.sfen()).sfen() == g.sfen()
    with pytest.raises(GameError, match="over"):
        g.apply("throw=uddd")


def test_stomp_relays_at_once_and_only_once_per_turn():
    # sente pawn on 1c, gote rook on 1b: the pawn steps on the rook and relays; the new lance lands on the rook
    # again but a second stomp in the same turn does not count.
    g = MawarikudoiState.from_sfen("9/8r/8P/9/9/9/9/9/9 b - 7 P1c:n:-:m/r1b:s:-:m/t2")
    g.apply("1c1b,1i1b")
    assert g.sfen().split(" ")[4].startswith("L1b:n:-:m/")


def test_stomp_needs_a_higher_runner_and_a_move():
    equal = MawarikudoiState.from_sfen("9/8p/8P/9/9/9/9/9/9 b - 7 P1c:n:-:m/p1b:s:-:m/t1")
    equal.apply("1c1b")
    assert equal.sfen().split(" ")[4].startswith("P1b:")  # same rank: no stomp
    turning = MawarikudoiState.from_sfen("9/8P/9/9/9/9/9/9/9 b - 7 P1b:n:-:m/r1b:s:-:m/t1")
    turning.apply("turn:w")  # turning on the enemy's square is not a stomp
    assert turning.sfen().split(" ")[4].startswith("P1b:w:")


def test_mixed_throw_right_and_its_loss():
    sfen = "l8/9/9/9/9/9/9/9/8P b - 3 P1i:n:-:m/l9a:s:-:m/c"
    g = MawarikudoiState.from_sfen(sfen)
    assert g.legal_actions() == ["throw:gold", "throw:mixed"]
    g.apply("throw:mixed")
    assert len(g.chance_events()) == 70 * 70 and g.n_silvers() == 4
    keep = g.copy()
    keep.apply("throw=uddd/uddd")  # 1 x 1 = 1 < 10: the right stays
    assert keep.sfen().endswith("P1i:n:-:m/l9a:s:-:m/t1")
    g.apply("throw=suud/sddd")  # 7 x 5 = 35: the right is lost
    assert g.sfen().endswith("P1i:n:-:-/l9a:s:-:m/t35")
    # gote's silver runner is not thrown: three silvers
    h = MawarikudoiState.from_sfen("s8/9/9/9/9/9/9/9/8P b - 3 P1i:n:-:m/s9a:s:-:m/m")
    assert h.n_silvers() == 3
    with pytest.raises(GameError, match="3 silvers"):
        h.apply("throw=uddd/uddd")
    h.apply("throw=uddd/udd")
    # level runners, or the right lost: no choice
    with pytest.raises(GameError, match="mixed throw to be allowed"):
        MawarikudoiState.from_sfen("p8/9/9/9/9/9/9/9/8P b - 1 P1i:n:-:m/p9a:s:-:m/c")
    with pytest.raises(GameError, match="mixed throw to be allowed"):
        MawarikudoiState.from_sfen("l8/9/9/9/9/9/9/9/8P b - 3 P1i:n:-:-/l9a:s:-:m/c")


def test_bad_tokens_leave_the_state_unchanged():
    g = MawarikudoiState.from_sfen("l8/9/9/9/9/9/9/9/8P b - 3 P1i:n:-:m/l9a:s:-:m/c")
    bad_choice = ["throw=uddd", "throw:silver", "", "1i1h"]
    for tok in bad_choice:
        before = g.sfen()
        with pytest.raises(GameError):
            g.apply(tok)
        assert g.sfen() == before
    g.apply("throw:gold")
    for tok in ["throw:gold", "throw=udd", "throw=uddd/uddd", "throw=uddq", "throw=", "roll=3", "throw=uddd/"]:
        before = g.sfen()
        with pytest.raises(GameError):
            g.apply(tok)
        assert g.sfen() == before
    g.apply("throw=uudd")  # N = 2
    for tok, msg in [("1i1h", "gave 2"), ("1i1h,1h1g,1g1f", "gave 2"), ("1i1g,turn:e", "cannot move"),
                     ("1h1g,turn:e", "stands on 1i"), ("turn:n,1i1h", "already faces"), ("turn:q,1i1h", "facing"),
                     ("1i1h,,", "bad action"), ("1i1h,1h1g ", "padded"), ("1i-1h,turn:e", "bad action"),
                     ("10a1h,turn:e", "bad action"), ("throw=uudd", "bad action")]:
        before = g.sfen()
        with pytest.raises(GameError, match=msg):
            g.apply(tok)
        assert g.sfen() == before


@pytest.mark.parametrize("sfen,msg", [
    ("p8/9/9/9/9/9/9/9/8P b - 1 P1i:n:-:m/p9a:s:-:m", "race field"),
    ("p8/9/9/9/9/9/9/9/8P b - 1 P1i:n:-:m/p9a:s:-:m/x", "bad phase"),
    ("p8/9/9/9/9/9/9/9/8P b - 1 P1i:n:-:m/p9a:s:-:m/t0", "bad phase"),
    ("p8/9/9/9/9/9/9/9/8P b P 1 P1i:n:-:m/p9a:s:-:m/g", "hand"),
    ("p8/9/9/9/9/9/9/9/8P x - 1 P1i:n:-:m/p9a:s:-:m/g", "side to move"),
    ("p8/9/9/9/9/9/9/9/8P b - 0 P1i:n:-:m/p9a:s:-:m/g", "turn number"),
    ("p8/9/9/9/9/9/9/9/7P1 b - 1 P1i:n:-:m/p9a:s:-:m/g", "does not match"),
    ("p8/9/9/9/9/9/9/9/8P b - 1 G1i:n:-:m/p9a:s:-:m/g", "letter"),
    ("p8/9/9/9/9/9/9/9/8P b - 1 P1i:q:-:m/p9a:s:-:m/g", "facing"),
    ("p8/9/9/9/9/9/9/9/8P b - 1 P1i:n:1i:m/p9a:s:-:m/g", "not one of its corners"),
    ("p8/9/9/9/9/9/9/9/8P b - 1 P1i:n:-:x/p9a:s:-:m/g", "right"),
    ("8P/9/9/9/9/9/9/9/p8 b - 1 P1a:n:-:m/p9i:s:-:m/g", "does not record"),
    ("p8/9/9/9/9/9/9/9/7B1 b - 1 B2i:n:-:m/p9a:s:-:m/g", "bishop"),
    ("p8/9/9/9/9/9/9/9/9 b - 1 done:m/p9a:s:-:m/g", "finished"),
    ("p8/9/9/9/9/9/9/9/8P b - 1 P1i:n:-:m/p9a:s:-:m/end", "no side"),
    ("p8/9/9/9/9/9/9/9/9 w - 1 done:m/p9a:s:-:m/end", "finished"),
])
def test_bad_sfen_is_rejected(sfen, msg):
    with pytest.raises(GameError, match=msg):
        MawarikudoiState.from_sfen(sfen)


def random_token_games(n_games, n_nodes, seed):
    """Random play through the token interface; every intermediate SFEN must round-trip."""
    rng = np.random.default_rng(seed)
    for _ in range(n_games):
        g = new_game()
        for _ in range(n_nodes):
            kind = g.node_kind()
            if kind is NodeKind.TERMINAL:
                break
            if kind is NodeKind.CHANCE:
                events = g.chance_events()
                p = np.array([q for _, q in events])
                g.apply(events[rng.choice(len(events), p=p / p.sum())][0])
            else:
                acts = g.legal_actions()
                g.apply(acts[int(rng.integers(len(acts)))])
            s = g.sfen()
            assert MawarikudoiState.from_sfen(s).sfen() == s


def test_sfen_round_trip_in_random_games():
    random_token_games(2, 90, 5)


@pytest.mark.slow
def test_sfen_round_trip_in_long_random_games():
    random_token_games(6, 2000, 6)


def test_shared_square_sfen():
    shared = MawarikudoiState.from_sfen("9/9/9/9/4P4/9/9/9/9 w - 9 P5e:n:-:m/l5e:s:-:m/g")
    assert shared.sfen() == "9/9/9/9/4P4/9/9/9/9 w - 9 P5e:n:-:m/l5e:s:-:m/g"
