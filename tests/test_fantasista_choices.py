"""Ousho Fantasista, issue 23: the choices made before and during the game. Reserved 9-18 per player (any result of
any of the four tables, or 4-8), the fairy and the reserved result as pre-game decisions (asked with ``go``, answered
``bestmove fairy:<name>[,reserved:<result>]``), and magic targets chosen by search (docs/fantasista.md). The rolls
as the search plays them: tests/test_fantasista_shared.py."""
from __future__ import annotations

import pytest

from engine.game import GameError, NodeKind
from engine.variants.fantasista import FantasistaState, new_game
from engine.variants.fantasista.variant import FANTASISTA
from eval import build_eval_tables
from search.fantasista_shared import pregame_worths
from search.games import FantasistaGameSearcher
from search.interface import Limits
from usi import games

from .test_fantasista import state
from .test_usi_variants import Dialog


# ------------------------------------------------------------------ reserved 9-18 per player
def _roll(fairies: str, reserved: str, roll: int, roller: str = "b") -> FantasistaState:
    """A roll due for ``roller`` (b: sente after ply 15, w: gote after ply 16) with extra state items."""
    side, number = ("w", 16) if roller == "b" else ("b", 17)
    g = state({"5i": "K", "5a": "k", "5g": "P", "8h": "B", "5c": "p", "2b": "b"}, side=side,
              extra=f"f={fairies};{reserved}n=roll" if reserved else f"f={fairies};n=roll", number=number)
    g.apply(f"roll={roll}")
    return g


def test_each_side_has_its_own_reserved_result_from_any_table():
    # a hiko player that took silver curtain (ginsara 1) for its 9-18, gote (ayumi) with nothing added
    g = new_game(("hiko", "ayumi"), reserved=("ginsara:1", "4-8"))
    assert g.reserved == ["ginsara:1", "4-8"] and g.sfen().endswith(" f=ha;s=g1,-")
    assert FantasistaState.from_sfen(g.sfen()).reserved == ["ginsara:1", "4-8"]
    assert "r=C" in _roll("ha", "s=g1,-;", 12).sfen()        # sente: its 9-18 is the curtain
    assert "h=R" in _roll("ha", "s=g1,-;", 5).sfen()         # 4-8 stays its own (a rook token)
    assert "h=g2p" in _roll("ha", "s=g1,-;", 12, "w").sfen()  # gote: 9-18 as its 4-8 (two pawns and a gold)
    g = _roll("gy", "s=-,a3;", 15, "w")                      # gote (yokaku) took ayumi 3: invincible target
    assert g.phase == "target" and g.pending == "i" and g.legal_actions() == ["target:5c"]
    g = _roll("gh", "s=y3,n;", 9)                            # sente (ginsara) took yokaku 3: a carrier
    assert g.phase == "target" and g.pending == "c" and g.legal_actions() == ["target:8h"]
    assert "h=" not in _roll("gh", "s=y3,n;", 18, "w").sfen()  # gote's 9-18 give nothing


def test_the_former_single_option_still_applies_to_both_sides():
    g = new_game(("hiko", "ginsara"), reserved="2")
    assert g.reserved == ["hiko:2", "ginsara:2"] and "s=h2,g2" in g.sfen()
    assert new_game(("hiko", "ayumi")).sfen().endswith(" f=ha")  # nothing added: no s= item
    for bad in ("5", "hiko:9", "dragon:1", ""):
        with pytest.raises(ValueError):
            new_game(("hiko", "ayumi"), reserved=(bad, "4-8"))
    with pytest.raises(GameError):
        FantasistaState.from_sfen("4k4/9/9/9/9/9/9/9/4K4 b - 1 f=ha;s=x1,-")


def test_usi_reserved_options_per_side():
    opt = games.option_getter({"FantasistaFairySente": "hiko", "FantasistaFairyGote": "ayumi",
                               "FantasistaReservedSente": "ginsara:1", "FantasistaReserved": "3"})
    g = games.new_state("fantasista", opt)
    assert g.reserved == ["ginsara:1", "ayumi:3"]  # gote follows FantasistaReserved (default)
    names = {o[0] for o in games.RULE_OPTIONS}
    assert {"FantasistaReservedSente", "FantasistaReservedGote"} <= names
    with pytest.raises(ValueError):
        games.new_state("fantasista", games.option_getter({"FantasistaReservedGote": "hiko:7"}))
    d = Dialog()
    d("setoption name USI_Variant value fantasista", "setoption name FantasistaFairyGote value ayumi",
      "setoption name FantasistaReservedSente value hiko:2", "position startpos")
    assert d.sfen().endswith(" f=ha;s=h2,-")


