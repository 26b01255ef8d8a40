"""Dai shogi 2017: the kernels against the slow reference, and one focused test per special rule."""
import random

import pytest

from engine import IllegalMoveError, Position
from engine.kernels import callable_from_python

from .reference_movegen import reference_legal_moves_last_royal
from .test_reference_generator import random_positions


def _board_moves(*args):
    """The generator's board-move pass (an inner kernel), called from this test."""
    from engine.kernels import movegen as M
    return callable_from_python(M._gen_board_moves)(*args)


V = "daishogi2017"


def moves(sfen):
    pos = Position.from_sfen(sfen, V)
    return {pos.move_usi(m) for m in pos.legal_codes()}


def board(rows: dict[str, str], side: str = "b") -> str:
    """A 13x13 SFEN from {rank letter: rank text}; unnamed ranks are empty."""
    return "/".join(rows.get(r, "13") for r in "abcdefghijklm") + f" {side} - 1"


def test_start_position_round_trips_and_counts():
    pos = Position.startpos(V)
    assert Position.from_sfen(pos.sfen(), V).sfen() == pos.sfen()
    assert len(pos.legal_codes()) == len(reference_legal_moves_last_royal(pos))


def test_kernel_agrees_with_reference_on_random_games():
    checked = 0
    for seed in range(3):
        for pos in random_positions(Position.startpos(V), 10 + seed, 100, plies=250):
            ours = {pos.move_usi(m) for m in pos.legal_codes()}
            assert ours == reference_legal_moves_last_royal(pos), pos.sfen()
            assert Position.from_sfen(pos.sfen(), V).sfen() == pos.sfen()
            checked += 1
    assert checked == 300


def test_perft_3_matches_reference():
    pos = Position.startpos(V)
    total = 0
    for m1 in reference_legal_moves_last_royal(pos):
        p1 = pos.copy()
        p1.push(m1)
        for m2 in reference_legal_moves_last_royal(p1):
            p2 = p1.copy()
            p2.push(m2)
            total += len(reference_legal_moves_last_royal(p2))
    assert pos.perft(3) == total


SPECIALS = "6k6/4a3e4/13/2z3o3w2/5J7/3P2E2p3/1o4Z6/4e3W4/8x4/2Z3O3W2/13/4A3E4/6K6 b - 1"


def test_kernel_agrees_with_reference_among_lions_oxen_and_elephants():
    """Random play from a crowded position so lion double moves, passes, igui, passing captures, exchanges and
    several royals all occur (the start position rarely gets there in random play)."""
    start = Position.from_sfen(SPECIALS, V)
    for pos in random_positions(start, 20, 150, plies=60):
        assert {pos.move_usi(m) for m in pos.legal_codes()} == reference_legal_moves_last_royal(pos), pos.sfen()


def test_make_unmake_restores_state_and_key():
    for pos in random_positions(Position.from_sfen(SPECIALS, V), 5, 20, plies=40):
        start, key = pos.sfen(), pos.key
        for code in pos.legal_codes():
            pos.push_unchecked(int(code))
            assert pos.key == Position.from_sfen(pos.sfen(), V).key
            pos.pop()
            assert pos.sfen() == start and pos.key == key


def test_lion_has_24_destinations_and_a_pass():
    alone = moves(board({"a": "6k6", "g": "6Z6", "m": "6K6"}))
    lion = {m for m in alone if m.startswith("7g")}
    plain = {m for m in lion if "," not in m}
    assert len(plain) == 24
    assert lion - plain == {"7g7f,7f7g"}  # the pass, spelt via the first empty neighbour (direction order)


