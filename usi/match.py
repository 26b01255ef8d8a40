"""``fantasista-match``: engine-vs-engine matches refereed by our own rules.

::

    fantasista-match --engine cmd="python -m usi" name=fanta option.USI_Hash=16 \\
                     --engine cmd=/usr/games/fairy-stockfish name=fsf nodes=10000 \\
                     --games 20 --nodes 1000 --openings book.txt --concurrency 2 --seed 1 --out results/

The referee (:class:`Referee`) owns the true game state (:class:`engine.Position`): it sends each engine the full
move history (``position startpos moves ...``), validates every answer, detects checkmate, sennichite and perpetual
check, entering-king declarations, illegal moves, crashes, hung engines and time forfeits, adjudicates by maximum
length and optional resign score, and returns a record (:mod:`usi.records`). Games run through a
``concurrent.futures.Executor``: in-process for ``--concurrency 1``, a process pool otherwise, or a Dask
cluster's executor with ``--cluster <scheduler address>`` (``--cluster local`` starts a local one).

Each game starts fresh engine processes (a crash or a hang then costs one game, never the match).
"""
from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import datetime as _dt
import itertools
import json
import multiprocessing
import random
import shlex
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Sequence

from . import records as rec
from .stats import MatchStats

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
    ready_timeout: float = 120.0  # s for ``isready`` -> ``readyok`` (numba compilation happens here)
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


# ------------------------------------------------------------------ openings
def parse_opening(line: str, index: int = 0, variant: str = "shogi") -> Opening:
    """One line of an openings file: an SFEN (optionally ``sfen`` prefixed, optionally with ``moves``), a
    ``startpos [moves ...]`` / ``position ...`` line, or bare USI moves from the start position. Validated.

    >>> o = parse_opening("7g7f 3c3d")
    >>> o.sfen, o.moves
    ('startpos', ['7g7f', '3c3d'])
    """
    text = line.strip()
    if text.startswith("position "):
        text = text[len("position "):].strip()
    words = text.split()
    if not words:
        raise ValueError("empty opening")
    moves_at = words.index("moves") if "moves" in words else None
    head = words[:moves_at] if moves_at is not None else words
    moves = words[moves_at + 1:] if moves_at is not None else []
    if head[0] == "startpos":
        sfen = "startpos"
    elif head[0] == "sfen":
        sfen = " ".join(head[1:])
    elif "/" in head[0]:
        sfen = " ".join(head)
    else:
        sfen, moves = "startpos", words
    from . import games

    if games.is_game_variant(variant):  # validated by the variant's GameState (moves and events alike)
        games.build_state(variant, ["startpos"] if sfen == "startpos" else ["sfen", *sfen.split()], moves,
                          games.option_getter({}))
        return Opening(sfen, moves, index, line.strip())
    from engine import Position

    pos = Position.from_sfen(sfen, variant)
    for m in moves:
        pos.push(m)
    return Opening(sfen, moves, index, line.strip())


def read_openings(path: str | Path, variant: str = "shogi") -> list[Opening]:
    out = []
    for n, raw in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        try:
            out.append(parse_opening(line, len(out), variant))
        except Exception as exc:  # name the line: an openings file is hand-written
            raise ValueError(f"{path}:{n}: bad opening {line!r}: {exc}") from None
    if not out:
        raise ValueError(f"{path}: no openings")
    return out


# ------------------------------------------------------------------- referee
@dataclasses.dataclass
class _HistoryItem:
    token: str
    is_event: bool = False
    visible_to: Optional[tuple] = None  # sides that may see the token as is (None: both)


class GameOver(Exception):
    def __init__(self, result: str, reason: str, detail: str = "") -> None:
        super().__init__(f"{result} by {reason}")
        self.result, self.reason, self.detail = result, reason, detail


