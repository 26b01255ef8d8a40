"""The GUI's JSON API (``gui/server.py``): games of each variant, engines, undo/redo, records, hidden plans, and
bad requests that must get a clear error and leave the game unchanged."""
from __future__ import annotations

import json
import random
import re
import shlex
import socket
import sys
import time
from pathlib import Path

import pytest

from gui.engines import parse_engine_arg
from gui.games import click_path, variant_infos
from gui.server import MAX_BODY, make_server, serve_in_thread, server_from_args
from gui.session import RequestError, Session

from .gui_helpers import Api, engines_with_random
from .proc_helpers import running, stubborn_cmd, wait_for_pid

RANDOM = {"kind": "engine", "engine": "random", "depth": 1}  # the random mover the test server offers


@pytest.fixture()
def server(tmp_path_factory):
    srv, _ = serve_in_thread(0, engines=engines_with_random(tmp_path_factory.mktemp("engine")))
    yield srv, Api(srv.server_address[1])
    srv.shutdown_all()


def wait_for(api: Api, pred, timeout: float = 60.0) -> dict:
    deadline = time.time() + timeout
    st = api.ok("/api/state")
    while not pred(st):
        assert time.time() < deadline, f"timed out; last state: node={st['node']} error={st['error']!r}"
        st = api.ok(f"/api/state?since={st['version']}&wait=2")
    return st


def unchanged(api: Api, before: dict) -> None:
    after = api.ok("/api/state")
    assert after["sfen"] == before["sfen"]
    assert after["history"] == before["history"]
    assert after["variant"]["id"] == before["variant"]["id"]


# ------------------------------------------------------------------------------------------ paths
def test_click_paths_group_tokens_into_steps():
    assert click_path("7g7f+") == ["sq:7g", "sq:7f"]
    assert click_path("13m12l") == ["sq:13m", "sq:12l"]
    assert click_path("P*5e") == ["hand:P", "sq:5e"]
    assert click_path("D*5e:x5c") == ["hand:D", "sq:5e", "sq:5c"]
    assert click_path("5e:x4d") == ["sq:5e", "sq:4d"]
    assert click_path("8h4d,rider:4d4c") == ["sq:8h", "sq:4d", "sq:4c"]
    assert click_path("wave:5g5f,5h5g") == ["btn:wave", "sq:5g", "sq:5f", "sq:5h", "sq:5g"]
    assert click_path("curtain:") == ["btn:curtain"]
    assert click_path("target:5g") == ["sq:5g"]
    assert click_path("defect,2a3c+") == ["btn:defect", "sq:2a", "sq:3c"]
    assert click_path("throw:mixed") == ["btn:throw:mixed"]
    assert click_path("1i1h,turn:e") == ["sq:1i", "sq:1h", "btn:turn:e"]


# ------------------------------------------------------------------------------------------ API
def test_page_and_variants_are_served(server):
    _, api = server
    variants = {v["id"]: v for v in api.ok("/api/variants")}
    assert {"shogi", "daishogi2017", "fantasista", "turncoat", "enokian"} <= {k for k, v in variants.items()
                                                                              if v["available"]}
    assert variants["daishogi2017"]["files"] == 13
    import urllib.request
    with urllib.request.urlopen(api.base + "/") as res:
        assert b"<script src=\"/static/app.js\">" in res.read()
    status, data = api.call("/static/../session.py")
    assert status == 404


def test_bad_requests_leave_the_game_unchanged(server):
    _, api = server
    api.new({"variant": "shogi", "players": ["human", "human"]})
    api.ok("/api/move", {"move": "7g7f"})
    before = api.ok("/api/state")
    cases = [
        ("/api/move", {"move": "5e5d"}, "illegal move"),
        ("/api/move", {"move": "zz"}, "illegal move"),
        ("/api/move", {"move": ""}, "non-empty"),
        ("/api/move", {}, "missing 'move'"),
        ("/api/new", {"variant": "chess"}, "unknown variant"),
        ("/api/new", {"variant": "shogi", "players": ["human", {"kind": "robot"}]}, "player kind"),
        ("/api/new", {"variant": "fantasista", "options": {"fairy_sente": "dragon"}}, "must be one of"),
        ("/api/new", {"variant": "shogi", "sfen": "not a position"}, "bad start position"),
        ("/api/load", {"text": "{not json"}, "malformed JSON record"),
        ("/api/load", {"text": json.dumps({"variant": "shogi", "moves": ["7g7f", "7g7f"]})}, "token 2 (7g7f)"),
        ("/api/load", {"text": json.dumps({"variant": "nope", "moves": []})}, "unknown variant"),
        ("/api/load", {"text": json.dumps({"variant": "shogi", "moves": "7g7f"})}, "list of strings"),
        ("/api/load", {"text": "   1 ７六歩(77)\n   2 ９九歩(11)\n"}, "rejected"),
        ("/api/load", {"text": "hello world"}, "malformed record"),
        ("/api/load", {"text": ""}, "empty"),
        ("/api/redo", {}, "nothing to redo"),
        # Tokens whose squares cannot be named, options the rules refuse, digits int() cannot read: 400, never 500.
        ("/api/move", {"move": "target:zz"}, "not a move"),
        ("/api/move", {"move": "plan:zz"}, "not a move"),
        ("/api/move", {"move": "target:"}, "not a move"),
        ("/api/load", {"text": json.dumps({"variant": "shogi", "moves": ["target:zz"]})}, "token 1"),
        ("/api/new", {"variant": "fantasista", "options": {"fairy_sente": "choose", "reserved": "1"}},
         "options refused"),
        ("/api/new", {"variant": "shogi", "seed": "\u00b2"}, "seed"),
        ("/api/new", {"variant": "shogi", "players": ["human", {"kind": "engine", "depth": "\u00b2"}]}, "depth"),
    ]
    for path, body, words in cases:
        status, data = api.call(path, body)
        assert status == 400, (path, body, data)
        assert words in data["error"], (path, body, data["error"])
        unchanged(api, before)
    status, data = api.call("/api/move", raw=b"{oops")
    assert status == 400 and "not JSON" in data["error"]
    status, data = api.call("/api/nothing", {})
    assert status == 404
    unchanged(api, before)


def test_moves_undo_redo_and_game_end(server):
    _, api = server
    st = api.new({"variant": "shogi", "players": ["human", "human"], "seed": 3})
    assert st["human_turn"] and len(st["legal"]) == 30 and not st["can_undo"]
    for mv in ("7g7f", "3c3d", "8h2b+"):
        st = api.ok("/api/move", {"move": mv})
    assert [h["token"] for h in st["history"]] == ["7g7f", "3c3d", "8h2b+"]
    assert [h["ja"] for h in st["history"]] == ["７六歩(77)", "３四歩(33)", "２二角成(88)"]
    assert st["last_move"] == ["8h", "2b"]
    st = api.ok("/api/undo", {})
    assert len(st["history"]) == 2 and st["can_redo"]
    st = api.ok("/api/redo", {})
    assert st["history"][-1]["token"] == "8h2b+" and not st["can_redo"]
    st = api.ok("/api/move", {"move": "3a2b"})
    assert st["history"][-1]["ja"] == "同　銀(31)"
    st = api.ok("/api/resign", {})
    assert st["result"]["reason"] == "resign" and st["result"]["score"] == 0.0  # sente (to move) resigned
    status, data = api.call("/api/move", {"move": "2g2f"})
    assert status == 400 and "over" in data["error"]


def test_checkmate_ends_the_game(server):
    _, api = server
    st = api.new({"variant": "shogi", "players": ["human", "human"], "sfen": "4k4/9/4P4/9/9/9/9/9/4K4 b G 1"})
    assert {"token": "G*5b", "path": ["hand:G", "sq:5b"], "kinds": ["hand", "move"]} in st["legal"]
    st = api.ok("/api/move", {"move": "G*5b"})
    assert st["node"] == "terminal" and st["result"]["reason"] == "checkmate" and st["result"]["score"] == 1.0
    assert "sente wins" in st["result"]["text"]


def test_state_marks_the_king_in_check_in_every_variant_with_check():
    """``check``: the square of the king in check, for the page's check mark (shogi, dai shogi, turncoat with its
    plans, fantasista); ``None`` otherwise and in the games without check. The variant's kanji come with the state
    (the promotion prompt draws the promoted piece)."""
    s = Session("shogi", players=["human", "human"], start_sfen="4k4/9/4P4/9/9/9/9/9/4K4 b G2r 1")
    assert s.state()["check"] is None
    s.play("G*4b")
    assert s.state()["check"] == "5a"
    s.play("5a4b")
    assert s.state()["check"] is None
    assert s.state()["variant"]["kanji"]["+R"] == "龍"
    s = Session("daishogi2017", players=["human", "human"], start_sfen="6k6/13/13/13/13/13/6R6/13/13/13/13/13/K12 w - 1")
    assert s.state()["check"] == "7a"
    s = Session("turncoat", players=["human", "human"], seed=1)
    for tok in ("plan:8b", "plan:2h", "7g7f", "3c3d"):
        s.play(tok)
    assert s.state()["check"] is None
    s.play("8h3c+")  # the horse on 3c looks at 5a through 4b
    assert s.state()["check"] == "5a"
    s = Session("fantasista", players=["human", "human"], start_sfen="4k4/9/9/9/9/9/9/4r4/4K4 b - 1 f=ga")
    assert s.state()["check"] == "5i"
    for variant in ("fantasista", "mawarikudoi", "enokian"):
        assert Session(variant, players=["human", "human"]).state()["check"] is None


def test_records_round_trip_json_kif_csa(server):
    _, api = server
    api.new({"variant": "shogi", "players": ["human", "human"]})
    for mv in ("7g7f", "3c3d", "8h2b+", "3a2b", "B*5e"):
        api.ok("/api/move", {"move": mv})
    moves = [h["token"] for h in api.ok("/api/state")["history"]]
    for fmt in ("json", "kif", "csa"):
        rec = api.ok(f"/api/record?format={fmt}")
        assert rec["name"].endswith("." + fmt)
        api.new({"variant": "daishogi2017", "players": ["human", "human"]})
        st = api.load({"text": rec["text"], "players": ["human", "human"]})
        assert st["variant"]["id"] == "shogi"
        assert [h["token"] for h in st["history"]] == moves, fmt
    assert "５五角打" in api.ok("/api/record?format=kif")["text"]
    status, data = api.call("/api/record?format=pdf")
    assert status == 400 and "unknown record format" in data["error"]
    api.new({"variant": "daishogi2017", "players": ["human", "human"]})
    status, data = api.call("/api/record?format=kif")
    assert status == 400 and "standard shogi only" in data["error"]


def test_daishogi_lion_double_move_and_json_record(server):
    _, api = server
    sfen = "6k6/13/13/13/13/7p5/6Z6/13/13/13/13/13/6K6 b - 1"  # a gote pawn on 6f
    st = api.new({"variant": "daishogi2017", "players": ["human", "human"], "sfen": sfen})
    tokens = {a["token"]: a["path"] for a in st["legal"]}
    assert tokens["7g6f,6f5e"] == ["sq:7g", "sq:6f", "sq:5e"]
    assert tokens["7g6f"] == ["sq:7g", "sq:6f"]
    assert tokens["7g6f,6f7g"] == ["sq:7g", "sq:6f", "sq:7g"]  # igui
    st = api.ok("/api/move", {"move": "7g6f,6f5e"})
    assert st["last_move"] == ["7g", "6f", "5e"]
    assert st["history"][0]["ja"] == "５五獅子(77) ６六経由"
    rec = api.ok("/api/record?format=json")
    api.new({"variant": "shogi"})
    st = api.load({"text": rec["text"]})
    assert st["variant"]["id"] == "daishogi2017" and st["history"][0]["token"] == "7g6f,6f5e"
    assert st["board"]["files"] == 13 and st["board"]["squares"]["5e"]["letter"] == "Z"


def test_fantasista_rolls_after_ply_15(server):
    _, api = server
    st = api.new({"variant": "fantasista", "players": ["human", "human"], "seed": 5,
                  "options": {"fairy_sente": "hiko", "fairy_gote": "ginsara"}})
    rng = random.Random(1)
    while len([h for h in st["history"] if not h["event"]]) < 16 and st["node"] != "terminal":
        st = api.ok("/api/move", {"move": rng.choice(st["legal"])["token"]})
    events = [h for h in st["history"] if h["event"]]
    assert [e["token"].split("=")[0] for e in events] == ["roll", "roll"], st["history"]
    assert events[0]["side"] == 0 and events[1]["side"] == 1
    assert st["events"]["roll"]["token"] == events[1]["token"]
    assert st["panel"]["fairies"] == ["hiko", "ginsara"] and "last_roll" in st["panel"]
    # undo goes back over the roll to the last person's move; redo replays the same roll
    st2 = api.ok("/api/undo", {})
    assert len(st2["history"]) == len(st["history"]) - 2
    st3 = api.ok("/api/redo", {})
    assert st3["history"] == st["history"]


def test_turncoat_engine_plan_never_reaches_the_page(server, tmp_path):
    srv, api = server
    st = api.new({"variant": "turncoat", "players": ["human", RANDOM], "seed": 1})
    assert len(st["legal"]) == 332 and all(a["path"] == [a["token"]] for a in st["legal"])
    api.ok("/api/move", {"move": "plan:8b"})
    st = wait_for(api, lambda s: s["human_turn"])
    secret = api.session(srv).plies[1].token
    assert secret.startswith("plan:") and api.session(srv).plies[1].side == 1
    for text in (json.dumps(st), api.ok("/api/record?format=json")["text"]):
        assert secret not in text and secret[5:] not in text.replace(st["history"][0]["token"], "")
    assert st["history"][1]["token"] == "plan:?" and st["panel"]["plans"] == ["8b", "?"]
    assert st["history"][0]["token"] == "plan:8b"
    st = api.ok("/api/move", {"move": "7g7f"})
    st = wait_for(api, lambda s: s["human_turn"])
    assert len([h for h in st["history"] if not h["event"]]) == 4
    assert st["info"].get("depth") == 2
    api.ok("/api/resign", {})
    st = api.ok("/api/state")
    assert st["result"]["score"] == 0.0 and secret in json.dumps(st)  # revealed once the game is over


def test_turncoat_defection_from_move_31():
    s = Session("turncoat", players=["human", "human"], seed=2)
    rng = random.Random(4)
    while len(s.plies) < 32:
        st = s.state()
        choices = [a["token"] for a in st["legal"] if a["token"] != "defect"]
        s.play(rng.choice(choices))
    st = s.state()
    assert {"token": "defect", "path": ["btn:defect"], "kinds": ["button"]} in st["legal"]
    s.play("defect")
    assert s.plies[-1].token == "defect" and s.plies[-1].ja.startswith("寝返り")


# ------------------------------------------------------------------------------------------ turncoat secrets (issue 48)
#: A square name in any text (turncoat squares: files 1-9, ranks a-i).
SQUARE_NAME = re.compile(r"(?<![0-9])[1-9][a-i]")
#: A turncoat SFEN inside any text: board, side, hands, move number, then identities;sente plan;gote plan;reversed.
TURNCOAT_SFEN = re.compile(r"\S+ [bw] \S+ \d+ ((?:\d[a-i])+);([^;\s()\"]+);([^;\s()\"]+);([^;\s()\"]+)")
#: Texts the same whatever the plans are (the rules' example of a move).
FIXED_TEXTS = ("(expected e.g. 7g7f, 8h2b+ or P*5e)",)
PLOT_S, PLOT_G = "plan:2b", "plan:8h"  # blocked bishops: no public move names them in the games below
PLOTTERS = {"plot_s": (PLOT_S, ["2g2f", "2f2e", "5g5f"]), "plot_g": (PLOT_G, ["8c8d", "8d8e", "5c5d"])}


