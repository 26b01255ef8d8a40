"""Scripted USI dialogs for the GameState variants (fantasista, turncoat, mawarikudoi, enokian), in-process.

Each dialog sets ``USI_Variant``, sends ``position`` lines with event tokens, and checks that ``go`` answers one
legal ``bestmove`` (turns, ``plan:``, ``target:``), that a bad token is reported and leaves the state as it was,
and that ``stop`` ends an open-ended search. The real engines of ``search/`` are used at tiny limits.
"""
from __future__ import annotations

import io
import time

import pytest

from usi import games
from usi.engine import UsiEngine


class Dialog:
    def __init__(self) -> None:
        self.out = io.StringIO()
        self.eng = UsiEngine(out=self.out)

    def __call__(self, *lines: str) -> int:
        start = len(self.lines())
        for line in lines:
            self.eng.handle(line)
        return start

    def lines(self) -> list[str]:
        return self.out.getvalue().splitlines()

    def since(self, start: int) -> list[str]:
        return self.lines()[start:]

    def wait(self, timeout: float = 30.0) -> None:
        job = self.eng._job
        if job is not None and job.thread is not None:
            job.thread.join(timeout)
            assert not job.thread.is_alive(), "search did not finish"

    def go(self, params: str = "depth 1") -> tuple[str, list[str]]:
        start = self(f"go {params}")
        self.wait()
        lines = self.since(start)
        best = [line for line in lines if line.startswith("bestmove")]
        assert len(best) == 1, lines
        return best[0].split()[1], lines

    def sfen(self) -> str:
        start = self("d")
        return next(line for line in self.since(start) if line.startswith("sfen "))[5:]


@pytest.fixture
def dialog():
    d = Dialog()
    yield d
    d.eng._finish_search()


def _state(variant: str, tokens: list[str], **options):
    return games.build_state(variant, ["startpos"], tokens, games.option_getter(options))


def test_every_variant_is_accepted_and_has_its_options(dialog):
    start = dialog("usi")
    names = {line.split()[2] for line in dialog.since(start) if line.startswith("option name")}
    assert {"FantasistaFairySente", "FantasistaFairyGote", "FantasistaReserved", "EnokianMichizane",
            "Mawarikudoi_FaceUp", "Mawarikudoi_UpsideDown"} <= names
    import engine
    from search.registry import GAME_SEARCHERS

    for v in engine.available_variants():
        start = dialog(f"setoption name USI_Variant value {v}")
        assert dialog.since(start) == [], v
        assert dialog.eng.opt("USI_Variant") == v
    assert set(GAME_SEARCHERS) <= set(engine.available_variants())


def test_turncoat_plans_views_and_moves(dialog):
    dialog("setoption name USI_Variant value turncoat", "setoption name Seed value 3", "isready",
           "position startpos")
    best, lines = dialog.go("depth 1")
    assert best.startswith("plan:") and best in _state("turncoat", []).legal_actions()
    # gote's view: sente's plan hidden, its own shown
    dialog("position startpos moves plan=? plan=4i,5g")
    best, _ = dialog.go("btime 1000 wtime 1000 byoyomi 300")
    assert best in _state("turncoat", ["plan=?", "plan=4i,5g"]).legal_actions()
    dialog("position startpos moves plan=6a,7c plan=? 7g7f")
    before = dialog.sfen()
    assert ";6a,7c;?;" in before
    start = dialog("position startpos moves plan=6a,7c plan=? 7g7f 7g7f")
    assert dialog.since(start)[0].startswith("info string error position not changed: token 4 (7g7f)")
    assert dialog.sfen() == before
    best, lines = dialog.go("depth 1")
    assert best in _state("turncoat", ["plan=6a,7c", "plan=?", "7g7f"]).legal_actions()
    assert any(" score cp " in line for line in lines)


def test_turncoat_defection_event_in_a_view(dialog):
    g = _state("turncoat", ["plan:6a,7c", "plan:4i,5g"])
    import random
    rng = random.Random(1)
    while g.move_number < 31:
        acts = [a for a in g.legal_actions() if a != "defect"]
        g.apply(rng.choice(acts))
        assert g.result() is None
    view = g.view(0)
    assert view[:2] == ["plan=6a,7c", "plan=?"]
    dialog("setoption name USI_Variant value turncoat", "position startpos moves " + " ".join(view))
    best, _ = dialog.go("depth 1")
    assert games.is_legal(g, best)