def test_lion_double_capture_igui_and_pass():
    rows = {"a": "6k6", "f": "6p6", "g": "6Z6", "e": "5p7", "m": "6K6"}
    lion = {m for m in moves(board(rows)) if m.startswith("7g")}
    assert "7g7f,7f7g" in lion  # igui: capture without moving
    assert "7g7f,7f8e" in lion  # two captures in one turn (8e holds a pawn)
    assert "7g7f,7f6e" in lion  # capture, then step on
    assert len([m for m in lion if m.startswith("7g7f,")]) == 8
    pos = Position.from_sfen(board(rows), V)
    pos.push("7g7f,7f8e")
    assert pos.piece_at(pos.variant.geometry.parse_square("8e")) == ("Z", 0)
    assert pos.piece_at(pos.variant.geometry.parse_square("7f")) is None
    # A pass may be written through any empty neighbour; it is stored in its canonical spelling.
    pos = Position.from_sfen(board(rows), V)
    played = pos.push("7g6g,6g7g")
    assert played.usi() == "7g6f,6f7g" and pos.piece_at(pos.variant.geometry.parse_square("7g")) == ("Z", 0)


def test_violent_ox_jumps_and_captures_in_passing():
    rows = {"a": "6k6", "f": "6P6", "g": "6Op5", "m": "6K6"}
    ox = {m for m in moves(board(rows)) if m.startswith("7g")}
    assert {"7g7e", "7g7i", "7g9g", "7g5g", "7g6g", "7g7h", "7g8g"} <= ox  # jumps over own and enemy pieces
    assert "7g6g,6g5g" in ox  # capture in passing, optional
    assert "7g7f" not in ox and "7g7f,7f7e" not in ox  # never through a capture of its own piece


def test_flying_dragon_captures_two_diagonally():
    rows = {"a": "6k6", "f": "7p5", "e": "8p4", "g": "6W6", "m": "6K6"}
    dragon = {m for m in moves(board(rows)) if m.startswith("7g")}
    assert "7g6f,6f5e" in dragon and "7g5e" in dragon


def test_exchange_rule_removes_the_captor():
    pos = Position.from_sfen(board({"a": "6k6", "g": "6e6", "h": "6G6", "m": "6K6"}), V)
    pos.push("7h7g")
    g = pos.variant.geometry
    assert pos.piece_at(g.parse_square("7g")) == ("E", 0) and pos.piece_at(g.parse_square("7h")) is None


def test_exchange_exception_first_step_of_lion_and_ox():
    pos = Position.from_sfen(board({"a": "6k6", "h": "6e6", "i": "6Z6", "m": "6K6"}), V)
    pos.push("7i7h,7h7g")
    g = pos.variant.geometry
    assert pos.piece_at(g.parse_square("7g")) == ("Z", 0) and pos.piece_at(g.parse_square("7h")) == ("E", 0)
    pos = Position.from_sfen(board({"a": "6k6", "h": "6e6", "i": "6O6", "m": "6K6"}), V)
    pos.push("7i7h,7h7g")
    assert pos.piece_at(g.parse_square("7g")) == ("O", 0) and pos.piece_at(g.parse_square("7h")) == ("E", 0)
    # Taken with a single step, the lion itself is removed.
    pos = Position.from_sfen(board({"a": "6k6", "h": "6e6", "i": "6Z6", "m": "6K6"}), V)
    pos.push("7i7h")
    assert pos.piece_at(g.parse_square("7h")) == ("E", 0) and pos.piece_at(g.parse_square("7i")) is None


def test_royal_takes_the_elephant_only_with_a_second_royal():
    lone = board({"a": "6k6", "l": "6e6", "m": "6K6"})
    assert "7m7l" not in moves(lone)
    with pytest.raises(IllegalMoveError):
        Position.from_sfen(lone, V).push("7m7l")
    two = board({"a": "6k6", "l": "6e6", "m": "A5K6"})
    assert "7m7l" in moves(two)
    pos = Position.from_sfen(two, V)
    pos.push("7m7l")
    g = pos.variant.geometry
    assert pos.piece_at(g.parse_square("7l")) == ("E", 0) and pos.piece_at(g.parse_square("7m")) is None
    assert pos.state.st[4] == 1  # one sente royal left


def test_last_royal_may_not_be_left_capturable_but_one_of_two_may():
    sfen = board({"a": "6k6", "f": "6r6", "m": "6K6"})
    assert "7m7l" not in moves(sfen)  # stepping along the rook's file
    sfen = board({"a": "6k6", "f": "6r6", "m": "A5K6"})
    assert "7m7l" in moves(sfen)  # the prince is a second royal