def mentions(data, hidden: set[str]) -> list[str]:
    """Every place in ``data`` (a JSON value, walked whole: keys and values) that names a square of ``hidden``, in
    USI (``8h``) or Japanese (``８八``). The board's square names and a SFEN's board and piece identities name every
    square whatever the plans are: what a SFEN may not show is a plan in its plan or reversed fields."""
    from gui.games import ja_square

    found, stack = [], [("$", data)]
    ja = [ja_square(q) for q in hidden]
    while stack:
        where, item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if not where.endswith(".squares"):
                    stack.append((f"{where}<key>", key))
                stack.append((f"{where}.{key}", value))
        elif isinstance(item, list):
            stack.extend((f"{where}[{i}]", value) for i, value in enumerate(item))
        elif isinstance(item, str):
            for m in TURNCOAT_SFEN.finditer(item):
                if hidden & set(SQUARE_NAME.findall(";".join(m.group(2, 3, 4)))):
                    found.append(f"{where} (a SFEN's plans): {m.group(0)[-60:]!r}")
            rest = TURNCOAT_SFEN.sub(" ", item)
            for text in FIXED_TEXTS:
                rest = rest.replace(text, " ")
            if hidden & set(SQUARE_NAME.findall(rest)) or any(j in rest for j in ja):
                found.append(f"{where}: {item[:160]!r}")
    return found


def hidden_from(viewer, plans: list) -> set[str]:
    """The squares of the plans ``viewer`` (``Session.viewer()``) may not see while the game runs."""
    if viewer == -1:
        return set()
    return {q for side, plan in enumerate(plans) if plan and viewer != side for q in plan[5:].split(",")}


class SecretWatch:
    """Everything the page receives in a turncoat game (each state, the record, KIF/CSA answers, errors), checked
    as it comes: no square of a plan the viewer may not see, no engine thought about such a plan."""

    def __init__(self, api: Api, plans: list, engine_sides: tuple = (), preset: bool = False) -> None:
        """``preset``: the plans are given by a set-up start SFEN, not chosen in the game."""
        self.api, self.plans, self.engine_sides, self.states = api, plans, engine_sides, []
        self.preset = preset

    def check(self, sent, viewer, what: str) -> None:
        leaks = mentions(sent, hidden_from(viewer, self.plans))
        assert not leaks, (what, viewer, leaks)

    def state(self, st: dict) -> dict:
        viewer = st["viewer"]
        self.check(st, viewer, "state")
        planned = sum(1 for h in st["history"] if h["token"].startswith("plan")) + (2 if self.preset else 0)
        if st["thinking"] and planned < 2 and viewer != -1:  # an engine choosing its plan: nothing of its thinking
            assert st["info"] == {"side": st["side"]}, st["info"]
        for h in st["history"]:
            if h["token"] == "plan:?":  # a hidden plan: neither it nor what its engine thought of it
                assert (h["ja"], h["score"], h["winprob"], h["depth"], h["pv"]) == ("伏兵 ？", None, None, None, []), h
        if st["result"] is None:
            rec = json.loads(self.api.ok("/api/record?format=json")["text"])
            if rec["result"] is None:  # (the game may have ended in between: then everything may be shown)
                self.check(rec, viewer, "record")
                hidden = [i for i, t in enumerate(rec["moves"]) if t == "plan=?"]
                assert all(rec[k][i] is None for k in ("times", "scores", "depths") for i in hidden), rec
            for fmt in ("kif", "csa"):
                status, data = self.api.call(f"/api/record?format={fmt}")
                assert status == 400
                self.check(data, viewer, fmt)
        self.states.append(st)
        return st

    def until(self, pred, timeout: float = 60.0) -> dict:
        """Poll as the page does (long polling) until ``pred(state)``, checking every state received."""
        deadline = time.time() + timeout
        st = self.state(self.api.ok("/api/state"))
        while not pred(st):
            assert time.time() < deadline, f"timed out; last state: node={st['node']} error={st['error']!r}"
            st = self.state(self.api.ok(f"/api/state?since={st['version']}&wait=2"))
        return st

    def move(self, token: str) -> dict:
        """A person's move, then the answers to bad moves in the new position (checked like everything else)."""
        st = self.state(self.api.ok("/api/move", {"move": token}))
        if st["human_turn"] and not st["history"][-1]["token"].startswith("plan"):
            for bad in ("5e5d", "defect", "2g2f2e", "plan:9a"):  # illegal (the rules quote the position), too early
                status, data = self.api.call("/api/move", {"move": bad})
                assert status == 400, (bad, data)
                self.check(data, st["viewer"], f"the error of {bad}")
        return st

    def revealed(self, st: dict) -> None:
        """After the game: everything may be shown, and the plans are."""
        assert st["viewer"] == -1 and st["result"] is not None
        assert st["panel"]["plans"] == [p[5:] for p in self.plans]
        if self.preset:  # the start shows both plans now, in the state and in the record
            rec = json.loads(self.api.ok("/api/record?format=json")["text"])
            for start in (st["start_sfen"], rec["start_sfen"]):
                assert start.split()[4].split(";")[1:3] == [p[5:] for p in self.plans], start
            return
        tokens = [h["token"] for h in st["history"]]
        assert tokens[:2] == self.plans
        for side in self.engine_sides:  # what the engine thought of its plan is shown now
            assert st["history"][side]["depth"] == len(self.plans[side])


@pytest.fixture()
def plot_server(tmp_path_factory):
    from .gui_helpers import plotter_engines

    srv, _ = serve_in_thread(0, engines=plotter_engines(tmp_path_factory.mktemp("engine"), PLOTTERS))
    yield srv, Api(srv.server_address[1])
    srv.shutdown_all()


def test_turncoat_plans_stay_hidden_from_a_person_playing_the_engine(plot_server):
    """A person (sente, then gote) against an engine that names its plan in every field of its thinking: no state,
    record or error the page receives names a square of the engine's plan (the last-move highlight of its plan
    included) or shows what it thought of it, until the game ends; then everything is shown."""
    _, api = plot_server
    for person, plans, moves in ((0, ["plan:8b", PLOT_G], ["2g2f", "2f2e", "5g5f"]),
                                 (1, [PLOT_S, "plan:8h"], ["8c8d", "8d8e", "5c5d"])):
        engine = {"kind": "engine", "engine": "plot_g" if person == 0 else "plot_s"}
        watch = SecretWatch(api, plans, engine_sides=(1 - person,))
        watch.state(api.new({"variant": "turncoat", "players": ["human", engine] if person == 0 else
                             [engine, "human"], "seed": 1}))
        watch.until(lambda s: s["human_turn"])
        watch.move(plans[person])
        st = watch.until(lambda s: s["human_turn"])
        assert st["viewer"] == person and st["last_move"] == (["2g", "2f"] if person == 1 else [])
        for token in moves:
            watch.move(token)
            st = watch.until(lambda s: s["human_turn"] or s["result"])
        if person == 0:
            assert st["history"][-1]["pv"] == ["5c5d", "?", "?"]  # the plan, the declaration and what follows hidden
            assert st["info"]["pv"] == ["5c5d", "?", "?"]
            api.ok("/api/resign", {})
        st = watch.until(lambda s: s["result"])  # (the engine as sente resigns when its moves run out)
        watch.revealed(st)
        assert any(s["thinking"] and len(s["history"]) == (1 if person == 0 else 0) for s in watch.states), \
            "no state was seen while the engine chose its plan"


def test_turncoat_plans_stay_hidden_between_engines_and_between_people(plot_server):
    """Engines playing each other: the page sees neither plan. Two people at one screen: each sees only its own
    (the side to move's), and a plan is never the square a next move's Japanese refers to as 同."""
    _, api = plot_server
    watch = SecretWatch(api, [PLOT_S, PLOT_G], engine_sides=(0, 1))
    watch.state(api.new({"variant": "turncoat", "players": [{"kind": "engine", "engine": "plot_s"},
                                                            {"kind": "engine", "engine": "plot_g"}], "seed": 1}))
    st = watch.until(lambda s: s["result"])
    assert {s["viewer"] for s in watch.states[:-1]} == {None}
    watch.revealed(st)

    watch = SecretWatch(api, [PLOT_S, PLOT_G])
    watch.state(api.new({"variant": "turncoat", "players": ["human", "human"], "seed": 1}))
    for token in (PLOT_S, PLOT_G, "2g2f", "8c8d", "2f2e", "8d8e", "5g5f"):
        st = watch.move(token)
    assert [s["viewer"] for s in watch.states] == [0, 1, 0, 1, 0, 1, 0, 1]  # the side to move's eyes
    assert st["last_move"] == ["5g", "5f"]
    api.ok("/api/resign", {})
    st = watch.state(api.ok("/api/state"))
    watch.revealed(st)
    # both plans are on the page now: taking a move back would let a person play on knowing the other's plan
    assert st["can_undo"] is False
    status, data = api.call("/api/undo", {})
    assert status == 400 and "both plans were shown" in data["error"]
    assert api.ok("/api/state")["result"] is not None

    # a set-up position where gote's plan names a square sente's rook can move to (its piece stands elsewhere)
    from engine.variants.turncoat import new_game

    g = new_game()
    for token in ("plan:8b", "plan:8h", "2g2f", "8c8d", "2h2g", "8d8e"):
        g.apply(token)
    board, ids = g.sfen().rsplit(" ", 1)
    start = f"{board} {ids.split(';')[0]};-;-;-"
    api.new({"variant": "turncoat", "players": ["human", "human"], "sfen": start})
    api.ok("/api/move", {"move": "plan:8b"})
    assert api.ok("/api/move", {"move": "plan:2h"})["last_move"] == []
    st = api.ok("/api/move", {"move": "2g2h"})  # (the move names 2h itself: public)
    assert st["history"][-1]["ja"] == "２八飛(27)"  # not 同飛: the plan before it is no move


def test_turncoat_plans_stay_hidden_when_a_set_up_start_gives_both_plans(plot_server):
    """Issue 48: a set-up start SFEN with both plans. The page's and the record's ``start_sfen`` were that SFEN
    whole: the viewer's view of it now (the other side's plan ?, between engines neither, everything after the
    game), while undo and a loaded record replay from the true start (the engine is still sent its own plan), and a
    record saved during the game (its start hiding a plan) is refused like one holding plan=?."""
    from engine.variants.turncoat import new_game

    srv, api = plot_server
    head = new_game().sfen().rsplit(";", 3)[0]  # the standard start's four fields and identities
    start = f"{head};{PLOT_S[5:]};{PLOT_G[5:]};-"
    seen_by = {0: f"{head};{PLOT_S[5:]};?;-", 1: f"{head};?;{PLOT_G[5:]};-", None: f"{head};?;?;-"}

    # a person (sente) against the engine whose plan the start gives
    watch = SecretWatch(api, [PLOT_S, PLOT_G], engine_sides=(1,), preset=True)
    st = watch.state(api.new({"variant": "turncoat", "players": ["human", {"kind": "engine", "engine": "plot_g"}],
                              "seed": 1, "sfen": start}))
    assert st["human_turn"] and st["start_sfen"] == seen_by[0] and st["sfen"].endswith(f";{PLOT_S[5:]};?;-")
    for token in ("2g2f", "2f2e"):
        watch.move(token)
        st = watch.until(lambda s: s["human_turn"] or s["result"])
    assert [h["token"] for h in st["history"]] == ["2g2f", "8c8d", "2f2e", "8d8e"] and st["result"] is None
    session = api.session(srv)
    st = watch.state(api.ok("/api/undo", {}))  # replayed from the true start
    assert [h["token"] for h in st["history"]] == ["2g2f", "8c8d"] and st["start_sfen"] == seen_by[0]
    assert session.start_sfen == start and session._position_line(1) == f"position sfen {seen_by[1]} moves 2g2f 8c8d"
    watch.move("2f2e")
    st = watch.until(lambda s: s["human_turn"] or s["result"])
    assert st["history"][-1]["token"] == "8d8e" and st["result"] is None
    rec = json.loads(api.ok("/api/record?format=json")["text"])
    assert rec["start_sfen"] == seen_by[0]
    status, data = api.call("/api/load", {"text": json.dumps(rec), "players": ["human", "human"], "replace": True})
    assert status == 400 and "hides a secret" in data["error"], data
    watch.check(data, 0, "the refused load")
    api.ok("/api/resign", {})
    watch.revealed(watch.state(api.ok("/api/state")))
    full = json.loads(api.ok("/api/record?format=json")["text"])
    full.update(result=None, reason=None)  # a loaded record's result stands: without one, the game goes on

    # the full record loads back: two people, each seeing only its own plan in the start, the game on from the truth
    watch = SecretWatch(api, [PLOT_S, PLOT_G], preset=True)
    st = watch.state(api.load({"text": json.dumps(full), "players": ["human", "human"]}))
    assert [h["token"] for h in st["history"]] == ["2g2f", "8c8d", "2f2e", "8d8e"]
    assert st["viewer"] == 0 and st["start_sfen"] == seen_by[0] and api.session(srv).start_sfen == start
    st = watch.move("5g5f")
    assert st["viewer"] == 1 and st["start_sfen"] == seen_by[1]
    st = watch.move("8e8f")
    assert api.session(srv).game.sfen(None).split()[4].split(";")[1:3] == [PLOT_S[5:], PLOT_G[5:]]
    api.ok("/api/resign", {})
    watch.revealed(watch.state(api.ok("/api/state")))

    # engines playing each other: the start shows neither plan
    watch = SecretWatch(api, [PLOT_S, PLOT_G], engine_sides=(0, 1), preset=True)
    st = watch.state(api.new({"variant": "turncoat", "seed": 1, "sfen": start, "players": [
        {"kind": "engine", "engine": "plot_s"}, {"kind": "engine", "engine": "plot_g"}]}))
    assert st["viewer"] is None and st["start_sfen"] == seen_by[None]
    st = watch.until(lambda s: s["result"])
    assert [h["token"] for h in st["history"]] == ["2g2f", "8c8d", "2f2e", "8d8e", "5g5f", "5c5d"]
    watch.revealed(st)


def test_turncoat_rules_errors_quote_no_plan():
    """The rules quote the true position in an illegal move's error: the page gets it with undeclared plans as ?."""
    s = Session("turncoat", players=["human", "human"], seed=1)
    s.play("plan:2b"), s.play("plan:8h")
    with pytest.raises(RequestError) as err:
        s.play("5e5d")
    assert "illegal move 5e5d" in str(err.value) and ";?;?;-)" in str(err.value)
    assert s.state()["sfen"].endswith(";2b;?;-") and s.record(None)["final_sfen"].endswith(";?;?;-")


