"""The referee of a standard-shogi game between two USI engines (:class:`Referee`; :mod:`usi.game_referee`
builds on it for the GameState variants) and what it is given: the engines (:class:`EngineSpec`), the clock
(:class:`TimeControl`), the opening (:class:`Opening`), the settings and the game (:class:`MatchSettings`,
:class:`GameTask`). :mod:`usi.match` schedules and runs the games; see its docstring and ``docs/matches.md``."""
from __future__ import annotations

import concurrent.futures
import dataclasses
import datetime as _dt
import hashlib
import random
import shlex
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from .client import QUIT_GRACE

SIDES = ("sente", "gote")


# ------------------------------------------------------------------ settings
@dataclasses.dataclass
class EngineSpec:
    """An engine command line, its display name, USI options and per-engine search limits."""

    cmd: list
    name: str = ""
    options: dict = dataclasses.field(default_factory=dict)
    nodes: Optional[int] = None
    depth: Optional[int] = None
    movetime: Optional[int] = None  # ms

    @classmethod
    def parse(cls, items: Sequence[str]) -> "EngineSpec":
        """From ``key=value`` words: ``cmd=... name=... option.<Name>=<value> nodes= depth= movetime=`` (ms).

        >>> s = EngineSpec.parse(['cmd=./engine --threads 1', 'name=a', 'option.USI_Hash=16', 'depth=2'])
        >>> s.cmd, s.name, s.options, s.depth
        (['./engine', '--threads', '1'], 'a', {'USI_Hash': '16'}, 2)
        """
        spec = cls(cmd=[])
        for item in items:
            key, sep, value = item.partition("=")
            if not sep:
                raise ValueError(f"engine setting {item!r} is not key=value")
            if key == "cmd":
                spec.cmd = shlex.split(value)
            elif key == "name":
                spec.name = value
            elif key.startswith("option."):
                spec.options[key[len("option."):]] = value
            elif key in ("nodes", "depth", "movetime"):
                setattr(spec, key, int(value))
            else:
                raise ValueError(f"unknown engine setting {key!r} (known: cmd, name, option.<Name>, nodes, depth, "
                                 "movetime)")
        if not spec.cmd:
            raise ValueError(f"engine {' '.join(items)!r} has no cmd=")
        if spec.cmd[0] == "python":  # the interpreter running the match, so that virtual environments work
            spec.cmd[0] = sys.executable
        spec.name = spec.name or Path(spec.cmd[0]).name
        return spec


@dataclasses.dataclass
class TimeControl:
    """Main time (sudden death unless ``byoyomi`` or ``inc``), byoyomi, Fischer increment, fixed time per move,
    nodes, depth. Times in milliseconds.

    >>> TimeControl(main=60000, byoyomi=1000).kind, TimeControl(nodes=1000).kind
    ('byoyomi', 'nodes')
    """

    main: Optional[int] = None
    byoyomi: Optional[int] = None
    inc: Optional[int] = None
    movetime: Optional[int] = None
    nodes: Optional[int] = None
    depth: Optional[int] = None

    @property
    def kind(self) -> str:
        if self.byoyomi is not None:
            return "byoyomi"
        if self.inc is not None:
            return "fischer"
        if self.main is not None:
            return "sudden death"
        if self.movetime is not None:
            return "movetime"
        if self.nodes is not None:
            return "nodes"
        if self.depth is not None:
            return "depth"
        return "none"

    @property
    def clocked(self) -> bool:
        return self.main is not None or self.byoyomi is not None or self.inc is not None


def spend(tc: TimeControl, clock: float, used: float) -> tuple[float, float]:
    """One move's effect on its mover's clock (all ms): ``(clock after the move, overrun)``.

    The overrun is the time used beyond what the move had (the clock, plus the byoyomi under byoyomi); negative, it
    is the time that was left. The referee declares a time forfeit when it exceeds its margin. Under byoyomi the main
    time runs down to 0 and the byoyomi is per move; under Fischer the increment is added after the move.

    >>> spend(TimeControl(main=0, byoyomi=1000), 0, 900)
    (0.0, -100)
    >>> spend(TimeControl(main=5000, inc=500), 5000, 6000)
    (-500, 1000)
    """
    over = used - clock - (tc.byoyomi or 0)
    if tc.byoyomi is not None:
        return max(0.0, clock - used), over
    return clock - used + (tc.inc or 0), over


