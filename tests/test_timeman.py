"""Time manager: soft/hard limits never exceed what the clock allows, and use byoyomi well."""
import pytest

from search.timeman import HORIZON_PLY, MIN_MS, MOVE_COST_MS, SAFETY_MS, Clock, allocate, moves_left, moves_to_go

DELAY = 120
OVERHEAD = DELAY + SAFETY_MS


def test_no_clock_means_no_time_limit():
    assert allocate(Clock(), side=0) is None


@pytest.mark.parametrize("byo", [1000, 3000, 10_000, 60_000])
def test_byoyomi_only_uses_all_of_it(byo):
    b = allocate(Clock(btime=0, wtime=0, byoyomi=byo), side=0, network_delay=DELAY)
    assert b.hard_ms == byo - OVERHEAD  # all of the byoyomi but the overhead: never more
    assert b.soft_ms == b.hard_ms  # and all of it planned (unused byoyomi is lost)


def test_byoyomi_shorter_than_the_overhead_still_moves():
    b = allocate(Clock(btime=0, wtime=0, byoyomi=100), side=1, network_delay=DELAY)
    assert b.soft_ms == b.hard_ms == MIN_MS


def test_byoyomi_with_main_time_adds_a_share_of_it():
    only = allocate(Clock(btime=0, wtime=0, byoyomi=5000), side=0, network_delay=DELAY)
    both = allocate(Clock(btime=600_000, wtime=0, byoyomi=5000), side=0, network_delay=DELAY)
    assert both.soft_ms > only.soft_ms
    assert both.hard_ms <= 600_000 + 5000 - OVERHEAD
    assert both.hard_ms < 600_000 // 4  # never bet a large part of the main time on one move


def test_btime_is_sentes_clock_and_wtime_gotes():
    clock = Clock(btime=100_000, wtime=2_000)
    sente, gote = allocate(clock, side=0), allocate(clock, side=1)
    assert sente.soft_ms > gote.soft_ms
    assert gote.hard_ms < 2_000


@pytest.mark.parametrize("left", [0, 50, 200, 500, 1000, 3000])
def test_sudden_death_with_little_time_never_flags(left):
    b = allocate(Clock(btime=left, wtime=60_000), side=0, ply=150, network_delay=DELAY)
    assert MIN_MS <= b.soft_ms <= b.hard_ms
    assert b.hard_ms <= max(MIN_MS, left - OVERHEAD)  # hard limit + overhead fits in what is left


def test_sudden_death_budget_spreads_over_the_game():
    b = allocate(Clock(btime=600_000, wtime=600_000), side=0, ply=0, network_delay=DELAY)
    assert 600_000 / 60 <= b.soft_ms <= 600_000 / 20
    assert b.soft_ms <= b.hard_ms <= 0.6 * 600_000


def test_fischer_spends_about_the_increment():
    b = allocate(Clock(btime=60_000, wtime=60_000, binc=5_000, winc=5_000), side=1, ply=40, network_delay=DELAY)
    assert 4_000 <= b.soft_ms <= 60_000 * 0.5
    assert b.hard_ms <= 0.75 * (60_000 - OVERHEAD)


def test_fischer_with_a_tiny_bank_stays_inside_it():
    b = allocate(Clock(btime=500, wtime=500, binc=2_000, winc=2_000), side=0, network_delay=DELAY)
    assert b.hard_ms < 500 - OVERHEAD


def test_fischer_uses_own_increment():
    clock = Clock(btime=10_000, wtime=10_000, binc=0, winc=3_000)
    assert allocate(clock, side=1).soft_ms > allocate(clock, side=0).soft_ms


def test_movetime_is_fixed():
    b = allocate(Clock(movetime=2_000, btime=1), side=0, network_delay=DELAY)
    assert b.soft_ms == b.hard_ms == 2_000 - OVERHEAD


def test_moves_to_go_shrinks_then_floors():
    assert moves_to_go(0) > moves_to_go(80) >= moves_to_go(400) == 20


def test_moves_left_reaches_the_horizon_then_the_moves_to_go():
    assert moves_left(0) == HORIZON_PLY // 2 and moves_left(HORIZON_PLY) == moves_to_go(HORIZON_PLY)


def own_moves_before_the_flag(main: int, inc: int = 0, per_move_cost: int = MOVE_COST_MS) -> int:
    """Replay a game in which each of our moves takes its budget half-way between soft and hard, plus a fixed cost
    beyond the search; the number of our moves made before the clock runs out (at most 200)."""
    clock = main
    for n in range(200):
        b = allocate(Clock(btime=clock, wtime=main, binc=inc, winc=inc), side=0, ply=2 * n)
        clock -= (b.soft_ms + b.hard_ms) // 2 + per_move_cost
        if clock < 0:
            return n
        clock += inc
    return 200


@pytest.mark.parametrize("main", [3_000, 10_000, 60_000])
def test_a_short_sudden_death_clock_lasts_a_long_game(main):
    # Each move's fixed cost is reserved for the moves to come: 100 moves of ours (200 plies) before the flag even
    # at 3 s (44 at 3 s and 74 at 60 s before the reserve).
    assert own_moves_before_the_flag(main) >= 100


def test_a_fischer_increment_below_the_move_cost_still_lasts():
    assert own_moves_before_the_flag(3_000, inc=MOVE_COST_MS // 2) >= 100
    assert own_moves_before_the_flag(1_000, inc=3 * MOVE_COST_MS) == 200


def test_the_reserve_costs_a_long_clock_little():
    # 60 s sudden death: the first move still gets well over a hundredth of the clock.
    assert allocate(Clock(btime=60_000, wtime=60_000), side=0, ply=0).soft_ms >= 60_000 / 60