def test_enokian_cards_and_engine(server, tmp_path):
    _, api = server
    st = api.new({"variant": "enokian", "players": ["human", "human"], "seed": 9,
                  "options": {"michizane": "9i"}})
    assert st["events"]["card"]["token"].startswith("card=") and st["human_turn"]
    deck = st["panel"]["deck"]
    st = api.ok("/api/move", {"move": st["legal"][0]["token"]})
    assert st["panel"]["deck"] < deck and 0 <= st["panel"]["kings_left"] <= 4
    api.new({"variant": "enokian", "players": [RANDOM, "human"], "seed": 9})
    st = wait_for(api, lambda s: len([h for h in s["history"] if not h["event"]]) >= 2 or s["result"])
    assert any(h["winprob"] is not None for h in st["history"]) or st["result"]


def test_engine_vs_engine_shogi_with_our_engine(server):
    _, api = server
    ours = {"kind": "engine", "depth": 1}
    api.new({"variant": "shogi", "players": [ours, "human"], "seed": 1})
    st = wait_for(api, lambda s: s["human_turn"] or s["result"], timeout=600)
    assert st["result"] is None, st["error"]
    assert len(st["history"]) == 1 and st["history"][0]["depth"] == 1 and st["history"][0]["score"] is not None
    assert st["info"]["depth"] == 1


@pytest.mark.parametrize("variant", ["fantasista", "turncoat", "mawarikudoi", "enokian", "daishogi2017"])
def test_a_person_against_our_engine_in_every_variant(server, variant):
    """Our engine (``python -m usi``, depth 1) answers a person's move in each variant, through its USI adapter."""
    srv, api = server
    ours = {"kind": "engine", "depth": 1}
    players = [ours, "human"] if variant == "enokian" else ["human", ours]
    st = api.new({"variant": variant, "players": players, "seed": 3})
    if variant != "enokian":
        assert st["human_turn"]
        if st["turn_build"]:  # mawarikudoi: the turn built action by action, then played whole
            acts = []
            while True:
                step = api.ok("/api/turnstep", {"actions": acts})
                if "token" in step:
                    break
                acts.append(step["next"][0]["action"])
            token = step["token"]
        else:
            token = st["legal"][0]["token"]
        st = api.ok("/api/move", {"move": token})
    st = wait_for(api, lambda s: s["human_turn"] or s["result"], timeout=300)
    if variant == "turncoat":  # the engine's first answer is its secret plan, shown with nothing of its thinking
        assert st["history"][-1]["token"] == "plan:?" and st["history"][-1]["depth"] is None
        api.ok("/api/move", {"move": st["legal"][0]["token"]})
        st = wait_for(api, lambda s: s["human_turn"] or s["result"], timeout=300)
    assert not st["error"], st["error"]
    engine_side = 0 if variant == "enokian" else 1
    answers = [h for h in st["history"] if not h["event"] and h["side"] == engine_side and not h["human"]]
    assert answers, f"no engine move in {[h['token'] for h in st['history']]}"
    assert answers[-1]["depth"] is not None or answers[-1]["score"] is not None or answers[-1]["winprob"] is not None


def test_mawarikudoi_turnstep_api_checks_each_action(server):
    _, api = server
    api.new({"variant": "mawarikudoi", "players": ["human", "human"], "seed": 2,
             "sfen": "p8/9/9/9/9/9/9/9/8P b - 1 P1i:n:-:m/p9a:s:-:m/g"})
    st = api.ok("/api/state")
    n = st["turn_build"]["steps"]
    step = api.ok("/api/turnstep", {"actions": []})
    assert {x["action"] for x in step["next"]} == {"1i1h", "turn:e", "turn:s", "turn:w"} and step["left"] == n
    for bad in (["1i1g"], ["turn:n"], "1i1h", [1]):
        status, data = api.call("/api/turnstep", {"actions": bad})
        assert status == 400 and data["error"]
    unchanged(api, st)
    if n > 1:
        step = api.ok("/api/turnstep", {"actions": ["1i1h"]})
        assert step["board"]["squares"]["1h"]["letter"] == "P" and step["left"] == n - 1
    api.new({"variant": "shogi", "players": ["human", "human"]})
    status, data = api.call("/api/turnstep", {"actions": []})
    assert status == 400 and "mawarikudoi" in data["error"]


# ------------------------------------------------------------------------------------------ whole turns, waves, carriers
MAWARI_T3 = "p8/9/9/9/9/9/9/9/8P b - 1 P1i:n:-:m/p9a:s:-:m/t3"  # sente's pawn on 1i, a throw of 3 actions


def _turn_outcomes(session: Session, acts: list, out: set) -> set:
    """Every (runner, square, facing, corners) a turn can end in after ``acts``, walked action by action through
    the step API (the rules' step function, stomps included)."""
    step = session.turn_step(acts)
    if "token" in step or step["won"]:
        me = step["panel"]["sides"][0]
        out.add((me["runner"], me["square"], me["facing"], tuple(me["touched"])))
        return out
    for n in step["next"]:
        _turn_outcomes(session, acts + [n["action"]], out)
    return out


def _listed(ends: list) -> set:
    return {(e["runner"], e["square"], e["facing"], tuple(e["touched"])) for e in ends}


def test_mawarikudoi_turn_chosen_by_its_end(server):
    srv, api = server
    st = api.new({"variant": "mawarikudoi", "players": ["human", "human"], "sfen": MAWARI_T3})
    assert st["turn_build"] == {"steps": 3}
    assert "ends" not in api.ok("/api/turnstep", {"actions": []})  # only when asked for
    step = api.ok("/api/turnstep", {"actions": [], "ends": True})
    ends = step["ends"]
    # the ends are exactly the outcomes of all action sequences (walked with the step API), each listed once
    assert _listed(ends) == _turn_outcomes(api.session(srv), [], set()) and len(ends) == len(_listed(ends))
    assert all(e["step"] == "sq:" + e["square"] and e["label"].startswith(e["kanji"]) for e in ends)
    # from the middle of the turn: the ends of the rest, and the whole token starts with the actions made
    rest = api.ok("/api/turnstep", {"actions": ["1i1h"], "ends": True})["ends"]
    assert _listed(rest) == _turn_outcomes(api.session(srv), ["1i1h"], set()) and _listed(rest) < _listed(ends)
    shared = [e for e in ends if e["square"] == "1h"]
    assert len(shared) >= 2, "several ends on one square (other facings)"
    before = api.ok("/api/state")
    for bad, words in (({"end": 10 ** 6}, "no turn of 3"), ({"end": "1h"}, "end-state number"),
                       ({"end": True}, "end-state number"), ({}, "missing 'end'"),
                       ({"end": ends[0]["end"], "actions": ["1i1g"]}, "not possible"),
                       ({"end": ends[0]["end"], "actions": "1i1h"}, "list of strings"),
                       ({"end": [e for e in ends if e["square"] == "1i"][0]["end"], "actions": ["1i1h", "1h1g"]},
                        "no turn of 3")):
        status, data = api.call("/api/turnend", bad)
        assert status == 400 and words in data["error"], data
        unchanged(api, before)
    target = next(e for e in shared if e["facing"] == "w")
    st = api.ok("/api/turnend", {"end": target["end"]})
    token = st["history"][0]["token"]
    assert len(token.split(",")) == 3 and st["history"][0]["human"]
    assert st["board"]["squares"]["1h"]["letter"] == "P" and st["board"]["squares"]["1h"]["facing"] == "w"
    # a turn finished from its middle: the actions made, then the canonical path to the chosen end
    api.new({"variant": "mawarikudoi", "players": ["human", "human"], "sfen": MAWARI_T3})
    far = next(e for e in rest if e["square"] == "1f")
    st = api.ok("/api/turnend", {"end": far["end"], "actions": ["1i1h"]})
    assert st["history"][0]["token"] == "1i1h,1h1g,1g1f"
    api.new({"variant": "shogi", "players": ["human", "human"]})
    status, data = api.call("/api/turnend", {"end": far["end"]})
    assert status == 400 and "mawarikudoi" in data["error"]


def test_mawarikudoi_ends_after_a_stomp_allow_no_second_stomp(server):
    """The pawn stomps the higher enemy knight on 1h (relay to the lance); from there the listed ends are those of
    the step function, which allows one stomp a turn: no relay to the knight by stomping it again."""
    srv, api = server
    api.new({"variant": "mawarikudoi", "players": ["human", "human"],
             "sfen": "9/9/9/9/9/9/9/8n/8P b - 1 P1i:n:-:m/n1h:s:-:m/t3"})
    step = api.ok("/api/turnstep", {"actions": ["1i1h"], "ends": True})
    assert step["panel"]["sides"][0]["kanji"] == "香"
    assert _listed(step["ends"]) == _turn_outcomes(api.session(srv), ["1i1h"], set())
    assert {e["kanji"] for e in step["ends"]} == {"香"}
    whole = api.ok("/api/turnstep", {"actions": [], "ends": True})["ends"]
    assert _listed(whole) == _turn_outcomes(api.session(srv), [], set()) and {e["kanji"] for e in whole} == {"歩", "香"}


def test_mawarikudoi_big_throw_ends_listed_without_paths():
    """A mixed throw of 50 actions: thousands of ends, listed without tracing a path for each."""
    s = Session("mawarikudoi", players=["human", "human"], start_sfen="p8/9/9/9/9/9/9/9/8P b - 1 P1i:n:-:m/p9a:s:-:m/t50")
    ends = s.turn_step([], ends=True)["ends"]
    assert len(ends) > 1000 and len({e["end"] for e in ends}) == len(ends)
    assert any(e["relays"] > 0 for e in ends) and any(e["touched"] for e in ends)
    far = max(ends, key=lambda e: (e["relays"], e["end"]))
    s.turn_end(far["end"])
    me = s.state()["panel"]["sides"][0]
    assert (me["runner"], me["square"], me["facing"]) == (far["runner"], far["square"], far["facing"])


WAVE_SFEN = "4k4/4p4/9/9/9/9/2SSSS3/4S4/K8 b - 1 f=ga;r=W"  # five silvers; 5h5g needs 5g to move first


def test_fantasista_wave_of_five_silvers_in_any_order(server):
    srv, api = server
    st = api.new({"variant": "fantasista", "players": ["human", "human"], "sfen": WAVE_SFEN,
                  "options": {"fairy_sente": "ginsara"}})
    assert st["wave_build"] and not any(a["token"].startswith("wave:") for a in st["legal"])
    start = api.ok("/api/wavestep", {"moves": []})
    # no silver chosen is no wave: an empty wave is a pass in disguise (docs/fantasista.md, 2026-12-02)
    assert "token" not in start and {n["from"] for n in start["next"]} == {"7g", "6g", "5g", "4g", "5h"}
    # the chain first: 5h to 5g before the silver on 5g has moved, then the others backwards
    order = ["5h5g", "4g4f", "7g7f", "6g6f", "5g5f"]
    for k in range(1, len(order) + 1):
        step = api.ok("/api/wavestep", {"moves": order[:k]})
        assert step["moves"] == order[:k]
    canonical = api.session(srv).game.state.canonical("wave:" + ",".join(sorted(order, key=lambda m: m != "5g5f")))
    assert step["token"] == canonical and step["next"] == []
    for other in (["5g5f", "5h5g", "6g6f", "7g7f", "4g4f"], ["7g7f", "6g6f", "5g5f", "4g4f", "5h5g"]):
        assert api.ok("/api/wavestep", {"moves": other})["token"] == canonical
    before = api.ok("/api/state")
    for bad, words in ((["5g5f", "5g5f"], "already moves"), (["5g5f", "5g4f"], "already moves"),
                       (["5g5f", "6g5f"], "not possible"), (["5g"], "not a silver move"), (["1a1b"], "not possible"),
                       (["9i9h"], "not possible"), ("5g5f", "list of strings"), ([5], "list of strings")):
        status, data = api.call("/api/wavestep", {"moves": bad})
        assert status == 400 and words in data["error"], (bad, data)
        unchanged(api, before)
    st = api.ok("/api/move", {"move": step["token"]})
    assert st["history"][-1]["token"] == canonical
    assert all(st["board"]["squares"][q]["letter"] == "S" for q in ("7f", "6f", "5f", "4f", "5g"))
    status, data = api.call("/api/wavestep", {"moves": []})  # gote to move, without a wave right
    assert status == 400 and "no silver wave" in data["error"]
    # two silvers trading destinations (5g4f with 4g5f) make the outcome of 5g5f with 4g4f: offered and accepted
    api.new({"variant": "fantasista", "players": ["human", "human"], "options": {"fairy_sente": "ginsara"},
             "sfen": "4k4/4p4/9/9/9/9/3SSS3/4K4/7B1 b - 1 f=ga;r=W"})
    assert "4g5f" in {n["move"] for n in api.ok("/api/wavestep", {"moves": ["5g4f"]})["next"]}
    traded = api.ok("/api/wavestep", {"moves": ["4g5f", "5g4f"]})
    assert traded["token"] == "wave:4g4f,5g5f" and {n["from"] for n in traded["next"]} == {"6g"}
    # promotion: both spellings of a silver entering the zone are offered, and kept apart
    api.new({"variant": "fantasista", "players": ["human", "human"], "options": {"fairy_sente": "ginsara"},
             "sfen": "4k4/9/9/3SS4/9/9/9/9/4K4 b - 1 f=ga;r=W"})
    nxt = api.ok("/api/wavestep", {"moves": []})["next"]
    assert {(n["move"], n["to"], n["promote"]) for n in nxt if n["from"] == "5d" and n["to"] == "5c"} == {
        ("5d5c", "5c", False), ("5d5c+", "5c", True)}
    assert api.ok("/api/wavestep", {"moves": ["6d6c+", "5d5c"]})["token"] == "wave:5d5c,6d6c+"
    status, data = api.call("/api/wavestep", {"moves": ["5d5c", "5d5c+"]})
    assert status == 400 and "already moves" in data["error"]
    api.new({"variant": "shogi", "players": ["human", "human"]})
    status, data = api.call("/api/wavestep", {"moves": []})
    assert status == 400 and "fantasista" in data["error"]


CARRIER_SFEN = "4k4/9/9/9/9/9/9/4K2G1/7B1 b - 1 f=ya;m=2i@"  # sente's bishop on 2i is an empty carrier


def test_fantasista_boarding_a_carrier_and_capturing_it_with_its_rider(server):
    _, api = server
    st = api.new({"variant": "fantasista", "players": ["human", "human"], "sfen": CARRIER_SFEN,
                  "options": {"fairy_sente": "yokaku"}})
    board = {a["token"]: a for a in st["legal"]}
    assert board["2h2i"]["path"] == ["sq:2h", "sq:2i"] and board["2h2i"]["kinds"] == ["move", "board"]
    assert all(a["kinds"][-1] != "board" for t, a in board.items() if t != "2h2i")
    st = api.ok("/api/move", {"move": "2h2i"})
    cell = st["board"]["squares"]["2i"]
    assert cell["letter"] == "B" and cell["rider"]["letter"] == "G" and "2h" not in st["board"]["squares"]
    assert st["history"][-1]["ja"].startswith("２九金")
    # the carrier with its rider captured by a gote rook from 2a: both pieces go to gote's hand
    api.new({"variant": "fantasista", "players": ["human", "human"],
             "sfen": "4k2r1/9/9/9/9/9/9/4K4/7B1 w - 2 f=ya;m=2i@G"})
    st = api.ok("/api/state")
    assert st["board"]["squares"]["2i"]["rider"]["letter"] == "G"
    st = api.ok("/api/move", {"move": "2a2i+"})
    assert st["board"]["squares"]["2i"]["letter"] == "+R" and "rider" not in st["board"]["squares"]["2i"]
    gote_hand = {h["letter"]: h["count"] for h in st["board"]["hands"][1]}
    assert gote_hand == {"B": 1, "G": 1}


