"""Shared helpers of the GUI tests: a random-mover USI engine for every variant, and a tiny JSON API client."""
from __future__ import annotations

import json
import re
import sys
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: A USI engine that plays a random legal action of any variant (``engine.Position`` or ``engine.new_game``),
#: reporting ``score cp`` (or ``info string winprob`` for the solitaire). Written to a file by :func:`random_engine`.
RANDOM_ENGINE = r'''
import random, sys
sys.path.insert(0, %(root)r)
variant, rng, state = "shogi", random.Random(7), None
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    cmd = words[0]
    if cmd == "usi":
        print("id name AnyRandom\noption name USI_Variant type combo default shogi var shogi var daishogi2017 "
              "var fantasista var turncoat var enokian var mawarikudoi\nusiok", flush=True)
    elif cmd == "setoption" and words[2].lower() == "usi_variant":
        variant = words[4]
    elif cmd == "isready":
        import engine
        print("readyok", flush=True)
    elif cmd == "position":
        import engine
        moves = words.index("moves") if "moves" in words else len(words)
        if not engine.is_game_state_variant(variant):
            pos = (engine.Position.startpos(variant) if words[1] == "startpos"
                   else engine.Position.from_sfen(" ".join(words[2:moves]), variant))
            for m in words[moves + 1:]:
                pos.push(m)
            state = ("pos", pos)
        else:
            g = engine.new_game(variant)
            if words[1] == "sfen":
                g = type(g).from_sfen(" ".join(words[2:moves]))
            for m in words[moves + 1:]:
                g.apply(m)
            state = ("game", g)
    elif cmd == "go":
        kind, s = state
        if kind == "pos":
            acts = [s.move_usi(int(c)) for c in s.legal_codes()]
        else:
            acts = s.legal_actions()
        if not acts:
            print("bestmove resign", flush=True)
            continue
        move = rng.choice(acts)
        extra = "string winprob 0.25" if variant == "enokian" else f"score cp {rng.randint(-200, 200)}"
        print(f"info depth 1 nodes {len(acts)} {extra}")
        print(f"info depth 2 nodes {len(acts)} score cp {rng.randint(-200, 200)} pv {move}" if variant != "enokian"
              else f"info depth 2 nodes 5 pv {move}\ninfo string winprob 0.3")
        print(f"bestmove {move}", flush=True)
    elif cmd == "quit":
        break
'''


def random_engine(directory: Path) -> str:
    """Write the random engine into ``directory``; return its command line."""
    path = Path(directory) / "any_random_engine.py"
    path.write_text(RANDOM_ENGINE % {"root": str(ROOT)}, encoding="utf-8")
    return f"{sys.executable} {path}"


def engines_with_random(directory: Path) -> dict[str, list[str]]:
    """The engines a test server offers: ours and the random mover as ``random`` (what ``--engine`` would add)."""
    from gui.engines import engine_table, parse_engine_arg

    return engine_table([parse_engine_arg("random=" + random_engine(directory))], system=False)


#: A turncoat USI engine that tries to give its secret away: ``plotter.py PLAN MOVE...`` chooses ``PLAN`` and names
#: it in every field of its plan's ``info`` lines (a score, win probability, node count and time that depend on
#: it; a PV of the plan, a move and a declaration moving a planned piece), thinks a while (so that a page polls
#: while it does), then plays the given moves in turn (each with such a PV), and resigns when they run out. A plan a
#: set-up start gives (``position sfen ...``, its own or ``?``) counts as chosen.
PLOTTER_ENGINE = r'''
import sys, time
plan, script, moves, preset = sys.argv[1], sys.argv[2:], [], 0
square = plan[5:7]
worth = sum(map(ord, plan))
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if words[0] == "usi":
        print("id name Plotter\noption name USI_Variant type combo default turncoat var turncoat\nusiok", flush=True)
    elif words[0] == "isready":
        print("readyok", flush=True)
    elif words[0] == "position":
        moves = words[words.index("moves") + 1:] if "moves" in words else []
        # plans a set-up start gives (its own, or ? for the other's) are chosen already
        preset = sum(p != "-" for p in words[6].split(";")[1:3]) if words[1] == "sfen" else 0
    elif words[0] == "go":
        if preset + sum(1 for m in moves if m.startswith("plan")) < 2:
            print(f"info depth {len(plan)} seldepth {worth % 7 + 1} nodes {worth} nps {worth} time {worth % 50} "
                  f"score cp {worth % 300} pv {plan} 7g7f defect,{square}1a", flush=True)
            print(f"info string winprob 0.{worth % 100:02d} {plan}", flush=True)
            time.sleep(0.6)
            print(f"bestmove {plan}", flush=True)
            continue
        played = [m for m in moves if not m.startswith("plan")]
        mine = len(played) // 2
        if mine >= len(script):
            print("bestmove resign", flush=True)
            continue
        move = script[mine]
        print(f"info depth 2 nodes 5 score cp 10 pv {move} {plan} defect,{square}1a", flush=True)
        print(f"bestmove {move}", flush=True)
    elif words[0] == "quit":
        break
'''


