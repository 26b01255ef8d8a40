"""The one searcher interface (search/interface.py, search/registry.py): every variant has a searcher behind it, the
limits count from their origin, and the package stays light to import."""
from __future__ import annotations

import subprocess
import sys
import time

import pytest

import engine
from search import GameSearcher, Info, Limits, Result, pv_tokens
from search.registry import GAME_SEARCHERS, POSITION_SEARCHERS, SEARCHERS, make_searcher, searcher_class


def test_every_variant_has_one_searcher_with_the_interface():
    assert set(SEARCHERS) == set(engine.VARIANT_IDS)
    assert set(GAME_SEARCHERS) == {v for v in engine.VARIANT_IDS if engine.is_game_state_variant(v)}
    assert set(POSITION_SEARCHERS).isdisjoint(GAME_SEARCHERS)
    for variant in engine.VARIANT_IDS:
        cls = searcher_class(variant)
        for method in ("warmup", "clear", "stop", "progress", "think"):
            assert callable(getattr(cls, method, None)), (variant, method)
    with pytest.raises(ValueError, match="no searcher for variant 'chess'"):
        searcher_class("chess")


def test_shogi_searcher_answers_tokens_through_the_interface():
    searcher = make_searcher("shogi", hash_mb=1)
    assert isinstance(searcher, GameSearcher) and searcher.variant == "shogi"
    pos = engine.Position.from_sfen("8k/6S2/7G1/9/9/9/9/9/4K4 b G 1")
    infos: list[Info] = []
    result = searcher.think(pos, Limits(depth=2), infos.append)
    assert isinstance(result, Result) and result.best == "G*1b" and result.mate == 1 and result.pv[0] == "G*1b"
    assert infos and all(isinstance(i.pv[0], str) for i in infos if i.pv)
    assert pos.sfen() == "8k/6S2/7G1/9/9/9/9/9/4K4 b G 1"  # the position is left as it was
    # searchmoves are tokens at the interface
    result = searcher.think(pos, Limits(depth=1, searchmoves=["G*2a"]), lambda info: None)
    assert result.best == "G*2a"
    assert searcher.mate(pos, Limits(hard_ms=2000)) == ("mate", ["G*1b"])


def test_limits_count_from_their_origin_and_a_ponderhit_from_its_moment():
    t0 = time.perf_counter() - 1.0  # the go line came a second ago
    limits = Limits(soft_ms=1500, hard_ms=3000, t0=t0)
    assert 400 <= limits.ms_left(limits.soft_ms) <= 500 and not limits.soft_passed()
    assert Limits(soft_ms=800, t0=t0).soft_passed()
    assert limits.counted_from(t0 + 0.5) == (1000, 2500)  # from a search that began half a second after the go
    assert limits.counted_from(t0 + 4.0) == (0, 1) and Limits(soft_ms=5).counted_from(t0) == (5, None)
    told = []
    pondering = Limits(ponder=True, t0=t0, on_budget=lambda: told.append(True))
    assert pondering.unbounded and pondering.open_ended() and not pondering.timed
    pondering.set_budget(200, 400, now=t0 + 2.0)
    assert (pondering.soft_ms, pondering.hard_ms) == (2200, 2400) and not pondering.ponder and told == [True]
    stopped = Limits()
    stopped.stop.set()
    assert stopped.soft_passed() and stopped.hard_passed()


def test_pv_tokens_reads_codes_from_the_position():
    pos = engine.Position.startpos()
    codes = [int(pos.parse_move("7g7f").code)]
    pos2 = pos.copy()
    pos2.push("7g7f")
    codes.append(int(pos2.parse_move("3c3d").code))
    assert pv_tokens(pos, codes) == ["7g7f", "3c3d"] and pos.sfen() == engine.Position.startpos().sfen()


def test_the_search_interface_loads_no_numba():
    code = ("import sys, search, search.interface, search.registry, search.timeman, usi.engine; "
            "sys.exit('numba' in sys.modules or 'numpy' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
