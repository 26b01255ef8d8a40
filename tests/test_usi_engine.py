"""Scripted USI dialogs against the engine loop, driven in-process.

Most dialogs use :class:`FakeSearcher` (same API and result types as ``search.Searcher``, no search to compile) so
that they test the protocol state machine (threads, stop, ponderhit, exactly one bestmove) quickly and
deterministically.
``tests/test_usi_subprocess.py`` runs the real engine and search end to end.
"""
from __future__ import annotations

import threading
import time

import pytest

import engine
from engine import Position
from search.timeman import PLAIN_GO_MS
from search import Limits, Info, Result
from usi import engine as usi_engine
from usi.engine import UsiEngine, parse_go

from .usi_helpers import Sink

MATE_IN_1 = "8k/6S2/7G1/9/9/9/9/9/4K4 b G 1"  # G*1b mates
NO_MATE = "4k4/9/9/9/9/9/9/9/4K4 b - 1"
ENTERING_KING = "9/B3K3R/PPPPPPPPP/9/9/9/9/9/4k4 b 2G2S2N2LP 1"


# ----------------------------------------------------------------------------------------------- fakes
class FakeSearcher:
    """Plays the first legal move (or the first of ``searchmoves``); one iteration every ``step`` seconds.

    Without depth, nodes or time limits (and always with ``infinite``) it runs until :meth:`stop`, like a real
    search; like a real one it clears its stop flag and deadline when a search starts, then calls ``on_start``."""

    instances: list["FakeSearcher"] = []

    def __init__(self, hash_mb=16, seed=0, step=0.01):
        self.hash_mb, self.seed, self.step = hash_mb, seed, step
        self._stop = threading.Event()
        self._deadline = None
        self.calls: list[tuple[str, object]] = []
        self.warmed = False
        FakeSearcher.instances.append(self)

    def set_hash(self, mb):
        self.calls.append(("set_hash", mb))
        self.hash_mb = mb

    def clear(self):
        self.calls.append(("clear", None))

    def warmup(self, variant="shogi"):
        self.warmed = True

    def stop(self):
        self._stop.set()

    def update_limits(self, soft_ms, hard_ms):
        self.calls.append(("update_limits", (soft_ms, hard_ms)))
        self._soft = soft_ms
        self._deadline = None if hard_ms is None else self._t0 + hard_ms / 1000

    def search(self, pos, limits, on_info=None, on_start=None):
        self.calls.append(("search", limits))
        self._stop.clear()
        self._t0 = time.perf_counter()
        self._deadline = None if limits.hard_ms is None else self._t0 + limits.hard_ms / 1000
        self._soft = limits.soft_ms
        if on_start is not None:
            on_start()
        unlimited = limits.infinite or (limits.depth is None and limits.nodes is None and limits.hard_ms is None)
        moves = list(limits.searchmoves or [int(c) for c in pos.legal_codes()])
        best, depth, nodes = moves[0], 0, 0
        reply = None
        pos2 = pos.copy()
        pos2.push_unchecked(best)
        replies = pos2.legal_codes()
        reply = int(replies[0]) if len(replies) else None
        while True:
            if self._stop.is_set() or (self._deadline and time.perf_counter() >= self._deadline):
                break
            if self._soft is not None and (time.perf_counter() - self._t0) * 1000 >= self._soft:
                break
            if not unlimited and limits.depth is not None and depth >= limits.depth:
                break
            if not unlimited and limits.depth is None and limits.hard_ms is None and depth >= 3:
                break
            depth += 1
            nodes += 100
            if on_info:
                for k in range(1, limits.multipv + 1):
                    pv = [moves[(k - 1) % len(moves)]] + ([reply] if reply is not None and k == 1 else [])
                    on_info(Info(depth, depth, 10 * k, None, nodes, nodes * 100, depth * 10, 0, pv, k))
            if limits.nodes is not None and nodes >= limits.nodes and not unlimited:
                break
            time.sleep(self.step)
        return Result(best, reply, 10, None, depth, nodes, [best])

    def mate_search(self, pos, max_ms=None, max_nodes=None, on_start=None):
        if on_start is not None:
            on_start()
        for code in pos.legal_codes():
            pos.push_unchecked(int(code))
            mate = pos.is_checkmate()
            pos.pop()
            if mate:
                return "mate", [int(code)]
        return "nomate", []


# ----------------------------------------------------------------------------------------------- harness
class Dialog:
    def __init__(self, searcher_factory=None, **searcher_kw):
        self.out = Sink()
        factory = searcher_factory or (lambda mb, seed: FakeSearcher(mb, seed, **searcher_kw))
        self.eng = UsiEngine(out=self.out, searcher_factory=factory)

    def __call__(self, *lines):
        start = len(self.out.lines)
        for line in lines:
            assert self.eng.handle(line) or line == "quit"
        return start

    def since(self, start):
        return self.out.lines[start:]

    def bestmove(self, start=0, timeout=10.0):
        return self.out.wait_for("bestmove", start, timeout)[1]

    def count(self, prefix):
        return sum(1 for line in self.out.lines if line.startswith(prefix))

    @property
    def searcher(self):
        return self.eng._searcher

    def close(self):
        self.eng.handle("quit")


@pytest.fixture
def dialog():
    d = Dialog()
    yield d
    d.close()


def legal_after(sfen_or_moves, move):
    pos = Position.startpos()
    for m in sfen_or_moves:
        pos.push(m)
    return pos.is_legal(move)