def test_state_names_the_game_and_the_players_for_the_form(server, tmp_path):
    _, api = server
    a = api.new({"variant": "shogi", "players": ["human", {"kind": "engine", "depth": 2}]})
    record = {"variant": "fantasista", "options": {"fairy_sente": "yokaku", "fairy_gote": "ginsara",
                                                   "reserved": "2"}, "moves": ["7g7f"]}
    b = api.load({"text": json.dumps(record), "players": [{"kind": "engine", "engine": "random",
                                                           "nodes": 50}, "human"]})
    # The record's options come back as sent; the per-side 9-18 options it does not name take their defaults.
    assert b["game"] == a["game"] + 1
    assert b["options"] == {**record["options"], "reserved_sente": "default", "reserved_gote": "default"}
    assert a["players"][1]["builtin"] is True and a["players"][1]["depth"] == 2
    assert b["players"][0]["builtin"] is False and b["players"][0]["engine"] == "random"
    assert b["players"][0]["nodes"] == 50 and "command" not in b["players"][0]
    c = api.ok("/api/undo", {}) if b["can_undo"] else b
    assert c["game"] == b["game"]  # moves and undo keep the game


def test_a_json_record_brings_its_players_but_never_runs_a_program(server, tmp_path):
    srv, api = server
    api.new({"variant": "shogi", "players": ["human", {"kind": "engine", "depth": 2}]})
    api.ok("/api/move", {"move": "7g7f"})
    wait_for(api, lambda s: s["human_turn"])
    record = json.loads(api.ok("/api/record?format=json")["text"])
    api.new({"variant": "daishogi2017", "players": ["human", "human"]})
    st = api.load({"text": json.dumps(record), "default_players": ["human", "human"]})
    assert [p["kind"] for p in st["players"]] == ["human", "engine"] and st["players"][1]["builtin"]
    assert st["players"][1]["depth"] == 2 and not st["error"]
    # a record naming programs: "builtin" runs only our engine whatever the command says; any other engine
    # side is played by the default player, and the page is told
    evil = tmp_path / "never-run"
    record["players"] = [{"kind": "engine", "builtin": True, "command": f"touch {evil}", "nodes": 30},
                         {"kind": "engine", "command": f"touch {evil}", "depth": 1}]
    record["moves"], record["history"] = ["7g7f"], ["7g7f"]  # gote to move: nobody thinks on load
    st = api.load({"text": json.dumps(record), "default_players": ["human", "human"]})
    assert st["players"][0]["builtin"] and st["players"][0]["nodes"] == 30
    assert api.session(srv).players[0].command != ["touch", str(evil)] and st["players"][1]["kind"] == "human"
    assert "not started" in st["error"] and "gote's engine" in st["error"]
    assert not evil.exists()
    before = api.ok("/api/state")
    record["players"] = ["human"]
    status, data = api.call("/api/load", {"text": json.dumps(record)})
    assert status == 400 and "'players' must be a list of two" in data["error"]
    unchanged(api, before)
    # KIF: no players in the file, the default ones play
    st = api.load({"text": "   1 ７六歩(77)\n", "default_players": ["engine", "human"]})
    assert [p["kind"] for p in st["players"]] == ["engine", "human"] and st["human_turn"]


def test_fantasista_wave_where_the_rules_list_no_wave(server):
    """Seven silvers: 37,982 waves, more than the game layer's first buffers hold (listed after they grow); the wave
    is still built silver by silver and played."""
    srv, api = server
    st = api.new({"variant": "fantasista", "players": ["human", "human"], "options": {"fairy_sente": "ginsara"},
                  "sfen": "4k4/4p4/9/9/9/9/SSSSSSS2/4K4/7B1 b - 1 f=ga;r=W"})
    turns = api.session(srv).game.state.turns()[0]
    assert not turns.truncated and sum(t.startswith("wave:") for t in turns) > 30_000
    assert st["wave_build"] and not any(a["token"].startswith("wave:") for a in st["legal"])
    start = api.ok("/api/wavestep", {"moves": []})
    assert "token" not in start and {n["from"] for n in start["next"]} == {f"{f}g" for f in range(3, 10)}
    step = api.ok("/api/wavestep", {"moves": ["3g3f", "9g9f", "6g5f"]})
    assert step["token"] == api.session(srv).game.state.canonical("wave:3g3f,6g5f,9g9f")
    assert "5g5f" not in {n["move"] for n in step["next"]} and "8g8f" in {n["move"] for n in step["next"]}
    before = api.ok("/api/state")
    status, data = api.call("/api/wavestep", {"moves": ["9g9f", "8g9f"]})
    assert status == 400 and "not possible" in data["error"]
    unchanged(api, before)
    st = api.ok("/api/move", {"move": step["token"]})
    assert all(st["board"]["squares"][q]["letter"] == "S" for q in ("3f", "5f", "9f"))


# ------------------------------------------------------------------------------------------ security (issue 22)
def raw_http(port: int, data: bytes, timeout: float = 30.0) -> bytes:
    """Send ``data`` as it is on a new connection; everything the server answers until it closes (or goes quiet)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        chunks = []
        try:
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
        except TimeoutError:
            chunks.append(b"<still open>")
    return b"".join(chunks)


def request(port: int, method: str, path: str, body: bytes = b"", host: str | None = None,
            headers: dict | None = None, close: bool = True) -> bytes:
    head = {"Host": host or f"127.0.0.1:{port}", "Content-Length": str(len(body)), **(headers or {})}
    if close:
        head["Connection"] = "close"
    lines = [f"{method} {path} HTTP/1.1"] + [f"{k}: {v}" for k, v in head.items() if v is not None]
    return raw_http(port, ("\r\n".join(lines) + "\r\n\r\n").encode() + body)


def status_of(answer: bytes) -> tuple[int, dict]:
    head, _, body = answer.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = int(re.search(rb"Content-Length: (\d+)", head).group(1))
    return status, json.loads(body[:length].decode())


def test_error_answers_quote_input_cut_to_the_shown_lengths(server, monkeypatch):
    """A malformed request line, an HTTP version, an unknown path and a field's value are quoted back cut to
    usi.engine's SHOWN_INPUT_CHARS / SHOWN_TOKEN_CHARS (one definition for the engine, the runner and the GUI)."""
    import gui.server as S

    monkeypatch.setattr(S, "SHOWN_INPUT_CHARS", 12)
    monkeypatch.setattr(S, "SHOWN_TOKEN_CHARS", 5)
    srv, api = server
    port = srv.server_address[1]
    errors = [status_of(raw_http(port, data, timeout=10))[1]["error"] for data in (
        b"GARBAGE" + b"x" * 200 + b"\r\n\r\n", b"GET / " + b"V" * 200 + b"\r\n\r\n")]
    assert "'GARBAGExxxxx'" in errors[0] and "x" * 6 not in errors[0], errors[0]
    assert "'VVVVV'" in errors[1] and "V" * 6 not in errors[1], errors[1]
    status, body = status_of(request(port, "GET", "/" + "p" * 200))
    assert status == 404 and f"'/{'p' * 11}'" in body["error"] and "p" * 12 not in body["error"], body
    status, body = api.call("/api/new", {"variant": "shogi", "options": list(range(100)), "replace": True})
    assert status == 400 and body["error"].endswith(json.dumps(list(range(100)))[:12]), body


def _children() -> set[int]:
    """The pids of this process's children (Linux /proc), to see that a request started none."""
    import os
    import pathlib

    out: set[int] = set()
    for task in pathlib.Path(f"/proc/{os.getpid()}/task").iterdir():
        try:
            out |= {int(p) for p in (task / "children").read_text().split()}
        except OSError:
            pass
    return out


def evil_players(marker) -> list:
    """The attack of issue 22: a page asks for an engine whose command would create ``marker``."""
    return [{"kind": "engine", "command": f"{sys.executable} -c \"open({str(marker)!r}, 'w')\""}, "human"]


def test_a_page_of_another_site_starts_no_process(server, tmp_path, capfd):
    """A cross-origin ``text/plain`` POST (what ``fetch(..., {mode: "no-cors"})`` sends), a request through a
    foreign Host name (DNS rebinding) and a JSON POST without the page's token get 403 and start nothing."""
    srv, api = server
    port = srv.server_address[1]
    marker = tmp_path / "ran"
    before = api.ok("/api/state")
    children_before = _children()
    body = json.dumps({"players": evil_players(marker)}).encode()
    attacks = [
        # the no-cors fetch of the issue: text/plain, from another origin, no token
        ({"Content-Type": "text/plain;charset=UTF-8", "Origin": "http://evil.example"}, None),
        # even with the page's token and game, text/plain is refused
        ({"Content-Type": "text/plain", "X-Fantasista-Token": api.token, "X-Fantasista-Game": api.game}, None),
        # JSON but no token, or a wrong one
        ({"Content-Type": "application/json", "X-Fantasista-Game": api.game}, None),
        ({"Content-Type": "application/json", "X-Fantasista-Token": "x" * 43, "X-Fantasista-Game": api.game}, None),
        # everything right but the Host: a DNS-rebinding name, another port, a missing Host
        ({"Content-Type": "application/json", "X-Fantasista-Token": api.token, "X-Fantasista-Game": api.game},
         f"evil.example:{port}"),
        ({"Content-Type": "application/json", "X-Fantasista-Token": api.token, "X-Fantasista-Game": api.game},
         f"127.0.0.1:{port + 1}"),
        ({"Content-Type": "application/json", "X-Fantasista-Token": api.token, "X-Fantasista-Game": api.game,
          "Host": None}, None),
    ]
    for headers, host in attacks:
        for path in ("/api/new", "/api/load", "/api/session", "/api/move"):
            status, data = status_of(request(port, "POST", path, body, host=host, headers=headers))
            assert status == 403, (path, headers, host, data)
            assert data["error"]
    # two Host headers (one of them ours) are refused too: a proxy may forward either
    good = f"127.0.0.1:{port}"
    for hosts in ((good, "evil.example"), ("evil.example", good)):
        head = ["POST /api/new HTTP/1.1", *(f"Host: {h}" for h in hosts), "Content-Type: application/json",
                f"X-Fantasista-Token: {api.token}", f"X-Fantasista-Game: {api.game}", f"Content-Length: {len(body)}",
                "Connection: close"]
        assert status_of(raw_http(port, ("\r\n".join(head) + "\r\n\r\n").encode() + body))[0] == 403, hosts
    status, data = status_of(request(port, "OPTIONS", "/api/new", headers={
        "Origin": "http://evil.example", "Access-Control-Request-Method": "POST"}))
    assert status == 403  # no CORS preflight passes
    # a rebinding page cannot read the page (and its token) either
    answer = request(port, "GET", "/", host=f"evil.example:{port}")
    assert status_of(answer)[0] == 403 and api.token.encode() not in answer
    assert status_of(request(port, "GET", "/api/state", host="evil.example",
                             headers={"X-Fantasista-Game": api.game}))[0] == 403
    # the page itself may not name a command either (400), nor an engine the server does not offer
    status, data = api.call("/api/new", {"players": evil_players(marker)})
    assert status == 400 and "never names an engine command" in data["error"]
    status, data = api.call("/api/new", {"players": [{"kind": "engine", "engine": "sh"}, "human"]})
    assert status == 400 and "unknown engine 'sh'" in data["error"]
    time.sleep(1.0)  # what a started command would need to write its marker
    assert not marker.exists() and _children() <= children_before  # nothing ran, no new process
    assert len(srv.sessions) == 1
    unchanged(api, before)
    assert "Traceback" not in capfd.readouterr().err


def test_the_page_carries_the_token_and_the_engines_by_name(server):
    srv, api = server
    assert api.token == srv.token and len(srv.token) >= 40
    engines = api.ok("/api/engines")
    assert engines == [{"name": "fantasista", "builtin": True}, {"name": "random", "builtin": False}]
    st = api.ok("/api/new", {"players": [{"kind": "engine", "engine": "random", "nodes": 40}, "human"],
                             "replace": True})
    assert st["players"][0] == {"kind": "engine", "name": "random", "engine": "random", "depth": None,
                                "movetime": None, "nodes": 40, "builtin": False}
    other = make_server(0)
    try:
        assert other.token != srv.token  # per server
    finally:
        other.server_close()


def test_malformed_requests_get_their_status_and_no_traceback(server, capfd):
    srv, api = server
    port = srv.server_address[1]
    api.ok("/api/move", {"move": "7g7f"})
    before = api.ok("/api/state")
    good = {"Content-Type": "application/json", "X-Fantasista-Token": api.token, "X-Fantasista-Game": api.game}

    def post(path: str, body: bytes, length: str | None = None) -> tuple[int, dict]:
        headers = dict(good)
        if length is not None:
            headers["Content-Length"] = length
        return status_of(request(port, "POST", path, body, headers=headers))

    for length in ("abc", "-5", "1e3", "0x10", "", "5, 7"):
        status, data = post("/api/move", b'{"move": "3c3d"}', length)
        assert status == 400 and "Content-Length" in data["error"], (length, data)
    deep = b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    status, data = post("/api/new", deep)
    assert status == 400 and "nests deeper" in data["error"]
    status, data = post("/api/new", b'{"a": ' + b"[" * 40 + b"]" * 40 + b"}")
    assert status == 400 and "nests deeper" in data["error"]
    for body, words in [({"options": "x"}, "'options' must be an object"),
                        ({"players": "human"}, "'players' must be a list"),
                        ({"players": ["human", {"kind": "engine", "depth": "deep"}]}, "depth must be an integer"),
                        ({"players": ["human", {"kind": "engine", "nodes": 10**30}]}, "nodes must be an integer"),
                        ({"players": ["human", {"kind": "engine", "depth": True}]}, "depth must be an integer"),
                        ({"players": ["human", {"kind": "engine", "options": {"Debug Log File": "/tmp/x"}}]},
                         "engine options"),
                        ({"variant": 5}, "'variant' must be"), ({"sfen": ["x"]}, "'sfen' must be"),
                        ({"seed": 1.5}, "'seed' must be"), ({"replace": "yes"}, "'replace' must be")]:
        status, data = api.call("/api/new", body)
        assert status == 400 and words in data["error"], (body, data)
    for path, body, words in [("/api/move", {"move": 5}, "'move' must be"),
                              ("/api/move", [1, 2], "JSON object"),
                              ("/api/load", {"text": 7}, "'text' must be"),
                              ("/api/load", {"text": "x", "players": "y"}, "'players' must be"),
                              ("/api/turnstep", {"actions": "1i1h"}, "'actions' must be"),
                              ("/api/turnstep", {"actions": [1]}, "'actions' must be"),
                              ("/api/turnstep", {"actions": [], "ends": "yes"}, "'ends' must be"),
                              ("/api/turnend", {"end": 0, "actions": {}}, "'actions' must be"),
                              ("/api/wavestep", {"moves": [None]}, "'moves' must be")]:
        status, data = api.call(path, body)
        assert status == 400 and words in data["error"], (path, body, data)
    for raw, words in [(b'{"move": NaN}', "not JSON"), (b'{"move": "7g7f"', "not JSON"),
                       (b'\xff\xfe', "not UTF-8"), (b'{"seed": ' + b"9" * 5000 + b"}", "not JSON")]:
        status, data = post("/api/new", raw)
        assert status == 400 and words in data["error"], (raw[:20], data)
    status, data = status_of(request(port, "GET", "/api/state?since=1&wait=nan", headers=good))
    assert status == 400 and "wait" in data["error"]
    status, data = status_of(request(port, "GET", "/api/state", headers={"X-Fantasista-Game": "nope"}))
    assert status == 404 and data["no_game"]
    unchanged(api, before)
    assert "Traceback" not in capfd.readouterr().err