def test_fantasista_options_rolls_and_target(dialog):
    dialog("setoption name USI_Variant value fantasista", "setoption name FantasistaFairyGote value ayumi",
           "isready", "position startpos")  # isready: a cold start compiles the search there, not in a go
    assert dialog.sfen().endswith(" f=ha")
    opening = ("7g7f 3c3d 2g2f 8c8d 2f2e 8d8e 6i7h 4a3b 2e2d 2c2d 2h2d 8e8f 8g8f 8b8f 2d3d roll=5 P*8g").split()
    dialog("position startpos moves " + " ".join(opening + ["roll=3"]))
    state = _state("fantasista", opening + ["roll=3"], FantasistaFairyGote="ayumi")
    assert state.phase == "target"
    best, _ = dialog.go("depth 1")
    assert best.startswith("target:") and best in state.legal_actions()
    dialog("position startpos moves " + " ".join(opening[:15]))
    before = dialog.sfen()
    start = dialog("position startpos moves " + " ".join(opening[:15] + ["P*8g"]))  # the roll is due first
    assert dialog.since(start)[0].startswith("info string error position not changed: token 16")
    assert dialog.sfen() == before
    best, lines = dialog.go("depth 1")  # at the chance node: no decision
    assert best == "resign" and any("chance node" in line for line in lines)
    dialog("position startpos moves " + " ".join(opening[:16]))  # after sente's roll: gote's turn
    best, lines = dialog.go("depth 1")
    assert best in _state("fantasista", opening[:16], FantasistaFairyGote="ayumi").legal_actions()
    assert any(" score cp " in line or " score mate " in line for line in lines)


# sente's turn at ply 15: a d20 roll follows whatever turn it plays (docs/fantasista.md, example game record)
BEFORE_ROLL = "7g7f 3c3d 2g2f 8c8d 2f2e 8d8e 6i7h 4a3b 2e2d 2c2d 2h2d 8e8f 8g8f 8b8f".split()


def test_fantasista_chance_aware_option_is_listed(dialog):
    start = dialog("usi")
    assert "option name FantasistaChanceAware type check default true" in dialog.since(start)


def test_fantasista_chance_aware_option_sets_the_shared_search(dialog):
    from search.kernels import CHANCE_BLIND, CHANCE_MAIN

    dialog("setoption name USI_Variant value fantasista", "isready",
           "position startpos moves " + " ".join(BEFORE_ROLL))
    assert dialog.eng._ensure_game_searcher().kernel_searcher.searcher.chance_mode == CHANCE_MAIN  # the default
    legal = _state("fantasista", BEFORE_ROLL).legal_actions()
    for value, mode in (("false", CHANCE_BLIND), ("TRUE", CHANCE_MAIN)):
        dialog(f"setoption name FantasistaChanceAware value {value}")
        best, lines = dialog.go("depth 3")
        assert dialog.eng._game_searcher.kernel_searcher.searcher.chance_mode == mode and best in legal, lines


def test_fantasista_search_options_keep_the_position_and_rebuild_the_searcher(dialog):
    from search.kernels import CHANCE_BLIND, CHANCE_MAIN, CHANCE_STAR1

    dialog("setoption name USI_Variant value fantasista", "setoption name FantasistaFairyGote value ayumi",
           "isready", "position startpos moves " + " ".join(BEFORE_ROLL))
    before = dialog.sfen()
    legal = _state("fantasista", BEFORE_ROLL, FantasistaFairyGote="ayumi").legal_actions()
    for line, mode, eval_mode in (("FantasistaChanceAware value false", CHANCE_BLIND, "learned"),
                                  ("FantasistaChanceAware value TRUE", CHANCE_MAIN, "learned"),
                                  ("FantasistaChanceSearch value star1", CHANCE_STAR1, "learned"),
                                  ("EvalMode value hand", CHANCE_STAR1, "hand")):
        start = dialog(f"setoption name {line}")
        assert dialog.since(start) == []
        assert dialog.sfen() == before  # a search option: the position is kept
        best, lines = dialog.go("nodes 2000")  # takes effect at the next search, without usinewgame
        searcher = dialog.eng._game_searcher.kernel_searcher.searcher
        assert (searcher.chance_mode, searcher.eval_mode) == (mode, eval_mode) and best in legal, lines
        dialog("usinewgame")  # a new game keeps the options
        searcher = dialog.eng._ensure_game_searcher().kernel_searcher.searcher
        assert (searcher.chance_mode, searcher.eval_mode) == (mode, eval_mode)


