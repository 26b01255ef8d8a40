"""Ousho Fantasista strength: the chance-aware search against the same search ignoring coming rolls, and against a
one-ply greedy player, with the same node budget per turn.

Our own game loop, so that both games of a pair see the same rolls (``fantasista-match`` plays the same engines
through USI with ``option.FantasistaChanceAware=false``, see docs/matches.md, with its own rolls per game): colours
alternate, fairies are drawn per game pair, rolls come from a seeded generator (both games of a pair see the same
roll sequence), and a game that reaches ``MAX_PLIES`` is adjudicated by the static material balance (a win for the
side ahead by more than ``ADJUDICATE`` centipawns, else a draw). Deterministic for a seed.

Run ``python -m tests.test_fantasista_match GAMES NODES [greedy|twins|blind|both|...]`` for the report (score of the first
player, 95% interval; the modes are those of ``_modes``, "both" = greedy and twins).
"""
from __future__ import annotations

import math
import random
import sys
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from engine.game import NodeKind
from engine.variants.fantasista import FAIRIES, new_game
from engine.variants.fantasista.turngen import to_array
from search.fantasista import FantasistaSearcher, greedy_turn

MAX_PLIES = 200
ADJUDICATE = 600
NODES = 6000  # per turn, for both engines: depth 2-3 in most middlegame positions
#: Per turn in the match against the roll-blind engine: depth 3-5, where a token the aware engine sees coming can be
#: dropped and followed up within the horizon (at 6000 nodes the two engines were level, 0.495 over 200 games).
BLIND_NODES = 40000


def _searcher_player(chance_aware: bool, nodes: int, **settings):
    """A player searching ``nodes`` per turn with a fresh TT, so its turn is a function of the game (position and
    earlier positions): the turns it has chosen are kept and replayed when a position comes again with the same
    history. The games of a match share their first turns up to the first roll (the fairy pair fixes the opening)
    and often beyond (a roll's 20 faces give at most five different rows), so that saves searches (tested: the
    game is the one fresh players play). The one state a searcher carries from turn to turn is the size of its
    generation buffers (grown when a node overflowed them, which the kernels then hand to the Python loop), so a
    replayed turn is the one the first search gave. ``play.replayed`` / ``play.searched`` count the turns."""
    s = FantasistaSearcher(chance_aware=chance_aware, **settings)
    chosen: dict[tuple[str, int], str] = {}

    def play(g):
        key = (g.sfen(), hash(tuple(g._hist)))  # the search reads the game's earlier positions (repetitions)
        if key in chosen:
            play.replayed += 1
            return chosen[key]
        s.tt.clear()
        best = chosen[key] = s.search(g, depth=6, node_limit=nodes).best
        play.searched += 1
        return best
    play.replayed = play.searched = 0
    return play


def _greedy_player():
    s = FantasistaSearcher(chance_aware=False)
    return lambda g: greedy_turn(g, s)


def play_game(players, fairies, roll_seed: int, record: list[str] | None = None) -> float:
    """Score of ``players[0]`` (sente) in one game; ``record`` receives every turn and roll played."""
    rng = random.Random(roll_seed)
    g = new_game(fairies, max_plies=MAX_PLIES)
    while g.node_kind() is not NodeKind.TERMINAL:
        token = f"roll={rng.randint(1, 20)}" if g.node_kind() is NodeKind.CHANCE else players[g.side_to_move()](g)
        g.apply(token)
        if record is not None:
            record.append(token)
    score, reason = g.result()
    if reason == "move limit":
        judge = FantasistaSearcher(chance_aware=False)
        judge._set_fairies(g.fairy)
        v = judge.evaluate(to_array(g.bd), g.move_number)  # for the side to move
        v = v if g.bd.stm == 0 else -v
        score = 1.0 if v > ADJUDICATE else 0.0 if v < -ADJUDICATE else 0.5
    return score