def test_odd_static_paths_get_404_and_name_no_install_path(server, capfd):
    """Any page may GET /static/ (no token): a name too long for the file system, a NUL, a way out, an encoded
    slash, a directory is a 404 that names no path of the installation, in the answer or in the log."""
    from gui.server import STATIC

    srv, _ = server
    port = srv.server_address[1]
    srv.quiet = False  # the request log is written too: it must not hold a traceback or a path either
    odd = ["a" * 255, "a" * 256, "a" * 5000, "", ".", "..", "../session.py", "..%2fsession.py", "%2e%2e/server.py",
           "%00", "app.js%00", "app.js/", "app.js/.", "./app.js", "/etc/passwd", "%2fetc%2fpasswd", "static",
           "app.js\\..\\index.html", "%ff", "index.html/../app.js"]
    for name in odd:
        answer = request(port, "GET", "/static/" + name)
        assert answer.startswith(b"HTTP/1.1 404 "), (name, answer[:80])
        status, data = status_of(answer)
        assert status == 404 and data["error"] and str(STATIC.parent) not in data["error"], (name, data)
    assert request(port, "HEAD", "/static/" + "a" * 300).startswith(b"HTTP/1.1 404 ")
    assert status_of(request(port, "GET", "/" + "x" * 5000))[1]["error"].startswith("no such page")
    assert request(port, "GET", "/static/app.js").startswith(b"HTTP/1.1 200 ")
    err = capfd.readouterr().err
    assert "Traceback" not in err and "internal error" not in err and str(STATIC.parent) not in err
    assert "/static/" + "a" * 256 in err  # (the log was written)


def test_malformed_request_lines_get_a_status_line(server, capfd):
    """A request line the server cannot read is a whole HTTP/1.1 answer (status line, headers, a JSON error): 400,
    or 505 for an HTTP version other than 1.x; never the standard library's HTTP/0.9 bare body, never a
    traceback. Empty lines before a request line are skipped (a bounded number)."""
    srv, _ = server
    port = srv.server_address[1]
    srv.quiet = False
    host = f"Host: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode()
    cases = [(b"GARBAGE\r\n\r\n", 400), (b"GET / HTTP/2.0\r\n\r\n", 505), (b"HTTP/1.x\r\n\r\n", 400),
             (b"GET / HTTP/1.x\r\n\r\n", 400), (b"GET /\r\n\r\n", 400), (b"GET / HTTP/0.9\r\n\r\n", 505),
             (b"GET / HTTP/1.1 extra\r\n" + host, 400), (b"GET  / HTTP/1.1\r\n" + host, 400),
             (b"GET /\x00 HTTP/1.1\r\n" + host, 400), (b"GET /a\xa0b HTTP/1.1\r\n" + host, 400),
             (b"\xff\xfe / HTTP/1.1\r\n\r\n", 400), (b"GET / HTTP/3\r\n\r\n", 400), (b"GET / http/1.1\r\n\r\n", 400),
             (b"POST /api/new HTTP/9.9\r\nContent-Length: 2\r\n\r\n{}", 505), (b"G" * 70_000 + b"\r\n\r\n", 414),
             (b"\r\n" * 20, 400), (b" \r\n\r\n", 400)]
    for data, expected in cases:
        answer = raw_http(port, data, timeout=10)
        assert answer.startswith(b"HTTP/1.1 %d " % expected), (data[:40], answer[:120])
        assert b"<still open>" not in answer  # answered, then closed
        status, body = status_of(answer)
        assert status == expected and body["error"], (data[:40], body)
    # what is well formed is still served: a request after an empty line, HTTP/1.0, a later minor version
    for line in (b"\r\nGET /api/engines HTTP/1.1\r\n", b"GET /api/engines HTTP/1.0\r\n",
                 b"GET /api/engines HTTP/1.2\r\n"):
        assert status_of(raw_http(port, line + host, timeout=10))[0] == 200, line
    assert b"501" in raw_http(port, b"BREW /pot HTTP/1.1\r\n" + host, timeout=10).split(b"\r\n")[0]
    err = capfd.readouterr().err
    assert "Traceback" not in err and "internal error" not in err