# ----------------------------------------------------------------------------------------------- handshake
def test_usi_answers_usiok_with_options(dialog):
    start = dialog("usi")
    lines = dialog.since(start)
    assert lines[0].startswith("id name ") and lines[1].startswith("id author ")
    assert lines[-1] == "usiok"
    names = {line.split()[2] for line in lines if line.startswith("option name")}
    assert {"USI_Hash", "USI_Ponder", "MultiPV", "USI_Variant", "NetworkDelay", "NodesLimit", "DepthLimit",
            "Seed", "EnteringKingRule"} <= names
    variant = next(line for line in lines if "USI_Variant" in line)
    assert "type combo default shogi" in variant and all(f"var {v}" in variant for v in engine.VARIANT_IDS)
    assert dialog.eng._searcher is None  # nothing built before isready


def test_option_constants_match_the_rules_layer():
    assert usi_engine.VARIANT_IDS == engine.VARIANT_IDS
    assert set(usi_engine.ENTERING_KING_RULES) == {r.value for r in engine.EnteringKingRule}


def test_isready_warms_up_and_answers_readyok(dialog):
    start = dialog("usi", "isready")
    assert dialog.since(start)[-1] == "readyok"
    assert dialog.searcher.warmed


def test_isready_prints_heartbeat_while_warmup_is_slow(monkeypatch):
    monkeypatch.setattr(usi_engine, "HEARTBEAT_S", 0.05)

    class Slow(FakeSearcher):
        def warmup(self, variant="shogi"):
            time.sleep(0.3)

    d = Dialog(searcher_factory=lambda mb, seed: Slow(mb, seed))
    start = d("isready")
    lines = d.since(start)
    assert lines[-1] == "readyok" and lines.count("") >= 2
    d.close()


def test_usinewgame_before_and_after_isready(dialog):
    start = dialog("usi", "usinewgame", "isready", "position startpos", "go depth 1")
    dialog.bestmove(start)
    start = dialog("usinewgame", "isready", "usinewgame", "position startpos moves 7g7f", "go depth 1")
    assert dialog.bestmove(start).startswith("bestmove ")
    assert ("clear", None) in dialog.searcher.calls
    assert dialog.count("info string error") == 0


def test_garbage_lines_are_reported_not_fatal(dialog):
    start = dialog("usi", "hello world", "   ", "GO", "isready", "setoption", "position", "go bogus 3 depth 1")
    lines = dialog.since(start)
    assert "info string error unknown command hello world" in lines
    assert "info string error unknown command GO" in lines
    assert any(line.startswith("info string error malformed setoption") for line in lines)
    assert "info string error 2 unknown go parameters: 'bogus', '3'" in lines
    assert dialog.bestmove(start).startswith("bestmove ")
    assert "readyok" in lines


def test_quit_returns_false_and_stops_a_search():
    d = Dialog()
    d("isready", "go infinite")
    assert d.eng.handle("quit") is False
    assert d.count("bestmove") == 1


# ----------------------------------------------------------------------------------------------- options
def test_setoption_values_and_errors(dialog):
    start = dialog("usi", "setoption name MultiPV value 3", "setoption name multipv value 0",
                   "setoption name USI_Ponder value maybe", "setoption name NoSuch value 1",
                   "setoption name DepthLimit value x", "setoption name EnteringKingRule value CSARule24",
                   "setoption name USI_Hash")
    errors = [line for line in dialog.since(start) if line.startswith("info string error")]
    assert len(errors) == 5
    assert dialog.eng.opt("MultiPV") == 3 and dialog.eng.opt("EnteringKingRule") == "CSARule24"


def test_variant_not_implemented_keeps_shogi(dialog, monkeypatch):
    from usi import games

    def missing(variant_id):  # a variant whose rules module is not there yet
        raise ValueError(f"variant {variant_id} not implemented yet")

    monkeypatch.setattr(games, "game_module", missing)
    start = dialog("setoption name USI_Variant value fantasista", "setoption name USI_Variant value chess")
    lines = dialog.since(start)
    assert lines[0] == "info string error variant fantasista not implemented yet; playing shogi"
    assert lines[1].startswith("info string error option USI_Variant takes one of")
    assert dialog.eng.opt("USI_Variant") == "shogi"
    start = dialog("setoption name USI_Variant value shogi")
    assert dialog.since(start) == []


def test_setoption_between_games(dialog):
    dialog("usi", "setoption name USI_Hash value 16", "isready", "usinewgame", "position startpos", "go depth 2")
    dialog.bestmove()
    first = dialog.searcher
    start = dialog("gameover win", "setoption name USI_Hash value 64", "setoption name MultiPV value 2",
                   "isready", "usinewgame", "position startpos", "go depth 2")
    dialog.bestmove(start)
    assert dialog.searcher is first and ("set_hash", 64) in first.calls
    assert any(line.startswith("info") and "multipv 2" in line for line in dialog.since(start))
    start = dialog("setoption name Seed value 7", "isready")
    assert dialog.searcher is not first and dialog.searcher.seed == 7


def test_depth_and_nodes_limit_options_reach_limits(dialog):
    dialog("setoption name DepthLimit value 2", "setoption name NodesLimit value 5000", "isready", "go depth 5")
    dialog.bestmove()
    limits = [c[1] for c in dialog.searcher.calls if c[0] == "search"][-1]
    assert limits.depth == 2 and limits.nodes == 5000