def test_fantasista_go_nodes_spends_the_budget(dialog):
    # a node budget alone must search past the plain-``go`` depth (2) until the budget is spent (the search reports
    # its completed iterations; right before two rolls its third iteration needs millions of nodes: it is given an
    # opening position)
    dialog("setoption name USI_Variant value fantasista", "isready", "position startpos moves 7g7f")
    best, lines = dialog.go("nodes 20000")
    info = [line.split() for line in lines if line.startswith("info depth")][-1]
    nodes, depth = int(info[info.index("nodes") + 1]), int(info[info.index("depth") + 1])
    assert depth > 2 and nodes <= 20000, lines
    assert best in _state("fantasista", ["7g7f"]).legal_actions()


def test_fantasista_chance_aware_bad_value_is_reported(dialog):
    dialog("setoption name USI_Variant value fantasista", "setoption name FantasistaChanceAware value false")
    for bad in ("setoption name FantasistaChanceAware value maybe", "setoption name FantasistaChanceAware value 0",
                "setoption name FantasistaChanceAware"):
        start = dialog(bad)
        out = dialog.since(start)
        assert len(out) == 1 and out[0].startswith("info string error option FantasistaChanceAware "), out
        assert dialog.eng.opt("FantasistaChanceAware") is False  # the old value is kept
    # the referee passes option values as strings: the same check
    assert games.rule_kwargs("fantasista", games.option_getter({"FantasistaChanceAware": "false"}))
    with pytest.raises(ValueError, match="FantasistaChanceAware takes true or false"):
        games.rule_kwargs("fantasista", games.option_getter({"FantasistaChanceAware": "yes"}))


def test_fantasista_stop_ends_infinite_search(dialog):
    dialog("setoption name USI_Variant value fantasista", "isready", "position startpos moves 7g7f")
    start = dialog("go infinite")
    time.sleep(0.3)
    dialog("stop")
    best = [line for line in dialog.since(start) if line.startswith("bestmove")]
    assert len(best) == 1 and best[0].split()[1] in _state("fantasista", ["7g7f"]).legal_actions()


def test_mawarikudoi_throws_and_winprob(dialog):
    dialog("setoption name USI_Variant value mawarikudoi", "isready", "position startpos moves throw=uddd")
    best, lines = dialog.go("btime 0 wtime 0 byoyomi 500")
    assert best in _state("mawarikudoi", ["throw=uddd"]).legal_actions()
    assert any("string winprob 0." in line and " score cp " in line for line in lines)
    start = dialog("position startpos moves throw=uddd 1i1h throw=ud")
    assert dialog.since(start)[0].startswith("info string error position not changed: token 3 (throw=ud)")
    assert dialog.sfen() == _state("mawarikudoi", ["throw=uddd"]).sfen()
    best, _ = dialog.go("depth 1")
    assert best in _state("mawarikudoi", ["throw=uddd"]).legal_actions()


def test_mawarikudoi_face_options(dialog):
    # a GUI sets the five faces one at a time: a value that breaks the sum waits (reported, old values kept) ...
    start = dialog("setoption name USI_Variant value mawarikudoi", "setoption name Mawarikudoi_FaceUp value 440")
    out = dialog.since(start)
    assert len(out) == 1 and out[0].startswith("info string error option Mawarikudoi_FaceUp value 440 not applied")
    assert "sum to 990 per mille" in out[0] and "keeps 450/450/80/18/2" in out[0], out
    assert dialog.eng.opt("Mawarikudoi_FaceUp") == 450
    # ... and applies with the value that makes the sum 1000 again
    start = dialog("setoption name Mawarikudoi_Side value 90", "position startpos")
    assert dialog.since(start) == []
    assert dialog.eng.opt("Mawarikudoi_FaceUp") == 440 and dialog.eng.opt("Mawarikudoi_Side") == 90
    assert dialog.eng.game.probs.side == pytest.approx(0.09)