def test_try_wins_unless_the_royal_can_be_captured():
    pos = Position.from_sfen(board({"a": "k12", "b": "10K2"}), V)
    pos.push("3b3a")
    assert pos.result() == (1.0, "try")
    pos = Position.from_sfen(board({"a": "k8g3", "b": "10K2", "m": "A12"}), V)
    pos.push("3b3a")  # 4a's gold can take the king: no try (legal because the prince remains)
    assert pos.result() is None


def test_losing_the_last_royal_ends_the_game():
    pos = Position.from_sfen(board({"a": "k12", "c": "R12", "m": "A12"}), V)
    pos.push("13c13a")  # takes gote's only royal
    assert pos.result() == (1.0, "royal captured")


def test_promotion_zone_and_forced_promotions():
    ms = moves(board({"a": "k12", "b": "8P1I2", "c": "4N8", "e": "6J2P3", "f": "6E6", "m": "12K"}))
    assert {"4e4d", "4e4d+"} <= ms  # optional on entering the 4-rank zone
    assert "5b5a+" in ms and "5b5a" not in ms  # pawn on the last rank
    assert "3b3a+" in ms and "3b3a" not in ms  # iron general on the last rank
    assert "9c10a+" in ms and "9c10a" not in ms  # knight on the last two ranks
    assert {"7e7c+", "7e7c"} <= ms  # kirin -> lion, optional
    pos = Position.from_sfen(board({"a": "k12", "e": "6J6", "m": "12K"}), V)
    pos.push("7e7c+")
    assert pos.piece_at(pos.variant.geometry.parse_square("7c")) == ("Z", 0)
    pos = Position.from_sfen(board({"a": "k12", "e": "6E6", "m": "12K"}), V)
    pos.push("7e7d+")
    assert pos.piece_at(pos.variant.geometry.parse_square("7d")) == ("A", 0) and pos.state.st[4] == 2


def test_two_leg_notation_round_trips():
    pos = Position.from_sfen(SPECIALS, V)
    for code in pos.legal_codes():
        text = pos.move_usi(code)
        assert pos.parse_move(text).code == code


def _self_play(games: int, max_plies: int = 300) -> list[str]:
    from search import Limits, Searcher

    searcher = Searcher(hash_mb=4)
    reasons = []
    for g in range(games):
        rng = random.Random(g)
        pos = Position.startpos(V)
        for _ in range(rng.randrange(0, 6)):  # a few random opening plies so the games differ
            pos.push_unchecked(int(rng.choice(list(pos.legal_codes()))))
        verdict = pos.result()
        while verdict is None and pos.ply < max_plies:
            best = searcher.search(pos, Limits(depth=1)).best
            assert best is not None and best in pos.legal_codes()
            pos.push_unchecked(best)
            verdict = pos.result()
        reasons.append(verdict[1] if verdict else "cap")
    return reasons


def test_self_play_at_tiny_depth_runs_clean():
    reasons = _self_play(6)
    assert len(reasons) == 6


@pytest.mark.slow
def test_two_hundred_self_play_games_run_clean():
    assert len(_self_play(200)) == 200


def test_match_against_a_random_mover_through_the_referee(tmp_path):
    """10 games of our USI engine (depth 1) against a random mover, refereed by our rules: won 10-0. (10 games: the
    match is the longest test of the default run.)"""
    import sys

    from usi import match as M

    engines = [M.EngineSpec.parse([f"cmd={sys.executable} -m usi", "name=fantasista", "depth=1"]),
               M.EngineSpec.parse([f"cmd={sys.executable} tests/fake_engines/random_engine.py", "name=random"])]
    settings = M.MatchSettings(variant=V, max_plies=600, ready_timeout=600, move_timeout=120)
    pool, close = M.make_executor(2)
    try:
        res = M.run_match(engines, games=10, settings=settings, seed=11, out=tmp_path, executor=pool,
                          formats=())
    finally:
        close()
    st = res.stats["fantasista vs random"]
    assert (st.wins, st.draws, st.losses) == (10, 0, 0), [r["reason"] for r in res.records]