@dataclasses.dataclass
class Opening:
    """A start position (SFEN or ``startpos``) and book moves played from it before the engines take over."""

    sfen: str = "startpos"
    moves: list = dataclasses.field(default_factory=list)
    index: int = 0
    line: str = "startpos"


@dataclasses.dataclass
class MatchSettings:
    variant: str = "shogi"
    tc: TimeControl = dataclasses.field(default_factory=TimeControl)
    max_plies: int = 512
    resign_score: Optional[int] = None  # cp; a side reporting <= -resign_score ...
    resign_moves: int = 3  # ... on this many consecutive own moves loses
    entering_king_rule: str = "CSARule27"
    margin: int = 1000  # ms of grace before a time forfeit
    handshake_timeout: float = 10.0  # s for ``usi`` -> ``usiok``
    ready_timeout: float = 120.0  # s for ``isready`` -> ``readyok`` in a game (the warm-up covers a cold start)
    move_timeout: float = 60.0  # s for a move without a time limit (nodes, depth)
    #: rule options of the variant (``FantasistaFairySente`` ...; see usi/games.py): the referee's own game uses
    #: them, and they are sent to every engine that offers them.
    variant_options: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class GameTask:
    """Everything one game needs; picklable, so it travels to a worker process or a Dask worker."""

    index: int
    pair: int
    sente: EngineSpec
    gote: EngineSpec
    opening: Opening
    settings: MatchSettings
    seed: int


# ------------------------------------------------------------------- referee
def engine_seed(game_seed: int, side: int) -> int:
    """The ``Seed`` option sent to ``side``'s engine (0 sente, 1 gote) in the game whose seed is ``game_seed``.

    A hash of both, so each engine of each game gets its own seed and none can compute its opponent's (turncoat's
    secret plans are drawn from it). It is never 0, which our engine reads as "unset: draw from OS entropy".

    >>> engine_seed(5, 0) != engine_seed(5, 1) and 0 < engine_seed(5, 0) < 2**31
    True
    """
    digest = hashlib.sha256(f"fantasista-match/{game_seed}/{side}".encode()).digest()
    return int.from_bytes(digest[:8], "big") % (2**31 - 1) + 1


def _popen_engine(cmd: list, timeout: float):
    """Start an engine in its own process group, so a Ctrl-C at the terminal reaches the runner only (which then
    ends the engines itself) and never kills an engine mid-game, which would be recorded as a crash."""
    from .client import UsiEngine

    # The start runs on a helper thread: a stop raised in this thread while it waits (MatchInterrupted) must not
    # leave an engine nobody holds (python-chess would keep its process and event-loop thread alive, and the
    # runner could not exit); the engine is then closed as soon as its start completes.
    started: concurrent.futures.Future = concurrent.futures.Future()

    def start() -> None:
        try:
            started.set_result(UsiEngine.popen_usi(cmd, timeout=timeout, setpgrp=True))
        except BaseException as exc:  # noqa: BLE001 - handed over through the future
            started.set_exception(exc)

    threading.Thread(target=start, name=f"start {cmd[0]}", daemon=True).start()
    try:
        return started.result()
    except BaseException:
        started.add_done_callback(lambda f: f.exception() is None and f.result().close())
        # Stopped while the engine starts: wait for the start to end (at most the handshake time-out; a failed start
        # kills its process) so that the engine is closed, and reaped, before the runner goes on and exits. A second
        # signal (an abort) cuts this wait short; the callback above still closes the engine if the runner lives.
        try:
            started.result(timeout=timeout + 5.0)
        except Exception:  # noqa: BLE001 - the start failed or hangs: nothing of ours to close
            pass
        else:
            started.result().close()  # the callback may not have run yet; closing twice is harmless
        raise


@dataclasses.dataclass
class HistoryItem:
    token: str
    is_event: bool = False
    visible_to: Optional[tuple] = None  # sides that may see the token as is (None: both)


class GameOver(Exception):
    def __init__(self, result: str, reason: str, detail: str = "") -> None:
        super().__init__(f"{result} by {reason}")
        self.result, self.reason, self.detail = result, reason, detail