def plotter_engines(directory: Path, plotters: dict[str, tuple[str, list[str]]]) -> dict[str, list[str]]:
    """The engines a test server offers: ours and, for each ``name: (plan, moves)``, a :data:`PLOTTER_ENGINE`."""
    from gui.engines import engine_table

    path = Path(directory) / "plotter.py"
    path.write_text(PLOTTER_ENGINE, encoding="utf-8")
    table = engine_table(system=False)
    for name, (plan, moves) in plotters.items():
        table[name] = [sys.executable, str(path), plan, *moves]
    return table


def page_token(base: str) -> str:
    """The token the server writes into its page, read as the page itself does (from the served HTML)."""
    with urllib.request.urlopen(base + "/", timeout=30) as res:
        html = res.read().decode()
    match = re.search(r'<meta name="fantasista-token" content="([^"]+)">', html)
    assert match, "the page carries no token"
    return match.group(1)


class Api:
    """Calls the GUI's JSON API as the page does (the page's token, this client's own game); ``call`` returns
    (status, data)."""

    def __init__(self, port: int) -> None:
        self.base = f"http://127.0.0.1:{port}"
        self.token = page_token(self.base)
        self.game = None
        self.game = self.ok("/api/session", {})["id"]

    def call(self, path: str, body=None, raw: bytes | None = None, headers: dict | None = None) -> tuple[int, dict]:
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        head = {"Content-Type": "application/json", "X-Fantasista-Token": self.token}
        if self.game:
            head["X-Fantasista-Game"] = self.game
        head.update(headers or {})
        req = urllib.request.Request(self.base + path, data=data, method="GET" if data is None else "POST",
                                     headers={k: v for k, v in head.items() if v is not None})
        try:
            with urllib.request.urlopen(req, timeout=600) as res:  # a first call may compile kernels
                return res.status, json.loads(res.read().decode())
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read().decode())

    def ok(self, path: str, body=None) -> dict:
        status, data = self.call(path, body)
        assert status == 200, data
        return data

    def new(self, body: dict) -> dict:
        """``POST /api/new`` replacing this client's game whatever its state (the page would have asked first)."""
        return self.ok("/api/new", {**body, "replace": True})

    def load(self, body: dict) -> dict:
        """``POST /api/load`` replacing this client's game whatever its state."""
        return self.ok("/api/load", {**body, "replace": True})

    def session(self, server):
        """This client's game on ``server`` (a :class:`gui.session.Session`)."""
        return server.sessions[self.game]


#: A USI analysis engine for the analysis tests: ``go infinite`` streams a line per ``MultiPV`` each 50 ms, deeper
#: each time, until ``stop`` (then ``bestmove``). Its PVs echo every plan the ``position`` line names (``plan:8h``
#: and the move ``8h8h`` for each square): a position line that gave away a hidden plan would show it.
ANALYSER_ENGINE = r'''
import re, sys, threading, time
multipv, position, worker, stop = 1, "", None, threading.Event()

def stream(pv):
    depth = 0
    while not stop.is_set():
        depth += 1
        for k in range(1, multipv + 1):
            print(f"info depth {depth} nodes {depth * 100} score cp {100 - 10 * k} multipv {k} pv {pv}", flush=True)
        time.sleep(0.05)
    print("bestmove resign", flush=True)

for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if words[0] == "usi":
        print("id name Echo\noption name MultiPV type spin default 1 min 1 max 500\n"
              "option name USI_Variant type combo default shogi var shogi var turncoat var fantasista\nusiok",
              flush=True)
    elif words[0] == "setoption" and words[2] == "MultiPV":
        multipv = int(words[4])
    elif words[0] == "isready":
        print("readyok", flush=True)
    elif words[0] == "position":
        position = line.strip()
    elif words[0] == "go":
        plans = re.findall(r"plan[:=]([0-9a-i,]+)", position)
        echo = [f"plan:{p}" for p in plans] + [f"{q}{q}" for p in plans for q in p.split(",")]
        stop.clear()
        worker = threading.Thread(target=stream, args=(" ".join(["7g7f"] + echo),))
        worker.start()
    elif words[0] == "stop":
        stop.set()
        if worker is not None:
            worker.join()
            worker = None
    elif words[0] == "quit":
        stop.set()
        break
'''


def with_analyser(directory: Path, table: dict[str, list[str]]) -> dict[str, list[str]]:
    """``table`` and the :data:`ANALYSER_ENGINE` as ``echo``."""
    path = Path(directory) / "analyser.py"
    path.write_text(ANALYSER_ENGINE, encoding="utf-8")
    return dict(table, echo=[sys.executable, str(path)])