# ----------------------------------------------------------------------------------------------- position
def test_position_startpos_moves_and_d(dialog):
    start = dialog("position startpos moves 7g7f 3c3d 8h2b+", "d")
    lines = dialog.since(start)
    assert any(line.startswith("sfen lnsgkgsnl/1r5+B1/pppppp1pp/6p2/9/2P6/PP1PPPPPP/7R1/LNSGKGSNL w B 4")
               for line in lines)


def test_illegal_move_or_bad_sfen_keeps_previous_position(dialog):
    dialog("position startpos moves 7g7f")
    before = dialog.eng.pos.sfen()
    for bad in ("position startpos moves 3c3d 3c3d", "position startpos moves 7g7x",
                "position sfen 9/9/9 b - 1", "position sfen lnsgkgsnl/1r5b1/ppppppppp b", "position nonsense"):
        start = dialog(bad)
        lines = dialog.since(start)
        assert len(lines) == 1 and lines[0].startswith("info string error position not changed"), (bad, lines)
        assert dialog.eng.pos.sfen() == before


def test_position_sfen_with_moves(dialog):
    dialog(f"position sfen {MATE_IN_1} moves G*1b")
    assert dialog.eng.pos.is_checkmate()


# ----------------------------------------------------------------------------------------------- go
def test_go_parameters_in_any_order():
    g = parse_go("nodes 100 byoyomi 1000 btime 5 wtime 6 ponder binc 7 winc 8 movetime 9 depth 4".split())
    c = g.clock
    assert (c.btime, c.wtime, c.byoyomi, c.binc, c.winc, c.movetime, g.depth, g.nodes, g.ponder) == \
        (5, 6, 1000, 7, 8, 9, 4, 100, True)
    g = parse_go("mate 3000".split())
    assert g.mate and g.mate_ms == 3000
    g = parse_go("searchmoves 7g7f 2g2f infinite".split())
    assert g.searchmoves == ["7g7f", "2g2f"] and g.infinite
    assert parse_go(["btime"]).errors == ["go btime needs an integer"]


def test_go_byoyomi_gives_one_legal_bestmove_with_info(dialog):
    start = dialog("usi", "isready", "usinewgame", "position startpos moves 7g7f", "go btime 0 wtime 0 byoyomi 300")
    line = dialog.bestmove(start)
    move = line.split()[1]
    assert legal_after(["7g7f"], move)
    infos = [x for x in dialog.since(start) if x.startswith("info depth")]
    assert infos and all(" pv " in x and " score cp " in x for x in infos)
    info = infos[-1].split()
    for key in ("depth", "seldepth", "time", "nodes", "nps", "hashfull", "multipv"):
        assert key in info
    limits = [c[1] for c in dialog.searcher.calls if c[0] == "search"][-1]
    assert 0 < limits.soft_ms <= limits.hard_ms <= 300
    assert dialog.count("bestmove") == 1


def test_btime_is_sentes_clock(dialog):
    dialog("isready", "position startpos", "go btime 10000 wtime 100")
    dialog.bestmove()
    sente = [c[1] for c in dialog.searcher.calls if c[0] == "search"][-1]
    start = dialog("position startpos moves 7g7f", "go btime 10000 wtime 100")
    dialog.bestmove(start)
    gote = [c[1] for c in dialog.searcher.calls if c[0] == "search"][-1]
    assert sente.hard_ms > 500 and gote.hard_ms < 100


def test_bestmove_has_legal_ponder_move(dialog):
    start = dialog("position startpos", "go depth 2")
    parts = dialog.bestmove(start).split()
    assert parts[2] == "ponder"
    pos = Position.startpos()
    pos.push(parts[1])
    assert pos.is_legal(parts[3])


def test_stop_during_go_infinite(dialog):
    start = dialog("isready", "position startpos", "go infinite")
    dialog.out.wait_for("info depth 3", start)
    assert dialog.count("bestmove") == 0
    dialog("stop")  # stop waits for the search thread: bestmove is out when it returns
    assert dialog.count("bestmove") == 1
    assert dialog.searcher.calls[-1][1].infinite


def test_go_infinite_with_depth_waits_for_stop(dialog):
    dialog("position startpos", "go infinite depth 1")
    time.sleep(0.15)
    assert dialog.count("bestmove") == 0
    dialog("stop")
    assert dialog.count("bestmove") == 1


def test_stop_during_ponder(dialog):
    start = dialog("setoption name USI_Ponder value true", "isready", "position startpos moves 7g7f 3c3d",
                   "go ponder btime 1000 wtime 1000 byoyomi 1000")
    dialog.out.wait_for("info depth 2", start)
    assert dialog.count("bestmove") == 0
    dialog("stop")
    assert dialog.count("bestmove") == 1
    start = dialog("position startpos moves 7g7f 3c3d 2g2f", "go btime 1000 wtime 1000 byoyomi 300")
    dialog.bestmove(start)
    assert dialog.count("bestmove") == 2


def test_ponderhit_switches_to_the_clock(dialog):
    start = dialog("isready", "position startpos moves 7g7f 3c3d", "go ponder btime 0 wtime 0 byoyomi 500")
    dialog.out.wait_for("info depth 3", start)
    time.sleep(0.1)
    assert dialog.count("bestmove") == 0
    t0 = time.monotonic()
    dialog("ponderhit")
    dialog.bestmove(start, timeout=5)
    assert time.monotonic() - t0 < 1.5
    updates = [c[1] for c in dialog.searcher.calls if c[0] == "update_limits"]
    assert updates and updates[-1][1] >= 100  # hard limit counted from the search start, after the ponder time
    dialog("stop")  # a late stop after bestmove does nothing
    assert dialog.count("bestmove") == 1