class Referee:
    """Plays one game between two USI engines and returns its record (see :mod:`usi.records`)."""

    #: ``f(engine name, seconds waited)`` called about once a second while ``isready`` waits (the warm-up sets it)
    ready_progress: Optional[Callable[[str, float], None]] = None

    def __init__(self, task: GameTask, engine_factory: Optional[Callable[..., Any]] = None) -> None:
        from engine import Position

        self._init_game(task, engine_factory)
        self.start = Position.from_sfen(task.opening.sfen, self.settings.variant)
        self.pos = self.start.copy()

    def _init_game(self, task: GameTask, engine_factory: Optional[Callable[..., Any]]) -> None:
        """The fields of every referee, whatever holds its game's state (:mod:`usi.game_referee` builds on this)."""
        self.task, self.settings = task, task.settings
        self.specs = (task.sente, task.gote)
        self.rng = random.Random(task.seed)  # every chance event of the game comes from here
        self.history: list[HistoryItem] = []
        self.engines: list[Any] = [None, None]
        self.dead = [False, False]  # engines that crashed or hung: killed, never told gameover
        self.clocks = [self.settings.tc.main or 0, self.settings.tc.main or 0]
        self.times: list[Optional[float]] = []
        self.scores: list[Optional[int]] = []
        self.depths: list[Optional[int]] = []
        self.low_streak = [0, 0]
        self._factory = engine_factory

    # -------------------------------------------------------- the variant hooks
    def chance_event(self) -> Optional[HistoryItem]:
        """The chance event due before the side to move decides, drawn from ``self.rng``, or ``None``.

        Standard shogi has none. A variant with dice, throws or cards returns e.g. ``HistoryItem("roll=13",
        is_event=True)`` (fantasista's d20) or a ``plan=...`` token visible to one side only; the token is
        appended to the history and so reaches the engines inside ``position ... moves`` as protocol.md says.
        """
        return None

    def view_for(self, side: int) -> str:
        """The ``position`` line that ``side`` (0 sente, 1 gote) may see: the full history, with tokens hidden
        from it (the enemy's secret plan) replaced by ``name=?``."""
        tokens = []
        for item in self.history:
            if item.visible_to is None or side in item.visible_to:
                tokens.append(item.token)
            else:
                tokens.append(item.token.split("=", 1)[0] + "=?")
        base = "startpos" if self.task.opening.sfen == "startpos" else f"sfen {self.task.opening.sfen}"
        return f"position {base}" + (f" moves {' '.join(tokens)}" if tokens else "")

    # ---------------------------------------------------------------- helpers
    def _open(self, side: int) -> None:
        from .client import EngineError, EngineTerminatedError

        spec, s = self.specs[side], self.settings
        try:
            factory = self._factory or _popen_engine
            engine = factory(spec.cmd, timeout=s.handshake_timeout)
        except (asyncio_timeout_errors()) as exc:
            raise GameOver(SIDES[1 - side], "handshake", f"{spec.name}: no usiok within {s.handshake_timeout:g}s") from exc
        except (EngineTerminatedError, OSError) as exc:
            raise GameOver(SIDES[1 - side], "crash", f"{spec.name} failed to start: {exc}") from exc
        self.engines[side] = engine
        try:
            options = dict(spec.options)
            offered = {name.lower(): name for name in engine.options}
            if "seed" in offered and not any(k.lower() == "seed" for k in options):
                options[offered["seed"]] = engine_seed(self.task.seed, side)
            if self.settings.variant != "shogi" and "usi_variant" in offered:
                options[offered["usi_variant"]] = self.settings.variant
            for key, value in self.settings.variant_options.items():
                if key.lower() in offered and not any(k.lower() == key.lower() for k in options):
                    options[offered[key.lower()]] = value
            engine.configure(options)
            if self.ready_progress is None:
                engine.isready(timeout=s.ready_timeout)
            else:  # the warm-up: a long wait, shown
                engine.isready(timeout=s.ready_timeout, progress=lambda t: self.ready_progress(spec.name, t))
            # readyok comes after the answers to every setoption: an option the engine refused (a mistyped
            # value) has been reported by now, and a game of an engine not set up as asked measures nothing
            refused = getattr(engine, "reported_errors", ())
            if refused:
                raise EngineError(f"refused its setup: {refused[0]}")
            engine.new_game()
        except asyncio_timeout_errors():
            self._kill(side)
            raise GameOver(SIDES[1 - side], "handshake", f"{spec.name}: no readyok within {s.ready_timeout:g}s")
        except EngineTerminatedError as exc:
            self._kill(side)
            raise GameOver(SIDES[1 - side], "crash", f"{spec.name} died during setup: {exc}")
        except EngineError as exc:
            self._kill(side)
            raise GameOver(SIDES[1 - side], "setup", f"{spec.name}: {exc}")

    def abandon(self) -> None:
        """Kill both engines at once (the match is being stopped: this game is not finished and not recorded)."""
        for side in (0, 1):
            engine = self.engines[side]
            if engine is None:
                continue
            loop = getattr(getattr(engine, "protocol", None), "loop", None)
            if loop is not None:  # the command cut short by the stop dies with its engine: nothing to report
                try:
                    loop.call_soon_threadsafe(loop.set_exception_handler, lambda _loop, _context: None)
                except RuntimeError:  # the loop is already closed
                    pass
            self._kill(side)  # also when a kill was cut short: closing twice is harmless

    def kill_now(self) -> None:
        """SIGKILL both engines from this thread, each with its process group (an abort: :meth:`abandon`'s close is
        asynchronous)."""
        for engine in self.engines:
            try:
                engine.kill()
            except Exception:  # not started, already gone, or a stand-in without a process
                pass

    def _kill(self, side: int) -> None:
        self.dead[side] = True
        if self.engines[side] is not None:
            try:
                self.engines[side].close()
            except Exception:
                pass

    def limit_for(self, side: int):
        """The ``go`` limits for ``side``: the clocks and the time control, engine-specific nodes/depth/movetime."""
        from .client import UsiLimit

        tc, spec = self.settings.tc, self.specs[side]
        limit = UsiLimit(nodes=spec.nodes if spec.nodes is not None else tc.nodes,
                         depth=spec.depth if spec.depth is not None else tc.depth,
                         movetime=spec.movetime if spec.movetime is not None else tc.movetime)
        if tc.clocked:
            limit.btime, limit.wtime = max(0, int(self.clocks[0])), max(0, int(self.clocks[1]))
            if tc.byoyomi is not None:
                limit.byoyomi = tc.byoyomi
            elif tc.inc is not None:
                limit.binc = limit.winc = tc.inc
        return limit

    def _timeout_for(self, side: int, limit) -> float:
        budget = limit.budget(side)
        if budget is None:
            return self.settings.move_timeout
        return budget + self.settings.margin / 1000 + 0.5

    def _charge(self, side: int, elapsed: float) -> None:
        """Take ``elapsed`` seconds off ``side``'s clock; raise :class:`GameOver` on a time forfeit."""
        tc, used, margin = self.settings.tc, elapsed * 1000, self.settings.margin
        name = self.specs[side].name
        if tc.clocked:
            self.clocks[side], over = spend(tc, self.clocks[side], used)
            if over > margin:
                raise GameOver(SIDES[1 - side], "time forfeit", f"{name} used {used:.0f} ms")
        movetime = self.specs[side].movetime if self.specs[side].movetime is not None else tc.movetime
        if movetime is not None and used > movetime + margin:
            raise GameOver(SIDES[1 - side], "time forfeit", f"{name} used {used:.0f} ms of {movetime} ms")

    # ------------------------------------------------------------------- play
    def play(self) -> dict:
        started = _dt.datetime.now().isoformat(timespec="seconds")
        t0 = time.perf_counter()
        for m in self.task.opening.moves:
            self.pos.push(m)
            self.history.append(HistoryItem(m))
            self.times.append(None), self.scores.append(None), self.depths.append(None)
        try:
            for side in (0, 1):
                self._open(side)
            self._end_check()
            while True:
                self._turn()
        except GameOver as over:
            result, reason, detail = over.result, over.reason, over.detail
        self._finish(result)
        moves = [h.token for h in self.history if not h.is_event]
        events = [[i, h.token] for i, h in enumerate(self.history) if h.is_event]
        names = (self.specs[0].name, self.specs[1].name)
        return {
            "game": self.task.index, "pair": self.task.pair, "variant": self.settings.variant, "seed": self.task.seed,
            "sente": names[0], "gote": names[1], "start_sfen": self.start.sfen(),
            "opening": {"index": self.task.opening.index, "line": self.task.opening.line,
                        "plies": len(self.task.opening.moves)},
            "moves": moves, "events": events, "times": self.times, "scores": self.scores, "depths": self.depths,
            "result": result, "winner": None if result == "draw" else names[SIDES.index(result)],
            "reason": reason, "detail": detail, "final_sfen": self.pos.sfen(), "time_control": self.settings.tc.kind,
            "started": started, "duration": round(time.perf_counter() - t0, 3),
        }

    def _end_check(self) -> None:
        """After a move (or at the start): the rules' own verdict (``Position.result()``: mate, no legal moves,
        a lost last royal, a try, sennichite, perpetual check), then the match's maximum length."""
        pos = self.pos
        verdict = pos.result()
        if verdict is not None:
            score, reason = verdict
            winner = "draw" if score == 0.5 else SIDES[0 if score == 1.0 else 1]
            detail = ""
            if reason == "perpetual check":
                checker = 1 - SIDES.index(winner)
                detail = f"{self.specs[checker].name} checked every move"
            raise GameOver(winner, reason, detail)
        if sum(1 for h in self.history if not h.is_event) >= self.settings.max_plies:
            raise GameOver("draw", "max plies", f"{self.settings.max_plies} plies")

    def _ask(self, side: int, view: str, limit=None):
        """Send ``view`` and ``go`` to ``side``'s engine; its play result. Time-outs and crashes end the game
        (:class:`GameOver` with the reason); the clock is charged."""
        from .client import EngineError, EngineTerminatedError

        name = self.specs[side].name
        limit = limit or self.limit_for(side)
        timeout = self._timeout_for(side, limit)
        try:
            res = self.engines[side].play(view, limit, timeout=timeout)
        except asyncio_timeout_errors():
            self._kill(side)
            raise GameOver(SIDES[1 - side], "time forfeit", f"{name}: no bestmove within {timeout:.1f}s")
        except EngineTerminatedError as exc:
            self._kill(side)
            raise GameOver(SIDES[1 - side], "crash", f"{name}: {exc}")
        except EngineError as exc:
            self._kill(side)
            raise GameOver(SIDES[1 - side], "crash", f"{name}: protocol error: {exc}")
        self._charge(side, res.elapsed)
        return res

    def _turn(self) -> None:
        from engine import IllegalMoveError
        from engine.move import MoveParseError

        from .client import score_to_cp

        event = self.chance_event()
        if event is not None:
            self.history.append(event)
        side = self.pos.turn
        name = self.specs[side].name
        res = self._ask(side, self.view_for(side))
        score = score_to_cp(res.info.get("score"))
        if res.resign:
            raise GameOver(SIDES[1 - side], "resign", f"{name} resigned")
        if res.win:
            if self.pos.can_declare_win(self.settings.entering_king_rule):
                raise GameOver(SIDES[side], "entering king", f"{name} declared")
            raise GameOver(SIDES[1 - side], "illegal declaration", f"{name} declared a win it does not have")
        try:
            self.pos.push(res.move)
        except (IllegalMoveError, MoveParseError) as exc:
            raise GameOver(SIDES[1 - side], "illegal move", f"{name} played {res.move}: {exc}")
        self.history.append(HistoryItem(res.move))
        self._record_move(res, score)
        self._adjudicate(side, score)
        self._end_check()

    def _record_move(self, res, score) -> None:
        """Time, reported score and depth of a move, for the record."""
        self.times.append(round(res.elapsed, 4))
        self.scores.append(score)
        self.depths.append(res.info.get("depth"))

    def _adjudicate(self, side: int, score) -> None:
        """Resign-score adjudication: a loss after ``resign_moves`` consecutive reports at or below
        ``-resign_score``."""
        s = self.settings
        if s.resign_score is not None and score is not None:
            self.low_streak[side] = self.low_streak[side] + 1 if score <= -s.resign_score else 0
            if self.low_streak[side] >= s.resign_moves:
                raise GameOver(SIDES[1 - side], "adjudication", f"{self.specs[side].name} reported "
                               f"<= -{s.resign_score} cp for {s.resign_moves} moves")

    def _finish(self, result: str) -> None:
        """``gameover`` to the live engines, then ``quit`` (killed if they linger); crashed/hung ones are killed."""
        for side in (0, 1):
            self._finish_one(side, "draw" if result == "draw" else ("win" if result == SIDES[side] else "lose"))

    def _finish_one(self, side: int, outcome: str) -> None:
        """``gameover <outcome>`` and ``quit`` to one live engine (killed if it lingers)."""
        engine = self.engines[side]
        if engine is None or self.dead[side]:
            return
        try:
            engine.gameover(outcome)
        except Exception:
            pass
        try:
            engine.quit(timeout=QUIT_GRACE)  # killed and reaped once the grace has passed
        except Exception:
            self._kill(side)


def asyncio_timeout_errors() -> tuple:
    import asyncio

    return (asyncio.TimeoutError, TimeoutError, concurrent.futures.TimeoutError)