class Referee:
    """Plays one game between two USI engines and returns its record (see :mod:`usi.records`)."""

    def __init__(self, task: GameTask, engine_factory: Optional[Callable[..., Any]] = None) -> None:
        from engine import Position

        self.task, self.settings = task, task.settings
        self.specs = (task.sente, task.gote)
        self.rng = random.Random(task.seed)  # every chance event of the game comes from here
        self.start = Position.from_sfen(task.opening.sfen, self.settings.variant)
        self.pos = self.start.copy()
        self.history: list[_HistoryItem] = []
        self.engines: list[Any] = [None, None]
        self.dead = [False, False]  # engines that crashed or hung: killed, never told gameover
        self.clocks = [self.settings.tc.main or 0, self.settings.tc.main or 0]
        self.times: list[Optional[float]] = []
        self.scores: list[Optional[int]] = []
        self.depths: list[Optional[int]] = []
        self.low_streak = [0, 0]
        self._factory = engine_factory

    # -------------------------------------------------------- the variant hooks
    def chance_event(self) -> Optional[_HistoryItem]:
        """The chance event due before the side to move decides, drawn from ``self.rng``, or ``None``.

        Standard shogi has none. A variant with dice, throws or cards returns e.g. ``_HistoryItem("roll=13",
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
        from .client import EngineError, EngineTerminatedError, UsiEngine

        spec, s = self.specs[side], self.settings
        try:
            factory = self._factory or UsiEngine.popen_usi
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
                options[offered["seed"]] = self.task.seed % 2**31
            if self.settings.variant != "shogi" and "usi_variant" in offered:
                options[offered["usi_variant"]] = self.settings.variant
            for key, value in self.settings.variant_options.items():
                if key.lower() in offered and not any(k.lower() == key.lower() for k in options):
                    options[offered[key.lower()]] = value
            engine.configure(options)
            engine.isready(timeout=s.ready_timeout)
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
            if tc.byoyomi is not None:
                over = used - self.clocks[side]
                self.clocks[side] = max(0.0, self.clocks[side] - used)
                if over > tc.byoyomi + margin:
                    raise GameOver(SIDES[1 - side], "time forfeit", f"{name} used {used:.0f} ms")
            else:
                self.clocks[side] -= used
                if self.clocks[side] < -margin:
                    raise GameOver(SIDES[1 - side], "time forfeit", f"{name} used {used:.0f} ms")
                self.clocks[side] += tc.inc or 0
        movetime = self.specs[side].movetime if self.specs[side].movetime is not None else tc.movetime
        if movetime is not None and used > movetime + margin:
            raise GameOver(SIDES[1 - side], "time forfeit", f"{name} used {used:.0f} ms of {movetime} ms")

    # ------------------------------------------------------------------- play
    def play(self) -> dict:
        started = _dt.datetime.now().isoformat(timespec="seconds")
        t0 = time.perf_counter()
        for m in self.task.opening.moves:
            self.pos.push(m)
            self.history.append(_HistoryItem(m))
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
        self.history.append(_HistoryItem(res.move))
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
            engine.quit(timeout=2.0)
        except Exception:
            self._kill(side)


def asyncio_timeout_errors() -> tuple:
    import asyncio

    return (asyncio.TimeoutError, TimeoutError, concurrent.futures.TimeoutError)


def play_game(task: GameTask) -> dict:
    """Play one game (the function the executors run)."""
    from . import games

    if games.is_game_variant(task.settings.variant):
        from .game_referee import make_referee

        return make_referee(task).play()
    return Referee(task).play()


# --------------------------------------------------------------------- match
class InlineExecutor(concurrent.futures.Executor):
    """Runs each submitted call at once in the calling thread (``--concurrency 1``: no worker start-up)."""

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[override]
        future: concurrent.futures.Future = concurrent.futures.Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller through the future
            future.set_exception(exc)
        return future


def schedule(engines: Sequence[EngineSpec], openings: Sequence[Opening], games: int, settings: MatchSettings,
             seed: int) -> list[GameTask]:
    """Round robin over engine pairs; each opening is played twice, colours swapped (one game pair)."""
    pairings = list(itertools.combinations(range(len(engines)), 2))
    tasks: list[GameTask] = []
    pair = 0
    seeds = random.Random(seed)
    for k in itertools.count():
        opening = openings[k % len(openings)]
        for a, b in pairings:
            for swap in (False, True):
                if len(tasks) >= games:
                    return tasks
                first, second = (engines[b], engines[a]) if swap else (engines[a], engines[b])
                tasks.append(GameTask(len(tasks), pair, first, second, opening, settings, seeds.getrandbits(31)))
            pair += 1
    return tasks


@dataclasses.dataclass
class MatchResult:
    records: list
    stats: dict  # "a vs b" -> MatchStats
    stopped_by_sprt: bool = False


def run_match(engines: Sequence[EngineSpec], *, games: int = 2, settings: Optional[MatchSettings] = None,
              openings: Optional[Sequence[Opening]] = None, seed: int = 0, executor: Optional[concurrent.futures.Executor] = None,
              out: Optional[str | Path] = None, formats: Iterable[str] = ("kif", "csa"),
              sprt: Optional[dict] = None, progress: Optional[Callable[[str], None]] = None) -> MatchResult:
    """Play a match and return its records (sorted by game number) and statistics per pairing.

    ``sprt``: ``{"elo0", "elo1", "alpha", "beta"}`` stops the match (cancelling unplayed games) once the first
    two engines' LLR leaves its bounds. ``out``: a directory for ``games.jsonl``, ``kif/`` and ``csa/``.
    """
    settings = settings or MatchSettings()
    if len(engines) < 2:
        raise ValueError("a match needs at least two engines")
    names = [e.name for e in engines]
    if len(set(names)) != len(names):  # two configurations of one engine: make the names unique
        for i, e in enumerate(engines):
            if names.count(e.name) > 1:
                e.name = f"{e.name}#{i + 1}"
    openings = list(openings) if openings else [Opening()]
    tasks = schedule(engines, openings, games, settings, seed)
    sprt = sprt or {}
    stats = {f"{a.name} vs {b.name}": MatchStats(a.name, b.name, **sprt)
             for a, b in itertools.combinations(engines, 2)}
    main = next(iter(stats.values()))
    out_dir = Path(out) if out else None
    if out_dir:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "games.jsonl").write_text("", encoding="utf-8")
    records: list[dict] = []
    stopped = False
    for record in _results(executor, tasks, lambda: stopped):
        records.append(record)
        for st in stats.values():
            st.add(record)
        if out_dir:
            rec.write_jsonl(record, out_dir / "games.jsonl")
            if record.get("variant", "shogi") == "shogi":
                for fmt in formats:
                    rec.write_game_files(record, out_dir / fmt, formats=(fmt,))
        if progress:
            progress(main.progress_line(len(tasks)))
        if sprt and main.sprt().decision:
            stopped = True
    records.sort(key=lambda r: r["game"])
    if out_dir:
        summary = {k: v.summary() for k, v in stats.items()}
        (out_dir / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return MatchResult(records, stats, stopped)


def _results(executor: Optional[concurrent.futures.Executor], tasks: Sequence[GameTask],
             stop: Callable[[], bool]):
    """Yield game records as they finish; once ``stop()`` is true, unplayed games are cancelled."""
    if executor is None or isinstance(executor, InlineExecutor):
        for task in tasks:
            if stop():
                return
            yield play_game(task)
        return
    futures = [executor.submit(play_game, t) for t in tasks]
    try:
        for future in concurrent.futures.as_completed(futures):
            if future.cancelled():
                continue
            yield future.result()
            if stop():
                return
    finally:
        for f in futures:
            f.cancel()


def make_executor(concurrency: int, cluster: Optional[str] = None):
    """(executor, closer). ``cluster``: a Dask scheduler address, or ``local`` for a local Dask cluster."""
    if cluster:
        from distributed import Client, LocalCluster

        if cluster == "local":
            lc = LocalCluster(n_workers=concurrency, threads_per_worker=1, processes=True)
            client = Client(lc)
            return client.get_executor(pure=False), lambda: (client.close(), lc.close())
        client = Client(cluster)
        return client.get_executor(pure=False), client.close
    if concurrency <= 1:
        return InlineExecutor(), lambda: None
    pool = concurrent.futures.ProcessPoolExecutor(concurrency, mp_context=multiprocessing.get_context("spawn"))
    return pool, lambda: pool.shutdown(cancel_futures=True)


# ----------------------------------------------------------------------- CLI
def _ms(seconds: Optional[float]) -> Optional[int]:
    return None if seconds is None else int(round(seconds * 1000))


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="fantasista-match", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--engine", action="append", nargs="+", required=True, metavar="KEY=VALUE",
                   help="an engine: cmd=\"...\" [name=...] [option.<Name>=<value> ...] [nodes=N] [depth=N] "
                        "[movetime=MS]; give two or more")
    p.add_argument("--variant", default="shogi", help="game id (default shogi)")
    p.add_argument("--variant-option", action="append", default=[], metavar="NAME=VALUE",
                   help="a rule option of the variant (e.g. FantasistaFairyGote=ayumi, EnokianMichizane=9i); the "
                        "referee plays by it and sends it to the engines that offer it")
    p.add_argument("--games", type=int, default=2, help="number of games (openings are played in pairs)")
    tc = p.add_argument_group("time control (seconds; combine --time with --byoyomi or --inc)")
    tc.add_argument("--time", type=float, help="main time per side (alone: sudden death)")
    tc.add_argument("--byoyomi", type=float, help="byoyomi per move")
    tc.add_argument("--inc", type=float, help="Fischer increment per move")
    tc.add_argument("--movetime", type=float, help="fixed time per move")
    tc.add_argument("--nodes", type=int, help="nodes per move")
    tc.add_argument("--depth", type=int, help="depth per move")
    p.add_argument("--openings", help="file of openings: SFENs or USI move lines, one per line")
    p.add_argument("--shuffle", action="store_true", help="shuffle the openings with the seed")
    p.add_argument("--concurrency", type=int, default=1, help="games in parallel (default 1)")
    p.add_argument("--cluster", help="Dask scheduler address (or 'local') to run the games on")
    p.add_argument("--seed", type=int, default=0, help="match seed: opening order, chance events, engine Seed options")
    p.add_argument("--max-plies", type=int, default=512, help="draw after this many plies (default 512)")
    p.add_argument("--resign-score", type=int, help="adjudicate a loss when a side reports <= -CP ...")
    p.add_argument("--resign-moves", type=int, default=3, help="... on this many consecutive moves (default 3)")
    p.add_argument("--entering-king", default="CSARule27", choices=["NoEnteringKing", "CSARule24", "CSARule27"])
    p.add_argument("--margin", type=int, default=1000, help="ms of grace before a time forfeit (default 1000)")
    p.add_argument("--handshake-timeout", type=float, default=10.0)
    p.add_argument("--ready-timeout", type=float, default=120.0)
    p.add_argument("--move-timeout", type=float, default=60.0, help="s per move without a time limit")
    p.add_argument("--sprt", nargs=4, type=float, metavar=("ELO0", "ELO1", "ALPHA", "BETA"),
                   help="stop early with a pentanomial SPRT")
    p.add_argument("--out", help="output directory (default ./matches/<date-time>)")
    p.add_argument("--formats", default="kif,csa", help="record files for standard shogi (default kif,csa)")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        from engine.variants import get_variant

        from . import games

        if games.is_game_variant(args.variant):
            games.game_module(args.variant)
        else:
            get_variant(args.variant)
        variant_options = {}
        for item in args.variant_option:
            key, sep, value = item.partition("=")
            if not sep:
                raise ValueError(f"--variant-option {item!r} is not NAME=VALUE")
            variant_options[key] = value
        if games.is_game_variant(args.variant):  # the rule options must make a game
            games.new_state(args.variant, games.option_getter(variant_options))
        engines = [EngineSpec.parse(items) for items in args.engine]
        if len(engines) < 2:
            raise ValueError("give at least two --engine")
        openings = read_openings(args.openings, args.variant) if args.openings else None
    except ValueError as exc:
        print(f"fantasista-match: error: {exc}", file=sys.stderr)
        return 2
    if openings and args.shuffle:
        random.Random(args.seed).shuffle(openings)
    settings = MatchSettings(
        variant=args.variant,
        tc=TimeControl(main=_ms(args.time), byoyomi=_ms(args.byoyomi), inc=_ms(args.inc),
                       movetime=_ms(args.movetime), nodes=args.nodes, depth=args.depth),
        max_plies=args.max_plies, resign_score=args.resign_score, resign_moves=args.resign_moves,
        entering_king_rule=args.entering_king, margin=args.margin, handshake_timeout=args.handshake_timeout,
        ready_timeout=args.ready_timeout, move_timeout=args.move_timeout, variant_options=variant_options)
    out = args.out or f"matches/{_dt.datetime.now():%Y%m%d-%H%M%S}"
    sprt = dict(zip(("elo0", "elo1", "alpha", "beta"), args.sprt)) if args.sprt else None
    executor, close = make_executor(args.concurrency, args.cluster)

    def show(line: str) -> None:
        if not args.quiet:
            print("\r" + line, end="", file=sys.stderr, flush=True)

    try:
        result = run_match(engines, games=args.games, settings=settings, openings=openings, seed=args.seed,
                           executor=executor, out=out, formats=tuple(f for f in args.formats.split(",") if f),
                           sprt=sprt, progress=show)
    finally:
        close()
    if not args.quiet:
        print(file=sys.stderr)
    for st in result.stats.values():
        print(st.report())
    if result.stopped_by_sprt:
        print("stopped early: SPRT decision reached")
    print(f"records: {out}/games.jsonl")
    return 0


if __name__ == "__main__":
    sys.exit(main())