def test_ponder_search_finished_early_waits_for_ponderhit(dialog):
    start = dialog("position startpos", "go ponder depth 1 btime 0 wtime 0 byoyomi 500")
    dialog.out.wait_for("info depth 1", start)
    time.sleep(0.2)
    assert dialog.count("bestmove") == 0
    dialog("ponderhit")
    dialog.bestmove(start, timeout=2)
    assert dialog.count("bestmove") == 1


def test_isready_is_answered_while_searching(dialog):
    start = dialog("isready", "position startpos", "go infinite")
    i, _ = dialog.out.wait_for("info depth 1", start)
    dialog("isready")
    dialog.out.wait_for("readyok", i)
    assert dialog.count("bestmove") == 0
    dialog("stop")
    assert dialog.count("bestmove") == 1


def test_exactly_one_bestmove_per_go(dialog):
    dialog("isready")
    gos = ["go depth 1", "go nodes 200", "go movetime 50", "go btime 100 wtime 100", "go infinite",
           "go ponder byoyomi 100", "go btime 1000 wtime 1000 binc 100 winc 100"]
    for n, go in enumerate(gos, 1):
        start = dialog("position startpos moves 2g2f", go)
        if "infinite" in go or "ponder" in go:
            time.sleep(0.05)
            dialog("ponderhit" if "ponder" in go else "stop")
        dialog.bestmove(start)
        dialog("stop")
        assert dialog.count("bestmove") == n, go
    # a go while a search runs: the first one is finished and answered first
    dialog("go infinite", "go depth 1")
    dialog.out.wait_for("bestmove", len(dialog.out.lines) - 1)
    time.sleep(0.1)
    assert dialog.count("bestmove") == len(gos) + 2


def test_stop_right_after_go_is_still_answered(dialog):
    for _ in range(5):
        dialog("position startpos", "go infinite", "stop")
    assert dialog.count("bestmove") == 5


def test_searchmoves_restricts_the_root(dialog):
    start = dialog("position startpos", "go depth 1 searchmoves 9g9f 1g1f 5a5b")
    assert dialog.bestmove(start).split()[1] == "9g9f"
    assert "info string error searchmoves: 1 of the 3 moves given are not legal here ('5a5b' (not legal))" in \
        dialog.since(start)


def test_bare_gameover_and_gameover_during_ponder(dialog):
    start = dialog("position startpos", "go ponder byoyomi 100")
    dialog.out.wait_for("info depth 1", start)
    dialog("gameover")
    assert dialog.count("bestmove") == 1
    start = dialog("gameover lose", "gameover draw", "usinewgame", "position startpos", "go depth 1")
    dialog.bestmove(start)
    assert dialog.count("info string error") == 0


def test_bestmove_resign_when_mated(dialog):
    pos = Position.from_sfen(MATE_IN_1)
    pos.push("G*1b")
    start = dialog(f"position sfen {MATE_IN_1} moves G*1b", "go byoyomi 100")
    assert dialog.bestmove(start) == "bestmove resign"
    assert pos.is_checkmate()


def test_a_repeated_position_is_still_searched(dialog):
    """A fourth occurrence (sennichite by the rules) is the referee's to judge: go still answers a legal move, with no
    error line, as a position with legal moves always has."""
    moves = " ".join(["2h1h", "8b9b", "1h2h", "9b8b"] * 3)
    pos = Position.startpos()
    for m in moves.split():
        pos.push(m)
    assert pos.result() == (0.5, "sennichite")
    start = dialog(f"position startpos moves {moves}", "go depth 1")
    best = dialog.bestmove(start).split()[1]
    assert best in [pos.move_usi(int(c)) for c in pos.legal_codes()] and dialog.count("info string error") == 0


def test_bestmove_win_on_entering_king(dialog):
    start = dialog(f"position sfen {ENTERING_KING}", "go byoyomi 100")
    assert dialog.bestmove(start) == "bestmove win"
    start = dialog("setoption name EnteringKingRule value NoEnteringKing", "go byoyomi 100")
    assert dialog.bestmove(start) != "bestmove win"


def test_go_mate_protocol(dialog):
    start = dialog(f"position sfen {MATE_IN_1}", "go mate 1000")
    assert dialog.out.wait_for("checkmate", start)[1] == "checkmate G*1b"
    start = dialog(f"position sfen {NO_MATE}", "go mate infinite")
    assert dialog.out.wait_for("checkmate", start)[1] == "checkmate nomate"
    assert dialog.count("bestmove") == 0


# ----------------------------------------------------------------------------------------------- debug
def test_go_perft_divide(dialog):
    start = dialog("position startpos", "go perft 3")
    dialog.out.wait_for("info string perft 3", start)
    lines = dialog.since(start)
    moves = [line for line in lines if ":" in line and not line.startswith(("Nodes", "info"))]
    assert len(moves) == 30
    assert sum(int(line.split(": ")[1]) for line in moves) == 25470
    assert "Nodes searched: 25470" in lines
    assert "7g7f: 900" in lines or "7g7f: " in " ".join(lines)


def test_bench_prints_totals(dialog, monkeypatch):
    monkeypatch.setattr(usi_engine, "BENCH_SFENS", usi_engine.BENCH_SFENS[:2])
    import sys
    monkeypatch.setitem(sys.modules, "search", None)  # force the built-in list even if search exists
    start = dialog("bench 1")
    dialog.out.wait_for("Nodes/second", start)
    lines = dialog.since(start)
    assert any(line.startswith("Nodes searched  : ") for line in lines)
    assert any(line.startswith("Nodes/second    : ") for line in lines)