def test_mawarikudoi_bad_face_sum_still_answers_go(dialog):
    # the dialog: the error used to be raised on the reader before the search started, with no bestmove
    start = dialog("setoption name USI_Variant value mawarikudoi", "setoption name Mawarikudoi_FaceUp value 0",
                   "isready", "position startpos moves throw=uddd")
    out = dialog.since(start)
    assert out[0].startswith("info string error option Mawarikudoi_FaceUp value 0 not applied"), out
    assert "sum to 550 per mille" in out[0]
    assert dialog.eng.opt("Mawarikudoi_FaceUp") == 450
    best, lines = dialog.go("depth 1")
    assert best in _state("mawarikudoi", ["throw=uddd"]).legal_actions(), lines
    assert not any("error" in line for line in lines), lines


def test_enokian_cards_winprob_and_stop(dialog):
    dialog("setoption name USI_Variant value enokian", "setoption name EnokianMichizane value 9i", "isready",
           "position startpos")
    assert dialog.sfen().split()[0].endswith("k3+b4")  # Michizane on 9i
    best, lines = dialog.go("depth 1")
    assert best == "resign" and any("chance node" in line for line in lines)
    dialog("setoption name EnokianMichizane value 1a", "position startpos moves card=KS")
    before = dialog.sfen()
    start = dialog("position startpos moves card=KS card=QS")  # a card at a decision node
    assert dialog.since(start)[0].startswith("info string error position not changed: token 2 (card=QS)")
    assert dialog.sfen() == before
    best, lines = dialog.go("depth 1")
    assert best in _state("enokian", ["card=KS"]).legal_actions()
    assert any("string winprob" in line for line in lines)
    start = dialog("go infinite")
    time.sleep(0.2)
    dialog("stop")
    best = [line for line in dialog.since(start) if line.startswith("bestmove")]
    assert len(best) == 1 and best[0].split()[1] in _state("enokian", ["card=KS"]).legal_actions()


def test_perft_bench_and_mate_are_refused(dialog):
    dialog("setoption name USI_Variant value enokian")
    start = dialog("go perft 2", "bench")
    assert dialog.since(start) == ["info string error not supported for enokian",
                                   "info string error bench not supported for enokian"]
    start = dialog("position startpos moves card=KS", "go mate 100")
    dialog.wait()
    assert dialog.since(start)[-1] == "checkmate notimplemented"


def test_back_to_shogi(dialog):
    dialog("setoption name USI_Variant value turncoat", "position startpos moves plan=8b plan=?",
           "setoption name USI_Variant value shogi", "position startpos moves 7g7f")
    assert "lnsgkgsnl/1r5b1/ppppppppp/9/9/2P6/PP1PPPPPP/1B5R1/LNSGKGSNL w - 2" in "\n".join(
        dialog.since(dialog("d")))


# ----------------------------------------------------------------------------------------------- issue 22
# a decision node of each game and a later position to send while the search runs
DURING_SEARCH = {
    "fantasista": (["7g7f"], ["7g7f", "3c3d"]),
    "turncoat": (["plan=6a,7c", "plan=?"], ["plan=6a,7c", "plan=?", "7g7f"]),
    "mawarikudoi": (["throw=uddd"], ["throw=dddd"]),
    "enokian": (["card=KS"], ["card=QS"]),
}