def test_a_body_over_the_limit_gets_413_and_the_connection_is_closed(server):
    """The unread body is never taken for further requests: the server answers 413 and closes."""
    srv, api = server
    port = srv.server_address[1]
    smuggled = (f"POST /api/resign HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                f"X-Fantasista-Token: {api.token}\r\nX-Fantasista-Game: {api.game}\r\nContent-Length: 2\r\n\r\n{{}}")
    api.ok("/api/move", {"move": "7g7f"})
    head = (f"POST /api/load HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"X-Fantasista-Token: {api.token}\r\nX-Fantasista-Game: {api.game}\r\n"
            f"Content-Length: {MAX_BODY + 1}\r\n\r\n").encode()
    answer = raw_http(port, head + smuggled.encode() * 20, timeout=10)
    assert answer.count(b"HTTP/1.1 ") == 1 and b"<still open>" not in answer  # one answer, then closed
    status, data = status_of(answer)
    assert status == 413 and "too large" in data["error"]
    assert api.ok("/api/state")["result"] is None  # the smuggled resign was not run
    # a refused (403) request's body is not read either: closed as well
    answer = raw_http(port, (f"POST /api/new HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: text/plain\r\n"
                             f"Content-Length: {len(smuggled)}\r\n\r\n{smuggled}").encode(), timeout=10)
    assert answer.count(b"HTTP/1.1 ") == 1 and status_of(answer)[0] == 403
    assert api.ok("/api/state")["result"] is None


def test_host_option_warns_and_names_the_hosts_it_answers(capsys):
    server = server_from_args(["--host", "0.0.0.0", "--port", "0", "--allow-host", "shogi.lan",
                               "--engine", "yane=/opt/yane/YaneuraOu -x"])
    try:
        err = capsys.readouterr().err
        assert "WARNING" in err and "0.0.0.0" in err
        # the warning names the host names pages may use (0.0.0.0 is none of them) and every engine offered
        assert "one of: 127.0.0.1, localhost, shogi.lan (" in err and all(n in err.split("engines offered (")[1] for n in ("fantasista", "yane"))
        port = server.server_address[1]
        assert {f"localhost:{port}", f"127.0.0.1:{port}", f"shogi.lan:{port}"} <= server.allowed_hosts
        assert server.engines["yane"] == ["/opt/yane/YaneuraOu", "-x"] and "fantasista" in server.engines
    finally:
        server.server_close()
    server = server_from_args(["--port", "0"])
    try:
        assert server.server_address[0] == "127.0.0.1" and capsys.readouterr().err == ""
    finally:
        server.server_close()
    for bad in ("yane", "human=/bin/x", "a b=/bin/x", "x="):
        with pytest.raises(ValueError):
            parse_engine_arg(bad)


# ------------------------------------------------------------------------------------------ one game per tab
def test_each_tab_has_its_own_game_and_replacing_an_unfinished_one_asks(server):
    srv, tab_a = server
    tab_b = Api(srv.server_address[1])
    assert tab_b.game != tab_a.game and len(srv.sessions) == 2
    tab_a.ok("/api/new", {"variant": "shogi", "players": ["human", "human"]})  # nothing played yet: no question
    tab_a.ok("/api/move", {"move": "7g7f"})
    a_before = tab_a.ok("/api/state")
    st = tab_b.ok("/api/new", {"variant": "daishogi2017", "players": ["human", "human"]})
    assert st["variant"]["id"] == "daishogi2017"
    unchanged(tab_a, a_before)  # another tab's new game never replaces this one
    # this tab's unfinished game: the page is asked to confirm (409), and nothing changes until it does
    for path, body in (("/api/new", {"variant": "enokian"}), ("/api/load", {"text": "   1 ２六歩(27)\n"})):
        status, data = tab_a.call(path, body)
        assert status == 409 and data["confirm"] and "not finished" in data["error"]
        unchanged(tab_a, a_before)
    st = tab_a.ok("/api/new", {"variant": "enokian", "replace": True})
    assert st["variant"]["id"] == "enokian" and st["game"] == a_before["game"] + 1
    # a finished game is replaced without asking
    tab_b.ok("/api/move", {"move": tab_b.ok("/api/state")["legal"][0]["token"]})
    tab_b.ok("/api/resign", {})
    assert tab_b.ok("/api/new", {"variant": "shogi"})["variant"]["id"] == "shogi"
    # a reloaded page takes its game back by id; an unknown id gets a new game
    again = tab_a.ok("/api/session", {"id": tab_a.game})
    assert again == {"id": tab_a.game, "resumed": True}
    fresh = tab_a.ok("/api/session", {"id": "from-a-restarted-server"})
    assert not fresh["resumed"] and fresh["id"] not in (tab_a.game, tab_b.game)


def test_too_many_tabs_take_the_place_of_the_idle_longest(server, monkeypatch):
    import gui.server as server_module

    srv, tab_a = server
    monkeypatch.setattr(server_module, "MAX_SESSIONS", 2)
    tab_b = Api(srv.server_address[1])
    status, data = tab_a.call("/api/session", {})
    assert status == 503 and "games are open" in data["error"] and len(srv.sessions) == 2
    srv.sessions[tab_a.game].last_seen -= server_module.SESSION_IDLE + 1
    fresh = tab_b.ok("/api/session", {})
    assert tab_a.game not in srv.sessions and set(srv.sessions) == {tab_b.game, fresh["id"]}
    status, data = tab_a.call("/api/state")
    assert status == 404 and data["no_game"]


def test_mangled_records_are_refused_never_a_crash():
    """A seeded fuzz of /api/load's reader: KIF, CSA and JSON records (from the start and a set-up position) with
    characters deleted, inserted and replaced either load or are refused (400); nothing else escapes."""
    from usi import records as R

    from .test_records import MATSURI, random_record

    recs = [random_record(start=start, plies=20, seed=3) for start in ("startpos", MATSURI)]
    texts = [R.to_kif(r) for r in recs] + [R.to_csa(r) for r in recs] + [json.dumps(r) for r in recs]
    session, rng, outcomes = Session(), random.Random(22), {"loaded": 0, "refused": 0}
    for _ in range(300):
        text = list(rng.choice(texts))
        for _ in range(rng.randint(1, 6)):
            k = rng.randrange(len(text))
            op = rng.random()
            if op < 0.4:
                del text[k:k + rng.randint(1, 5)]
            elif op < 0.7:
                text.insert(k, rng.choice("0123456789０１２三四十歩成打同|v+-PI%,\n{}[]\":"))
            else:
                text[k] = rng.choice("0123456789一二十歩xX|\n ")
        try:
            session.load("".join(text))
            outcomes["loaded"] += 1
        except RequestError:
            outcomes["refused"] += 1
    assert outcomes["loaded"] > 20 and outcomes["refused"] > 100, outcomes


#: A USI engine that never answers isready (a cold start that takes forever); it writes its pid where told.
STALLING_ENGINE = r'''
import os, sys, time
open(sys.argv[1], "w").write(str(os.getpid()))
for line in sys.stdin:
    if line.split()[:1] == ["usi"]:
        print("id name Stalling\nusiok", flush=True)
    elif line.split()[:1] == ["isready"]:
        time.sleep(3600)
'''


def test_replacing_a_game_kills_an_engine_still_starting(tmp_path):
    """The engine of a replaced game is closed even while it is still waiting for readyok (no process leak)."""
    from gui.engines import engine_table

    script, pid_file = tmp_path / "stall.py", tmp_path / "pid"
    script.write_text(STALLING_ENGINE)
    engines = engine_table([parse_engine_arg(f"stall={sys.executable} {script} {pid_file}")], system=False)
    srv, _ = serve_in_thread(0, engines=engines)
    try:
        api = Api(srv.server_address[1])
        api.new({"variant": "shogi", "players": [{"kind": "engine", "engine": "stall", "depth": 1}, "human"]})
        pid = wait_for_pid(pid_file, "the stalling engine")
        time.sleep(0.5)  # it is now inside isready
        assert running(pid)
        api.new({"variant": "shogi", "players": ["human", "human"], "replace": True})
        deadline = time.time() + 10
        while running(pid):
            assert time.time() < deadline, "the replaced game's engine is still running"
            time.sleep(0.1)
    finally:
        srv.shutdown_all()


def test_the_servers_shutdown_leaves_no_engine_behind(tmp_path):
    """Engines run in process groups of their own, so a terminal's Ctrl-C does not reach them: the server's
    shutdown waits until each game's engine, even one ignoring quit and SIGTERM, is killed and reaped."""
    from gui.engines import engine_table

    pid_file = tmp_path / "pids"
    stubborn = shlex.join(stubborn_cmd(pid_file, "--on-quit", "ignore", "--hang"))
    engines = engine_table([parse_engine_arg(f"stub={stubborn}")], system=False)
    srv, _ = serve_in_thread(0, engines=engines)
    try:
        api = Api(srv.server_address[1])
        api.new({"variant": "shogi", "players": [{"kind": "engine", "engine": "stub", "depth": 1}, "human"]})
        pid = wait_for_pid(pid_file, "the engine")
        deadline = time.time() + 30
        while not api.ok("/api/state")["thinking"]:  # it is thinking (and never answers)
            assert time.time() < deadline, "the engine never got a go"
            time.sleep(0.05)
        assert running(pid)
    finally:
        srv.shutdown()
        srv.server_close()
        srv.close_sessions(wait_s=15)  # what main() does after Ctrl-C (with SHUTDOWN_WAIT_S)
    assert not running(pid), "the engine outlived the server"


# ------------------------------------------------------------------------------------------ records and review (issue 51)
BRANCHED_KIF = """# a game with two branches, one inside the other, and comments
手合割：平手
先手：A
後手：B
手数----指手---------消費時間--
*the start
   1 ７六歩(77)   ( 0:01/00:00:01)
   2 ３四歩(33)   ( 0:02/00:00:02)
*a comment on move 2
   3 ２六歩(27)   ( 0:00/00:00:01)
   4 ８四歩(83)   ( 0:00/00:00:02)
   5 投了
まで4手で後手の勝ち

変化：3手
   3 ６六歩(67)
   4 ８四歩(83)
*in the branch
   5 ７八銀(79)

変化：5手
   5 ６八銀(79)

変化：2手
   2 ８四歩(83)
"""


def lines_of(st: dict) -> dict[tuple, list]:
    """Every line of a state as {its tokens from the start: its own tokens}."""
    full = {}
    for ln in st["lines"]:
        parent = full.get(ln["parent"], [])
        full[ln["line"]] = parent[:ln["fork"]] + [m["token"] for m in ln["moves"]]
    return sorted(tuple(v) for v in full.values())


def test_a_branched_kif_loads_with_its_branches_and_saves_back_with_them(server):
    _, api = server
    st = api.load({"text": BRANCHED_KIF, "players": ["human", "human"]})
    assert [h["token"] for h in st["history"]] == ["7g7f", "3c3d", "2g2f", "8c8d"]
    want = [("7g7f", "3c3d", "2g2f", "8c8d"), ("7g7f", "3c3d", "6g6f", "8c8d", "7i6h"),
            ("7g7f", "3c3d", "6g6f", "8c8d", "7i7h"), ("7g7f", "8c8d")]
    assert lines_of(st) == want
    assert st["result"]["reason"] == "resign" and st["result"]["score"] == 0.0  # 投了: sente, to move, resigned
    assert st["node"] == "terminal" and not st["human_turn"]
    assert st["history"][1]["comment"] == "a comment on move 2" and st["start_comment"] == "the start"
    kif = api.ok("/api/record?format=kif")["text"]
    assert kif.count("変化：") == 3 and "*in the branch" in kif and "投了" in kif
    for fmt in ("kif", "ki2", "json"):
        text = kif if fmt == "kif" else api.ok(f"/api/record?format={fmt}")["text"]
        st = api.load({"text": text, "players": ["human", "human"]})
        assert lines_of(st) == want, fmt
        assert st["result"]["reason"] == "resign", fmt
        assert st["history"][1]["comment"] == "a comment on move 2", fmt
    csa = api.ok("/api/record?format=csa")["text"]  # CSA has no branches: the main line, its comments, %TORYO
    assert "%TORYO" in csa and "'*a comment on move 2" in csa
    st = api.load({"text": csa, "players": ["human", "human"]})
    assert lines_of(st) == [want[0]] and st["result"]["reason"] == "resign"


def test_ki2_handicap_kif_csa_and_sfen_load(server):
    _, api = server
    ki2 = ("手合割：平手\n先手：A\n後手：B\n\n▲７六歩　△３四歩　▲２二角成　△同　銀\n▲４五角　△５二金右\n"
           "まで6手で中断\n")
    st = api.load({"text": ki2, "players": ["human", "human"]})
    assert [h["token"] for h in st["history"]] == ["7g7f", "3c3d", "8h2b+", "3a2b", "B*4e", "6a5b"]
    assert st["result"] is None and st["human_turn"]  # 中断: the game goes on
    # a KI2 move the rules cannot tell apart (two golds reach 5h) is refused, never an empty game
    status, data = api.call("/api/load", {"text": "▲５八金\n", "replace": True})
    assert status == 400 and "▲５八金" in data["error"] and "2 moves" in data["error"], data
    handicap_kif = "手合割：角落ち\n下手：A\n上手：B\n手数----指手---------消費時間--\n   1 ３四歩(33)\n   2 ７六歩(77)\n"
    st = api.load({"text": handicap_kif, "players": ["human", "human"], "replace": True})
    assert st["start_sfen"] == "lnsgkgsnl/1r7/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1"
    assert [h["token"] for h in st["history"]] == ["3c3d", "7g7f"]
    assert "手合割：角落ち" in api.ok("/api/record?format=kif")["text"]
    csa = api.ok("/api/record?format=csa")["text"]
    assert "PI22KA" in csa
    st = api.load({"text": csa, "players": ["human", "human"], "replace": True})
    assert st["start_sfen"].split()[:2] == ["lnsgkgsnl/1r7/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL", "w"]
    st = api.load({"text": "V2.2\nPI82HI\n-\n-3334FU\n+7776FU\n'good move\n%TORYO\n", "players": ["human", "human"]})
    assert st["start_sfen"].startswith("lnsgkgsnl/7b1/") and st["history"][-1]["comment"] == "good move"
    assert st["result"]["reason"] == "resign" and st["result"]["score"] == 1.0  # gote, to move, resigned
    st = api.load({"text": "sfen lnsgkgsn1/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL w - 1 moves 3c3d",
                   "players": ["human", "human"]})
    assert st["variant"]["id"] == "shogi" and [h["token"] for h in st["history"]] == ["3c3d"]
    # every handicap name reads to its position, and back
    from gui.kifcsa import HANDICAPS
    for name, sfen in HANDICAPS.items():
        st = api.load({"text": f"手合割：{name}\n   1 ５四歩(53)\n", "players": ["human", "human"], "replace": True})
        assert st["start_sfen"] == sfen, name
        assert f"手合割：{name}" in api.ok("/api/record?format=kif")["text"], name


def test_end_markers_finish_the_loaded_game_and_the_engine_does_not_play_on(server):
    _, api = server
    cases = [("   1 ７六歩(77)\n   2 ３四歩(33)\n   3 投了\n", 0.0, "resign"),
             ("   1 ７六歩(77)\n   2 千日手\n", 0.5, "sennichite"),
             ("   1 ７六歩(77)\n   2 持将棋\n", 0.5, "jishogi"),
             ("   1 ７六歩(77)\n   2 入玉勝ち\n", 0.0, "entering king"),  # gote, to move, declared
             ("   1 ７六歩(77)\n   2 反則勝ち\n", 0.0, "illegal move"),
             ("   1 ７六歩(77)\n   2 切れ負け\n", 1.0, "time forfeit"),
             ("V2.2\nPI\n+\n+7776FU\n%TORYO\n", 1.0, "resign"),
             ("V2.2\nPI\n+\n+7776FU\n-3334FU\n%KACHI\n", 1.0, "entering king"),
             ("V2.2\nPI\n+\n+7776FU\n%SENNICHITE\n", 0.5, "sennichite"),
             ("▲７六歩　△３四歩\nまで2手で後手の勝ち\n", 0.0, "resign")]
    for text, score, reason in cases:
        # gote (or both) is our engine: a finished record must not wake it
        st = api.load({"text": text, "players": [RANDOM, RANDOM], "replace": True})
        assert st["result"] is not None and (st["result"]["score"], st["result"]["reason"]) == (score, reason), text
        assert st["node"] == "terminal" and not st["thinking"], text
    time.sleep(0.3)
    st = api.ok("/api/state")
    assert [h["token"] for h in st["history"]] == ["7g7f", "3c3d"] and not st["thinking"]
    st = api.load({"text": "V2.2\nPI\n+\n+7776FU\n%CHUDAN\n", "players": ["human", "human"], "replace": True})
    assert st["result"] is None and st["human_turn"]  # suspended: the game goes on


def test_malformed_records_give_one_clear_line_and_leave_the_game_unchanged(server):
    _, api = server
    api.new({"variant": "shogi", "players": ["human", "human"]})
    api.ok("/api/move", {"move": "7g7f"})
    before = api.ok("/api/state")
    cases = [("手合割：九枚落ち\n   1 ７六歩(77)\n", "unknown handicap"),
             ("   1 ７六歩(77)\n   3 ３四歩(33)\n", "move 3 where move 2"),
             ("   1 ７六歩(77)\n\n変化：5手\n   5 ３四歩(33)\n", "変化：5手"),
             ("   1 ７六歩(77)\n   2 ３四歩(33)\n\n変化：2手\n   2 ９九歩(11)\n", "branch 1"),
             ("▲７六歩　△３四歩　▲５五龍\n", "▲５五龍"),
             ("▲７六歩　▲３四歩\n", "not the side to move"),
             ("V2.2\nPI82XX\n+\n", "82XX"),
             ("V2.2\nPI\n+\n+7776FU\n%NONSENSE\n", "%NONSENSE"),
             ("V2.2\nPI\n+\n-3334FU\n", "not the side to move"),
             ("position startpos moves 7g7f 7g7f", "token 2"),
             ("position upside down", "position startpos"),
             ("sfen 9/9/9 b - 1", "bad start position"),
             ("lorem ipsum\ndolor sit amet\n", "not a record")]
    for text, words in cases:
        status, data = api.call("/api/load", {"text": text, "replace": True})
        assert status == 400 and words in data["error"], (text, data)
        assert "\n" not in data["error"] and "Traceback" not in data["error"], data
        unchanged(api, before)


def test_a_pasted_position_line_loads(server):
    _, api = server
    st = api.load({"text": "position startpos moves 7g7f 3c3d 8h2b+", "players": ["human", "human"]})
    assert [h["token"] for h in st["history"]] == ["7g7f", "3c3d", "8h2b+"] and st["variant"]["id"] == "shogi"
    st = api.load({"text": "position sfen 4k4/9/4P4/9/9/9/9/9/4K4 b G 1 moves G*5b", "players": ["human", "human"]})
    assert st["result"]["reason"] == "checkmate"
    # a position names no variant: the page's, when that variant reads it (a 13x13 SFEN is dai shogi's)
    sfen = "6k6/13/13/13/13/13/6Z6/13/13/13/13/13/6K6 b - 1"
    st = api.load({"text": sfen, "players": ["human", "human"], "variant": "shogi", "replace": True})
    assert st["variant"]["id"] == "daishogi2017" and st["sfen"] == sfen
    st = api.load({"text": "position startpos", "players": ["human", "human"], "variant": "daishogi2017",
                   "replace": True})
    assert st["variant"]["id"] == "daishogi2017" and st["board"]["files"] == 13


def test_review_any_position_and_branch_from_an_earlier_one(server):
    _, api = server
    api.new({"variant": "shogi", "players": ["human", RANDOM], "seed": 2})
    st = api.ok("/api/move", {"move": "7g7f"})
    st = wait_for(api, lambda s: s["human_turn"])
    st = api.ok("/api/move", {"move": "2g2f"})
    st = wait_for(api, lambda s: s["human_turn"])
    main = [h["token"] for h in st["history"]]
    assert len(main) == 4
    view = api.ok("/api/view?line=0&ply=2")
    assert view["side"] == 0 and view["last_move"] == [main[1][:2], main[1][2:4]] and not view["live"]
    assert {"7g7f", "2g2f"} <= {a["token"] for a in api.ok("/api/view?line=0&ply=0")["legal"]}
    assert api.ok("/api/view?line=0&ply=1")["legal"] == []  # the engine's turn there: no branch
    assert "not a person's turn" in api.ok("/api/view?line=0&ply=1")["refusal"]
    status, data = api.call("/api/move", {"move": "5g5f", "line": 0, "ply": 1})
    assert status == 400 and "not a person's turn" in data["error"]
    status, data = api.call("/api/view?line=0&ply=9")
    assert status == 400 and "'ply'" in data["error"]
    # the main line's own move goes on along it; another move is a branch, the main line kept
    st = api.ok("/api/move", {"move": "2g2f", "line": 0, "ply": 2})
    assert st["at"] == {"line": 0, "ply": 3} and [h["token"] for h in st["history"]] == main
    st = api.ok("/api/move", {"move": "5g5f", "line": 0, "ply": 2})
    assert st["at"] == {"line": 1, "ply": 3} and st["line"] == 1
    st = wait_for(api, lambda s: s["human_turn"])
    assert [h["token"] for h in st["history"]][:3] == main[:2] + ["5g5f"] and len(st["history"]) == 4
    assert [ln["fork"] for ln in st["lines"]] == [0, 2]
    assert [m["token"] for m in st["lines"][0]["moves"]] == main
    rec = json.loads(api.ok("/api/record?format=json")["text"])
    assert rec["history"] == main and rec["variations"][0]["history"][:3] == main[:2] + ["5g5f"]
    kif = api.ok("/api/record?format=kif")["text"]
    assert "変化：3手" in kif and "５六歩(57)" in kif
    # back to the main line: its own move where the branch left it
    st = api.ok("/api/move", {"move": main[2], "line": 0, "ply": 2})
    assert st["at"] == {"line": 0, "ply": 3} and st["line"] == 0 and [h["token"] for h in st["history"]] == main


def test_a_reviewed_position_marks_its_own_king_in_check_and_variants_name_their_pieces_once():
    """``/api/view`` has the shown position's ``check`` (not the live one's), so the review draws the same marks as
    the live board; each variant's ``kanji`` (the drawn pieces, the promotion prompt and the editor's palette),
    ``hand`` and ``editable`` come under one key each."""
    s = Session("shogi", players=["human", "human"], start_sfen="4k4/9/4P4/9/9/9/9/9/4K4 b G2r 1")
    s.play("G*4b")
    s.play("5a4b")
    assert s.state()["check"] is None
    assert s.view(0, 1)["check"] == "5a" and s.view(0, 0)["check"] is None and s.view(0, 2)["check"] is None
    variants = {v["id"]: v for v in (info.to_json() for info in variant_infos().values())}
    assert variants["shogi"]["kanji"]["+R"] == "龍" and "pieces" not in variants["shogi"]
    assert variants["shogi"]["hand"] == "RBGSNLP" and variants["daishogi2017"]["hand"] == ""
    assert all(v["editable"] for v in variants.values())  # every board variant, the race and the solitaire too


# Positions the editor can set up: mawarikudoi's runners (facing, corners, throw right, a turn to play) and
# enokian's board with its headings (one dragon captured, a horse flipped on 5e); the deck kept as read.
EDITED = {
    "mawarikudoi": "9/9/6b2/9/9/9/9/3S5/9 w - 1 S6h:e:9i:m/b3c:w:*:-/t4",
    "enokian": "8k/9/9/3P5/+r3+b4/4K4/9/9/4+b4 b - 1 SxCeHnDS/A23456789TJQK/A2345TJQK/-/JQK/-",
}
#: Impossible positions, each with the words of the server's refusal.
IMPOSSIBLE = [
    ("mawarikudoi", "9/9/9/9/9/9/9/9/7B1 b - 1 B2i:n:-:m/p9a:s:-:m/g", "off the corners' colour"),
    ("mawarikudoi", "9/9/9/9/9/9/9/9/8P b - 1 P1i:n:-:m/p9a:s:-:m/g", "does not match the runners"),
    ("mawarikudoi", "p8/9/9/9/9/9/9/9/8P b - 1 P1i:n:-:m/p9a:s:-:m/c", "mixed throw"),
    ("enokian", "8k/9/9/9/4K4/9/9/9/4+b4 b - 1 SeCeHnDs/A/-/-/-/-", "0 dragons on the board but 2 alive"),
    ("enokian", "8k/+r8/9/9/4K4/9/9/9/9 b - 1 SxCeHxDx/A/-/-/-/-", "dragons live on rank e"),
    ("enokian", "8k/9/9/9/4K4/9/9/9/4K4 b - 1 SxCxHxDx/A/-/-/-/-", "two emperors"),
]


def test_the_editor_sets_up_mawarikudoi_and_enokian_and_impossible_ones_are_refused(server):
    """The position editor's SFEN of the race and the solitaire starts a game whose SFEN is the same; an
    impossible position is refused with one line saying what is wrong, and the game before stays."""
    _, api = server
    for variant, sfen in EDITED.items():
        st = api.new({"variant": variant, "players": ["human", "human"], "sfen": sfen, "replace": True})
        assert st["sfen"] == sfen and st["start_sfen"] == sfen and st["variant"]["id"] == variant
        assert st["error"] in (None, "")
    before = api.ok("/api/state")
    for variant, sfen, words in IMPOSSIBLE:
        status, data = api.call("/api/new", {"variant": variant, "players": ["human", "human"], "sfen": sfen,
                                             "replace": True})
        assert status == 400 and "bad start position" in data["error"] and words in data["error"], data
        assert "\n" not in data["error"] and "Traceback" not in data["error"]
        unchanged(api, before)


def test_review_never_shows_the_other_sides_turncoat_plan(plot_server):
    srv, api = plot_server
    watch = SecretWatch(api, ["plan:8b", PLOT_G], engine_sides=(1,))
    st = watch.state(api.new({"variant": "turncoat", "players": ["human", {"kind": "engine", "engine": "plot_g"}],
                              "seed": 1}))
    watch.move("plan:8b")
    st = watch.until(lambda s: s["human_turn"])
    for token in ("2g2f", "2f2e"):
        watch.move(token)
        st = watch.until(lambda s: s["human_turn"] or s["result"])
    for line in st["lines"]:
        for ply in range(line["length"] + 1):
            watch.check(api.ok(f"/api/view?line={line['line']}&ply={ply}"), 0, f"the view after {ply} plies")
    # a branch from an earlier position of sente (the person) is fine, and is watched like the rest
    st = watch.state(api.ok("/api/move", {"move": "1g1f", "line": 0, "ply": 4}))
    assert st["line"] == 1
    watch.until(lambda s: s["human_turn"] or s["result"])
    watch.check(api.ok("/api/record?format=json"), 0, "the record with a branch")


# ------------------------------------------------------------------------------------------ analysis (issue 51, items 5, 8)
@pytest.fixture()
def analysis_server(tmp_path_factory):
    from .gui_helpers import plotter_engines, with_analyser

    directory = tmp_path_factory.mktemp("engine")
    srv, _ = serve_in_thread(0, engines=with_analyser(directory, plotter_engines(directory, PLOTTERS)))
    yield srv, Api(srv.server_address[1])
    srv.shutdown_all()


def test_analysis_streams_multipv_lines_follows_the_position_and_stops(server):
    """Our engine analyses with go infinite: three MultiPV lines with sente's score, a win probability from it and
    the PV in Japanese, deepening until stopped; a move restarts it on the new position, a reviewed position is
    analysed when asked for, and stop ends the search."""
    srv, api = server
    api.new({"variant": "shogi", "players": ["human", "human"]})
    st = api.ok("/api/analysis", {"on": True, "multipv": 3})
    assert st["analysis"]["on"] and st["analysis"]["follow"] and st["analysis"]["multipv"] == 3
    st = wait_for(api, lambda s: len(s["analysis"]["lines"]) == 3 and s["analysis"]["stats"].get("depth", 0) >= 3)
    lines = st["analysis"]["lines"]
    assert [ln["multipv"] for ln in lines] == [1, 2, 3] and len({ln["pv"][0] for ln in lines}) == 3
    for ln in lines:
        assert len(ln["ja"]) == len(ln["pv"]) and re.match(r"[０-９][一二三四五六七八九]", ln["ja"][0])
        assert ln["winprob"] == pytest.approx(1 / (1 + 10 ** (-ln["score"] / 600)))
    depth = st["analysis"]["stats"]["depth"]
    st = wait_for(api, lambda s: s["analysis"]["stats"].get("depth", 0) > depth)  # no end of its own
    assert st["analysis"]["running"]
    st = api.ok("/api/move", {"move": "7g7f"})
    assert st["analysis"]["lines"] == []  # restarted: nothing of the old position is shown
    st = wait_for(api, lambda s: len(s["analysis"]["lines"]) == 3)
    legal_now = set(api.session(srv).game.actions())
    assert all(ln["pv"][0] in legal_now for ln in st["analysis"]["lines"])  # gote's replies
    st = api.ok("/api/analysis", {"on": True, "line": 0, "ply": 0, "multipv": 1})
    assert not st["analysis"]["follow"] and (st["analysis"]["line"], st["analysis"]["ply"]) == (0, 0)
    st = wait_for(api, lambda s: len(s["analysis"]["lines"]) == 1 and s["analysis"]["lines"][0].get("pv"))
    assert st["analysis"]["lines"][0]["pv"][0] in {"7g7f", "2g2f", "6i7h", "5g5f", "7i6h", "4i5h", "3g3f", "5i6h"}
    st = api.ok("/api/analysis", {"on": False})
    assert not st["analysis"]["on"] and not st["analysis"]["running"]
    analyser = api.session(srv).analyser
    deadline = time.time() + 30
    while analyser.running is not None:  # the search got its stop and answered bestmove
        assert time.time() < deadline, "the analysis did not stop"
        time.sleep(0.05)
    for bad, words in (({"multipv": 6}, "multipv"), ({"engine": "nope"}, "unknown engine"),
                       ({"line": 0, "ply": 99}, "'ply'"), ({"multipv": "3"}, "'multipv'")):
        status, data = api.call("/api/analysis", dict(bad, on=True))
        assert status == 400 and words in data["error"], data


def test_analysis_shows_a_mate_as_mate_and_a_certain_win():
    """A mate in one (G*5b): the line says mate 1 for sente (not a score of 31999) and the win is certain."""
    s = Session("shogi", players=["human", "human"], start_sfen="4k4/9/4P4/9/9/9/9/9/4K4 b G 1")
    try:
        s.analysis_start(multipv=1)
        deadline = time.time() + 120
        while not (s.state()["analysis"]["lines"] and "mate" in s.state()["analysis"]["lines"][0]):
            assert time.time() < deadline, s.state()["analysis"]
            time.sleep(0.1)
        line = s.state()["analysis"]["lines"][0]
        assert line["mate"] == 1 and line["pv"][0] == "G*5b" and line["ja"][0] == "５二金打"
        assert line["winprob"] == 1.0
        pid = s.analyser.player.engine.transport.get_pid()
    finally:
        s.close(10)
    assert not running(pid)  # the session's end waits for its analysis engine too


def test_analysis_engine_lines_stream_until_stopped_and_follow_the_viewer(analysis_server):
    """The test engine streams MultiPV lines (as many as asked) until the page stops it; an engine that ends by
    itself (the random mover) leaves its last lines, no longer running."""
    srv, api = analysis_server
    api.new({"variant": "shogi", "players": ["human", "human"]})
    api.ok("/api/analysis", {"on": True, "engine": "echo", "multipv": 4})
    st = wait_for(api, lambda s: len(s["analysis"]["lines"]) == 4 and s["analysis"]["stats"].get("depth", 0) >= 3)
    assert [ln["score"] for ln in st["analysis"]["lines"]] == [90, 80, 70, 60]
    assert st["analysis"]["running"] and st["analysis"]["engine"] == "echo"
    st = api.ok("/api/analysis", {"on": True, "engine": "echo", "multipv": 2})  # fewer lines: restarted
    st = wait_for(api, lambda s: len(s["analysis"]["lines"]) == 2)
    st = api.ok("/api/analysis", {"on": False})
    time.sleep(0.3)
    assert api.ok("/api/state")["analysis"]["running"] is False


def test_turncoat_analysis_never_shows_the_other_sides_plan(analysis_server):
    """Analysis in turncoat: the engine is sent the position as the page's viewer sees it (the other side's plan
    ``?``), so an engine that echoes every plan it is given names only the viewer's own; every state the page
    receives (SecretWatch) names no square of a hidden plan, with a person against the engine and between two
    people (the analysis restarts for each side's eyes); engines playing each other get no analysis at all."""
    _, api = analysis_server
    watch = SecretWatch(api, [PLOT_S, PLOT_G], engine_sides=(1,))
    watch.state(api.new({"variant": "turncoat", "players": ["human", {"kind": "engine", "engine": "plot_g"}],
                         "seed": 1}))
    watch.state(api.ok("/api/analysis", {"on": True, "engine": "echo", "multipv": 2}))
    watch.move(PLOT_S)
    st = watch.until(lambda s: s["human_turn"] and s["analysis"]["lines"])
    pv = st["analysis"]["lines"][0]["pv"]
    assert PLOT_S in pv and "2b2b" in pv and not any("8h" in t for t in pv), pv  # its own plan only
    for token in ("2g2f", "2f2e"):
        watch.move(token)
        watch.until(lambda s: (s["human_turn"] or s["result"]) and s["analysis"]["lines"])
    api.ok("/api/resign", {})
    st = watch.state(api.ok("/api/state"))
    watch.revealed(st)

    watch = SecretWatch(api, [PLOT_S, PLOT_G])
    watch.state(api.new({"variant": "turncoat", "players": ["human", "human"], "seed": 1}))
    watch.state(api.ok("/api/analysis", {"on": True, "engine": "echo"}))
    for token in (PLOT_S, PLOT_G, "2g2f", "8c8d"):
        watch.move(token)
        st = watch.until(lambda s: s["analysis"]["lines"])
        mine = PLOT_S if st["viewer"] == 0 else PLOT_G
        if token != PLOT_S:  # (gote has no plan yet while it chooses one)
            assert mine in st["analysis"]["lines"][0]["pv"], st["analysis"]
    api.ok("/api/resign", {})
    watch.revealed(watch.state(api.ok("/api/state")))

    watch = SecretWatch(api, [PLOT_S, PLOT_G], engine_sides=(0, 1))
    watch.state(api.new({"variant": "turncoat", "seed": 1, "players": [
        {"kind": "engine", "engine": "plot_s"}, {"kind": "engine", "engine": "plot_g"}]}))
    st = watch.state(api.ok("/api/analysis", {"on": True, "engine": "echo"}))
    assert st["analysis"]["lines"] == [] and "neither plan" in st["analysis"]["note"]
    watch.until(lambda s: s["result"])


def test_chance_outlook_gives_the_rules_probabilities_of_the_coming_event(server):
    """/api/chance: the coming d20 roll (who rolls, after how many moves, grouped by what it gives), the next
    enokian card (the deck left, each card alike) and the next mawarikudoi throw (the gold throw's table, mean N
    5.740125), each summing to 1 and equal to the rules' chance_events where the event is next."""
    from engine import new_game

    _, api = server
    g, rng, tokens = new_game("fantasista", fairies=("hiko", "ayumi")), random.Random(3), []
    while len(tokens) < 13:
        tok = rng.choice([t for t in g.legal_actions() if "," not in t])
        g.apply(tok)
        tokens.append(tok)
    api.load({"text": json.dumps({"variant": "fantasista", "moves": tokens,
                                  "options": {"fairy_sente": "hiko", "fairy_gote": "ayumi"}}),
              "players": ["human", "human"]})
    out = api.ok("/api/chance")["outlooks"]
    assert len(out) == 1 and out[0]["after"] == 2 and out[0]["side"] == 0 and out[0]["fairy"] == "hiko"
    assert [e["token"] for e in out[0]["events"]] == [f"roll={n}" for n in range(1, 21)]
    assert all(e["p"] == pytest.approx(0.05) for e in out[0]["events"])
    groups = {g["label"]: g["p"] for g in out[0]["groups"]}
    assert groups["4–18: 飛車トークン rook token"] == pytest.approx(0.75)  # nothing reserved: 9-18 as 4-8
    assert groups["1: 火炎竜 fire dragon token"] == pytest.approx(0.05) and sum(groups.values()) == pytest.approx(1)

    st = api.new({"variant": "enokian", "players": ["human", "human"], "seed": 5})
    out = api.ok("/api/chance")["outlooks"][0]
    deck = st["panel"]["deck"]
    assert out["after"] == 1 and len(out["events"]) == deck
    assert all(e["p"] == pytest.approx(1 / deck) for e in out["events"])
    assert sum(g["count"] for g in out["groups"]) == deck and {g["label"] for g in out["groups"]} <= set(
        "A 2 3 4 5 6 7 8 9 10 J Q K".split())

    api.new({"variant": "mawarikudoi", "players": ["human", "human"], "seed": 2})
    first = api.ok("/api/chance?line=0&ply=0")["outlooks"]  # the start: the first throw is next
    expected = new_game("mawarikudoi").chance_events()
    assert first[0]["after"] == 0 and [(e["token"], e["p"]) for e in first[0]["events"]] == [
        (t, pytest.approx(p)) for t, p in expected]
    assert first[0]["mean"] == pytest.approx(5.740125, abs=1e-4)
    later = api.ok("/api/chance")["outlooks"]  # a turn to play: gote's throw after it
    assert later and later[0]["after"] == 1 and later[0]["side"] == 1
    assert sum(e["p"] for e in later[0]["events"]) == pytest.approx(1)
    api.new({"variant": "shogi", "players": ["human", "human"]})
    assert api.ok("/api/chance")["outlooks"] == []
    status, data = api.call("/api/chance?line=0&ply=5")
    assert status == 400 and "'ply'" in data["error"]


def test_rules_texts_and_labels_for_every_variant(server):
    """/api/rules: every playable variant has its rules in Japanese and English; every option value of the form
    has a readable text; the fairies and rights have names; an enokian card says what it moved and why."""
    from gui.games import GuiGame

    _, api = server
    data = api.ok("/api/rules")
    variants = api.ok("/api/variants")
    for v in variants:
        if not v["available"]:
            continue
        rules = data["rules"][v["id"]]
        assert rules["ja"] and rules["en"], v["id"]
        assert all(re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", t) for t in rules["ja"]), v["id"]
        assert all(re.search(r"[A-Za-z]{3}", t) and not re.search(r"[\u3040-\u30ff]", t) for t in rules["en"])
        for opt in v["options"]:
            texts = data["labels"]["options"][opt["name"]]
            assert set(opt["choices"]) <= set(texts), (opt["name"], set(opt["choices"]) - set(texts))
            assert opt["name"] in data["labels"]["option_names"]
    labels = data["labels"]
    assert labels["fairies"]["hiko"]["label"] == "飛子 hiko (rook fairy)"
    assert "fire dragon" in labels["fairies"]["hiko"]["description"]
    assert labels["options"]["reserved"]["4-8"] == "9–18 give as 4–8 (nothing added)"
    assert "銀幕展開" in labels["options"]["reserved_sente"]["ginsara:1"]
    assert labels["reserved_rolls"] == list(range(9, 19)) and labels["roll_rows"]["5"] == "4-8"
    assert labels["rights"]["curtain"] == "銀幕展開 silver curtain"
    game = GuiGame(variant_infos()["enokian"])
    game.apply("card=KS")
    effect = game.panel(0)["card_effects"][0]
    assert effect["moves"] == [{"from": "1e", "to": "4e", "kanji": "龍"}, {"from": "1a", "to": "2b", "kanji": "王"}] \
        or sorted(m["from"] for m in effect["moves"]) == ["1a", "1e"]
    assert effect["lost"] == ["4e"] and "♠K" in effect["text"] and "Michizane" in effect["text"]
    assert set(effect["squares"]) == {"1e", "4e", "1a", "2b"}
    game.apply("4d4c")  # the player's move: a new round, no card of it yet
    assert game.panel(0)["card_effects"] == []


def test_a_loaded_records_rolls_belong_to_the_side_that_rolled():
    """A roll in a loaded record is the roller's (the side that has just moved), as when played live: it was sente's
    for every loaded event, so the page said sente rolled gote's roll."""
    from engine import new_game

    g, rng, history = new_game("fantasista", fairies=("hiko", "ayumi")), random.Random(5), []
    while sum(t.startswith("roll") for t in history) < 2:
        tok = "roll=7" if g.node_kind().value == "chance" else rng.choice(
            [t for t in g.legal_actions() if "," not in t and not t.startswith("target")] or g.legal_actions())
        g.apply(tok)
        history.append(tok)
    s = Session("fantasista", players=["human", "human"])
    s.load(json.dumps({"variant": "fantasista", "history": history}))
    rolls = [(i, p.side) for i, p in enumerate(s.plies) if p.event]
    assert [side for _, side in rolls] == [0, 1]
    assert all(s.plies[i - 1].side == side for i, side in rolls)


# ------------------------------------------------------------------------------------------ clocks and game end
class FakeTime:
    """The session's clock in the clock tests: seconds that pass only when the test says so."""

    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t

    def pass_(self, seconds: float) -> None:
        self.t += seconds


def clocked(srv, api: Api, players: list, variant: str = "shogi") -> tuple[FakeTime, dict]:
    """A new game of ``players`` on this client's session, timed by a fake clock."""
    fake = FakeTime()
    api.session(srv).now = fake
    return fake, api.new({"variant": variant, "players": players, "seed": 1})


def person(clock: dict) -> dict:
    return {"kind": "human", "clock": clock}


def test_sudden_death_a_persons_flag_falls_and_the_records_say_time_forfeit(server):
    srv, api = server
    fake, st = clocked(srv, api, [person({"main": 2000}), person({"main": 5000})])
    clocks = st["clocks"]
    assert clocks["running"] == 0 and [c["left"] for c in clocks["sides"]] == [2000, 5000]
    assert clocks["sides"][0]["kind"] == "sudden death" and not st["can_undo"]
    fake.pass_(1.5)
    st = api.ok("/api/move", {"move": "7g7f"})
    assert st["clocks"]["running"] == 1 and st["clocks"]["sides"][0]["left"] == 500  # sente's clock stopped
    fake.pass_(0.75)
    assert api.ok("/api/state")["clocks"]["sides"][1]["left"] == 4250  # gote's runs
    st = api.ok("/api/move", {"move": "3c3d"})
    # nothing may be taken back or played elsewhere while a timed game runs
    for path, body in (("/api/undo", {}), ("/api/move", {"move": "2g2f", "line": 0, "ply": 0})):
        status, data = api.call(path, body)
        assert status == 400 and "timed game" in data["error"]
    assert api.ok("/api/view?line=0&ply=0")["refusal"].startswith("a timed game")
    fake.pass_(0.4)
    assert api.ok("/api/state")["result"] is None  # 0.1 s left
    fake.pass_(0.2)
    st = api.ok("/api/state")  # the server notices the flag with nobody moving
    assert st["result"]["reason"] == "time forfeit" and st["result"]["score"] == 0.0
    assert st["clocks"]["running"] is None and st["clocks"]["sides"][0]["flag"]
    assert st["clocks"]["sides"][0]["left"] == 0 and not st["clocks"]["sides"][1]["flag"]
    status, data = api.call("/api/move", {"move": "2g2f"})
    assert status == 400 and "time forfeit" in data["error"]
    record = json.loads(api.ok("/api/record?format=json")["text"])
    assert (record["result"], record["reason"]) == ("gote", "time forfeit")
    assert record["players"][0]["clock"] == {"main": 2000} and record["times"] == [1.5, 0.75]
    assert "切れ負け" in api.ok("/api/record?format=kif")["text"].splitlines()[-2]
    assert api.ok("/api/record?format=csa")["text"].rstrip().endswith("%TIME_UP")
    # once the game is over a branch may be played, untimed
    st = api.ok("/api/move", {"move": "2g2f", "line": 0, "ply": 0})
    assert st["line"] == 1 and st["clocks"]["running"] is None and st["result"] is None


def test_byoyomi_resets_each_move_and_runs_out(server):
    srv, api = server
    fake, st = clocked(srv, api, [person({"main": 1000, "byoyomi": 3000}), person({"byoyomi": 3000})])
    assert st["clocks"]["sides"][1]["kind"] == "byoyomi"
    fake.pass_(3.5)  # the main second and 2.5 s of byoyomi
    st = api.ok("/api/state")
    assert st["clocks"]["sides"][0]["left"] == 0 and st["clocks"]["sides"][0]["byoyomi_left"] == 500
    st = api.ok("/api/move", {"move": "7g7f"})
    for move in ("3c3d", "2g2f", "4a3b"):  # each move has its whole byoyomi again
        fake.pass_(2.9)
        st = api.ok("/api/move", {"move": move})
        mover = st["clocks"]["sides"][1 - st["side"]]
        assert st["result"] is None and mover["left"] == 0 and mover["byoyomi_left"] == 3000
    fake.pass_(3.01)
    st = api.ok("/api/state")
    assert st["result"]["reason"] == "time forfeit" and st["result"]["score"] == 0.0  # sente's byoyomi ran out


def test_fischer_adds_the_increment_after_each_move(server):
    srv, api = server
    fake, st = clocked(srv, api, [person({"main": 3000, "inc": 2000}), person({"main": 3000, "inc": 2000})])
    assert st["clocks"]["sides"][0]["kind"] == "fischer"
    fake.pass_(2.5)
    st = api.ok("/api/move", {"move": "7g7f"})
    assert st["clocks"]["sides"][0]["left"] == 2500  # 3000 - 2500 + 2000
    fake.pass_(0.5)
    st = api.ok("/api/move", {"move": "3c3d"})
    assert st["clocks"]["sides"][1]["left"] == 4500
    fake.pass_(2.6)  # more than the 2.5 s sente has
    status, data = api.call("/api/move", {"move": "2g2f"})
    assert status == 400 and "sente (human) ran out of time" in data["error"]
    st = api.ok("/api/state")
    assert st["result"]["reason"] == "time forfeit" and len(st["history"]) == 2  # the late move is not played


class ScriptedEngine:
    """Stands in for :meth:`gui.session.EnginePlayer.think`: answers the next move of a script, taking ``took``
    seconds of the fake clock, and keeps every ``go`` line it was sent."""

    def __init__(self, fake: FakeTime, moves: list[str], took: list[float], score: int | None = None) -> None:
        self.fake, self.moves, self.took, self.score, self.gos = fake, list(moves), list(took), score, []

    def think(self, position_line, limit, on_info, side=0):
        from usi.client import UsiPlayResult

        self.gos.append(limit.go_command())
        self.fake.pass_(self.took.pop(0))
        info = {} if self.score is None else {"score": _cp(self.score), "depth": 1}
        return UsiPlayResult(self.moves.pop(0), info=info)


def _cp(value: int):
    from usi.client import parse_info

    return parse_info(f"score cp {value}")["score"]


def wait_for_go(engine: ScriptedEngine, api: Api, count: int) -> dict:
    return wait_for(api, lambda st: len(engine.gos) >= count and not st["thinking"], timeout=30)


@pytest.mark.parametrize("clock, sent", [
    ({"main": 60000}, ["go btime 60000 wtime 30000", "go btime 59000 wtime 28000"]),
    ({"main": 60000, "byoyomi": 5000}, ["go btime 60000 wtime 30000 byoyomi 5000",
                                        "go btime 59000 wtime 28000 byoyomi 5000"]),
    ({"main": 60000, "inc": 2000}, ["go btime 60000 wtime 30000 binc 2000", "go btime 61000 wtime 28000 binc 2000"]),
])
def test_an_engine_is_sent_its_clocks_and_charged(server, monkeypatch, clock, sent):
    """The engine's ``go`` carries both clocks as the match runner sends them (``btime``/``wtime``, its
    ``byoyomi`` or the increments), from the server's own clocks."""
    srv, api = server
    fake = FakeTime()
    engine = ScriptedEngine(fake, ["7g7f", "2g2f", "6i7h"], [1.0, 1.0, 9.0])
    monkeypatch.setattr("gui.session.EnginePlayer.think", engine.think)
    api.session(srv).now = fake
    api.new({"variant": "shogi", "players": [{"kind": "engine", "engine": "random", "clock": clock},
                                            person({"main": 30000})]})
    wait_for_go(engine, api, 1)
    fake.pass_(2.0)
    api.ok("/api/move", {"move": "3c3d"})
    st = wait_for_go(engine, api, 2)
    assert engine.gos == sent
    assert st["players"][0]["clock"] == clock and st["players"][0]["movetime"] is None  # plays by the clock


def test_an_engine_past_its_time_and_margin_loses_on_time(server, monkeypatch):
    srv, api = server
    fake = FakeTime()
    engine = ScriptedEngine(fake, ["7g7f"], [5.0 + 1.5])  # 5 s sudden death, 1 s margin
    monkeypatch.setattr("gui.session.EnginePlayer.think", engine.think)
    api.session(srv).now = fake
    api.new({"variant": "shogi", "players": [{"kind": "engine", "engine": "random", "depth": 3,
                                             "clock": {"main": 5000}}, "human"]})
    st = wait_for(api, lambda st: st["result"] is not None, timeout=30)
    assert engine.gos == ["go btime 5000 depth 3"]  # its own depth limit and its clock
    assert st["result"]["reason"] == "time forfeit" and st["result"]["score"] == 0.0 and st["history"] == []


def test_a_draw_offer_accepted_declined_and_an_engines_answer(server, monkeypatch):
    srv, api = server
    api.new({"variant": "shogi", "players": ["human", "human"]})
    api.ok("/api/move", {"move": "7g7f"})
    st = api.ok("/api/draw", {"action": "offer"})
    assert st["draw_offer"] == 1 and "gote offers a draw" in st["draw_note"]  # the side to move offers
    status, data = api.call("/api/draw", {"action": "offer"})
    assert status == 400 and "waits for an answer" in data["error"]
    st = api.ok("/api/draw", {"action": "decline"})
    assert st["draw_offer"] is None and "sente declines" in st["draw_note"] and st["result"] is None
    status, data = api.call("/api/draw", {"action": "accept"})
    assert status == 400 and "no draw offer" in data["error"]
    api.ok("/api/draw", {"action": "offer"})
    st = api.ok("/api/move", {"move": "3c3d"})  # a move withdraws the offer
    assert st["draw_offer"] is None
    api.ok("/api/draw", {"action": "offer"})
    st = api.ok("/api/draw", {"action": "accept"})
    assert st["result"]["score"] == 0.5 and st["result"]["reason"] == "agreement"
    assert "sente offered a draw, gote accepted" in st["result"]["text"]
    assert json.loads(api.ok("/api/record?format=json")["text"])["result"] == "draw"
    assert api.ok("/api/record?format=csa")["text"].rstrip().endswith("%HIKIWAKE")
    kif = api.ok("/api/record?format=kif")["text"]
    assert "まで2手で引き分け" in kif
    assert api.load({"text": kif})["result"]["reason"] == "agreement"  # read back as a finished, agreed draw
    status, data = api.call("/api/draw", {"action": "maybe"})
    assert status == 400 and "offer, accept or decline" in data["error"]
    # an engine answers at once from its own last score: declines when it stands well, accepts when it is lost
    fake = FakeTime()
    for score, accepted in ((50, False), (-500, True)):
        engine = ScriptedEngine(fake, ["3c3d"], [0.1], score=score)
        monkeypatch.setattr("gui.session.EnginePlayer.think", engine.think)
        api.new({"variant": "shogi", "players": ["human", {"kind": "engine", "engine": "random"}]})
        api.ok("/api/move", {"move": "7g7f"})
        wait_for(api, lambda st: st["human_turn"], timeout=30)
        st = api.ok("/api/draw", {"action": "offer"})
        assert (st["result"] is not None) == accepted, st["draw_note"]
        if not accepted:
            assert "gote (random) declines the draw" in st["draw_note"] and st["draw_offer"] is None


#: Sente's king on 5b with ten pieces in the camp: 28 points with the rooks, bishops in hand (CSA rule 27).
DECLARE_SFEN = "1+R+R1G1G2/1PPPK1P1P/P3P4/9/9/9/9/9/4k4 b 2B2G2S2N2L10p 1"


def test_an_entering_king_declaration_accepted_and_refused(server):
    srv, api = server
    st = api.new({"variant": "shogi", "players": ["human", "human"], "sfen": DECLARE_SFEN})
    assert st["can_declare"]
    st = api.ok("/api/declare", {})
    assert st["result"]["score"] == 1.0 and st["result"]["reason"] == "entering king"
    assert "入玉勝ち" in api.ok("/api/record?format=kif")["text"]
    assert api.ok("/api/record?format=csa")["text"].rstrip().endswith("%KACHI")
    # short of the rule: refused with what is missing, and the game goes on
    api.new({"variant": "shogi", "players": ["human", "human"]})
    before = api.ok("/api/state")
    status, data = api.call("/api/declare", {})
    assert status == 400 and "入玉宣言 refused (CSARule27)" in data["error"]
    assert "the king is not in the enemy camp" in data["error"] and "points" in data["error"]
    unchanged(api, before)
    assert api.ok("/api/state")["result"] is None
    api.new({"variant": "fantasista", "players": ["human", "human"]})
    status, data = api.call("/api/declare", {})
    assert status == 400 and "standard shogi only" in data["error"]


def test_bad_clocks_are_refused():
    for clock, words in (({"main": -1}, "clock main"), ({"main": 1000, "byoyomi": 1, "inc": 1}, "not both"),
                         ({"main": 0}, "needs some time"), ({"mian": 5}, "unknown clock field"),
                         ("5 min", "a clock is an object"), ({"main": True}, "clock main")):
        with pytest.raises(RequestError, match=words):
            Session("shogi", players=[person(clock), "human"])


def test_turncoat_plans_are_chosen_off_the_clock():
    """A secret plan runs no clock: the time a plan took would be a hint about it, so the clocks show nothing of
    it; they start once both plans are chosen."""
    fake = FakeTime()
    session = Session("turncoat", players=[person({"main": 10000}), person({"main": 10000})], clock=fake)
    for _ in range(2):
        st = session.state()
        assert st["clocks"]["running"] is None and [c["left"] for c in st["clocks"]["sides"]] == [10000, 10000]
        fake.pass_(60)  # far past either clock
        session.play(st["legal"][0]["token"])
    st = session.state()
    assert st["result"] is None and st["clocks"]["running"] == 0
    assert [c["left"] for c in st["clocks"]["sides"]] == [10000, 10000]
    fake.pass_(10.5)
    assert session.state()["result"]["reason"] == "time forfeit"


# ------------------------------------------------------------------------------------------ clocks with analysis
def test_a_timed_game_being_played_has_no_analysis_until_it_is_over(analysis_server):
    """Clocks and analysis together: the state carries both (``clocks``, ``draw_offer``, ``can_declare`` and
    ``analysis``); while a timed game runs the analysis is refused (its engine would take the clocked players' CPU
    time and help a person) and the page is told why; once the flag has fallen the finished game is analysed, and
    the clocks stay as the flag left them."""
    srv, api = analysis_server
    fake, st = clocked(srv, api, [person({"main": 2000}), person({"main": 5000})])
    assert st["clocks"]["running"] == 0 and st["draw_offer"] is None and st["can_declare"] is True
    assert st["analysis"]["on"] is False and "timed game" in st["analysis"]["refusal"]
    status, data = api.call("/api/analysis", {"on": True, "engine": "echo"})
    assert status == 400 and "timed game" in data["error"], data
    session = api.session(srv)
    assert session.analyser is None  # no engine was started
    fake.pass_(3)
    st = api.ok("/api/state")
    assert st["result"]["reason"] == "time forfeit" and st["analysis"]["refusal"] == ""
    st = api.ok("/api/analysis", {"on": True, "engine": "echo", "multipv": 2})
    st = wait_for(api, lambda s: len(s["analysis"]["lines"]) == 2)
    assert st["clocks"]["running"] is None and [c["left"] for c in st["clocks"]["sides"]] == [0, 5000]
    api.ok("/api/analysis", {"on": False})