def test_info_formatting_mate_and_bounds():
    pos = Position.startpos()
    code = int(pos.parse_move("7g7f").code)
    info = Info(5, 7, None, -3, 1000, 5000, 200, 12, [code], 2, "upperbound")
    line = usi_engine.format_info(info, pos)
    assert line == ("info depth 5 seldepth 7 time 200 nodes 1000 nps 5000 hashfull 12 score mate -3 upperbound "
                    "multipv 2 pv 7g7f")


# ----------------------------------------------------------------------------------------------- odd input (issue 22)
def _limits_of_last_search(dialog):
    return [c[1] for c in dialog.searcher.calls if c[0] == "search"][-1]


@pytest.mark.parametrize("params, field, value", [("depth 0", "depth", 1), ("depth -1", "depth", 1),
                                                  ("nodes 0", "nodes", 1), ("nodes -7", "nodes", 1)])
def test_go_depth_or_nodes_below_one_is_reported_and_searches_one(dialog, params, field, value):
    start = dialog("isready", "position startpos", f"go {params}")
    assert dialog.bestmove(start, timeout=5).startswith("bestmove ")
    lines = dialog.since(start)
    assert f"info string error go {field} must be at least 1, not {params.split()[1]}: searching {field} 1" in lines
    assert getattr(_limits_of_last_search(dialog), field) == value
    assert dialog.count("bestmove") == 1


def test_plain_go_has_a_default_time_limit(dialog):
    start = dialog("isready", "position startpos")
    t0 = time.monotonic()
    dialog("go")
    assert dialog.bestmove(start, timeout=5).startswith("bestmove ")
    assert time.monotonic() - t0 < 3
    limits = _limits_of_last_search(dialog)
    assert 0 < limits.hard_ms <= PLAIN_GO_MS and limits.depth is None and limits.nodes is None


def test_go_searchmoves_with_no_legal_move_searches_every_move(dialog):
    start = dialog("isready", "position startpos", "go searchmoves 5e5d xyz")
    best = dialog.bestmove(start, timeout=5)
    errors = [line for line in dialog.since(start) if line.startswith("info string error")]
    assert errors == ["info string error searchmoves: none of the 2 moves given is legal here ('5e5d' (not legal), "
                      "'xyz' (not a move)): searching every move"]
    assert legal_after([], best.split()[1])


