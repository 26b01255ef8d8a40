"""One game on the server (one per page / tab, see :mod:`gui.server`): the true history, the players (people at the screen or USI engines), undo/redo,
records, and the JSON state each page receives.

The session owns the game like the match referee does: it draws chance events (rolls, throws, cards) from its
seeded RNG, sends each engine the ``position`` line its side may see, validates every answer with the rules layer
and ends the game on mate, repetition, resignation or a bad engine answer. Hidden information (turncoat plans) is
filtered per viewer before anything leaves the server.
"""
from __future__ import annotations

import datetime as _dt
import json
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from usi.referee import MatchSettings, TimeControl, spend
from search.timeman import PLAIN_GO_MS

from . import analysis as AN
from . import games as G
from .engines import BUILTIN, engine_table

SIDES = ("sente", "gote")
#: The engine limits a player may ask for: (least, most) of ``depth`` (plies), ``movetime`` (ms) and ``nodes``.
LIMITS = {"depth": (1, 64), "movetime": (1, 3_600_000), "nodes": (1, 10**12)}
#: An engine player's limit when the request names none: a time, not a depth, since a depth costs each variant
#: differently (depth 3 took enokian's expectimax minutes); every variant answers in about this long.
DEFAULT_MOVETIME_MS = 1000
#: A side's time control (ms): ``main`` time, then ``byoyomi`` per move or a Fischer ``inc`` after each move (not
#: both); (least, most) of each. Sudden death is ``main`` alone.
CLOCK_LIMITS = {"main": (0, 36_000_000), "byoyomi": (0, 3_600_000), "inc": (0, 3_600_000)}
#: An engine's grace beyond its clock before its flag falls (ms): the match runner's margin (the pipes, the
#: engine's own reaction). A person's flag falls at 0: the server measures the person's time itself.
ENGINE_MARGIN_MS = MatchSettings().margin
#: The entering-king rule a person's declaration is judged by: the match runner's (CSA rule 27 by default).
ENTERING_KING_RULE = MatchSettings().entering_king_rule
#: An engine offered a draw accepts when its own last reported score is this bad or worse (cp, its point of view):
#: no search is run for the answer.
DRAW_ACCEPT_CP = 300


class RequestError(ValueError):
    """A request the server refuses, with the message the page shows (HTTP ``status``); nothing was changed."""

    status = 400


class ConfirmError(RequestError):
    """A new game or a loaded record would replace an unfinished game: the page asks, then sends ``replace``."""

    status = 409


# ------------------------------------------------------------------------------------------ players
@dataclass
class PlayerSpec:
    """A player: a person at the screen, or an engine the server offers (chosen by name, never by command)."""

    kind: str = "human"  # "human" or "engine"
    engine: str = BUILTIN  # the engine's name in the server's table
    command: list = field(default_factory=list)  # from the server's table, never from a request
    depth: Optional[int] = None
    movetime: Optional[int] = None  # ms
    nodes: Optional[int] = None
    name: str = ""
    clock: Optional[TimeControl] = None  # this side's time control (main, byoyomi or inc), or no clock

    @staticmethod
    def parse_clock(data: Any) -> Optional[TimeControl]:
        """A side's time control as a request sends it: ``null`` (none) or ``{"main", "byoyomi" | "inc"}`` in ms
        (sudden death: ``main`` alone)."""
        if data in (None, {}):
            return None
        if not isinstance(data, dict):
            raise RequestError(f"a clock is an object {{main, byoyomi | inc}} in ms, not {data!r}")
        unknown = set(data) - set(CLOCK_LIMITS)
        if unknown:
            raise RequestError(f"unknown clock field(s) {', '.join(sorted(map(str, unknown)))} (main, byoyomi, inc)")
        values = {}
        for key, (low, high) in CLOCK_LIMITS.items():
            value = data.get(key)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise RequestError(f"clock {key} must be an integer number of ms from {low} to {high}, not {value!r}")
            values[key] = value
        if "byoyomi" in values and "inc" in values:
            raise RequestError("a clock has byoyomi or a Fischer increment, not both")
        if not values.get("main") and not values.get("byoyomi") and not values.get("inc"):
            raise RequestError("a clock needs some time: main, byoyomi or inc above 0")
        return TimeControl(main=values.get("main", 0), byoyomi=values.get("byoyomi"), inc=values.get("inc"))

    @classmethod
    def parse(cls, data: Any, engines: dict[str, list[str]]) -> "PlayerSpec":
        """A player as a request sends it: ``"human"``, ``"engine"`` (ours, :data:`DEFAULT_MOVETIME_MS` a move) or
        ``{"kind", "engine", "depth" | "movetime" | "nodes"}`` with ``engine`` one of the names in ``engines`` (ours
        by default)."""
        if data in (None, "human"):
            return cls(name="human")
        if data == "engine":
            data = {"kind": "engine"}
        if not isinstance(data, dict):
            raise RequestError(f"a player is 'human', 'engine' or an object, not {data!r}")
        kind = data.get("kind", "human")
        if kind not in ("human", "engine"):
            raise RequestError(f"player kind must be 'human' or 'engine', not {kind!r}")
        clock = cls.parse_clock(data.get("clock"))
        if kind == "human":
            return cls(name="human", clock=clock)
        if "command" in data:
            raise RequestError("a request never names an engine command: choose an engine by name (offered: "
                               f"{', '.join(engines)}; add one with fantasista-gui --engine NAME=COMMAND)")
        if data.get("options"):
            raise RequestError("engine options are not set from the page (configure the engine on the server)")
        name = data.get("engine", BUILTIN)
        if not isinstance(name, str) or name not in engines:
            raise RequestError(f"unknown engine {name!r} (offered: {', '.join(engines)})")
        spec = cls(kind="engine", engine=name, command=list(engines[name]), name=name, clock=clock)
        for key, (low, high) in LIMITS.items():
            value = data.get(key)
            if value in (None, ""):
                continue
            if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
                value = int(value)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise RequestError(f"engine {key} must be an integer from {low} to {high}, not {value!r}")
            setattr(spec, key, value)
        if spec.depth is None and spec.movetime is None and spec.nodes is None and clock is None:
            spec.movetime = DEFAULT_MOVETIME_MS  # with a clock and no limit of its own, it plays by the clock
        return spec

    def to_json(self) -> dict:
        out: dict[str, Any] = {"kind": self.kind, "name": self.name}
        if self.clock is not None:
            out["clock"] = {k: getattr(self.clock, k) for k in CLOCK_LIMITS if getattr(self.clock, k) is not None}
        if self.kind == "engine":
            out.update(engine=self.engine, depth=self.depth, movetime=self.movetime, nodes=self.nodes,
                       builtin=self.engine == BUILTIN)
        return out


class EnginePlayer:
    """A USI engine process driven by :class:`usi.client.UsiEngine` (opened lazily, on its first turn)."""

    def __init__(self, spec: PlayerSpec, variant: str) -> None:
        self.spec, self.variant = spec, variant
        self.engine = None
        self.lock = threading.Lock()  # one turn at a time
        # A game replaced while this engine is still starting (a cold start waits minutes for readyok) must not
        # leave the process behind: close() marks the player closed and kills an engine still being opened.
        self._state_lock = threading.Lock()
        self._opening = None
        self.closed = False

    def _open(self) -> None:
        from usi.client import COLD_START_TIMEOUT, UsiEngine

        engine = UsiEngine.popen_usi(self.spec.command, timeout=20)
        with self._state_lock:
            if self.closed:
                engine.close()
                raise RuntimeError("the game was closed while its engine started")
            self._opening = engine
        try:
            options: dict = {}
            offered = {name.lower(): name for name in engine.options}
            if self.variant != "shogi":
                if "usi_variant" not in offered:
                    raise RuntimeError(f"{self.spec.name} does not offer USI_Variant: it plays only shogi")
                options[offered["usi_variant"]] = self.variant
            engine.configure(options)
            engine.isready(timeout=COLD_START_TIMEOUT)
            engine.new_game()
        except Exception:
            engine.close()
            raise
        finally:
            with self._state_lock:
                self._opening = None
        with self._state_lock:
            if self.closed:
                engine.close()
                raise RuntimeError("the game was closed while its engine started")
            self.engine = engine

    def think(self, position_line: str, limit: Any, on_info, side: int = 0) -> Any:
        """``position_line`` and ``go`` with ``limit`` (a :class:`usi.client.UsiLimit`, the clocks included) for
        ``side``'s engine; the engine's answer."""
        with self.lock:
            if self.engine is None:
                self._open()
            budget = limit.budget(side)
            # a clocked engine past its time and the margin has lost: the session ends the game before this
            timeout = budget + ENGINE_MARGIN_MS / 1000 + 30 if budget is not None else 600
            eng = self.engine
            return eng._run(eng.usi.play(position_line, limit, on_info=on_info), timeout)

    def stop(self) -> None:
        if self.engine is not None:
            try:
                self.engine.stop()
            except Exception:
                pass

    def close(self, result: Optional[str] = None) -> None:
        with self._state_lock:
            self.closed = True
            engine, self.engine = self.engine, None
            opening, self._opening = self._opening, None
        if opening is not None:  # still starting: no game to report, the process goes now
            try:
                opening.close()
            except Exception:
                pass
        if engine is None:
            return
        try:
            if result:
                engine.gameover(result)
            from usi.client import QUIT_GRACE

            engine.quit(timeout=QUIT_GRACE)
        except Exception:
            try:
                engine.close()
            except Exception:
                pass