def test_search_plays_and_defends_the_try():
    from search import Limits, Searcher

    searcher = Searcher(hash_mb=4)
    # Sente's king one step from the far rank, nothing of gote's near: stepping up wins at once.
    pos = Position.from_sfen(board({"a": "k12", "b": "10K2", "m": "12g"}), V)
    r = searcher.search(pos, Limits(depth=2))
    assert pos.move_usi(r.best) in {"3b2a", "3b3a", "3b4a"} and r.mate is not None and r.mate > 0
    # Gote to move with that threat: it must cover the far rank squares or it is lost (a mate score against it).
    pos = Position.from_sfen(board({"a": "k12", "b": "10K2", "m": "12g"}, side="w"), V)
    r = searcher.search(pos, Limits(depth=2))
    assert r.mate is not None and r.mate < 0


# ------------------------------------------------------------------ both royals at once (issue 23)
# Sente has a king (7m) and a prince (8m); gote's lion on 9j, an ox, flying dragons and elephants around them.
ROYALS = "7g5/6E6/6k4n1/1l11/8w2I1/2Jo2e3X2/4P2pP4/3O2Z2W3/5s6L/4z8/13/13/5AKG5 b - 1"


def _royals_left_after_every_reply(pos: Position) -> bool:
    """Whether the side that just moved keeps a royal after every move of the side to move, legal or not (moves
    are taken from the generator without its legality filter, then played on the board)."""
    import numpy as np

    from engine.kernels import movegen as M

    mover = 1 - pos.turn
    T, st = pos.tables, pos.state
    buf = np.empty(M.MAX_MOVES, np.int32)
    n = _board_moves(st, T, M.GEN_ALL, buf, 0, pos.turn, -1, 0, -1, 0)
    for code in buf[:n].tolist():
        hit = [code & 0xFF] + ([(code >> 18) & 0xFF] if code & M.HAS_MID else [])
        if not any(T.royal[st.board[sq]] and st.board[sq] >> 5 == mover for sq in hit):
            continue
        pos.push_unchecked(code)
        left = int(st.st[M.ST_ROYALS + mover])
        pos.pop()
        if left == 0:
            return False
    return True


def test_a_move_leaving_both_royals_to_one_lion_move_is_illegal():
    pos = Position.from_sfen(ROYALS, V)
    pos.push("7h7j")
    pos.push("9j9l")  # gote's lion next to the prince, two steps from the king
    legal = {pos.move_usi(m) for m in pos.legal_codes()}
    assert len(legal) == 12, sorted(legal)
    assert legal == reference_legal_moves_last_royal(pos)
    assert "10h10f" not in legal
    with pytest.raises(IllegalMoveError):
        pos.copy().push("10h10f")
    # what 10h10f would allow: the lion takes the prince on 8m, then the king on 7m
    after = pos.copy()
    after.push_unchecked(after.parse_move("10h10f").code)
    reply = after.parse_move("9l8m,8m7m").code
    assert reply in after.legal_codes()
    after.push_unchecked(reply)
    assert after.state.st[4] == 0 and after.result() == (0.0, "royal captured")
    for m in pos.legal_codes():
        pos.push_unchecked(int(m))
        assert _royals_left_after_every_reply(pos), pos.move_usi(m)
        pos.pop()


def test_the_issues_second_case_after_eight_plies():
    """The issue names the moves (7m8l and 9m8l, allowed by the old generator) but not the 8 plies; this line leads
    there: the prince steps aside to 9m, gote's lion comes to 8k, next to 8l, then quiet moves. Exactly those two
    moves are refused, and only because the lion would take both royals."""
    import numpy as np

    from engine.kernels import movegen as M

    pos = Position.from_sfen(ROYALS, V)
    for m in "7h7j 9j9l 8m9m 9l8k 9g9f 6a5a 9f9e 5a6a".split():
        pos.push(m)
    legal = set(pos.legal_codes().tolist())
    assert {pos.move_usi(m) for m in legal} == reference_legal_moves_last_royal(pos)
    buf = np.empty(M.MAX_MOVES, np.int32)
    n = _board_moves(pos.state, pos.tables, M.GEN_ALL, buf, 0, pos.turn, -1, 0, -1, 0)
    assert {pos.move_usi(m) for m in set(buf[:n].tolist()) - legal} == {"7m8l", "9m8l"}
    after = pos.copy()
    after.push_unchecked(after.parse_move("7m8l").code)
    after.push("8k8l,8l9m")  # the king on 8l, then the prince on 9m
    assert after.result() == (0.0, "royal captured")