MB = 1 << 20
FLOODS = {  # a bad command of about 1 MB, as a GUI or a fuzzer might send it
    "searchmoves": "go depth 1 searchmoves " + "7g7x " * (MB // 5),
    "some searchmoves": "go depth 1 searchmoves 7g7f " + " ".join(f"{f}a{f}b" for f in range(1, 10)) * (MB // 45),
    "unknown go parameters": "go depth 1 " + "zz " * (MB // 3),
    "go values": "go depth 1 " + "nodes x " * (MB // 8),
    "go perft": "go perft x " + "y" * MB,
    "position moves": "position startpos moves " + "7g7f " * (MB // 5),
    "position move": "position startpos moves " + "y" * MB,
    "position sfen": "position sfen " + "p/" * (MB // 2),
    "option name": "setoption name " + "n" * MB,
    "option value": "setoption name USI_Hash value " + "9" * MB,
    "option words": "setoption name EnteringKingRule value " + "k " * (MB // 2),
    "setoption": "setoption " + "q " * (MB // 2),
    "gameover": "gameover " + "w" * MB,
    "command": "z" * MB,
}


@pytest.mark.parametrize("kind", FLOODS)
def test_a_bad_command_gives_one_short_error_line(dialog, kind):
    """However many tokens of a command are bad, it gets exactly one error line, of bounded length, saying how many
    were bad and quoting at most a few (issue 48: one 1 MB searchmoves line gave 166,733 lines)."""
    dialog("position startpos")
    start = dialog(FLOODS[kind])
    if kind.startswith(("searchmoves", "some", "unknown", "go values")):
        dialog.bestmove(start)
    dialog.eng._finish_search()
    errors = [line for line in dialog.since(start) if line.startswith("info string error")]
    assert len(errors) == 1, errors[:5]
    assert len(errors[0]) <= usi_engine.MAX_ERROR_CHARS + len("info string error "), errors[0][:100]
    if kind in ("searchmoves", "unknown go parameters"):
        assert str(MB // 5 if kind == "searchmoves" else MB // 3) in errors[0]  # how many were bad
        assert errors[0].count("'") <= 2 * usi_engine.MAX_QUOTED


def test_bad_searchmoves_and_parameters_in_one_go_make_one_line(dialog):
    start = dialog("position startpos", "go depth 1 bogus searchmoves 7g7f 9a9b")
    dialog.bestmove(start)
    errors = [line for line in dialog.since(start) if line.startswith("info string error")]
    assert errors == ["info string error 2 problems in this line: unknown go parameter 'bogus'; searchmoves: 1 of "
                      "the 2 moves given are not legal here ('9a9b' (not legal))"]


@pytest.mark.parametrize("params", ["nodes 99999999999999999999", "btime 99999999999999999999 wtime 1",
                                    "movetime 99999999999999999999", "byoyomi 99999999999999999999 btime 0 wtime 0",
                                    "depth 99999999999999999999", "mate 99999999999999999999",
                                    "nodes " + "9" * 5000])
def test_huge_numbers_are_clamped(dialog, params):
    start = dialog("isready", "position startpos", f"go {params}")
    time.sleep(0.05)
    dialog("stop")
    prefix = "checkmate" if params.startswith("mate") else "bestmove"
    dialog.out.wait_for(prefix, start, timeout=5)
    lines = dialog.since(start)
    assert not any("error" in line for line in lines), lines
    assert dialog.count(prefix) == 1
    go = parse_go(params.split())
    assert go.nodes in (None, usi_engine.MAX_GO_NODES) and go.depth in (None, usi_engine.MAX_GO_DEPTH)
    assert all(v is None or v <= usi_engine.MAX_GO_MS for v in vars(go.clock).values())
    if not params.startswith("mate"):
        limits = _limits_of_last_search(dialog)
        assert limits.hard_ms is None or limits.hard_ms <= usi_engine.MAX_GO_MS


def test_go_perft_runs_on_the_search_thread_and_obeys_stop_and_quit():
    d = Dialog()
    start = d("position startpos", "go perft 9")  # years at full speed: only stop ends it
    assert d.eng.searching
    d("isready")
    assert "readyok" in d.since(start)  # the reader is free meanwhile
    t0 = time.monotonic()
    d("stop")
    assert time.monotonic() - t0 < 5
    assert any(line.startswith("info string perft 9 stopped after ") for line in d.since(start))
    assert not any(line.startswith("Nodes searched") for line in d.since(start))
    d("go perft 9")
    t0 = time.monotonic()
    assert d.eng.handle("quit") is False
    assert time.monotonic() - t0 < 5 and not d.eng.searching


def test_bench_runs_on_the_search_thread_and_obeys_stop(monkeypatch):
    d = Dialog(step=0.5)  # each bench search takes 0.5 s a depth
    monkeypatch.setattr(usi_engine, "BENCH_SFENS", usi_engine.BENCH_SFENS)
    import sys
    monkeypatch.setitem(sys.modules, "search", None)  # the built-in list
    start = d("bench 4")
    assert d.eng.searching
    time.sleep(0.2)
    t0 = time.monotonic()
    d("stop")
    assert time.monotonic() - t0 < 3
    d.out.wait_for("Nodes/second", start)
    lines = d.since(start)
    assert any(line.startswith("info string bench stopped after ") for line in lines), lines
    start = d("bench")
    assert d.eng.handle("quit") is False and not d.eng.searching


class SlowIteration(FakeSearcher):
    """One iteration of 2.5 s with no info line, reporting its progress like search.Searcher.progress()."""

    def search(self, pos, limits, on_info=None, on_start=None):
        self._stop.clear()
        self._t0 = time.perf_counter()
        if on_start is not None:
            on_start()
        self.root = [int(c) for c in pos.legal_codes()]
        while time.perf_counter() - self._t0 < 2.5 and not self._stop.is_set():
            time.sleep(0.01)
        return Result(self.root[0], None, 0, None, 1, 1000, [self.root[0]])

    def progress(self):
        ms = int((time.perf_counter() - self._t0) * 1000)
        return 3, 5, ms * 10, self.root[1], ms


def test_a_long_iteration_prints_an_info_line_every_second():
    d = Dialog(searcher_factory=lambda mb, seed: SlowIteration(mb, seed))
    start = d("isready", "position startpos", "go depth 3")
    d.bestmove(start, timeout=10)
    progress = [line for line in d.since(start) if line.startswith("info depth 3 seldepth 5 ")]
    assert len(progress) >= 2, d.since(start)  # at about 1 s and 2 s
    words = progress[0].split()
    assert words[words.index("currmove") + 1] == Position.startpos().move_usi(d.searcher.root[1])
    for key in ("time", "nodes", "nps"):
        assert int(words[words.index(key) + 1]) > 0
    assert 900 <= int(words[words.index("time") + 1]) <= 2000
    d.close()


def test_position_and_d_during_a_search_change_only_the_next_go(dialog):
    start = dialog("isready", "position startpos", "go infinite")
    for _ in range(20):
        dialog("position startpos moves 7g7f 3c3d", "d", "position sfen " + MATE_IN_1, "d")
    dialog("stop")
    best = dialog.bestmove(start).split()[1]
    assert legal_after([], best)  # the search's own copy: the start position
    assert dialog.count("info string error") == 0
    start = dialog("go depth 1")
    best = dialog.bestmove(start).split()[1]
    assert Position.from_sfen(MATE_IN_1).is_legal(best) and not legal_after([], best)  # the next go: the new one


@pytest.mark.parametrize("sfen, message", [
    ("lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b 40P 1",
     "58 pawns (with their promoted forms), but the set has 18"),
    ("lnsgkgsnl/1r5b1/pppppppp+p/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b 2p 1",
     "20 pawns (with their promoted forms), but the set has 18"),
    ("4k4/9/9/9/9/9/9/9/4K4 b 3B 1", "3 bishops (with their promoted forms), but the set has 2"),
    ("lnsg1gsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSG1GSNL b - 1",
     "neither side has a king: only the side to move, the attacker of a tsume problem, may have none"),
    ("4k4/9/9/9/9/9/9/9/4K4 w G 1", "gote"),  # (accepted: the control line)
    ("8k/9/9/9/9/9/9/9/9 w G 1", "sente (not to move) has no king"),
    ("4k4/9/9/9/9/9/9/9/3KK4 b - 1", "a side has more than one king"),
    ("4k4/9/9/9/9/9/9/9/4K4 b - 0", "the move number 0 is out of range (1..100000)"),
    ("4k4/9/9/9/9/9/9/9/4K4 b - 100001", "the move number 100001 is out of range (1..100000)"),
    ("4k4/9/9/9/9/9/9/9/4K4 b - 99999999999999999999",
     "the move number 99999999999999999999 is out of range (1..100000)"),
    ("4k4/9/9/9/9/9/9/9/4K4 b - x", "the move number (fourth field) must be a positive integer, not 'x'"),
])
def test_sfen_validation(dialog, sfen, message):
    dialog("position startpos moves 7g7f")
    start = dialog("position sfen " + sfen)
    out = dialog.since(start)
    if message == "gote":
        assert out == []
        return
    assert len(out) == 1 and out[0].startswith("info string error position not changed: ") and message in out[0], out
    assert "lnsgkgsnl/1r5b1/ppppppppp/9/9/2P6/PP1PPPPPP/1B5R1/LNSGKGSNL w - 2" in "\n".join(dialog.since(dialog("d")))


def test_tsume_without_the_attackers_king_is_searched_and_mated(dialog):
    tsume = "8k/6S2/7G1/9/9/9/9/9/9 b G 1"  # no sente king: a tsume problem
    start = dialog("position sfen " + tsume, "go mate 1000")
    dialog.out.wait_for("checkmate", start)
    assert dialog.since(start)[-1] == "checkmate G*1b"
    start = dialog("go depth 1")
    assert dialog.bestmove(start).startswith("bestmove ")
    assert dialog.count("info string error") == 0


def test_error_messages_say_what_was_wrong(dialog, monkeypatch):
    def broken(*args, **kwargs):
        raise IndexError

    monkeypatch.setattr(engine.Position, "from_sfen", broken)
    start = dialog("position sfen 4k4/9/9/9/9/9/9/9/4K4 b - 1")
    assert dialog.since(start) == ["info string error position not changed: not a shogi SFEN the engine can read "
                                   "(an index out of range (IndexError))"]
    assert usi_engine._describe(KeyError("x")) == "x"
    assert usi_engine._describe(ValueError("bad")) == "bad"


def test_go_that_cannot_start_still_answers_one_bestmove(dialog, monkeypatch):
    def broken(self, go, t0):
        raise RuntimeError("no thread")

    monkeypatch.setattr(UsiEngine, "_go", broken)
    start = dialog("position startpos", "go depth 1", "go mate 100")
    assert dialog.since(start) == ["info string error go could not start a search: RuntimeError: no thread",
                                   "bestmove resign",
                                   "info string error go could not start a search: RuntimeError: no thread",
                                   "checkmate timeout"]


def test_sfen_validation_dai_shogi(dialog):
    start_sfen = Position.startpos("daishogi2017").sfen()
    dialog("setoption name USI_Variant value daishogi2017", "position startpos")
    cases = [(start_sfen.replace("k", "1", 1).replace("K", "1", 1), "neither side has a king"),
             (start_sfen.replace("k", "a", 1), "3 drunk elephants (with their promoted forms), but the set has 2"),
             (start_sfen.replace("3m5m3", "3m1p3m3", 1), "97 pieces of the kinds P L N I C S G"),
             (start_sfen.replace(" 1", " 0"), "the move number 0 is out of range")]
    for sfen, message in cases:
        start = dialog("position sfen " + sfen)
        out = dialog.since(start)
        assert len(out) == 1 and message in out[0], out
    start = dialog("position sfen " + start_sfen.replace("k", "a", 1).replace("e", "1", 1))  # a prince, no king
    assert dialog.since(start) == []
    start = dialog("go infinite", "position startpos moves 7i7h", "d")
    dialog("stop")
    best = dialog.bestmove(start).split()[1]
    assert Position.from_sfen(start_sfen.replace("k", "a", 1).replace("e", "1", 1), "daishogi2017").is_legal(best)


# ----------------------------------------------------------------------------------------------- EvalFile
def _eval_file_errors(dialog, value):
    start = dialog(f"setoption name EvalFile value {value}")
    return [line for line in dialog.since(start) if line.startswith("info string error")]


def test_eval_file_problems_are_said_in_words_and_keep_the_old_value(dialog, tmp_path, monkeypatch):
    """A name too long for the file system, a directory, a file that cannot be read and a file that is no weights
    file: one short error line each, saying what is wrong (no OSError text), and EvalFile keeps its value."""
    import os
    import shutil

    from eval.kp import weights_path

    good = tmp_path / "good.npz"
    shutil.copy(weights_path("shogi"), good)
    assert _eval_file_errors(dialog, good) == [] and dialog.eng.opt("EvalFile") == str(good)
    text = tmp_path / "notes.txt"
    text.write_text("not weights")
    locked = tmp_path / "locked.npz"
    shutil.copy(good, locked)
    locked.chmod(0)
    real_access = os.access
    if os.geteuid() == 0:  # root reads any file: answer for the locked one as the file system does for others
        monkeypatch.setattr(os, "access", lambda p, mode, **kw: str(p) != str(locked) and real_access(p, mode, **kw))
    cases = (("x" * 300, "the file name is too long (300 characters)"),
             (tmp_path, "is a directory, not a weights file"),
             (locked, "cannot be read: permission denied"),
             (text, "is not a weights file"))
    for value, words in cases:
        errors = _eval_file_errors(dialog, value)
        assert len(errors) == 1 and words in errors[0], (value, errors)
        assert "Errno" not in errors[0] and "OSError" not in errors[0] and len(errors[0]) < 250, errors  # 80-char name
        assert dialog.eng.opt("EvalFile") == str(good)



def test_eval_file_quotes_another_modules_words_cut(tmp_path, monkeypatch):
    """What eval.kp or zipfile say about a file (they may quote what they read from it) is quoted with the file's
    name as shown and at most QUOTED_ERROR_CHARS of their own words."""
    import shutil
    import zipfile

    import eval.kp
    from eval.kp import weights_path

    path = tmp_path / "w.npz"
    shutil.copy(weights_path("shogi"), path)
    shown = usi_engine._shown_name(str(path))
    monkeypatch.setattr(usi_engine, "QUOTED_ERROR_CHARS", 50)

    def unknown(name):
        raise ValueError(f"KP weights file {name} is for an unknown variant {'v' * 1000!r}")

    monkeypatch.setattr(eval.kp, "load_weights_file", unknown)
    with pytest.raises(ValueError) as got:
        usi_engine.read_eval_file(str(path))
    words = "KP weights file  is for an unknown variant '"  # eval.kp's words besides the name: 44 characters
    assert str(got.value) == f"KP weights file {shown} is for an unknown variant '" + "v" * (50 - len(words))

    def damaged(name):
        raise zipfile.BadZipFile("z" * 1000)

    monkeypatch.setattr(eval.kp, "load_weights_file", damaged)
    with pytest.raises(ValueError) as got:
        usi_engine.read_eval_file(str(path))
    assert str(got.value) == f"{shown} is not a weights file (a damaged .npz archive: {'z' * 50})"


@pytest.mark.parametrize("variant, position", [("enokian", "position startpos moves card=KS"),
                                               ("mawarikudoi", "position startpos moves throw=uudd")])
def test_a_bad_command_gives_one_short_error_line_in_a_game_variant(variant, position):
    out = Sink()
    eng = UsiEngine(out=out)
    for line in (f"setoption name USI_Variant value {variant}", position):
        eng.handle(line)
    for bad in ("go depth 1 " + "zz " * (MB // 3) + "searchmoves " + "7g7x " * 1000,
                position + " " + "card=ZZ " * (MB // 8), "position sfen " + "p/" * (MB // 2)):
        start = len(out.lines)
        eng.handle(bad)
        eng._finish_search()
        errors = [line for line in out.lines[start:] if line.startswith("info string error")]
        assert len(errors) == 1 and len(errors[0]) <= usi_engine.MAX_ERROR_CHARS + 20, errors[:3]
    eng.handle("quit")


def test_d_counts_actions_and_lists_them_only_on_request(monkeypatch):
    """``d`` after a long mawarikudoi throw counts its turn's actions without writing them out (issue 48: it listed
    10,261 of them, seconds of the reader's time); ``d actions`` lists them, a few a line."""
    from engine.variants.mawarikudoi.state import MawarikudoiState

    out = Sink()
    eng = UsiEngine(out=out)
    eng.handle("setoption name USI_Variant value mawarikudoi")
    eng.handle("position startpos moves throw=vvvv")
    actions = eng.game.legal_actions()
    start = len(out.lines)
    eng.handle("d actions")
    lines = out.lines[start:]
    assert f"node decision side 0 actions {len(actions)}" in lines
    listed = [tok for line in lines if line.startswith("actions ") for tok in line.split()[1:]]
    assert listed == actions and max(len(line.split()) for line in lines) <= 1 + usi_engine.games.ACTIONS_PER_LINE

    eng.handle("position startpos moves throw=xvvv")  # the longest turns: about 10,000 ends

    def refuse(self):
        raise AssertionError("d listed the legal actions")

    monkeypatch.setattr(MawarikudoiState, "legal_actions", refuse)
    start = len(out.lines)
    eng.handle("d")
    lines = out.lines[start:]
    assert len(lines) <= 20 and not any("error" in line for line in lines), lines
    count = int(next(line for line in lines if line.startswith("node decision")).split()[-1])
    assert count > 5000
    monkeypatch.undo()
    assert count == len(eng.game.legal_actions())
    start = len(out.lines)
    eng.handle("d bogus")
    assert out.lines[start:] == ["info string error d takes no argument or 'actions', not 'bogus'"]
    eng.handle("quit")


def test_d_actions_lists_the_legal_moves_in_shogi(dialog):
    start = dialog("position startpos", "d actions")
    listed = [tok for line in dialog.since(start) if line.startswith("actions ") for tok in line.split()[1:]]
    pos = Position.startpos()
    assert sorted(listed) == sorted(pos.move_usi(int(c)) for c in pos.legal_codes())


def test_stale_kernels_are_checked_once_at_the_first_command_that_may_load_one(monkeypatch):
    """usi answers without numba; the first command that may load a kernel (here position) checks the cache first,
    once per engine (engine.kernels.cache: a kernel cached against an edited shared kernel would crash)."""
    import io

    import usi.engine as E

    calls = []
    monkeypatch.setattr(E, "purge_stale_kernels", lambda: calls.append(1) or False)
    eng = E.UsiEngine(out=io.StringIO())
    for line in ("usi", "setoption name USI_Hash value 16", "usinewgame"):
        eng.handle(line)
    assert calls == []
    eng.handle("position startpos moves 7g7f")
    eng.handle("position startpos")
    assert calls == [1]