@pytest.mark.parametrize("order", [(0, 1, 2), (2, 1, 0), (1, 0, 2), (1, 2, 0)])
def test_rule_options_agree_in_any_order(order):
    """FantasistaReserved 2 with sente's fairy to be chosen needs sente's own reserved result: whatever order a GUI
    sends the three options in, the game ends up with all three (a conflicting step is held, not dropped)."""
    lines = ["setoption name FantasistaFairySente value choose", "setoption name FantasistaReserved value 2",
             "setoption name FantasistaReservedSente value hiko:1"]
    d = Dialog()
    d("setoption name USI_Variant value fantasista", "setoption name FantasistaFairyGote value ayumi")
    start = d(*(lines[i] for i in order))
    d("position startpos")
    assert d.eng.opt("FantasistaReserved") == "2" and d.eng.opt("FantasistaFairySente") == "choose"
    assert d.eng.game.fairy[0] is None and d.eng.game.reserved == ["hiko:1", "ayumi:2"]
    errors = [line for line in d.since(start) if "error" in line]
    assert all("not applied yet" in line for line in errors), errors
    # A conflict that is never resolved leaves the game on its last consistent rules, and says so.
    d = Dialog()
    start = d("setoption name USI_Variant value fantasista", "setoption name FantasistaFairySente value choose",
              "setoption name FantasistaReserved value 3", "position startpos")
    assert any("FantasistaReserved value 3 not applied yet" in line for line in d.since(start))
    assert d.eng.opt("FantasistaReserved") == "4-8" and d.eng.game.reserved == ["4-8", "4-8"]
    # ... while an option that agrees with the applied ones still applies at once
    d("setoption name FantasistaFairyGote value yokaku", "position startpos")
    assert d.eng.opt("FantasistaFairyGote") == "yokaku" and d.eng.opt("FantasistaReserved") == "4-8"


def test_gui_offers_the_choices():
    from gui.games import variant_infos

    opts = {o["name"]: o for o in variant_infos()["fantasista"].options}
    assert "choose" in opts["fairy_sente"]["choices"] and "ginsara:1" in opts["reserved_gote"]["choices"]
    from gui.games import GuiGame

    game = GuiGame(variant_infos()["fantasista"], {"fairy_sente": "choose", "reserved_sente": "choose",
                                                  "reserved_gote": "hiko:1"})
    assert game.state.pregame_side() == 0 and game.state.reserved == [None, "hiko:1"]
    assert game.panel(None)["fairies"] == ["choose", "ayumi"]


# ------------------------------------------------------------------ the pre-game decision
def test_the_fairy_and_the_reserved_result_are_pre_game_decisions():
    g = new_game((None, "ayumi"), reserved=(None, "4-8"))
    assert g.node_kind() is NodeKind.DECISION and g.side_to_move() == 0 and g.result() is None
    assert g.sfen().endswith(" f=-a;s=?,-")
    assert FantasistaState.from_sfen(g.sfen()).sfen() == g.sfen()
    acts = g.legal_actions()
    assert "fairy:hiko,reserved:ginsara:1" in acts and "fairy:ginsara,reserved:4-8" in acts
    assert "fairy:hiko,reserved:hiko:4-8" not in acts  # that is 4-8: one spelling
    for bad in ("7g7f", "fairy:dragon", "fairy:hiko,reserved:hiko:9"):
        with pytest.raises(GameError):
            g.copy().apply(bad)
    g.apply("fairy:ginsara,reserved:hiko:1")
    assert g.fairy == [3, 1] and g.reserved == ["hiko:1", "4-8"] and g.side_to_move() == 0
    assert "7g7f" in g.legal_actions() and g.sfen().endswith(" f=ga;s=h1,-")
    g = new_game(("hiko", None))  # only gote's fairy open: the token without reserved
    assert g.side_to_move() == 1 and g.legal_actions() == [f"fairy:{f}" for f in ("hiko", "ayumi", "yokaku",
                                                                                  "ginsara")]
    with pytest.raises(GameError):
        g.copy().apply("fairy:ayumi,reserved:hiko:1")  # the reserved result is fixed (4-8)