def test_royals_side_by_side_next_to_a_lion_ox_or_flying_dragon():
    """The same pattern built by hand for each two-step mover: king 7m and prince 9m stand two apart; a royal move
    that sets them side by side where one two-step move takes both is illegal, the same step elsewhere is not."""
    cases = [
        # a lion on 8k: next to 8l, so either royal stepping to 8l is lost with the other; 8m is out of its reach
        ({"k": "5z7", "m": "4A1K6"}, {"7m8l", "9m8l"}, {"7m8m", "9m8m", "7m7l", "9m9l"}),
        # an ox on 10m: 10m-9m-8m is its line, so the king may not join the prince on 8m; the prince on 8m is safe
        ({"m": "3oA1K6"}, {"7m8m"}, {"9m8m", "7m8l", "9m8l"}),
        # a flying dragon on 7k: 7k-8l-9m is its diagonal, so not the king to 8l; the prince to 8l (with 7m) is safe
        ({"k": "6w6", "m": "4A1K6"}, {"7m8l"}, {"9m8l", "7m8m", "9m8m"}),
    ]
    for rows, illegal, legal in cases:
        sfen = board({"a": "k12", **rows})
        ours = moves(sfen)
        assert ours == reference_legal_moves_last_royal(Position.from_sfen(sfen, V)), sfen
        assert not illegal & ours and legal <= ours, sfen


def test_no_legal_move_lets_the_opponent_take_every_royal_in_random_play():
    """The general property over random play from the position above and the crowded SPECIALS one: after every
    legal move no reply (legal or not) leaves the mover without a royal, and the move sets equal the reference's.
    Counts the moves refused only because two royals could go at once, so the sample is known to exercise it."""
    import numpy as np

    from engine.kernels import movegen as M

    refused_pairs = 0
    for start, seed in ((ROYALS, 1), (SPECIALS, 2)):
        for pos in random_positions(Position.from_sfen(start, V), seed, 60, plies=12):
            legal = pos.legal_codes()
            assert {pos.move_usi(m) for m in legal} == reference_legal_moves_last_royal(pos), pos.sfen()
            for m in legal.tolist():
                pos.push_unchecked(m)
                assert _royals_left_after_every_reply(pos), (pos.sfen(), pos.move_usi(m))
                pos.pop()
            buf = np.empty(M.MAX_MOVES, np.int32)
            n = _board_moves(pos.state, pos.tables, M.GEN_ALL, buf, 0, pos.turn, -1, 0, -1, 0)
            for m in set(buf[:n].tolist()) - set(legal.tolist()):
                pos.push_unchecked(m)
                refused_pairs += int(pos.state.st[M.ST_ROYALS + 1 - pos.turn]) == 2
                pos.pop()
    assert refused_pairs > 0


def test_capturing_the_drunk_elephant_has_no_promoting_twin():
    """The reading of 2026-12-02 (what main already did, kept as a regression test): the captor of an unpromoted
    drunk elephant leaves the board, so the capture exists once, without '+'; an ox that takes it in passing and
    goes on survives, and keeps its twin."""
    ms = moves(board({"a": "k12", "d": "6e6", "e": "6S6", "i": "13", "m": "12K"}))
    assert "7e7d" in ms and "7e7d+" not in ms
    assert {"7e6d", "7e6d+"} <= ms  # the same silver entering the zone elsewhere may promote
    ms = moves(board({"a": "k12", "c": "6e6", "d": "6O6", "m": "12K"}))
    assert "7d7c" in ms and "7d7c+" not in ms
    assert {"7d7c,7c7b", "7d7c,7c7b+"} <= ms