@pytest.mark.parametrize("variant", sorted(DURING_SEARCH))
def test_position_and_d_during_a_search_change_only_the_next_go(dialog, variant):
    # the search owns its state: position / d sent while it runs change what the next go sees, nothing else
    first, second = DURING_SEARCH[variant]
    dialog(f"setoption name USI_Variant value {variant}", "isready", "position startpos moves " + " ".join(first))
    for _ in range(3):
        start = dialog("go infinite")
        for _ in range(10):
            dialog("position startpos moves " + " ".join(second), "d", "position startpos moves " + " ".join(first),
                   "d", "position startpos moves " + " ".join(second))
        dialog("stop")
        lines = dialog.since(start)
        best = [line for line in lines if line.startswith("bestmove")]
        assert len(best) == 1 and best[0].split()[1] in _state(variant, first).legal_actions(), lines
        assert not any("error" in line for line in lines), lines
        dialog("position startpos moves " + " ".join(first))
    dialog("position startpos moves " + " ".join(second))
    best, _ = dialog.go("depth 1")
    assert best in _state(variant, second).legal_actions()


def test_fantasista_turn_lister_is_per_thread():
    # the lister's buffers are overwritten by each generation: two threads generating at once each get their own
    import threading

    from engine.variants.fantasista import turns

    a, b = _state("fantasista", ["7g7f"]), _state("fantasista", ["7g7f", "3c3d", "8h2b+"])
    want = {id(a): sorted(turns.legal_turns(a.bd)[0]), id(b): sorted(turns.legal_turns(b.bd)[0])}
    bad = []

    def run(state):
        for _ in range(40):
            if sorted(turns.legal_turns(state.bd)[0]) != want[id(state)]:
                bad.append(1)

    threads = [threading.Thread(target=run, args=(s,)) for s in (a, b, a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad
    seen = []
    t = threading.Thread(target=lambda: seen.append(turns.lister()))
    t.start()
    t.join()
    assert seen[0] is not turns.lister()


@pytest.mark.parametrize("params", ["depth 0", "depth -1", "nodes 0", "", "searchmoves 7g7f",
                                    "nodes 99999999999999999999", "btime 99999999999999999999 wtime 5",
                                    "movetime 99999999999999999999"])
@pytest.mark.parametrize("variant", ["fantasista", "enokian"])
def test_odd_go_lines_answer_at_once(dialog, variant, params):
    first = DURING_SEARCH[variant][0]
    dialog(f"setoption name USI_Variant value {variant}", "isready", "position startpos moves " + " ".join(first))
    start = dialog(f"go {params}".strip())
    if "9999" in params:
        time.sleep(0.2)
        dialog("stop")
    dialog.wait(20)
    lines = dialog.since(start)
    best = [line for line in lines if line.startswith("bestmove")]
    assert len(best) == 1 and best[0].split()[1] in _state(variant, first).legal_actions(), lines
    assert not any("failed" in line or "Error" in line for line in lines), lines


def _with(sfen: str, board: str | None = None, hand: str | None = None, number: str | None = None) -> str:
    f = sfen.split(" ")
    f[0], f[2], f[3] = board or f[0], hand or f[2], number or f[3]
    return " ".join(f)


@pytest.mark.parametrize("variant", ["fantasista", "turncoat", "mawarikudoi", "enokian"])
def test_sfen_validation_for_every_variant(dialog, variant):
    start_sfen = _state(variant, []).sfen()
    dialog(f"setoption name USI_Variant value {variant}", "position startpos")
    bad = [_with(start_sfen, number="0"), _with(start_sfen, number="99999999999999999999"),
           _with(start_sfen, number="-4"), _with(start_sfen, hand="40P")]
    if variant in ("fantasista", "turncoat"):
        bad += [_with(start_sfen, board="lnsg1gsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSG1GSNL"),
                _with(start_sfen, board="lnsg1gsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL")]
    for sfen in bad:
        start = dialog("position sfen " + sfen)
        out = dialog.since(start)
        assert len(out) == 1 and out[0].startswith("info string error position not changed: "), (sfen, out)
        assert "Error" not in out[0] and len(out[0]) > 50, out
        assert dialog.sfen() == start_sfen
    if variant == "fantasista":
        start = dialog("position sfen 4k4/9/9/9/9/9/9/9/9 b 2G 1 f=hh")  # tsume: the attacker has no king
        assert dialog.since(start) == []
        best, _ = dialog.go("depth 1")
        tsume = games.build_state("fantasista", ["sfen", "4k4/9/9/9/9/9/9/9/9", "b", "2G", "1", "f=hh"], [],
                                  games.option_getter({}))
        assert best in tsume.legal_actions()