def test_the_engine_chooses_the_magic_worth_most():
    """The pre-game answer is the choice whose first roll the search's evaluation expects to gain most (the kernel's
    anticipation of a roll): not the first listed, and the choices told apart."""
    g = new_game((None, None), reserved=(None, None))
    ranked = pregame_worths(g, build_eval_tables(FANTASISTA, "learned"))
    token, worth = ranked[0]
    assert sorted(t for t, _ in ranked) == sorted(g.pregame_actions()) and len(ranked) == 4 * 17
    assert worth == max(w for _, w in ranked) > dict(ranked)["fairy:ayumi,reserved:4-8"] > 0
    assert dict(ranked)["fairy:hiko,reserved:nothing"] < dict(ranked)["fairy:hiko,reserved:4-8"]  # 9-18 add nothing
    assert len({w for _, w in ranked}) > 10
    # gote's choice is its own roll's worth (sente's choice made): positive too, told apart the same way
    h = new_game(("hiko", None), reserved=("4-8", None))
    assert pregame_worths(h, build_eval_tables(FANTASISTA, "learned"))[0][1] > 0
    d = Dialog()
    d("setoption name USI_Variant value fantasista", "setoption name FantasistaFairySente value choose",
      "setoption name FantasistaReservedSente value choose", "position startpos")
    best, lines = d.go("depth 1")
    assert best == token and best.startswith("fairy:") and ",reserved:" in best
    d("isready", f"position startpos moves {best}")  # isready: a first start compiles the turn search here
    best2, _ = d.go("depth 1")
    assert best2 in games.build_state("fantasista", ["startpos"], [best], games.option_getter(
        {"FantasistaFairySente": "choose", "FantasistaReservedSente": "choose"})).legal_actions()


class _InProcess:
    """A referee's engine in-process: offers every fantasista option, rebuilds each ``position`` with
    ``usi.games`` and answers with a depth-1 search (whose pre-game answer is the searcher's choice)."""

    def __init__(self, cmd, timeout=None):
        self.options = {o[0]: None for o in games.RULE_OPTIONS} | {"USI_Variant": None}
        self.values: dict = {}
        self.seen: list[str] = []

    def configure(self, options): self.values.update(options)
    def isready(self, timeout=None): pass
    def new_game(self): pass
    def gameover(self, result): pass
    def quit(self, timeout=None): pass
    def close(self): pass

    def play(self, position, limit, timeout=None):
        from usi.client import Cp, UsiPlayResult

        self.seen.append(position)
        words = position.split()[1:]
        mi = words.index("moves") if "moves" in words else len(words)
        st = games.build_state("fantasista", words[:mi], words[mi + 1:], games.option_getter(self.values))
        best = FantasistaGameSearcher(hash_mb=1).think(st, Limits(depth=1), lambda info: None).best
        return UsiPlayResult(best, info={"score": Cp(0), "depth": 1}, elapsed=0.01)


def test_the_referee_asks_the_engines_for_their_fairies():
    from usi import match as M
    from usi.game_referee import GameReferee

    opts = {"FantasistaFairySente": "choose", "FantasistaFairyGote": "choose", "FantasistaReservedGote": "choose"}
    settings = M.MatchSettings(variant="fantasista", tc=M.TimeControl(depth=1), max_plies=6, variant_options=opts)
    task = M.GameTask(0, 0, M.EngineSpec(["inproc"], "a"), M.EngineSpec(["inproc"], "b"), M.Opening(), settings, 5)
    ref = GameReferee(task, engine_factory=_InProcess)
    rec = ref.play()
    assert rec["start_sfen"].endswith(" f=--;s=-,?")
    first, second = rec["tokens"][:2]
    want = pregame_worths(new_game((None, None), reserved=("4-8", None)), build_eval_tables(FANTASISTA, "learned"))
    assert first == want[0][0] and "," not in first
    assert second.startswith("fairy:") and ",reserved:" in second
    assert ref.sent[0][0] == "position startpos" and ref.sent[1][0] == f"position startpos moves {first}"
    final = FantasistaState.from_sfen(rec["final_sfen"])
    assert None not in final.fairy and None not in final.reserved


# ------------------------------------------------------------------ magic targets by search
ISSUE_TARGET = ("7g7f 3c3d 2g2f 8c8d 2f2e 8d8e 6i7h 4a3b 2e2d 2c2d 2h2d 8e8f 8g8f 8b8f 2d3d roll=3").split()


def test_the_shared_search_chooses_a_magic_target():
    # the roller's decision is the kernel's root: its moves are the eligible squares, searched like turns
    g = new_game(("ayumi", "yokaku"))
    for t in ISSUE_TARGET:
        g.apply(t)
    lines = []
    r = FantasistaGameSearcher().think(g, Limits(depth=4), lines.append)
    assert r.best in g.legal_actions() and r.depth == 4 and lines and lines[-1].pv[0] == r.best
    d = Dialog()
    d("setoption name USI_Variant value fantasista", "setoption name FantasistaFairySente value ayumi",
      "setoption name FantasistaFairyGote value yokaku", "position startpos moves " + " ".join(ISSUE_TARGET))
    best, _ = d.go("depth 4")
    assert best == r.best