def match(make_a, make_b, games: int, seed: int = 1, progress: bool = False,
          on_game: Callable[[int, tuple[str, str], float], None] | None = None, fairies_by_seat: bool = False):
    """Score of A against B over ``games`` games (pairs with colours swapped): (mean, half width of the 95% CI,
    per-game scores). ``progress`` prints each game's score as it ends (so a cut run still reports); ``on_game``
    receives (game index, (sente fairy, gote fairy), A's score) as each game ends.

    By default each engine keeps its fairy in both games of a pair. With ``fairies_by_seat`` the fairies stay with
    the seats instead (as in ``fantasista-match``): the second game of a pair is then the first with the engines
    swapped, the same game again as long as both engines choose the same turns (they differ on a few per cent of
    the turns near rolls), so such a pair scores one each and only the games where the engines part add to the
    spread of the pair results (a duplicate match)."""
    from bench.fantasista_strength import pair_setups
    setups = pair_setups(seed, (games + 1) // 2)
    a, b = make_a(), make_b()
    scores = []
    for k in range(games):
        fairies, roll_seed = setups[k // 2]
        if k % 2 == 0:
            scores.append(play_game((a, b), fairies, roll_seed))
        else:
            scores.append(1.0 - play_game((b, a), fairies if fairies_by_seat else fairies[::-1], roll_seed))
        seats = fairies if k % 2 == 0 or fairies_by_seat else fairies[::-1]
        if progress:
            print(f"game {k} {seats} score {scores[-1]} "
                  f"running {sum(scores) / len(scores):.3f} over {len(scores)}", flush=True)
        if on_game is not None:
            on_game(k, seats, scores[-1])
    return (*_per_game_interval(scores), scores)


def _per_game_interval(scores: list[float]) -> tuple[float, float]:
    """(mean, half width of the 95% interval) treating the games as independent."""
    n = len(scores)
    mean = sum(scores) / n
    var = sum((x - mean) ** 2 for x in scores) / max(1, n - 1)
    return mean, 1.96 * math.sqrt(var / n)


def pair_report(scores: list[float]) -> str:
    """The per-game interval, then the ledger's report lines for these games: the interval with the game pair as
    the unit (both games of a pair share the fairy pair and the rolls with colours swapped, so their results are
    not independent; with the fairies by seat, engines that agree on most turns replay one game twice) and the
    SPRT."""
    from bench.fantasista_strength import pairs_line, sprt_line
    mean, half = _per_game_interval(scores)
    return f"{mean:.3f} +- {half:.3f} per game; {pairs_line(scores)}; {sprt_line(scores)}"


# ------------------------------------------------------------------ roll handling of the search
def _roll_state(fairies: str, pieces: str = "4k4/9/9/9/9/9/2P1PB3/9/4K4", side: str = "w", number: int = 16):
    from engine.variants.fantasista.state import FantasistaState
    return FantasistaState.from_sfen(f"{pieces} {side} - {number} f={fairies};n=roll")


@pytest.mark.parametrize("fairy", FAIRIES)
def test_search_receives_each_roll_row_as_the_game_does(fairy):
    """The search's ``_receive`` gives, for every merged row, the positions the rules give for its rolls."""
    from engine.variants.fantasista.magic import roll_effect
    from search.fantasista import roll_rows
    letter = {"hiko": "h", "ayumi": "a", "yokaku": "y", "ginsara": "g"}[fairy]
    g0 = _roll_state(letter + "h")  # sente rolls (gote to move on the board)
    s = FantasistaSearcher()
    s._set_fairies(g0.fairy)
    row = to_array(g0.bd)
    for r, p in roll_rows("4-8"):
        n = next(k for k in range(1, 21) if roll_effect(k, "4-8") == r)
        g = g0.copy()
        g.apply(f"roll={n}")
        if g.phase == "target":
            want = set()
            for t in g.legal_actions():
                g2 = g.copy()
                g2.apply(t)
                want.add(to_array(g2.bd).tobytes())
        else:
            want = {to_array(g.bd).tobytes()}
        assert {x.tobytes() for x in s._receive(row, r)} == want, (fairy, r)


def _plain_chance(s, row, mnum, depth):
    """Expectimax without pruning, child values clamped to the evaluation bounds as Star1 assumes."""
    from engine.variants.fantasista.turngen import key
    from search.fantasista import EVAL_BOUND, MATE, roll_rows
    total = 0.0
    for r, p in roll_rows(s.reserved):
        vals = [s._decision(b, int(key(b)), mnum, depth, -MATE - 1, MATE + 1, 0)[0]
                for b in s._receive(row, r)]
        total += p * max(-EVAL_BOUND, min(EVAL_BOUND, min(vals)))
    return total


@pytest.mark.parametrize("sfen_board,fairies", [
    ("4k4/9/9/9/9/9/2P1PB3/9/4K4", "ya"),       # a carrier target and tokens
    ("k8/G8/P8/9/9/9/9/9/4K4", "hh"),            # gote (to move) is mated whatever sente rolls: every row at L
    ("4k4/4p4/9/9/4R4/9/9/9/4K4", "ag"),
])
def test_star1_is_exact_with_evaluation_bounds(sfen_board, fairies):
    """Star1 at a roll equals plain expectimax (children clamped to +-EVAL_BOUND); with a window above or below the
    value it fails low / high with a correct bound, and a value strictly inside the window is the exact value."""
    from engine.variants.fantasista.turngen import key
    from search.fantasista import EVAL_BOUND, MATE
    g = _roll_state(fairies, sfen_board)
    row = to_array(g.bd)
    h = int(key(row))

    def fresh():
        s = FantasistaSearcher()
        s._set_fairies(g.fairy)
        return s
    for depth in (1, 2):
        exact = _plain_chance(fresh(), row, 16, depth)
        full = fresh()._chance(row, h, 16, depth, -MATE - 1, MATE + 1, 0)
        assert -EVAL_BOUND <= full <= EVAL_BOUND
        assert full == pytest.approx(exact)
        assert fresh()._chance(row, h, 16, depth, exact + 40, exact + 50, 0) <= exact + 40
        assert fresh()._chance(row, h, 16, depth, exact - 50, exact - 40, 0) >= exact - 40
        v = fresh()._chance(row, h, 16, depth, exact - 5, exact + 5, 0)
        assert v == pytest.approx(exact)


def _key(row):
    from engine.variants.fantasista.turngen import key
    return int(key(row))


def test_no_roll_term_in_the_evaluation_or_the_quiescence():
    """The evaluation has no schedule term, and the quiescence counts no roll: before gote's roll (ply 16) the
    losing capture 5e5f (a silver for a pawn, the gold retakes) is not preferred to standing pat. Counting the roll
    after the capture only (the former rule) made it look 70 better than standing pat for a hiko roller."""
    from search import MATE
    g = _roll_state("ah", "4k4/9/9/9/4s4/4P4/4G4/9/4K4", side="w", number=16)
    g.phase = "move"  # gote to play ply 16, after which it rolls
    row = to_array(g.bd)
    aware, blind = FantasistaSearcher(True), FantasistaSearcher(False)
    for s in (aware, blind):
        s._set_fairies(g.fairy)
    stand = aware.evaluate(row, 16)
    assert stand == blind.evaluate(row, 16) == aware.evaluate(row, 3)  # no schedule term
    for s in (aware, blind):
        assert s._quiesce(row, _key(row), 16, -MATE - 1, MATE + 1, 0, 2) == stand
    # Far from any roll the two engines search identically (same turn, value and node count).
    g2 = new_game(("hiko", "ayumi"))
    for m in ("7g7f", "3c3d", "8h2b+"):
        g2.apply(m)
    ra = FantasistaSearcher(True).search(g2, depth=2)
    rb = FantasistaSearcher(False).search(g2, depth=2)
    assert (ra.best, ra.score, ra.nodes) == (rb.best, rb.score, rb.nodes)


def test_quiescence_checks_see_a_drop_mate_and_search_every_evasion():
    """``quiescence_checks``: at a leaf the side to move with a gold in hand mates by G*5b (the pawn on 5c guards
    it); the capture-only quiescence stands pat, the one with checks finds the mate. A side in check does not stand
    pat: with a window its static value beats, the mated side still scores -MATE. The search (kernels and the
    Python loop alike) then sees at depth 1 that gote's only turn that does not stop the drop loses."""
    from engine.variants.fantasista.state import FantasistaState
    from search import MATE
    g = FantasistaState.from_sfen("4k4/9/4P4/9/9/9/9/9/4K4 b G 5 f=hh")
    row = to_array(g.bd)
    plain, checks = FantasistaSearcher(False), FantasistaSearcher(False, quiescence_checks=True)
    for s in (plain, checks):
        s._set_fairies(g.fairy)
    stand = plain.evaluate(row, 5)
    assert plain._quiesce(row, _key(row), 5, -MATE - 1, MATE + 1, 0, 2) == stand
    assert checks._quiesce(row, _key(row), 5, -MATE - 1, MATE + 1, 0, 2) == MATE
    g.apply("G*5b")
    mated = to_array(g.bd)
    assert g.node_kind() is NodeKind.TERMINAL
    low = checks.evaluate(mated, 6) - 1  # stand pat would fail high against this window
    assert plain._quiesce(mated, _key(mated), 6, low - 1, low, 0, 2) >= low
    assert checks._quiesce(mated, _key(mated), 6, low - 1, low, 0, 2) == -MATE
    # One ply earlier gote's rook may take a bishop (1a1h), after which G*5b mates: the capture-only quiescence
    # stands pat after it and takes the bishop; with checks the search sees the mate and keeps its king safe.
    g = FantasistaState.from_sfen("4k3r/9/4P4/9/9/9/9/8B/4K4 w G 4 f=hh")
    for kernel in (True, False):
        r_plain = FantasistaSearcher(False, frontier_kernel=kernel).search(g, depth=1)
        r_checks = FantasistaSearcher(False, quiescence_checks=True, frontier_kernel=kernel).search(g, depth=1)
        assert r_plain.best.startswith("1a1h")
        assert not r_checks.best.startswith("1a1h") and -MATE / 2 < r_checks.score < r_plain.score


def test_king_exposed_to_drops_costs_by_open_squares_and_the_enemy_hand():
    """The evaluation's drop term (``king_drop_cp``, off by default): KING_DROP_CP per empty square next to a king
    per unit of the enemy hand's drop attack (tokens count as ordinary pieces; the attack is capped); with an empty
    enemy hand or no open square it is 0, and ``king_drop_cp=0`` gives the material-only evaluation."""
    from engine.variants.fantasista.state import FantasistaState
    from search.fantasista import DROP_ATTACK_CAP, KING_DROP_CP

    def value(sfen, **kw):
        g = FantasistaState.from_sfen(sfen)
        s = FantasistaSearcher(**kw)
        s._set_fairies(g.fairy)
        return s.evaluate(to_array(g.bd), g.move_number)

    # Sente's king on 5i: 5 open squares (4h 5h 6h 4i 6i); gote's on 1a, walled in by its own pawns.
    base = "7pk/7pp/9/9/9/9/9/9/4K4"
    on = {"king_drop_cp": KING_DROP_CP}
    for hand, attack in {"-": 0, "p": 1, "g": 2, "gp": 3}.items():
        material = value(f"{base} b {hand} 1 f=hh", king_drop_cp=0)
        assert value(f"{base} b {hand} 1 f=hh", **on) == material - KING_DROP_CP * 5 * attack, hand
        assert value(f"{base} b {hand} 1 f=hh") == material  # off by default
    # A token in hand threatens like an ordinary piece of its type.
    assert value(f"{base} b - 1 f=hh;h=g", **on) - value(f"{base} b - 1 f=hh;h=g") == -KING_DROP_CP * 5 * 2
    # Capped: rook, bishop, two golds and two silvers are worth DROP_ATTACK_CAP, not 12.
    assert value(f"{base} b - 1 f=hh;h=rb2g2s", **on) - value(f"{base} b - 1 f=hh;h=rb2g2s") == \
        -KING_DROP_CP * 5 * DROP_ATTACK_CAP
    # Sente's pieces in hand do not threaten gote's king, which has no open square.
    assert value(f"{base} b G 1 f=hh", **on) == value(f"{base} b G 1 f=hh")


def test_chance_node_searches_the_main_outcome_shifted_by_the_static_differences():
    """The default chance node = the search of the most probable outcome + sum p * (static(row) - static(main)),
    with the window shifted so it fails low / high correctly."""
    from search import MATE
    g = _roll_state("ya", "4k4/9/9/9/4p4/9/2P1PB3/9/4K4")  # sente (yokaku) rolls: a carrier target among them
    row = to_array(g.bd)

    def fresh():
        s = FantasistaSearcher()
        s._set_fairies(g.fairy)
        return s
    s = fresh()
    (main_row, _), rest = s.rows[0], s.rows[1:]
    assert main_row[0] == ("yokaku", "4-8")  # what sente (the roller) receives on 4-18
    main = s._receive(row, main_row)[0]
    shift = round(sum(p * (min(s.evaluate(k, 16) for k in s._receive(row, r)) - s.evaluate(main, 16))
                      for r, p in rest))
    for depth in (1, 2):
        v_main = fresh()._decision(main, _key(main), 16, depth, -MATE - 1, MATE + 1, 0)[0]
        full = fresh()._chance_main(row, _key(row), 16, depth, -MATE - 1, MATE + 1, 0)
        assert full == v_main + shift
        assert fresh()._chance_main(row, _key(row), 16, depth, full + 40, full + 50, 0) <= full + 40
        assert fresh()._chance_main(row, _key(row), 16, depth, full - 50, full - 40, 0) >= full - 40


def test_chance_node_is_exact_when_the_rare_outcomes_are_only_material_in_hand():
    """Both sides yokaku without a bishop (the carrier row finds no target): every outcome only puts tokens in the
    roller's hand, which the roller cannot use within depth 1 (drops are not captures), so the main-outcome chance
    node equals the exact Star1 expectimax over all outcomes."""
    from search import MATE
    g = _roll_state("yy", "4k4/4g4/4p4/9/4R4/9/2P1P4/9/4K4")
    row = to_array(g.bd)
    exact_searcher, main_searcher = FantasistaSearcher(expand_every_outcome=True), FantasistaSearcher()
    for s in (exact_searcher, main_searcher):
        s._set_fairies(g.fairy)
    exact = exact_searcher._chance(row, _key(row), 16, 1, -MATE - 1, MATE + 1, 0)
    assert main_searcher._chance_main(row, _key(row), 16, 1, -MATE - 1, MATE + 1, 0) == pytest.approx(exact, abs=1)


def test_aware_search_keeps_its_depth_next_to_a_roll():
    """With the same node budget, on the turn right before a roll (ply 15) the chance-aware engine searches at most
    one ply less than the roll-blind engine (with every outcome searched it reached depth 1 against 3-4)."""
    g = new_game(("hiko", "ginsara"))
    s = FantasistaSearcher(False)
    while g.move_number < 15:
        g.apply(s.search(g, depth=1).best)
    aware = FantasistaSearcher(True).search(g, depth=6, node_limit=3000)
    blind = FantasistaSearcher(False).search(g, depth=6, node_limit=3000)
    assert aware.depth >= blind.depth - 1 and aware.depth >= 2, (aware.depth, blind.depth)


def test_chance_nodes_do_not_count_against_the_node_budget():
    """At a fixed depth through a roll (ply 15) the search visits chance nodes; by default they are not counted, so
    the node count is the one with them counted minus the chance nodes, and under the same node budget the default
    engine searches at least as deep as the one counting them."""
    g = new_game(("hiko", "ginsara"))
    s = FantasistaSearcher(False)
    while g.move_number < 15:
        g.apply(s.search(g, depth=1).best)
    free, counted = FantasistaSearcher(True), FantasistaSearcher(True, count_chance_nodes=True)
    rf, rc = free.search(g, depth=2), counted.search(g, depth=2)
    assert free.chance_nodes == counted.chance_nodes > 0
    assert (rf.best, rf.score) == (rc.best, rc.score)
    assert rf.nodes == rc.nodes - counted.chance_nodes
    bf = FantasistaSearcher(True).search(g, depth=6, node_limit=3000)
    bc = FantasistaSearcher(True, count_chance_nodes=True).search(g, depth=6, node_limit=3000)
    assert bf.depth >= bc.depth


def test_late_move_reduction_searches_deeper_for_the_same_budget():
    """Late-move reduction (both engines): the same node budget reaches more plies on mid-game positions of seeded
    games, near rolls included, and at the root it still answers a legal turn of the position."""
    from tests.test_fantasista_frontier import _positions
    positions = _positions()[::4]
    for aware in (True, False):
        plain = [FantasistaSearcher(aware).search(g, depth=12, node_limit=8000) for g in positions]
        reduced = [FantasistaSearcher(aware, late_move_reduction=True).search(g, depth=12, node_limit=8000)
                   for g in positions]
        assert sum(r.depth for r in reduced) > sum(r.depth for r in plain), aware
        assert all(r.best in g.legal_actions() for r, g in zip(reduced, positions))


def test_late_move_reduction_counts_the_opponents_roll_it_cuts_off_statically():
    """A reduction whose cut-off ply is followed by the opponent's roll shifts the reduced search by the roll's
    expected static gain (otherwise the reduced searches, ending before the roll, would be compared with full ones
    that see the opponent's tokens): for a hiko roller that is 5% fire dragon + 5% king-god dragon + 5% awakening
    right + 75% rook, in hand, against the side to move; the kernel computes the same."""
    import numpy as np

    from engine.variants.fantasista import pieces as PC
    from search import fantasista_kernels as FKS
    from search.fantasista import HAND_BONUS, RIGHT_VALUE, VALUE
    g = _roll_state("ah", side="b", number=16)  # sente (ayumi) to move; gote (hiko) rolls after ply 16
    s = FantasistaSearcher()
    s._set_fairies(g.fairy)
    row = to_array(g.bd)
    hand = [int(HAND_BONUS * VALUE[pt]) for pt in (PC.D, PC.O, PC.R)]
    want = -(0.05 * hand[0] + 0.05 * hand[1] + 0.05 * RIGHT_VALUE[0] + 0.75 * hand[2])
    assert s._roll_gain(row) == round(want)
    work = np.zeros_like(s.work[0])
    assert FKS._roll_gain(row, 1, s.E, s.A, work) == s._roll_gain(row)


def test_chance_sides_expands_only_the_chosen_colours_rolls():
    """``chance_sides``: at ply 15 (sente to move) sente's roll follows the root turn and gote's the reply; "own"
    and "opponent" expand one of them each, "both" the two, and an unknown value is refused."""
    g = new_game(("hiko", "ginsara"))
    s = FantasistaSearcher(False)
    while g.move_number < 15:
        g.apply(s.search(g, depth=1).best)
    seen = {}
    for sides in ("own", "opponent", "both"):
        searcher = FantasistaSearcher(True, chance_sides=sides)
        searcher.search(g, depth=2)
        seen[sides] = searcher.chance_nodes
    # at depth 2 each root turn is followed by sente's roll (one chance node) and each reply by gote's
    assert 0 < seen["own"] < seen["opponent"] < seen["both"] == seen["own"] + seen["opponent"], seen
    with pytest.raises(ValueError, match="chance_sides"):
        FantasistaSearcher(chance_sides="mine")


def test_a_position_of_the_game_repeated_scores_a_draw():
    """The search knows the game's earlier positions: gote, a rook down, can go back to the position of move 1
    (4b5a), which it values as a draw (0) instead of -990; the side ahead thus avoids walking into sennichite."""
    from engine.variants.fantasista.state import FantasistaState
    g = FantasistaState.from_sfen("4k4/9/9/9/9/9/9/9/4K3R b - 1 f=hh")
    for m in ("5i4h", "5a4b", "4h5i"):
        g.apply(m)
    r = FantasistaSearcher().search(g, depth=1)
    assert (r.best, r.score) == ("4b5a", 0)


def test_an_ordinary_piece_is_not_dropped_while_a_token_of_its_type_is_in_hand():
    """prune_twin_drops: with a pawn and a pawn token in hand (and a gold, no gold token) the search's turns keep
    every token pawn drop and every gold drop but no ordinary pawn drop; each pawn drop left out has its token twin
    on the same square. Without a token the ordinary pawn is dropped as before."""
    from engine.variants.fantasista.state import FantasistaState
    from engine.variants.fantasista.turngen import desc_text

    def turns(sfen: str, prune: bool) -> set[str]:
        s = FantasistaSearcher(prune_twin_drops=prune)
        st = to_array(FantasistaState.from_sfen(sfen).bd)
        n = s._gen(st, s.key(st), 0)
        return {desc_text(s.bufs[0].odesc[i]) for i in range(n)}

    sfen = "4k4/9/9/9/9/9/2P6/9/4K4 b GP 1 f=hh;h=P"
    every, pruned = turns(sfen, False), turns(sfen, True)
    ordinary_pawns = {t for t in every if t.startswith("P*")}
    assert ordinary_pawns and pruned == every - ordinary_pawns
    assert {t.replace("P*", "P'*") for t in ordinary_pawns} <= pruned
    assert any(t.startswith("G*") for t in pruned)
    no_token = "4k4/9/9/9/9/9/2P6/9/4K4 b GP 1 f=hh"
    assert turns(no_token, True) == turns(no_token, False)


def test_positional_evaluation_adds_the_shogi_piece_square_terms():
    """positional=True: the start is level, a king one rank up costs its side KING_RANK_PENALTY, a silver
    advanced two ranks gains 2 * MINOR_ADVANCE, the same for gote mirrored; tokens and specials take the term of
    the piece they move like; positional=False is material only (both king positions 0)."""
    from engine.variants.fantasista.state import FantasistaState
    from eval import params as EP

    def value(sfen: str, positional: bool) -> int:
        s = FantasistaSearcher(positional=positional)
        return s.evaluate(to_array(FantasistaState.from_sfen(sfen).bd), 1)

    start = new_game(("hiko", "ayumi"))
    assert FantasistaSearcher(positional=True).evaluate(to_array(start.bd), 1) == 0
    home, up = "4k4/9/9/9/9/9/9/9/4K4 b - 1 f=hh", "4k4/9/9/9/9/9/9/4K4/9 b - 1 f=hh"
    assert value(home, True) - value(up, True) == EP.KING_RANK_PENALTY
    assert value(home, False) == value(up, False) == 0
    gote_up = "9/4k4/9/9/9/9/9/9/4K4 b - 1 f=hh"
    assert value(gote_up, True) - value(home, True) == EP.KING_RANK_PENALTY  # gote's loss is sente's gain
    silver = value("4k4/9/9/9/9/9/9/9/4KS3 b - 1 f=hh", True)
    assert value("4k4/9/9/9/9/9/4S4/9/4K4 b - 1 f=hh", True) - silver == 2 * EP.MINOR_ADVANCE + EP.CENTER_FILE_BONUS
    sword = value("4k4/9/9/9/9/9/9/9/4KW3 b - 1 f=hh;m=4i'", True)
    assert value("4k4/9/9/9/9/9/4W4/9/4K4 b - 1 f=hh;m=5g'", True) - sword == \
        2 * EP.MINOR_ADVANCE + EP.CENTER_FILE_BONUS


def test_chance_aware_beats_greedy_small():
    mean, _, scores = match(lambda: _searcher_player(True, 120), _greedy_player, games=4, seed=3)
    assert mean >= 0.5, scores


def test_match_script_writes_each_game_to_the_ledger(tmp_path, capsys):
    from bench import fantasista_strength as ledger
    path = tmp_path / "ledger.tsv"
    main(["2", "120", "greedy", "5", "--ledger", str(path)])
    main(["2", "120", "greedy", "5", "--ledger", str(path), "--fairies-by-seat"])
    with pytest.raises(SystemExit, match="already has games of mode greedy-seat, 120 nodes, seed 16"):
        main(["2", "120", "greedy", "5", "--ledger", str(path), "--fairies-by-seat"])  # the same games again
    games = ledger.read(path)
    assert [(g.mode, g.nodes, g.seed, g.game) for g in games] == [
        ("greedy", 120, 16, 0), ("greedy", 120, 16, 1), ("greedy-seat", 120, 16, 0), ("greedy-seat", 120, 16, 1)]
    assert (games[0].sente, games[0].gote) == (games[1].gote, games[1].sente)  # the fairies follow the engines
    assert (games[2].sente, games[2].gote) == (games[3].sente, games[3].gote) == (games[0].sente, games[0].gote)
    assert "pairs [" in capsys.readouterr().out


def test_a_player_replays_its_turns_without_changing_a_game():
    """The player keeps the turns it searched: a second game with the same fairies replays the opening (no roll
    before ply 15) and is the game that players without any kept turns play."""
    a, b = _searcher_player(True, 120), _searcher_player(False, 120)
    play_game((a, b), ("ayumi", "hiko"), 1)
    assert a.replayed == b.replayed == 0 and a.searched > 0
    kept, fresh = [], []
    play_game((a, b), ("ayumi", "hiko"), 2, record=kept)
    assert a.replayed >= 7 and b.replayed >= 7  # at least the turns before the first roll
    play_game((_searcher_player(True, 120), _searcher_player(False, 120)), ("ayumi", "hiko"), 2, record=fresh)
    assert kept == fresh


def test_a_duplicate_pair_of_one_engine_against_itself_replays_one_game():
    """With the fairies by seat, the second game of a pair is the first with the engines swapped: two copies of
    one engine play the same game twice (so such a pair scores one each and carries no noise of its own)."""
    a, b = _searcher_player(True, 120), _searcher_player(True, 120)
    first, second = [], []
    s1 = play_game((a, b), ("hiko", "ayumi"), 99, record=first)
    s2 = play_game((b, a), ("hiko", "ayumi"), 99, record=second)
    assert first == second and s1 == s2 and any(t.startswith("roll=") for t in first)


@pytest.mark.slow
def test_chance_aware_beats_greedy_100_games():
    mean, half, scores = match(lambda: _searcher_player(True, NODES), _greedy_player, games=100, seed=11)
    print(f"aware vs greedy: {mean:.3f} +- {half:.3f}")
    assert mean - half > 0.5


@pytest.mark.slow
def test_the_ledgers_positional_games_replay():
    """Whether the aware engine beats the roll-blind one is settled by the strength ledger's SPRT
    (``python -m bench.fantasista_strength --mode positional-seat``, docs/fantasista.md), not by a match inside a
    test: the ledger's games must then be the games this code plays. The first 6 games of positional-seat seed 3012
    are replayed (~2 minutes on one core) and must score as the ledger records them. A change to either engine's
    play fails this; such a change starts a new mode in the ledger, and this test then replays that one."""
    from bench import fantasista_strength as ledger
    games = 6
    recorded = sorted((g.game, (g.sente, g.gote), g.score)
                      for g in ledger.read(ledger.LEDGER)
                      if g.mode == "positional-seat" and g.nodes == BLIND_NODES and g.seed == 3012)[:games]
    assert [k for k, _, _ in recorded] == list(range(games))
    _, player_a, player_b, seed = _modes(BLIND_NODES)["positional"]
    played = []
    match(player_a, player_b, games, seed=seed + 3000, fairies_by_seat=True,
          on_game=lambda k, seats, score: played.append((k, seats, score)))
    assert played == recorded


def _modes(nodes: int) -> dict[str, tuple[str, Callable[[], Any], Callable[[], Any], int]]:
    """The matches of ``python -m tests.test_fantasista_match``: mode -> (label, player A factory, player B
    factory, seed). The score printed is A's. The ledger's modes take their settings from
    :data:`bench.fantasista_strength.MODE_SETTINGS` (which ``bench.fantasista_forks`` replays)."""
    from bench.fantasista_strength import MODE_SETTINGS

    def aware(**kw: Any) -> Callable[[], Any]:
        return lambda: _searcher_player(True, nodes, **kw)

    def blind(**kw: Any) -> Callable[[], Any]:
        return lambda: _searcher_player(False, nodes, **kw)

    return {
        "greedy": ("aware vs greedy", aware(), _greedy_player, 11),
        # the ledger's first design: both engines also search ordinary drops beside their token twins
        "blind": ("aware vs roll-blind, twin drops searched", aware(**MODE_SETTINGS["blind"]),
                  blind(**MODE_SETTINGS["blind"]), 12),
        "twins": ("aware vs roll-blind, material only, twin drops pruned", aware(**MODE_SETTINGS["twins"]),
                  blind(**MODE_SETTINGS["twins"]), 12),
        # both with the shogi engine's piece-square terms (an opening of ties no longer settled by 3-cp roll terms)
        "positional": ("aware vs roll-blind, both with piece-square terms", aware(**MODE_SETTINGS["positional"]),
                       blind(**MODE_SETTINGS["positional"]), 12),
        # do the piece-square terms make the engine stronger? (both aware, twin drops pruned)
        "pst": ("aware with piece-square terms vs material only", aware(positional=True), aware(positional=False),
                12),
        "blind-lmr": ("aware vs roll-blind, both with LMR", aware(late_move_reduction=True),
                      blind(late_move_reduction=True), 12),
        # the aware engine expanding only its own / only the opponent's rolls
        "own": ("aware (own rolls only) vs roll-blind", aware(chance_sides="own"), blind(), 12),
        "opponent": ("aware (opponent's rolls only) vs roll-blind", aware(chance_sides="opponent"), blind(), 12),
        # does late-move reduction make the engine stronger?
        "lmr": ("aware with LMR vs without", aware(late_move_reduction=True), aware(), 12),
        "lmr-blind": ("roll-blind with LMR vs without", blind(late_move_reduction=True), blind(), 12),
        # checks in the quiescence (a drop mate in one seen beyond the horizon)
        "blind-qchecks": ("aware vs roll-blind, both with quiescence checks", aware(quiescence_checks=True),
                          blind(quiescence_checks=True), 12),
        "qchecks-blind": ("roll-blind with quiescence checks vs without", blind(quiescence_checks=True), blind(), 12),
    }


def main(argv: list[str] | None = None) -> None:
    """``python -m tests.test_fantasista_match [GAMES [NODES [MODE [SEED_OFFSET]]]] [--fairies-by-seat]
    [--ledger FILE]``: play the match(es) and print A's score; ``--ledger`` appends every game as it ends to a
    strength ledger (see :mod:`bench.fantasista_strength`), so that matches of several runs and sessions are
    pooled pair by pair."""
    import argparse

    from bench import fantasista_strength as ledger
    ap = argparse.ArgumentParser(prog="python -m tests.test_fantasista_match")
    ap.add_argument("games", nargs="?", type=int, default=100)
    ap.add_argument("nodes", nargs="?", type=int, default=NODES)
    ap.add_argument("mode", nargs="?", default="both", help="both, or one of the modes of _modes()")
    ap.add_argument("seed_offset", nargs="?", type=int, default=0,
                    help="another set of games (e.g. a second process): added to the mode's seed")
    ap.add_argument("--ledger", help="append each game to this strength ledger (TSV)")
    ap.add_argument("--fairies-by-seat", action="store_true",
                    help="the fairies stay with the seats in a pair (a duplicate match; the ledger's mode gets "
                         "'-seat'), not with the engines")
    args = ap.parse_args(argv)
    modes = _modes(args.nodes)
    chosen = ["greedy", "twins"] if args.mode == "both" else [args.mode]
    if any(w not in modes for w in chosen):
        sys.exit(f"unknown mode {args.mode!r}; one of: both, {', '.join(modes)}")
    revision = ledger.revision() if args.ledger else ""
    t0 = time.time()
    for w in chosen:
        label, player_a, player_b, seed = modes[w]
        seed += args.seed_offset
        record = None
        if args.ledger:
            name = w + ("-seat" if args.fairies_by_seat else "")
            if Path(args.ledger).exists() and any(g.mode == name and g.nodes == args.nodes and g.seed == seed
                                                  for g in ledger.read(args.ledger)):
                # a seed replays the same games: appending them again would count them twice
                sys.exit(f"the ledger {args.ledger} already has games of mode {name}, {args.nodes} nodes, seed "
                         f"{seed}; choose another SEED_OFFSET")

            def record(k: int, seats: tuple[str, str], score: float, name: str = name, seed: int = seed) -> None:
                ledger.append(args.ledger, ledger.Game(name, args.nodes, seed, k, seats[0], seats[1], score,
                                                       revision))
        players: list[Any] = []

        def kept(factory: Callable[[], Any]) -> Callable[[], Any]:
            def make() -> Any:  # the players, for their counts of replayed turns
                players.append(factory())
                return players[-1]
            return make
        m, h, sc = match(kept(player_a), kept(player_b), args.games, seed=seed, progress=True, on_game=record,
                         fairies_by_seat=args.fairies_by_seat)
        replayed = sum(getattr(p, "replayed", 0) for p in players)
        turns = replayed + sum(getattr(p, "searched", 0) for p in players)
        print(f"{label} ({args.nodes} nodes): {pair_report(sc)} ({time.time() - t0:.0f} s; "
              f"{replayed} of {turns} searched turns replayed)", flush=True)


if __name__ == "__main__":
    main()