# ------------------------------------------------------------------------------------------ history
@dataclass
class Ply:
    token: str
    side: int
    event: bool = False
    human: bool = False
    ja: str = ""
    score: Optional[int] = None  # centipawns, sente's point of view
    winprob: Optional[float] = None  # sente's winning probability when the engine reports one
    depth: Optional[int] = None
    pv: list = field(default_factory=list)
    time: Optional[float] = None
    secret: bool = False  # a turncoat plan: seen only by ``side`` while the game runs (no move: never highlighted)
    comment: str = ""  # a record's comment after this ply (KIF ``*``, CSA ``'``)


class Session:
    """A game with its players. Every public method takes the lock; engine turns run in a worker thread."""

    def __init__(self, variant: str = "shogi", options: dict | None = None, players=None, seed: int | None = None,
                 start_sfen: str | None = None, engines: Optional[dict[str, list[str]]] = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        """``clock`` is the time source of the game clocks (seconds, monotonic; tests pass a fake one)."""
        self.now = clock
        self.infos = G.variant_infos()
        self.engine_table = engine_table() if engines is None else dict(engines)
        self.last_seen = time.monotonic()  # the server closes the session idle longest when it has too many
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.version = 0
        self.engines: list[Optional[EnginePlayer]] = [None, None]
        self.generation = 0
        self._setup(variant, options, players, seed, start_sfen)

    # ------------------------------------------------------------------ setup
    # ------------------------------------------------------------------ lines (the main line and its branches)
    @property
    def plies(self) -> list[Ply]:
        """The active line: the plies from the start to the live position (the game engines play)."""
        return self.lines[self.active]

    @plies.setter
    def plies(self, value: list[Ply]) -> None:
        self.lines[self.active] = value

    @property
    def ended(self) -> Optional[tuple[float, str, str]]:
        """The active line's result not from the rules (resign, a bad engine, a record's 投了 ...)."""
        return self.line_ends[self.active]

    @ended.setter
    def ended(self, value: Optional[tuple[float, str, str]]) -> None:
        self.line_ends[self.active] = value

    def _setup(self, variant, options, players, seed, start_sfen, plies: list | None = None,
               replace: bool = True, result: Optional[tuple] = None,
               branches: Optional[list[tuple[list[Ply], Optional[tuple]]]] = None,
               start_comment: str = "") -> None:
        """Validate, then start a game. A loaded record gives ``plies`` (its main line), the ``result`` its end
        marker names, and ``branches``: (every ply from the start, result) of each other line."""
        info = self.infos.get(variant) if isinstance(variant, str) else None
        if info is None:
            raise RequestError(f"unknown variant {variant!r} (known: {', '.join(self.infos)})")
        if not info.available:
            raise RequestError(f"variant {variant!r} is not playable yet")
        if options is not None and not isinstance(options, dict):
            raise RequestError(f"options must be an object (name: value), not {options!r}")
        if start_sfen is not None and not isinstance(start_sfen, str):
            raise RequestError(f"sfen must be a string, not {start_sfen!r}")
        if players is not None and not isinstance(players, list):
            raise RequestError(f"players must be a list of two (sente, gote), not {players!r}")
        options = dict(options or {})
        for opt in info.options:
            value = options.get(opt["name"], opt["default"])
            if value not in opt["choices"]:
                raise RequestError(f"option {opt['name']} must be one of {', '.join(opt['choices'])}, not {value!r}")
            options[opt["name"]] = value
        unknown = set(options) - {o["name"] for o in info.options}
        if unknown:
            raise RequestError(f"unknown option(s) for {variant}: {', '.join(sorted(unknown))}")
        players = list(players or ["human", "human"])
        if len(players) != 2:
            raise RequestError("players must be a list of two (sente, gote)")
        specs = [PlayerSpec.parse(p, self.engine_table) for p in players]
        try:
            game = G.GuiGame(info, options, start_sfen)
        except G.GameFailure as exc:
            raise RequestError(str(exc)) from None
        seed = random.randrange(2**31) if seed in (None, "") else seed
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise RequestError(f"seed must be an integer, not {seed!r}")
        replayed = None
        if plies is not None:
            replayed = self._replay(info, options, start_sfen, plies)
        other_lines = []
        for k, (line, res) in enumerate(branches or [], 1):
            try:
                other_lines.append((self._replay(info, options, start_sfen, line)[1], res))
            except RequestError as exc:
                raise RequestError(f"branch {k}: {exc}") from None
        if not replace and self.unfinished():
            raise ConfirmError("this tab's game is not finished: replace it? (send \"replace\": true)")
        # Everything is valid: commit.
        self._close_engines()
        self._analysis_close()  # another game: the analysis (and its engine, of the old variant) ends
        self.generation += 1
        self.game_number = getattr(self, "game_number", 0) + 1  # a new game or a loaded record: the form follows
        self.info, self.options, self.players, self.seed = info, options, specs, seed
        self.rng = random.Random(seed)
        # the true start (turncoat: both plans), for undo and replays; the page and records get game.start_view
        self.start_sfen = game.start_sfen
        self.game = game
        # every line played from the start: the main line first, then the branches made from earlier positions
        # (a line shares its first moves with another; the tree is derived from the lines, see _tree)
        self.lines: list[list[Ply]] = [[]]
        self.line_ends: list[Optional[tuple[float, str, str]]] = [None]  # each line's result not from the rules
        self.active = 0  # the line being played
        self._results: dict[tuple, Optional[tuple[float, str, str]]] = {}  # the rules' result of lines not played
        self.start_comment = start_comment
        self.redo: list[list[Ply]] = []
        self.thinking = False
        self.live_info: dict = {}
        self.error = ""
        self.started = _dt.datetime.now().isoformat(timespec="seconds")
        # the clocks: each clocked side's main time left (ms); the side whose clock runs and since when
        self.clock_left = [float(p.clock.main or 0) if p.clock is not None else 0.0 for p in specs]
        self.turn_side: Optional[int] = None
        self.turn_start = self.now()
        self.draw_offer: Optional[int] = None  # the side (a person) whose draw offer waits for an answer
        self.draw_note = ""  # the last offer's fate, shown until the next move
        if replayed is not None:
            self.game, self.plies = replayed
            if result is not None and self.game.result() is None:
                self.ended = result
            for line, res in other_lines:
                self.lines.append(line)
                self.line_ends.append(res)
        self._advance()

    def _replay(self, info, options, start_sfen, plies: list[Ply]) -> tuple[G.GuiGame, list[Ply]]:
        game = G.GuiGame(info, options, start_sfen)
        out, prev_to = [], None
        for i, ply in enumerate(plies):
            if game.node() == "terminal":
                raise RequestError(f"record: the game is already over before token {i + 1} ({ply.token})")
            # a chance event is the side's that has just moved (a roll is the roller's), as when played live
            ply.side = game.side() if game.node() == "decision" else out[-1].side if out else ply.side
            ply.event = game.node() == "chance"
            ply.secret = _is_plan(info.id, ply.token)
            try:
                ply.ja = game.japanese(ply.token, prev_to) if not ply.ja else ply.ja
                game.apply(ply.token)
            except G.GameFailure as exc:
                raise RequestError(f"record: token {i + 1} ({ply.token}) is rejected: {exc}") from None
            if not ply.event:
                prev_to = G.to_square(ply.token)
            out.append(ply)
        return game, out

    def new_game(self, variant="shogi", options=None, players=None, seed=None, start_sfen=None,
                 replace: bool = True) -> None:
        """Start a new game. With ``replace=False`` (what the page sends first) an unfinished game is not replaced:
        :class:`ConfirmError`, and the page asks the person."""
        with self.lock:
            self._setup(variant, options, players, seed, start_sfen, replace=replace)
            self._touch()

    def unfinished(self) -> bool:
        """A game someone has played in (a decision, not only chance events) and that has no result yet."""
        return (hasattr(self, "game") and self.result() is None
                and any(not p.event for p in self.plies))

    def _close_engines(self, result: Optional[tuple] = None) -> list[threading.Thread]:
        """Tell the engines the result and let them go, each in a thread of its own (quit, then kill and reap);
        return those threads."""
        closing = []
        for side, eng in enumerate(self.engines):
            if eng is not None:
                outcome = None
                if result is not None:
                    outcome = "draw" if result[0] == 0.5 else ("win" if (result[0] == 1.0) == (side == 0) else "lose")
                eng.stop()
                closing.append(threading.Thread(target=eng.close, args=(outcome,), daemon=True))
                closing[-1].start()
        self.engines = [None, None]
        return closing

    def close(self, wait_s: float = 0.0) -> None:
        """End the game's engines; with ``wait_s``, wait up to that long until they are gone (the server's
        shutdown: engines run in process groups of their own, so a terminal's Ctrl-C does not reach them, and the
        daemon threads closing them would die with the server)."""
        with self.lock:
            self.generation += 1
            closing = self._close_engines() + self._analysis_close()
        deadline = time.monotonic() + wait_s
        for thread in closing:
            thread.join(max(0.0, deadline - time.monotonic()))

    def _touch(self) -> None:
        self.version += 1
        self._analysis_follow()
        self.changed.notify_all()

    # ------------------------------------------------------------------ state
    def result(self) -> Optional[tuple[float, str, str]]:
        if self.ended is not None:
            return self.ended
        r = self.game.result()
        return None if r is None else (r[0], r[1], "")

    def node(self) -> str:
        return "terminal" if self.result() is not None else self.game.node()

    def viewer(self) -> Optional[int]:
        """Whose secrets the page may see: the one person playing; the side to move when two share the screen;
        nobody when engines play each other; everybody once the game is over (-1)."""
        if self.result() is not None:
            return -1
        humans = [s for s in (0, 1) if self.players[s].kind == "human"]
        if self.info.sides == 1:
            return 0
        if len(humans) == 1:
            return humans[0]
        if len(humans) == 2:
            return self.game.side()
        return None

    def _pv_for(self, pv: list, side: int, viewer: Optional[int]) -> list:
        """An engine's PV as ``viewer`` may see it: its own plan (turncoat) never reaches the other side, nor does
        a declaration it foresees or anything after one (the moves of defected pieces name planned squares)."""
        if self.info.id != "turncoat" or viewer == -1 or viewer == side:
            return list(pv)
        out = []
        for t in pv:
            if t.startswith("defect"):
                return out + ["?"]
            out.append("?" if t.startswith("plan") else t)
        return out

    def _info_for(self, info: dict, viewer: Optional[int]) -> dict:
        if "pv" not in info:
            return dict(info)
        return dict(info, pv=self._pv_for(info["pv"], info.get("side", 0), viewer))

    def _visible(self, ply: Ply, viewer: Optional[int]) -> bool:
        return not ply.secret or viewer == -1 or viewer == ply.side

    @staticmethod
    def _game_viewer(viewer: Optional[int]) -> Optional[int]:
        """The :class:`gui.games.GuiGame` viewer that draws what Session viewer ``viewer`` may see: ``None``
        (everything) for -1, ``NOBODY`` (neither side's secrets) for ``None`` (engines playing each other), else the
        side itself."""
        return None if viewer == -1 else G.NOBODY if viewer is None else viewer

    def _last_engine_info(self, viewer: Optional[int]) -> dict:
        """The last engine answer's score, depth and PV, as ``viewer`` may see them (a hidden plan's are skipped)."""
        for p in reversed(self.plies):
            if not self._visible(p, viewer):
                continue
            if p.depth is not None or p.score is not None or p.winprob is not None:
                out = {"side": p.side, "depth": p.depth, "pv": self._pv_for(p.pv, p.side, viewer)}
                if p.score is not None:
                    out["score"] = p.score
                if p.winprob is not None:
                    out["winprob"] = p.winprob
                return out
        return {}

    def _choosing_plan(self) -> bool:
        """Turncoat before both plans are set: the side to move is choosing its secret plan."""
        return self.info.id == "turncoat" and self.game.state.plan_node_side() is not None

    def _advance(self) -> None:
        """Draw chance events (off the clock: the server draws them at once), start the clock of the side to move,
        then the engine whose turn it is."""
        while self.node() == "chance":
            events = self.game.chance_events()
            tokens, weights = zip(*events)
            token = self.rng.choices(tokens, weights)[0]
            self._play(token, human=False)
        self.draw_offer, self.draw_note = None, ""  # a move answers (and withdraws) an offer
        self.turn_side, self.turn_start = self._clock_side(), self.now()
        if self.node() == "decision" and self.players[self._player_side()].kind == "engine" and not self.thinking:
            self._start_engine()
        if self.node() == "terminal":
            self._close_engines(self.result())

    def _player_side(self) -> int:
        return 0 if self.info.sides == 1 else self.game.side()

    def _play(self, token: str, human: bool, **meta) -> Ply:
        return self._play_on(self.game, self.plies, token, human, **meta)

    def _play_on(self, game: G.GuiGame, plies: list[Ply], token: str, human: bool, **meta) -> Ply:
        """Apply ``token`` to ``game`` and append its ply to ``plies`` (GameFailure: nothing changed)."""
        chance = game.node() == "chance"
        side = game.side() if not chance else (plies[-1].side if plies else 0)
        prev_to = next((G.to_square(p.token) for p in reversed(plies) if not p.event), None)
        ja = game.japanese(token, prev_to)
        game.apply(token)  # raises GameFailure: nothing changed
        ply = Ply(token, side, event=chance, human=human, ja=ja, secret=_is_plan(self.info.id, token), **meta)
        plies.append(ply)
        return ply

    # ------------------------------------------------------------------ clocks
    def timed(self) -> bool:
        """A side of this game has a clock. A timed game has no undo and no branch while it runs."""
        return any(p.clock is not None for p in self.players)

    def _clock_side(self) -> Optional[int]:
        """The side whose clock runs in the live position, or ``None``. Clocks run on the main line only (a branch
        after the game is untimed), at decisions: chance events are drawn at once, and turncoat's secret plans are
        chosen off the clock (the time a plan took would be a hint about it)."""
        if not self.timed() or self.active != 0 or self.result() is not None:
            return None
        if self.game.node() != "decision" or self._choosing_plan():
            return None
        side = self._player_side()
        return side if self.players[side].clock is not None else None

    def _used_ms(self, at: float) -> float:
        return max(0.0, (at - self.turn_start) * 1000)

    def _margin_ms(self, side: int) -> float:
        return ENGINE_MARGIN_MS if self.players[side].kind == "engine" else 0.0

    def _over_ms(self, side: int, used: float) -> float:
        """How far ``used`` ms overran what ``side`` had (its main time left, plus its byoyomi); <= 0: in time."""
        return spend(self.players[side].clock, self.clock_left[side], used)[1]

    def _flag_due_s(self) -> Optional[float]:
        """Seconds (of the session's clock) until the running side's flag falls, or ``None``."""
        side = self.turn_side
        if side is None or self.result() is not None:
            return None
        return -(self._over_ms(side, self._used_ms(self.now())) - self._margin_ms(side)) / 1000

    def _check_flag(self, at: Optional[float] = None) -> bool:
        """End the game if the running side's time is up at ``at`` (now); True if it was."""
        side = self.turn_side
        if side is None or self.result() is not None:
            return False
        at = self.now() if at is None else at
        if self._over_ms(side, self._used_ms(at)) <= self._margin_ms(side):
            return False
        self._flag(side)
        return True

    def _flag(self, side: int) -> None:
        name = self.players[side].name
        self.clock_left[side] = 0.0
        self._end((0.0 if side == 0 else 1.0, "time forfeit", f"{SIDES[side]} ({name}) ran out of time"))
        self._touch()

    def _end(self, result: tuple[float, str, str]) -> None:
        """End the live game with ``result`` (not from the rules): engines stopped and told, clocks stopped."""
        self.generation += 1  # a late engine answer is dropped
        self.thinking = False
        self.live_info = {}
        self.ended = result
        self.turn_side = None
        self.draw_offer = None
        self._close_engines(result)

    def _charge(self, side: int, at: float) -> Optional[float]:
        """Take ``side``'s move (made at ``at``) off its clock: byoyomi per move, a Fischer increment added. The
        time the move took (s), or ``None`` when the flag fell (the game is over, the move not played)."""
        used = self._used_ms(at)
        if self.turn_side != side:
            return used / 1000
        tc = self.players[side].clock
        left, over = spend(tc, self.clock_left[side], used)
        if over > self._margin_ms(side):
            self._flag(side)
            return None
        if tc.byoyomi is None and over > 0:  # an engine within its margin: no time left, but no time owed either
            left = tc.inc or 0
        self.clock_left[side] = max(0.0, left)
        self.turn_side = None
        return used / 1000

    def _clocks_json(self, at: float) -> Optional[dict]:
        """The clocks as the page shows them: each side's time control and time left at ``at`` (the running
        side's main time and byoyomi counted down); the page counts down from here until its next state."""
        if not self.timed():
            return None
        running = self.turn_side if self.result() is None else None
        used = self._used_ms(at) if running is not None else 0.0
        res = self.result()
        sides = []
        for side, player in enumerate(self.players):
            tc = player.clock
            if tc is None:
                sides.append(None)
                continue
            left = self.clock_left[side] - (used if side == running else 0.0)
            entry = {"kind": tc.kind, "main": tc.main, "byoyomi": tc.byoyomi, "inc": tc.inc,
                     "left": int(max(0.0, left)),
                     "flag": res is not None and res[1] == "time forfeit" and res[0] == (0.0 if side == 0 else 1.0)}
            if tc.byoyomi is not None:
                entry["byoyomi_left"] = int(max(0.0, tc.byoyomi + min(0.0, left)))
            sides.append(entry)
        return {"running": running, "sides": sides}

    def _engine_limit(self, side: int) -> Any:
        """The ``go`` limits of ``side``'s engine: its own depth / time / nodes and, when its clock runs, the clocks
        as the match runner sends them (``btime``/``wtime``, ``byoyomi`` or ``binc``/``winc``)."""
        from usi.client import UsiLimit

        spec = self.players[side]
        limit = UsiLimit(depth=spec.depth, movetime=spec.movetime, nodes=spec.nodes)
        if self.turn_side == side:
            for s, (clock_key, inc_key) in enumerate((("btime", "binc"), ("wtime", "winc"))):
                tc = self.players[s].clock
                if tc is not None:
                    setattr(limit, clock_key, max(0, int(self.clock_left[s])))
                    if tc.inc is not None:
                        setattr(limit, inc_key, tc.inc)
            if spec.clock.byoyomi is not None:
                limit.byoyomi = spec.clock.byoyomi
        elif spec.depth is None and spec.movetime is None and spec.nodes is None:
            # a clock-only engine off the clock (a turncoat plan, a branch after the game): a plain move's time
            limit.movetime = PLAIN_GO_MS if self._choosing_plan() else DEFAULT_MOVETIME_MS
        return limit

    # ------------------------------------------------------------------ engine turns
    def _position_line(self, side: int) -> str:
        if self.info.id == "turncoat":
            return self.game.state.position_command(side)
        return self._line_of([p.token for p in self.plies])

    def _start_engine(self) -> None:
        side = self._player_side()
        if self.engines[side] is None:
            self.engines[side] = EnginePlayer(self.players[side], self.info.id)
        player = self.engines[side]
        line = self._position_line(side)
        limit = self._engine_limit(side)
        generation = self.generation
        # An engine choosing its plan thinks about nothing but its secret: its info lines are neither kept nor
        # announced (no viewer may see them while the game runs, not even how many there are).
        secret = self._choosing_plan()
        self.thinking = True
        self.live_info = {"side": side}

        def on_info(info: dict) -> None:
            if secret:
                return
            with self.lock:
                if self.generation == generation:
                    self.live_info.update(_json_info(info, side))
                    self._touch()

        def work() -> None:
            t0 = time.perf_counter()
            try:
                res = player.think(line, limit, on_info, side)
                failure = None
            except Exception as exc:  # noqa: BLE001 - a crashed or silent engine ends the game, not the server
                res, failure = None, f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            with self.lock:
                if self.generation != generation:
                    return
                self.thinking = False
                if failure is None and self.turn_side == side:
                    took = self._charge(side, self.now())  # the clock's time, not the pipe's
                    if took is None:
                        return
                    elapsed = took
                else:
                    elapsed = time.perf_counter() - t0
                self._engine_answer(side, res, failure, elapsed)
                self._touch()

        threading.Thread(target=work, name=f"gui-engine-{side}", daemon=True).start()

    def _engine_answer(self, side: int, res, failure: Optional[str], elapsed: float) -> None:
        name = self.players[side].name
        if failure is not None:
            self.error = f"{name} failed: {failure}"
            self.ended = (0.0 if side == 0 else 1.0, "crash", self.error)
            self._close_engines(self.ended)
            return
        if res.resign:
            self.ended = (0.0 if side == 0 else 1.0, "resign", f"{name} resigned")
        elif res.win:
            if self.game.declare_win():
                self.ended = (1.0 if side == 0 else 0.0, "entering king", f"{name} declared")
            else:
                self.ended = (0.0 if side == 0 else 1.0, "illegal declaration", f"{name} declared a win")
        else:
            info = _json_info(res.info, side)
            try:
                self._play(res.move, human=False, score=info.get("score"), winprob=info.get("winprob"),
                           depth=info.get("depth"), pv=info.get("pv", []), time=round(elapsed, 3))
            except G.GameFailure as exc:
                self.error = f"{name} played an illegal move {res.move}: {exc}"
                self.ended = (0.0 if side == 0 else 1.0, "illegal move", self.error)
        if self.ended is not None:
            self._close_engines(self.ended)
            return
        self.live_info = {}
        self._advance()

    # ------------------------------------------------------------------ requests
    def play(self, token: Any) -> None:
        with self.lock:
            if not isinstance(token, str) or not token.strip():
                raise RequestError("'move' must be a non-empty string")
            at = self.now()
            self._check_flag(at)
            if self.node() == "terminal":
                raise RequestError(f"the game is over ({_result_text(self.result())})")
            if self.node() != "decision" or self.players[self._player_side()].kind != "human":
                raise RequestError("it is not a person's turn to move")
            if self.thinking:
                raise RequestError("the engine is thinking")
            side = self._player_side()
            try:
                ply = self._play(token.strip(), human=True)
            except G.GameFailure as exc:
                raise RequestError(f"illegal move {token!r}: {exc}") from None
            if self.turn_side == side:
                ply.time = round(self._charge(side, at), 3)  # in time: the flag was checked at ``at``
            self.redo.clear()
            self.error = ""
            self._advance()
            self._touch()

    # ------------------------------------------------------------------ review and branches
    def _position_at(self, line: Any, ply: Any) -> tuple[int, int]:
        if isinstance(line, bool) or not isinstance(line, int) or not 0 <= line < len(self.lines):
            raise RequestError(f"'line' must be a line of this game, 0 to {len(self.lines) - 1}, not {line!r}")
        if isinstance(ply, bool) or not isinstance(ply, int) or not 0 <= ply <= len(self.lines[line]):
            raise RequestError(f"'ply' must be from 0 to {len(self.lines[line])} in line {line}, not {ply!r}")
        return line, ply

    def _game_at(self, line: int, ply: int) -> tuple[G.GuiGame, list[Ply]]:
        """A replay of line ``line`` up to ``ply`` plies (the session's own game for the live position)."""
        if line == self.active and ply == len(self.plies):
            return self.game, self.plies
        return self._replay(self.info, self.options, self.start_sfen, [_copy(p) for p in self.lines[line][:ply]])

    def _timed_refusal(self) -> str:
        """Why no move may be taken back or played elsewhere: a timed game being played (its moves stand)."""
        self._check_flag()
        if self.timed() and self._line_result(0) is None:
            return ("a timed game's moves stand: no undo or branch until it is over (then branches are played "
                    "untimed)")
        return ""

    def _branch_refusal(self, game: G.GuiGame) -> str:
        """Why no person may play in ``game`` (a position shown in review), or "" when one may."""
        if game.node() != "decision":
            return "no move can be played in that position (the game is over there, or a chance event is next)"
        side = 0 if self.info.sides == 1 else game.side()
        if self.players[side].kind != "human":
            return "it is not a person's turn in that position"
        if self.info.id == "mawarikudoi" and getattr(game.state, "phase", "") == "turn":
            return "a mawarikudoi turn is built at the live position only"
        if self.info.id == "turncoat":
            # a move there would show that side's plan and legal moves: only to that side, and never once the
            # finished game has shown both plans
            if self._plans_shown():
                return "the game is over and both plans were shown: no branch can be played"
            if self.viewer() != side:
                return "that position's side to move is not the one this page may show"
        return ""

    def view(self, line: Any, ply: Any) -> dict:
        """The position after ``ply`` plies of line ``line`` as this page's viewer may see it (review): the board,
        the last move's squares, the king in check (as the state's ``check``), the side to move and, when a person
        may play there (a branch), the legal moves."""
        with self.lock:
            line, ply = self._position_at(line, ply)
            game, plies = self._game_at(line, ply)
            viewer = self.viewer()
            see = self._game_viewer(viewer)
            prev = next((p for p in reversed(plies) if not p.event and not p.secret), None)
            live = line == self.active and ply == len(self.plies)
            refusal = self._branch_refusal(game) or ("" if live else self._timed_refusal())
            legal = [] if refusal else game.legal_entries()[0]
            node = game.node()
            return {"line": line, "ply": ply, "board": game.board(see if self.info.id == "turncoat" else None).to_json(),
                    "sfen": game.sfen(see), "node": node, "side": game.side() if node != "chance" else 0,
                    "last_move": G.last_move_squares(prev.token) if prev else [], "check": game.check_square(),
                    "legal": legal, "refusal": refusal, "panel": game.panel(see), "live": live}

    def play_at(self, token: Any, line: Any, ply: Any) -> dict:
        """A person's move in the position after ``ply`` plies of line ``line``. At the live position it is an
        ordinary move; elsewhere the move a line already has there goes on along that line (which becomes the
        one played), and any other move starts a new line, a branch (the others are kept). Answers where the
        move led: ``{"line", "ply"}``."""
        with self.lock:
            if not isinstance(token, str) or not token.strip():
                raise RequestError("'move' must be a non-empty string")
            token = token.strip()
            line, ply = self._position_at(line, ply)
            if line == self.active and ply == len(self.plies):
                self.play(token)
                return {"line": self.active, "ply": ply + 1}
            prefix = [p.token for p in self.lines[line][:ply]] + [token]
            same = next((k for k in [line] + list(range(len(self.lines)))
                         if [p.token for p in self.lines[k][:ply + 1]] == prefix), None)
            game, plies = self._game_at(line, ply)
            refusal = self._branch_refusal(game) or self._timed_refusal()
            if refusal:
                raise RequestError(refusal)
            if same is not None:
                self._switch(same)
                return {"line": same, "ply": ply + 1}
            try:
                self._play_on(game, plies, token, human=True)
            except G.GameFailure as exc:
                raise RequestError(f"illegal move {token!r}: {exc}") from None
            self._stop_thinking()
            if ply == len(self.lines[line]) and self.line_ends[line] is None and game.result() is None:
                self.active = line  # the end of an unfinished line: it goes on
            else:
                self.lines.append([])
                self.line_ends.append(None)
                self.active = len(self.lines) - 1
            self.game, self.plies = game, plies
            self.redo.clear()
            self.error = ""
            self._advance()
            self._touch()
            return {"line": self.active, "ply": ply + 1}

    def _stop_thinking(self) -> None:
        self.generation += 1
        if self.thinking:
            for eng in self.engines:
                if eng is not None:
                    eng.stop()
        self.thinking = False
        self.live_info = {}

    def _switch(self, line: int) -> None:
        """Play line ``line`` from now on (its end is the live position)."""
        if line == self.active:
            return
        game, plies = self._replay(self.info, self.options, self.start_sfen, [_copy(p) for p in self.lines[line]])
        self._stop_thinking()
        self.active = line
        self.game, self.plies = game, plies
        self.redo.clear()
        self.error = ""
        self._advance()
        self._touch()

    def _line_result(self, line: int) -> Optional[tuple[float, str, str]]:
        if line == self.active:
            return self.result()
        if self.line_ends[line] is not None:
            return self.line_ends[line]
        key = (line, tuple(p.token for p in self.lines[line]))  # a line not played now does not change
        if key not in self._results:
            r = self._game_at(line, len(self.lines[line]))[0].result()
            self._results[key] = None if r is None else (r[0], r[1], "")
        return self._results[key]

    def _tree(self) -> list[tuple[int, int, int]]:
        """(line, parent line or -1, fork) of each line with moves of its own, main line first, each line's
        branches after it (the later forks first). A line's parent is the earliest line sharing the most moves
        with it; ``fork`` is how many."""
        from .kifcsa import Line, tree_order

        # end="x": a branch may go on past another line's last move (KIF could not say so; the page can)
        return tree_order([Line(tokens=[p.token for p in ln], end="x") for ln in self.lines])

    def resign(self) -> None:
        with self.lock:
            self._check_flag()
            if self.node() == "terminal":
                raise RequestError("the game is over")
            humans = [s for s in (0, 1) if self.players[s].kind == "human"]
            side = humans[0] if len(humans) == 1 else self._player_side()
            self._end((0.0 if side == 0 else 1.0, "resign", f"{SIDES[side]} resigned"))
            self._touch()

    def offer_draw(self, action: Any) -> None:
        """A draw offer (``offer``) and its answer (``accept`` / ``decline``). A person offers: the one person
        playing, or with two at the screen the side to move; the other person answers, an engine at once from its
        own last score (accepts at :data:`DRAW_ACCEPT_CP` or worse for itself, no search). A move withdraws an
        offer that has no answer yet."""
        with self.lock:
            if action not in ("offer", "accept", "decline"):
                raise RequestError(f"'action' must be offer, accept or decline, not {action!r}")
            self._check_flag()
            if self.node() == "terminal":
                raise RequestError(f"the game is over ({_result_text(self.result())})")
            if self.info.sides == 1:
                raise RequestError("the solitaire has no one to agree a draw with")
            humans = [s for s in (0, 1) if self.players[s].kind == "human"]
            if not humans:
                raise RequestError("only a person offers a draw (engines play each other here)")
            if action == "offer":
                if self.draw_offer is not None:
                    raise RequestError(f"{SIDES[self.draw_offer]}'s draw offer waits for an answer")
                side = humans[0] if len(humans) == 1 else self._player_side()
                other = 1 - side
                if self.players[other].kind == "human":
                    self.draw_offer, self.draw_note = side, f"{SIDES[side]} offers a draw"
                elif self._engine_takes_draw(other):
                    self._agree(side)
                else:
                    self.draw_note = f"{SIDES[other]} ({self.players[other].name}) declines the draw"
            elif self.draw_offer is None:
                raise RequestError("no draw offer waits for an answer")
            elif action == "accept":
                self._agree(self.draw_offer)
            else:
                self.draw_note = f"{SIDES[1 - self.draw_offer]} declines the draw"
                self.draw_offer = None
            self._touch()

    def _engine_takes_draw(self, side: int) -> bool:
        """An engine's answer to a draw offer: yes when its last reported score (its own point of view) is
        :data:`DRAW_ACCEPT_CP` or worse; no when it reported none."""
        # a turncoat plan's score is secret (the other side's answer would hint at it): moves only
        own = next((_mover_score(p) for p in reversed(self.plies)
                    if p.side == side and not p.event and not p.human and not p.secret and p.score is not None), None)
        return own is not None and own <= -DRAW_ACCEPT_CP

    def _agree(self, offered_by: int) -> None:
        self._end((0.5, "agreement", f"{SIDES[offered_by]} offered a draw, {SIDES[1 - offered_by]} accepted"))

    def declare(self) -> None:
        """入玉宣言: the person to move in standard shogi declares a win by entering king, judged by the match
        runner's rule (:data:`ENTERING_KING_RULE`). A declaration the position does not meet is refused with what
        is missing, and the game goes on (no loss: the person may have misjudged the points)."""
        from engine.position import EnteringKingRule

        with self.lock:
            at = self.now()
            self._check_flag(at)
            if self.node() == "terminal":
                raise RequestError(f"the game is over ({_result_text(self.result())})")
            if self.info.id != "shogi":
                raise RequestError("入玉宣言 (an entering-king declaration) is made in standard shogi only")
            side = self._player_side()
            if self.node() != "decision" or self.players[side].kind != "human" or self.thinking:
                raise RequestError("a declaration is made by a person on their own turn")
            pos = self.game.state
            if not pos.can_declare_win(ENTERING_KING_RULE):
                rule = EnteringKingRule(ENTERING_KING_RULE)
                ksq = pos.king_square(side)
                points, pieces = pos.declaration_points(side)
                missing = []
                if ksq is None or not pos.tables.zone[side, ksq]:
                    missing.append("the king is not in the enemy camp")
                if pos.is_check():
                    missing.append("the king is in check")
                if pieces < 10:
                    missing.append(f"{pieces} of 10 pieces in the enemy camp")
                if points < rule.needed_points[side]:
                    missing.append(f"{points} of {rule.needed_points[side]} points")
                raise RequestError(f"入玉宣言 refused ({rule.value}): {'; '.join(missing)}; the game goes on")
            if self._charge(side, at) is None:
                return
            self._end((1.0 if side == 0 else 0.0, "entering king",
                       f"{SIDES[side]} declared (入玉宣言, {ENTERING_KING_RULE})"))
            self._touch()

    def _plans_shown(self) -> bool:
        """A finished turncoat game: the page showed every plan, so taking a move back would let a person play on
        knowing the other side's plan."""
        return self.info.id == "turncoat" and self.result() is not None

    def undo(self) -> None:
        with self.lock:
            if self._plans_shown():
                raise RequestError("the game is over and both plans were shown: it cannot be taken back "
                                   "(start a new game)")
            if self.timed():
                raise RequestError("a timed game has no undo: a move once made stands (start an untimed game to "
                                   "take moves back)")
            cut = next((i for i in range(len(self.plies) - 1, -1, -1) if self.plies[i].human), None)
            if cut is None:
                raise RequestError("nothing to undo (no move by a person)")
            self._rewind(cut)
            self._touch()

    def _rewind(self, cut: int) -> None:
        segment = self.plies[cut:]
        kept = self.plies[:cut]
        game, plies = self._replay(self.info, self.options, self.start_sfen, [_copy(p) for p in kept])
        self._stop_thinking()
        self.game, self.plies = game, plies
        self.redo.append(segment)
        self.ended = None
        self.error = ""

    def redo_move(self) -> None:
        with self.lock:
            if not self.redo:
                raise RequestError("nothing to redo")
            if self.timed():
                raise RequestError("a timed game has no redo")
            if self.thinking:
                raise RequestError("the engine is thinking")
            segment = self.redo.pop()
            for ply in segment:
                if self.node() == "terminal":
                    break
                self.game.apply(ply.token)
                self.plies.append(ply)
            self._advance()
            self._touch()

    # ------------------------------------------------------------------ records
    def record(self, viewer: Optional[int]) -> dict:
        """The match runner's JSON record (see :mod:`usi.records`) of the main line, with the GUI's extras: the
        other lines as ``variations`` (each every token from the start, its result and comments) and ``comments``
        (by the number of plies before them); secrets hidden."""
        main = self.lines[0]
        res = self._line_result(0)
        history = self._tokens(main, viewer)
        moves = [t for t, p in zip(history, main) if not p.event]
        events = [[i, t] for i, (t, p) in enumerate(zip(history, main)) if p.event]
        names = [p.name for p in self.players]
        result = _result_word(res)
        # a hidden plan's time, score and depth are the engine's thinking about its secret: not shown either
        decided = [p if self._visible(p, viewer) else Ply("plan=?", p.side, secret=True)
                   for p in main if not p.event]
        variations = []
        for k, _, fork in self._tree()[1:]:
            r = self._line_result(k)
            variations.append({"fork": fork, "history": self._tokens(self.lines[k], viewer), "result": _result_word(r),
                               "reason": r[1] if r else None, "detail": r[2] if r else "",
                               "comments": self._comments(self.lines[k], viewer)})
        return {
            "game": 1, "pair": 0, "variant": self.info.id, "seed": self.seed, "options": self.options,
            "sente": names[0], "gote": names[1], "start_sfen": self.game.start_view(self._game_viewer(viewer)),
            "opening": {"index": 0, "line": "startpos", "plies": 0},
            "moves": moves, "events": events, "history": history,
            "times": [p.time for p in decided], "scores": [_mover_score(p) for p in decided],
            "depths": [p.depth for p in decided],
            "result": result, "winner": None if result in (None, "draw") else names[SIDES.index(result)],
            "reason": res[1] if res else None, "detail": res[2] if res else "",
            "final_sfen": self._game_at(0, len(main))[0].sfen(self._game_viewer(viewer)), "started": self.started,
            "players": [p.to_json() for p in self.players],
            "comments": self._comments(main, viewer, self.start_comment), "variations": variations,
        }

    def _tokens(self, line: list[Ply], viewer: Optional[int]) -> list[str]:
        return [p.token if self._visible(p, viewer) else "plan=?" for p in line]

    def _comments(self, line: list[Ply], viewer: Optional[int], start: str = "") -> dict[str, str]:
        out = {"0": start} if start else {}
        out.update({str(i + 1): p.comment for i, p in enumerate(line) if p.comment and self._visible(p, viewer)})
        return out

    def export(self, fmt: str) -> tuple[str, str, str]:
        """(text, mime type, file name) of the record in ``json``, ``kif``, ``ki2`` or ``csa`` (the last three for
        standard shogi: KIF and KI2 with every line as a 変化 branch, CSA the main line)."""
        from . import kifcsa

        with self.lock:
            stem = f"{self.info.id}-{self.started.replace(':', '').replace('-', '')}"
            if fmt == "json":
                rec = self.record(self.viewer())
                return json.dumps(rec, ensure_ascii=False, indent=1) + "\n", "application/json", stem + ".json"
            if fmt not in ("kif", "ki2", "csa"):
                raise RequestError(f"unknown record format {fmt!r} (json, kif, ki2, csa)")
            if self.info.id != "shogi":
                raise RequestError(f"{fmt.upper()} records exist for standard shogi only; save JSON instead")
            start = self.game.start_sfen
            lines = []
            for k, line in enumerate(self.lines):
                comments = {i + 1: p.comment for i, p in enumerate(line) if p.comment}
                if k == 0 and self.start_comment:
                    comments[0] = self.start_comment
                lines.append(kifcsa.Line(tokens=[p.token for p in line], result=self._line_result(k),
                                         comments=comments, times=[p.time for p in line]))
            rec = kifcsa.Record(None if start.split()[:3] == kifcsa.STARTPOS.split()[:3] else start, lines,
                                (self.players[0].name, self.players[1].name))
            writer = {"kif": kifcsa.to_kif, "ki2": lambda r, started: kifcsa.to_ki2(r), "csa": kifcsa.to_csa}[fmt]
            return writer(rec, self.started), "text/plain; charset=utf-8", f"{stem}.{fmt}"

    def load(self, text: Any, players=None, default_players=None, replace: bool = True,
             variant: Optional[str] = None) -> None:
        """Load a JSON record (any variant), a KIF, KI2 or CSA file (standard shogi), or a position: an SFEN,
        ``sfen ...``, ``position startpos|sfen ... [moves ...]`` (of ``variant``, else this game's variant, else
        standard shogi or dai shogi, whichever reads it). A record's branches, comments and result (投了, %TORYO,
        a JSON record's ``result``) are kept: a finished game stays finished. On any error nothing changes.

        The players are ``players`` when given; else those the JSON record names (persons and our own engine with
        its limit; an engine given by a command is never started from a file: ``default_players`` plays that side
        instead, and the page is told); else ``default_players`` (the page's form), else the current players."""
        from . import kifcsa

        if not isinstance(text, str) or not text.strip():
            raise RequestError("the record is empty")
        if variant is not None and not isinstance(variant, str):
            raise RequestError(f"variant must be a variant name, not {variant!r}")
        stripped = text.lstrip("\ufeff \n\r\t")
        result, branches, comments, start_comment, position = None, [], {}, "", False
        try:
            if stripped.startswith("{"):
                try:
                    rec = json.loads(stripped)
                except RecursionError:
                    raise RequestError("malformed JSON record: nested too deeply") from None
                except ValueError as exc:  # not JSON, or a number of more than 4,300 digits
                    raise RequestError(f"malformed JSON record: {exc}") from None
                kind, start, tokens, options = _from_json_record(rec)
                result, branches, comments = _json_extras(rec, tokens)
                start_comment = (rec.get("comments") or {}).get("0", "")
                recorded = rec.get("players")
            else:
                recorded = None
                kind, options = "shogi", {}
                read = kifcsa.parse_position(stripped)
                if read is not None:
                    position = True
                    start, tokens = read
                else:
                    record = kifcsa.parse_record(stripped)
                    start, main = record.start, record.lines[0]
                    tokens, result = main.tokens, main.result
                    start_comment = main.comments.get(0, "")
                    for line in record.lines:
                        for n, c in line.comments.items():
                            if n > 0:
                                comments[tuple(line.tokens[:n])] = c
                    branches = [(line.tokens, line.result) for line in record.lines[1:]]
        except (kifcsa.RecordError, ValueError, IndexError, KeyError) as exc:  # what a mangled file makes the reader
            raise RequestError(f"malformed record: {exc}") from None

        def plies_of(tokens: list[str]) -> list[Ply]:
            return [Ply(t, 0, comment=comments.get(tuple(tokens[:i + 1]), "")) for i, t in enumerate(tokens)]

        with self.lock:
            fallback = default_players if default_players is not None else [p.to_json() for p in self.players]
            note = ""
            if players is not None:
                use = players
            elif recorded is not None:
                use, note = _recorded_players(recorded, fallback, self.engine_table)
            else:
                use = fallback
            extra = [(plies_of(t), r) for t, r in branches]
            if not position:
                self._setup(kind, options, use, self.seed, start, plies=plies_of(tokens), replace=replace,
                            result=result, branches=extra, start_comment=start_comment)
            else:  # a position names no variant: the one asked for, this game's, then shogi and dai shogi
                first = None
                for kind in dict.fromkeys([variant or self.info.id, self.info.id, "shogi", "daishogi2017"]):
                    try:
                        self._setup(kind, self.options if kind == self.info.id else {}, use, self.seed, start,
                                    plies=plies_of(tokens), replace=replace)
                        break
                    except ConfirmError:
                        raise
                    except RequestError as exc:
                        first = first or exc
                else:
                    raise RequestError(f"malformed position: {first}")
            self.error = note
            self._touch()

    # ------------------------------------------------------------------ the page's view
    def state(self) -> dict:
        with self.lock:
            at = self.now()
            self._check_flag(at)
            viewer = self.viewer()
            game, res = self.game, self.result()
            node = self.node()
            side = self._player_side() if node != "terminal" else game.side() if node != "chance" else 0
            human_turn = node == "decision" and self.players[side].kind == "human" and not self.thinking
            legal = []
            turn_build = None
            wave_build = False
            if human_turn and self.info.id == "mawarikudoi" and game.state.phase == "turn":
                # a turn of N actions is chosen by its end (/api/turnend) or built action by action (/api/turnstep)
                turn_build = {"steps": game.state.steps}
            elif human_turn:
                # a silver wave is built silver by silver in any order through /api/wavestep
                legal, wave_build = game.legal_entries()
            see = self._game_viewer(viewer)
            board = game.board(see if self.info.id == "turncoat" else None).to_json()
            # the last move's squares: a plan is no move (and the other side's plan is secret)
            prev = next((p for p in reversed(self.plies) if not p.event and not p.secret), None)
            history = [self._entry(i, p, viewer) for i, p in enumerate(self.plies)]
            lines = []
            for k, parent, fork in self._tree():
                line_res = self._line_result(k)
                lines.append({"line": k, "parent": parent, "fork": fork, "length": len(self.lines[k]),
                              "moves": [self._entry(i, p, viewer) for i, p in enumerate(self.lines[k]) if i >= fork],
                              "result": None if line_res is None else _result_text(line_res)})
            events = {}
            for i, p in enumerate(self.plies):
                if p.event and self._visible(p, viewer):
                    events[p.token.split("=", 1)[0]] = {"token": p.token, "i": i, "side": p.side}
            out = {
                "version": self.version, "variant": self.info.to_json(), "options": self.options,
                "players": [p.to_json() for p in self.players], "seed": self.seed,
                "sfen": game.sfen(see), "start_sfen": game.start_view(see),
                "board": board, "node": node, "side": side, "human_turn": human_turn, "thinking": self.thinking,
                "legal": legal, "last_move": G.last_move_squares(prev.token) if prev else [],
                "check": game.check_square(),
                "history": history, "events": events, "panel": game.panel(see),
                "info": self._info_for(self.live_info, viewer) if self.thinking else self._last_engine_info(viewer),
                "result": None if res is None else {"score": res[0], "reason": res[1], "detail": res[2],
                                                    "text": _result_text(res)},
                "error": self.error,
                "can_undo": any(p.human for p in self.plies) and not self._plans_shown() and not self.timed(),
                "can_redo": bool(self.redo) and not self.timed(),
                "clocks": self._clocks_json(at), "draw_offer": self.draw_offer, "draw_note": self.draw_note,
                "can_declare": human_turn and self.info.id == "shogi",
                "viewer": viewer, "turn_build": turn_build, "wave_build": wave_build, "game": self.game_number,
                "line": self.active, "lines": lines, "start_comment": self.start_comment,
                "analysis": self._analysis_json(viewer),
            }
            return out

    def _entry(self, i: int, p: Ply, viewer: Optional[int]) -> dict:
        """A ply as the move list shows it to ``viewer``."""
        if self._visible(p, viewer):
            return {"i": i, "token": p.token, "ja": p.ja, "side": p.side, "event": p.event, "score": p.score,
                    "winprob": p.winprob, "depth": p.depth, "pv": self._pv_for(p.pv, p.side, viewer),
                    "human": p.human, "comment": p.comment}
        # a hidden plan: neither it nor what the engine thought of it
        return {"i": i, "token": "plan:?", "ja": "伏兵 ？", "side": p.side, "event": p.event, "score": None,
                "winprob": None, "depth": None, "pv": [], "human": p.human, "comment": ""}

    def _person_to_move(self, variant: str, what: str) -> None:
        if self.info.id != variant:
            raise RequestError(f"{what} only in {variant}")
        if self.node() != "decision" or self.players[self._player_side()].kind != "human" or self.thinking:
            raise RequestError("it is not a person's turn to move")

    def turn_step(self, actions: Any, ends: bool = False) -> dict:
        """Mawarikudoi: a person's turn built action by action (nothing is played until the whole token is sent).
        With ``ends`` the answer also lists where the rest of the turn can end (``ends``, see
        :func:`gui.games.mawari_turn_ends`), any of which :meth:`turn_end` plays at once; ``win_token`` is the
        whole turn that finishes the race, when the king can."""
        with self.lock:
            self._person_to_move("mawarikudoi", "turns are built action by action")
            try:
                out = self.game.turn_step(actions)
                if out["left"] > 0:
                    rest = self.game.turn_ends(actions)
                    if ends:
                        out["ends"] = rest["ends"]
                    if "win_token" in rest:
                        out["win_token"] = rest["win_token"]
                return out
            except G.GameFailure as exc:
                raise RequestError(str(exc)) from None

    def turn_end(self, end: Any, actions: Any = None) -> None:
        """Mawarikudoi: play the whole turn made of ``actions`` (none by default) and then the canonical action
        path to end state ``end``."""
        with self.lock:
            self._person_to_move("mawarikudoi", "a turn is chosen by where it ends")
            try:
                token = self.game.turn_end_token(end, [] if actions is None else actions)
            except G.GameFailure as exc:
                raise RequestError(str(exc)) from None
            self.play(token)  # the lock is re-entrant: nothing moves in between

    def wave_step(self, moves: Any) -> dict:
        """Fantasista: the silver wave chosen so far, in any order (see :meth:`gui.games.GuiGame.wave_step`); the
        ``token`` it answers is played with ``/api/move`` like any other."""
        with self.lock:
            self._person_to_move("fantasista", "a silver wave is built silver by silver")
            try:
                return self.game.wave_step(moves)
            except G.GameFailure as exc:
                raise RequestError(str(exc)) from None

    # ------------------------------------------------------------------ analysis (issue 51, item 5)
    def _analysis_close(self) -> list[threading.Thread]:
        """End the analysis and its engine (a new game, the session's end); the thread closing the engine."""
        analyser = getattr(self, "analyser", None)
        self.analyser = None
        self.an = _analysis_off()
        return [] if analyser is None else [analyser.close()]

    def analysis_start(self, engine: Any = None, multipv: Any = None, line: Any = None, ply: Any = None) -> None:
        """Analyse a position without end (``go infinite``): the live one, followed as the game goes on, or with
        ``line`` and ``ply`` the one after that many plies of that line (review). ``engine``: a name the server
        offers (ours by default); ``multipv``: 1 to 5 lines (engines without the USI option give one). Calling it
        again changes the position or the settings: the running search is stopped and a new one started."""
        with self.lock:
            name = self.an["engine"] if engine is None else engine
            if not isinstance(name, str) or name not in self.engine_table:
                raise RequestError(f"unknown engine {name!r} (offered: {', '.join(self.engine_table)})")
            count = self.an["multipv"] if multipv is None else multipv
            low, high = AN.MULTIPV_RANGE
            if isinstance(count, bool) or not isinstance(count, int) or not low <= count <= high:
                raise RequestError(f"multipv must be an integer from {low} to {high}, not {count!r}")
            self._check_flag()
            if self._timed_play():
                raise RequestError("a timed game is being played: no analysis until it is over (its engine would "
                                   "take the players' time and help a person)")
            target = None
            if line is not None or ply is not None:
                target = self._position_at(line, ply)
                if target == (self.active, len(self.plies)):
                    target = None  # the live position: followed
            if self.analyser is not None and self.an["engine"] != name:
                self.analyser.close()
                self.analyser = None
            self.an.update(on=True, engine=name, multipv=count, target=target, key=None, error="")
            self._analysis_follow(force=True)
            self._touch()

    def analysis_stop(self) -> None:
        """Stop the analysis (its last lines stay shown until it is started again)."""
        with self.lock:
            self.an.update(on=False, running=False, key=None)
            self.an["job"] = None
            if self.analyser is not None:
                self.analyser.want(None)
            self._touch()

    def _timed_play(self) -> bool:
        """A timed game is being played (its main line has no result yet): no analysis runs then, so that no
        analysis engine competes with a clocked engine for the CPU or helps a person against the clock."""
        return self.timed() and self._line_result(0) is None

    def _analysis_target(self) -> Optional[tuple[int, int]]:
        target = self.an["target"]
        if target is None:
            return self.active, len(self.plies)
        line, ply = target
        return target if line < len(self.lines) and ply <= len(self.lines[line]) else None

    def _analysis_key(self) -> Optional[tuple]:
        """What the analysis depends on: the game, the position's tokens, the viewer and the settings."""
        target = self._analysis_target()
        if target is None:
            return None
        line, ply = target
        return (self.game_number, tuple(p.token for p in self.lines[line][:ply]), self.viewer(),
                self.an["engine"], self.an["multipv"])

    def _analysis_follow(self, force: bool = False) -> None:
        """Start the search the analysis wants now, when its position (or viewer, or settings) changed."""
        an = getattr(self, "an", None)
        if not an or not an["on"]:
            return
        key = self._analysis_key()
        if key == an["key"] and not force:
            return
        an.update(key=key, lines={}, stats={}, running=False, note="", outlook={"outlooks": []})
        an["job"] = None
        timed = key is not None and self._timed_play()  # a guard: analysis_start refuses it, a new game ends it
        if key is None or timed:
            an.update(on=False, note="a timed game is being played: no analysis until it is over" if timed
                      else "the analysed position is gone (taken back)")
            if self.analyser is not None:
                self.analyser.want(None)
            return
        line, ply = self._analysis_target()
        game, plies = self._game_at(line, ply)
        try:
            an["outlook"] = AN.coming_events(game)
        except G.GameFailure:
            pass
        job, note = self._analysis_job(game, plies, key)
        an["note"] = note
        if job is None:
            if self.analyser is not None:
                self.analyser.want(None)
            return
        if self.analyser is None:
            spec = PlayerSpec.parse({"kind": "engine", "engine": an["engine"]}, self.engine_table)
            self.analyser = AN.Analyser(EnginePlayer(spec, self.info.id), self._analysis_info, self._analysis_end)
        an.update(job=job, running=True)
        self.analyser.want(job)

    def _analysis_job(self, game: G.GuiGame, plies: list[Ply], key: tuple) -> tuple[Optional[AN.Job], str]:
        """The search of the analysed position, or why there is none. In turncoat the engine gets the position as
        the page's viewer sees it (the other side's plan ``?``), so nothing it answers can know a hidden plan."""
        node, viewer = game.node(), key[2]
        if node == "terminal":
            return None, "the game is over in this position"
        if node == "chance":
            return None, "a chance event comes next (its probabilities below)"
        tokens = [p.token for p in plies]
        if self.info.id == "turncoat":
            if viewer is None:
                return None, "engines play each other: no side's view to analyse (neither plan may be shown)"
            if viewer == -1:
                line = f"position sfen {self.start_sfen}" + (f" moves {' '.join(tokens)}" if tokens else "")
            else:
                line = game.state.position_command(viewer)
        else:
            line = self._line_of(tokens)
        side = 0 if self.info.sides == 1 else game.side()
        prev_to = next((G.to_square(p.token) for p in reversed(plies) if not p.event and not p.secret), None)
        stop_words = ("defect", "plan") if self.info.id == "turncoat" else ()
        return AN.Job(key=key, line=line, multipv=self.an["multipv"], side=side, game=AN.copy_game(game),
                      prev_to=prev_to, stop_words=stop_words), ""

    def _line_of(self, tokens: list[str]) -> str:
        """The ``position`` line of the game's start and ``tokens`` (not turncoat: it sends views)."""
        if self.game.is_position and self.start_sfen == G.GuiGame(self.info, self.options).start_sfen:
            base = "startpos"
        else:
            base = f"sfen {self.start_sfen}"
        return f"position {base}" + (f" moves {' '.join(tokens)}" if tokens else "")

    def _analysis_info(self, job: AN.Job, info: dict) -> None:
        """An ``info`` line of the analysis engine: its line (by ``multipv``) as the page shows it."""
        if not any(k in info for k in ("score", "pv", "depth", "string")):
            return
        out = _json_info(info, job.side)
        viewer = job.key[2]
        if "pv" in out:
            out["pv"] = self._pv_for(out["pv"], job.side, viewer)
            out["ja"] = AN.pv_japanese(job.game, out["pv"], job.prev_to, job.stop_words)
        with self.lock:
            an = self.an
            if an.get("job") is not job:
                return
            stats = {k: out[k] for k in ("depth", "seldepth", "nodes", "nps", "time") if k in out}
            an["stats"].update(stats)
            k = info.get("multipv", 1)
            if not isinstance(k, int) or not 1 <= k <= job.multipv:
                return
            entry = dict(an["lines"].get(k, {"multipv": k}))
            if "score" in out:
                entry.pop("mate", None)
                if "winprob" not in out and entry.get("winprob_from") != "engine":
                    entry.pop("winprob", None)
            entry.update({key: out[key] for key in ("depth", "score", "mate", "pv", "ja") if key in out})
            if "winprob" in out:
                entry.update(winprob=out["winprob"], winprob_from="engine")
            elif entry.get("winprob_from") != "engine" and ("score" in entry or "mate" in entry):
                entry.update(winprob=AN.winprob_of(entry.get("score"), entry.get("mate")), winprob_from="score")
            an["lines"][k] = entry
            self._touch()

    def _analysis_end(self, job: AN.Job, failure: Optional[str]) -> None:
        with self.lock:
            if self.an.get("job") is not job:
                return
            self.an["running"] = False
            if failure:
                self.an.update(on=False, error=f"analysis engine {self.an['engine']} failed: {failure}")
            self._touch()

    def _analysis_json(self, viewer: Optional[int]) -> dict:
        """The analysis as the page shows it; lines only when they were made for this viewer's eyes."""
        an = self.an
        key = an["key"]
        target = an["target"]
        fresh = key is not None and key[2] == viewer
        return {"on": an["on"], "running": an["running"] and fresh, "engine": an["engine"],
                "multipv": an["multipv"], "line": None if target is None else target[0],
                "ply": None if target is None else target[1], "follow": target is None,
                "lines": [an["lines"][k] for k in sorted(an["lines"])] if fresh else [],
                "stats": an["stats"] if fresh else {}, "note": an["note"], "error": an["error"],
                "outlook": an["outlook"] if fresh else {"outlooks": []},
                "winprob_scale_cp": AN.WINPROB_SCALE_CP,
                "refusal": "no analysis while a timed game is being played" if self._timed_play() else ""}

    def chance(self, line: Any = None, ply: Any = None) -> dict:
        """The coming chance event of the live position (or the one after ``ply`` plies of ``line``) and its
        probabilities by the rules (:func:`gui.analysis.coming_events`)."""
        with self.lock:
            if line is None and ply is None:
                line, ply = self.active, len(self.plies)
            line, ply = self._position_at(line, ply)
            game, _ = self._game_at(line, ply)
            try:
                return dict(AN.coming_events(game), line=line, ply=ply)
            except G.GameFailure as exc:
                raise RequestError(str(exc)) from None

    def wait(self, since: int, timeout: float) -> None:
        """Block until the version passes ``since`` (long polling) or ``timeout`` seconds pass; a flag that falls
        meanwhile is a change (the server notices it at its time, with nobody asking)."""
        with self.lock:
            deadline = time.monotonic() + timeout
            while self.version == since and not self._check_flag():
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                due = self._flag_due_s()
                self.changed.wait(left if due is None else min(left, max(0.005, due + 0.005)))


# ------------------------------------------------------------------------------------------ helpers
def _analysis_off() -> dict:
    """A session's analysis when none runs (the settings are kept between starts)."""
    return {"on": False, "engine": BUILTIN, "multipv": 1, "target": None, "key": None, "lines": {}, "stats": {},
            "running": False, "note": "", "error": "", "outlook": {"outlooks": []}, "job": None}


def _copy(p: Ply) -> Ply:
    return Ply(**{k: (list(v) if isinstance(v, list) else v) for k, v in p.__dict__.items()})


def _json_info(info: dict, side: int) -> dict:
    """An engine ``info`` dict as JSON, the score turned to sente's point of view."""
    from usi.client import score_to_cp

    out: dict[str, Any] = {"side": side}
    for key in ("depth", "seldepth", "nodes", "nps"):
        if key in info:
            out[key] = info[key]
    if "time" in info:
        out["time"] = info["time"]
    if "score" in info:
        cp = score_to_cp(info["score"])
        out["score"] = cp if side == 0 else -cp
        if info["score"].is_mate():
            out["mate"] = info["score"].mate() * (1 if side == 0 else -1)
    if "pv" in info:
        out["pv"] = list(info["pv"])
    text = info.get("string", "")
    if text.startswith("winprob "):
        try:
            p = float(text.split()[1])
            out["winprob"] = p if side == 0 else 1 - p
        except (IndexError, ValueError):
            pass
    return out


def _mover_score(p: Ply) -> Optional[int]:
    if p.score is None:
        return None
    return p.score if p.side == 0 else -p.score


def _is_plan(variant: str, token: str) -> bool:
    """A turncoat plan (``plan:<squares>``, or ``plan=<squares>`` from a record): a secret of the side choosing it."""
    return variant == "turncoat" and token.startswith("plan")


def _result_word(res: Optional[tuple[float, str, str]]) -> Optional[str]:
    """A record's ``result``: "sente", "gote", "draw" (who won), or ``None``."""
    return None if res is None else ("draw" if res[0] == 0.5 else "sente" if res[0] == 1.0 else "gote")


def _json_extras(rec: dict, tokens: list[str]) -> tuple[Optional[tuple], list, dict]:
    """(the result to keep, [(tokens, result)] of the variations, comments by the tokens up to them) of a JSON
    record; :class:`RequestError` if malformed."""
    def result_of(item: dict, what: str) -> Optional[tuple[float, str, str]]:
        word, reason, detail = item.get("result"), item.get("reason"), item.get("detail") or ""
        if word is None:
            return None
        if word not in ("sente", "gote", "draw") or not isinstance(reason, str) or not isinstance(detail, str):
            raise RequestError(f"malformed JSON record: {what}'s 'result' must be sente, gote or draw with a "
                               "'reason'")
        return {"sente": 1.0, "gote": 0.0, "draw": 0.5}[word], reason, detail

    comments: dict[tuple, str] = {}

    def take_comments(item: dict, line: list[str], what: str) -> None:
        given = item.get("comments") or {}
        if not isinstance(given, dict) or not all(isinstance(v, str) and k.isdigit() and int(k) <= len(line)
                                                  for k, v in given.items()):
            raise RequestError(f"malformed JSON record: {what}'s 'comments' must map ply numbers to text")
        for k, v in given.items():
            if int(k) > 0:
                comments[tuple(line[:int(k)])] = v

    result = result_of(rec, "the record")
    take_comments(rec, tokens, "the record")
    variations = rec.get("variations") or []
    if not isinstance(variations, list) or not all(
            isinstance(v, dict) and isinstance(v.get("history"), list) and all(isinstance(t, str) for t in v["history"])
            for v in variations):
        raise RequestError("malformed JSON record: 'variations' must be a list of {history: [tokens], ...}")
    branches = []
    for k, v in enumerate(variations, 1):
        if any(t.endswith("=?") for t in v["history"]):
            raise RequestError("the record hides a secret (a plan=?): it cannot be replayed")
        take_comments(v, v["history"], f"variation {k}")
        branches.append((list(v["history"]), result_of(v, f"variation {k}")))
    return result, branches, comments


def _result_text(res: tuple[float, str, str]) -> str:
    score, reason, detail = res
    who = "draw" if score == 0.5 else ("sente wins" if score == 1.0 else "gote wins")
    return f"{who} ({reason})" + (f": {detail}" if detail else "")


def _recorded_players(recorded: Any, fallback: list, engines: dict[str, list[str]]) -> tuple[list, str]:
    """The players a JSON record names, as far as a file may choose them: persons, our own engine (``builtin``:
    always the server's ``fantasista``, whatever command the file writes) and an engine the server offers, named by
    its name, each with its depth / time / node limit. A command is never run: an engine the server does not offer
    (or one an old record names by its command only) gets the ``fallback`` player, and the note says so."""
    if not isinstance(recorded, list) or len(recorded) != 2:
        raise RequestError("malformed JSON record: 'players' must be a list of two (sente, gote)")
    if not isinstance(fallback, list) or len(fallback) != 2:
        raise RequestError("default_players must be a list of two (sente, gote)")
    out, skipped = [], []
    for side, p in enumerate(recorded):
        if p in ("human", "engine"):
            out.append(p)
        elif isinstance(p, dict) and p.get("kind", "human") == "human":
            out.append({"kind": "human", "clock": p.get("clock")})
        elif isinstance(p, dict) and p.get("kind") == "engine" and (
                p.get("builtin") is True or (isinstance(p.get("engine"), str) and p["engine"] in engines)):
            out.append({"kind": "engine", "engine": BUILTIN if p.get("builtin") is True else p["engine"],
                        **{k: p.get(k) for k in LIMITS}, "clock": p.get("clock")})
        else:
            out.append(fallback[side])
            name = (p.get("command") or p.get("engine") or p.get("name")) if isinstance(p, dict) else p
            skipped.append(f"{SIDES[side]}'s engine {name!r}")
    note = ""
    if skipped:
        note = (f"the record's {' and '.join(skipped)} was not started (a record never runs a program): "
                f"the form's player plays instead")
    return out, note


def _from_json_record(rec: Any) -> tuple[str, Optional[str], list[str], dict]:
    """(variant, start sfen, tokens in order, options) of a JSON record; :class:`RequestError` if malformed."""
    if not isinstance(rec, dict):
        raise RequestError("malformed JSON record: not an object")
    variant = rec.get("variant", "shogi")
    start = rec.get("start_sfen")
    options = rec.get("options") or {}
    if not isinstance(options, dict):
        raise RequestError("malformed JSON record: 'options' must be an object")
    if start is not None and not isinstance(start, str):
        raise RequestError("malformed JSON record: 'start_sfen' must be a string")
    history = rec.get("history")
    if history is not None:
        if not isinstance(history, list) or not all(isinstance(t, str) for t in history):
            raise RequestError("malformed JSON record: 'history' must be a list of strings")
        tokens = list(history)
    else:
        moves, events = rec.get("moves"), rec.get("events") or []
        if not isinstance(moves, list) or not all(isinstance(t, str) for t in moves):
            raise RequestError("malformed JSON record: 'moves' must be a list of strings")
        if not isinstance(events, list) or not all(
                isinstance(e, list) and len(e) == 2 and isinstance(e[0], int) and isinstance(e[1], str)
                for e in events):
            raise RequestError("malformed JSON record: 'events' must be a list of [index, token]")
        tokens, queue = [], list(moves)
        at = dict((i, t) for i, t in events)
        total = len(moves) + len(events)
        for i in range(total):
            if i in at:
                tokens.append(at[i])
            elif queue:
                tokens.append(queue.pop(0))
        tokens += queue
    if any(t.endswith("=?") for t in tokens):
        raise RequestError("the record hides a secret (a plan=?): it cannot be replayed")
    return variant, start, tokens, options
