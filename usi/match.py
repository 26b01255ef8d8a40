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

Each game starts fresh engine processes (a crash or a hang then costs one game, never the match), each in its own
process group and with its own ``Seed`` (:func:`engine_seed`). ``--games`` counts per pairing (``--gauntlet``: the
first engine against each other one). Before the first game each engine is started once to cover a cold start
(:func:`warm_up`). Ctrl-C or SIGTERM stops a match cleanly (:class:`StopControl`: finished games kept, summary
written; a second one aborts at once) and ``--resume DIR`` continues it with the same seeds. See ``docs/matches.md``.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import datetime as _dt
import hashlib
import itertools
import json
import math
import multiprocessing
import os
import random
import signal
import sys
import threading
import time
import weakref
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Sequence

from . import records as rec
from .client import COLD_START_TIMEOUT, KILL_SIGNAL
from .engine import SHOWN_INPUT_CHARS, package_version
from .kernel_cache import purge_stale_kernels
# the referee and its settings, used here and by callers as usi.match's (_popen_engine, spend: the tests')
from .referee import (SIDES, EngineSpec, GameOver, GameTask, MatchSettings, Opening, Referee,  # noqa: F401
                      TimeControl, _popen_engine, engine_seed, spend)
from .stats import MatchStats, Prior


# ------------------------------------------------------------------ openings
def parse_opening(line: str, index: int = 0, variant: str = "shogi") -> Opening:
    """One line of an openings file: an SFEN (optionally ``sfen`` prefixed, optionally with ``moves``), a
    ``startpos [moves ...]`` / ``position ...`` line, or bare USI moves from the start position. Validated
    (:func:`check_opening`); ``ValueError`` says what is wrong.

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
    if not head:
        raise ValueError("'moves' needs a start position before it (startpos or an SFEN)")
    if head[0] == "startpos":
        if len(head) > 1:  # the engines refuse "position startpos <anything>": so does the runner
            raise ValueError(f"'startpos' takes nothing but 'moves ...' after it, not {head[1][:40]!r}")
        sfen = "startpos"
    elif head[0] == "sfen":
        sfen = " ".join(head[1:])
        if not sfen:
            raise ValueError("'sfen' without a position")
    elif "/" in head[0]:
        sfen = " ".join(head)
    else:
        sfen, moves = "startpos", words
    check_opening(sfen, moves, variant)
    return Opening(sfen, moves, index, line.strip())


def check_opening(sfen: str, moves: Sequence[str], variant: str = "shogi") -> None:
    """Refuse (``ValueError`` saying what is wrong) an opening the engines would refuse or that is no game.

    The start position gets the checks our engine makes on ``position`` (:mod:`usi.sfen_check` before and after the
    variant's parser: a move number in range, piece counts, kings), with both kings required (the engine allows a
    king-less attacker for tsume problems; a game needs both); each move must be legal; and the game must not be over
    at the end of the opening; a turncoat plan must be given or left to the engine (``-``), not ``?``. Otherwise an
    engine refusing the position would keep its previous one and lose every game by an "illegal move", or a
    king-less board would be scored "no legal moves"."""
    from . import games, sfen_check

    if games.is_game_variant(variant):  # the variant's GameState checks moves and events alike
        opt = games.option_getter({})
        if sfen == "startpos":
            state = games.new_state(variant, opt)
        else:
            state = games.state_from_sfen(variant, sfen, opt)
            sfen_check.check_after(variant, sfen, state, tsume_ok=False)
        play = state.apply
    else:
        from engine import Position

        if sfen == "startpos":
            state = Position.startpos(variant)
        else:
            sfen_check.check_before(variant, sfen)
            state = Position.from_sfen(sfen, variant)
            sfen_check.check_after(variant, sfen, state, tsume_ok=False)
        play = state.push
    for i, move in enumerate(moves, 1):
        try:
            play(move)
        except ValueError as exc:
            raise ValueError(f"move {i} ({move[:40]}): {exc}") from None
    if variant == "turncoat":
        from engine.variants.turncoat.state import HIDDEN

        # '?' is how a view shows the enemy's plan: in the referee's true game it would let that side's engine
        # declare any plan it likes (defect=<squares> names it), and show the engine its own plan as unknown
        hidden = [SIDES[side] for side in (0, 1) if state.plans[side] == HIDDEN]
        if hidden:
            raise ValueError(f"the plan of {' and '.join(hidden)} is '?': the referee must know each plan "
                             "(give it, or '-' for the engine to choose it)")
    over = state.result()
    if over is not None:
        raise ValueError(f"the game is already over ({over[1]})" + (" after its moves" if moves else ""))


def read_openings(path: str | Path, variant: str = "shogi") -> list[Opening]:
    """The openings of a file, each line checked (:func:`parse_opening`) before any game: ``ValueError`` names the
    first bad line (``FILE:N``) and what is wrong with it."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"{path}: cannot read the openings file: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not a UTF-8 text file ({exc})") from None
    out = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        try:
            out.append(parse_opening(line, len(out), variant))
        except Exception as exc:  # name the line: an openings file is hand-written
            what = str(exc) if isinstance(exc, ValueError) else f"cannot be read ({type(exc).__name__}: {exc})"
            shown = line if len(line) <= SHOWN_INPUT_CHARS else line[:SHOWN_INPUT_CHARS - 3] + "..."
            raise ValueError(f"{path}:{n}: bad opening {shown!r}: {what}") from None
    if not out:
        raise ValueError(f"{path}: no openings")
    return out



def play_game(task: GameTask) -> dict:
    """Play one game (the function the executors run). Stopped from outside (:class:`MatchInterrupted`, a
    signal in a worker), the game's engines are killed and the exception goes on: an unfinished game has no record."""
    from . import games

    if _WORKER_STOP.is_set():  # a game queued to this worker before the match was stopped: never started
        raise MatchInterrupted("stopped before the game started")
    if games.is_game_variant(task.settings.variant):
        from .game_referee import make_referee

        referee: Referee = make_referee(task)
    else:
        referee = Referee(task)
    _LIVE_REFEREES.add(referee)
    _WORKER_STOP.in_game = True
    try:
        return referee.play()
    except BaseException:
        referee.abandon()
        raise
    finally:
        _WORKER_STOP.in_game = False


# ------------------------------------------------------------ stopping a match
class MatchInterrupted(BaseException):
    """The match is being stopped (first Ctrl-C or SIGTERM): raised where the runner waits for a game, so the game
    in progress is abandoned (its engines killed). A ``BaseException``, like ``KeyboardInterrupt``, so that no
    ``except Exception`` in a referee or a client swallows it."""


class MatchAborted(BaseException):
    """A second Ctrl-C (or SIGTERM) while stopping: abort at once."""


def _write_stderr(text: str) -> None:
    """One unbuffered write to stderr: safe inside a signal handler that interrupted a ``print`` (a buffered write
    there fails as a reentrant call, or is lost by an abort's ``os._exit``)."""
    try:
        os.write(2, (text + "\n").encode("utf-8", "replace"))
    except OSError:
        pass


def progress_printer(quiet: bool) -> Callable[[str], None]:
    """The progress line of a match command: each call rewrites one stderr line (``\r``); nothing when ``quiet``."""
    def show(line: str) -> None:
        if not quiet:
            print("\r" + line, end="", file=sys.stderr, flush=True)
    return show


class StopControl:
    """The stop switch of one match run in the main process.

    :meth:`install` routes SIGINT and SIGTERM here. The first signal records the reason (no new game starts) and,
    when the runner is waiting for a game (inside :meth:`waiting`), raises :class:`MatchInterrupted` there, which
    ends the running games; anywhere else (writing a record, the summary) the runner sees the flag at the next
    check, so no file is cut in half by the first signal. A second signal raises :class:`MatchAborted` at once.
    :meth:`request` stops from code (tests, a GUI) the same way, without raising.
    """

    def __init__(self) -> None:
        self.reason: Optional[str] = None
        self.signum: Optional[int] = None
        self._waiting = 0
        self.message: Callable[[str], None] = _write_stderr

    @property
    def stopping(self) -> bool:
        return self.reason is not None

    def request(self, reason: str = "stop requested") -> None:
        """Stop from code (thread-safe: only sets the flag): no new game starts. Unlike a signal it interrupts no
        wait, so an in-process game in progress finishes and is kept; pool workers' games are ended once the runner
        next wakes (when some game finishes)."""
        if self.reason is None:
            self.reason = reason

    def install(self) -> Callable[[], None]:
        """Route SIGINT and SIGTERM to :meth:`handle`; returns the function restoring them. Off the main thread
        (a match run from a GUI's worker thread) signals cannot be caught: nothing is installed, :meth:`request`
        still stops the match."""
        if threading.current_thread() is not threading.main_thread():
            return lambda: None
        old = {sig: signal.signal(sig, self.handle) for sig in (signal.SIGINT, signal.SIGTERM)}

        def restore() -> None:
            for sig, handler in old.items():
                signal.signal(sig, handler)

        return restore

    def handle(self, signum: int, frame: Any = None) -> None:
        name = signal.Signals(signum).name
        if self.stopping:
            self.message(f"\nfantasista-match: {name} again: aborting now")
            raise MatchAborted(name)
        self.signum = signum
        self.request(name)
        self.message(f"\nfantasista-match: {name}: stopping (no new game; the games in progress are ended and not "
                     "recorded; press Ctrl-C again to abort at once)")
        if self._waiting:
            raise MatchInterrupted(name)

    class _Waiting:
        def __init__(self, control: "StopControl") -> None:
            self.control = control

        def __enter__(self) -> None:
            self.control._waiting += 1
            if self.control.stopping:
                self.control._waiting -= 1
                raise MatchInterrupted(self.control.reason)

        def __exit__(self, *exc: Any) -> None:
            self.control._waiting -= 1

    def waiting(self) -> "StopControl._Waiting":
        """A region where the first signal may raise :class:`MatchInterrupted` (the runner waits for games)."""
        return StopControl._Waiting(self)


class _WorkerStop:
    """A pool worker's side of stopping (one per worker process): SIGTERM from the runner ends the game in
    progress (raising :class:`MatchInterrupted` in it, so its engines are killed) and refuses queued ones."""

    def __init__(self) -> None:
        self.stopped = False
        self.in_game = False

    def is_set(self) -> bool:
        return self.stopped

    def handle(self, signum: int, frame: Any = None) -> None:
        if self.stopped and not self.in_game:  # asked twice while idle: leave
            os._exit(128 + signum)
        self.stopped = True
        if self.in_game:
            raise MatchInterrupted(signal.Signals(signum).name)


_WORKER_STOP = _WorkerStop()  # per process; only a pool worker's initializer installs its handler
#: the referees of this process whose games may be running: an abort kills their engines even when it cut short
#: the first stop's own clean-up
_LIVE_REFEREES: "weakref.WeakSet[Referee]" = weakref.WeakSet()


def abort_now(executor: Any = None) -> None:
    """An abort: SIGKILL every engine of this process's games and the workers of ``executor`` (a process pool),
    with SIGINT ignored meanwhile so that nothing cuts the killing short."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for ref in list(_LIVE_REFEREES):
        ref.kill_now()
    _signal_workers(executor, KILL_SIGNAL)


def _pool_worker_init() -> None:
    """Pool workers share the terminal's process group: a Ctrl-C there is the runner's to handle, not theirs."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _WORKER_STOP.handle)


def _signal_workers(executor: Any, sig: int) -> None:
    """Send ``sig`` to the worker processes of a process pool (nothing for other executors)."""
    for proc in list((getattr(executor, "_processes", None) or {}).values()):
        try:
            os.kill(proc.pid, sig)
        except (OSError, AttributeError):
            pass


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


def pairings(n: int, gauntlet: bool = False) -> list[tuple[int, int]]:
    """Engine index pairs that play each other: every pair (round robin) or engine 0 against each other one.

    >>> pairings(3), pairings(3, gauntlet=True)
    ([(0, 1), (0, 2), (1, 2)], [(0, 1), (0, 2)])
    """
    return [(0, j) for j in range(1, n)] if gauntlet else list(itertools.combinations(range(n), 2))


def schedule(engines: Sequence[EngineSpec], openings: Sequence[Opening], games: int, settings: MatchSettings,
             seed: int, gauntlet: bool = False) -> list[GameTask]:
    """``games`` games for *each* pairing (:func:`pairings`). Each opening is played twice, colours swapped (one game
    pair); the pairings take turns pair by pair, so a stopped match has played each about equally. Game ``i``'s
    seed is the ``i``-th draw from the match seed (a stopped match resumes with the same seeds)."""
    if games < 1:
        raise ValueError(f"--games must be at least 1, not {games}")
    tasks: list[GameTask] = []
    pair = 0
    seeds = random.Random(seed)
    for k in range((games + 1) // 2):
        opening = openings[k % len(openings)]
        for a, b in pairings(len(engines), gauntlet):
            for swap in (False, True):
                if 2 * k + swap >= games:  # an odd N: the last opening is played once
                    continue
                first, second = (engines[b], engines[a]) if swap else (engines[a], engines[b])
                tasks.append(GameTask(len(tasks), pair, first, second, opening, settings, seeds.getrandbits(31)))
            pair += 1
    return tasks


def schedule_digest(tasks: Sequence[GameTask]) -> str:
    """A fingerprint of a schedule (game, colours, opening, seed, limits), to check that a resumed match is the
    same match."""
    h = hashlib.sha256()
    for t in tasks:
        h.update(json.dumps([t.index, t.pair, dataclasses.asdict(t.sente), dataclasses.asdict(t.gote),
                             t.opening.sfen, t.opening.moves, t.seed], sort_keys=True).encode())
    return h.hexdigest()


@dataclasses.dataclass
class MatchResult:
    records: list
    stats: dict  # "a vs b" -> MatchStats
    stopped_by_sprt: bool = False
    interrupted: Optional[str] = None  # why the match stopped before its end (SIGINT, SIGTERM, ...)
    scheduled: int = 0  # games in the whole schedule


# -------------------------------------------------------------- summary.json
def _nonfinite_reason(key: str, value: float, pairing: dict) -> str:
    sign = "nan" if math.isnan(value) else ("+inf" if value > 0 else "-inf")
    if not pairing.get("games"):
        return f"{sign}: no games played yet"
    if "elo" in key:
        return (f"{sign}: the score (or this end of its 95% interval) is at 0% or 100%, where the logistic Elo "
                "is unbounded")
    return f"{sign}: not a finite number"


def strict_summary(summary: dict) -> dict:
    """``summary`` with every non-finite float (an Elo of ±inf at a score of 0 or 100%, ...) replaced by ``None``
    and the reason written in ``null_because`` (its key path → why), so the file is strict JSON."""
    reasons: dict[str, str] = {}

    def clean(x: Any, path: str) -> Any:
        if isinstance(x, float) and not math.isfinite(x):
            reasons[path] = _nonfinite_reason(path, x, summary)
            return None
        if isinstance(x, dict):
            return {k: clean(v, f"{path}.{k}" if path else str(k)) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [clean(v, f"{path}[{i}]") for i, v in enumerate(x)]
        return x

    out = clean(summary, "")
    if reasons:
        out["null_because"] = reasons
    return out


def write_summary(out_dir: Path, result: MatchResult, extra: Optional[dict] = None) -> Path:
    """``out_dir/summary.json``: the match's state and each pairing's statistics, strict JSON (``NaN`` and
    ``Infinity`` are never written), replaced atomically (a stop never leaves half a file)."""
    played = len(result.records)
    data = {"match": {"games_scheduled": result.scheduled, "games_played": played,
                      "complete": played == result.scheduled,
                      "stopped_by": result.interrupted or ("sprt" if result.stopped_by_sprt else None),
                      **(extra or {})},
            "pairings": {k: strict_summary(v.summary()) for k, v in result.stats.items()}}
    return rec.write_text_atomic(out_dir / "summary.json", json.dumps(data, indent=2, allow_nan=False))


# ---------------------------------------------------------------- running it
def run_match(engines: Sequence[EngineSpec], *, games: int = 2, settings: Optional[MatchSettings] = None,
              openings: Optional[Sequence[Opening]] = None, seed: int = 0, executor: Optional[concurrent.futures.Executor] = None,
              out: Optional[str | Path] = None, formats: Iterable[str] = ("kif", "csa"),
              sprt: Optional[dict] = None, progress: Optional[Callable[[str], None]] = None,
              gauntlet: bool = False, done: Sequence[dict] = (), control: Optional[StopControl] = None,
              sprt_prior: Optional[Prior] = None) -> MatchResult:
    """Play a match and return its records (sorted by game number) and statistics per pairing.

    ``games`` per pairing: every pair of engines (``gauntlet``: engine 0 against each other one) plays that many.
    ``sprt``: ``{"elo0", "elo1", "alpha", "beta"}`` stops the match (cancelling unplayed games) once the first
    two engines' LLR leaves its bounds. ``out``: a directory for ``games.jsonl``, ``kif/``, ``csa/`` and
    ``summary.json``. ``done``: records of games already played (a resumed match): those games are skipped, their
    records count, and ``games.jsonl`` is appended to rather than started afresh. ``control``: stops the match
    (:class:`StopControl`); a stopped match keeps every finished game and writes its summary. ``sprt_prior``: the
    counts of an earlier part of the same test (:class:`usi.stats.Prior`), added to the first two engines' statistics
    (the continued SPRT stops on the pooled LLR).
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
    tasks = schedule(engines, openings, games, settings, seed, gauntlet)
    control = control or StopControl()
    sprt = sprt or {}
    stats = {f"{engines[a].name} vs {engines[b].name}":
             MatchStats(engines[a].name, engines[b].name, **sprt, prior=sprt_prior if (a, b) == (0, 1) else None)
             for a, b in pairings(len(engines), gauntlet)}
    main = next(iter(stats.values()))
    out_dir = Path(out) if out else None
    records: list[dict] = []
    for record in done:
        records.append(record)
        for st in stats.values():
            st.add(record)
    finished = {r["game"] for r in records}
    if out_dir:
        out_dir.mkdir(parents=True, exist_ok=True)
        if not done:
            (out_dir / "games.jsonl").write_text("", encoding="utf-8")
    stopped = bool(sprt) and main.sprt().decision is not None
    interrupted: Optional[str] = None
    todo = [t for t in tasks if t.index not in finished]
    try:
        for record in _results(executor, todo, lambda: stopped, control):
            records.append(record)
            for st in stats.values():
                st.add(record)
            if out_dir:
                rec.write_jsonl(record, out_dir / "games.jsonl")
                if record.get("variant", "shogi") == "shogi":
                    for fmt in formats:
                        rec.write_game_files(record, out_dir / fmt, formats=(fmt,))
            if progress:
                progress(main.progress_line(games))
            if sprt and main.sprt().decision:
                stopped = True
    except MatchInterrupted:
        pass
    if control.stopping and len(records) < len(tasks):
        interrupted = control.reason
    records.sort(key=lambda r: r["game"])
    result = MatchResult(records, stats, stopped, interrupted, len(tasks))
    if out_dir:
        write_summary(out_dir, result)
    return result


def _results(executor: Optional[concurrent.futures.Executor], tasks: Sequence[GameTask],
             stop: Callable[[], bool], control: StopControl):
    """Yield game records as they finish; once ``stop()`` is true unplayed games are cancelled. When ``control``
    stops the match, the games in progress are ended (their engines killed: in this thread by
    :class:`MatchInterrupted`, in pool workers by SIGTERM) and only games that had finished are yielded."""
    if executor is None or isinstance(executor, InlineExecutor):
        for task in tasks:
            if stop() or control.stopping:
                return
            with control.waiting():
                record = play_game(task)
            yield record
        return
    pending = {executor.submit(play_game, t) for t in tasks}
    try:
        while pending:
            done: set = set()
            try:
                with control.waiting():
                    done, pending = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
            except MatchInterrupted:
                pass
            if control.stopping:
                for f in pending:
                    f.cancel()
                _signal_workers(executor, signal.SIGTERM)
                concurrent.futures.wait(pending)  # the running games end at once (a worker kills their engines)
                done, pending = done | pending, set()
            for future in done:
                if future.cancelled():
                    continue
                if control.stopping and future.exception() is not None:  # a game ended by the stop: no record
                    continue
                yield future.result()  # a game that finished, also just before a stop
            if stop():
                return
    finally:
        for f in pending:
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
    pool = concurrent.futures.ProcessPoolExecutor(concurrency, mp_context=multiprocessing.get_context("spawn"),
                                                  initializer=_pool_worker_init)
    return pool, lambda: pool.shutdown(cancel_futures=True)


# ------------------------------------------------------------------ warm-up
def warm_up(engines: Sequence[EngineSpec], settings: MatchSettings, timeout: float = COLD_START_TIMEOUT,
            progress: Optional[Callable[[str], None]] = None, control: Optional[StopControl] = None) -> list[str]:
    """Start each distinct engine (command and options) once and wait up to ``timeout`` s for ``readyok``, showing
    the wait through ``progress``: a cold start of our engine compiles its numba kernels there (minutes), after
    which each game's own ``isready`` loads them from the cache within ``settings.ready_timeout``.

    Returns one line per engine (``name: ready in N s``); raises ``ValueError`` naming the engine that failed to
    start (a match of it would be nothing but lost games).
    """
    control = control or StopControl()
    wsettings = dataclasses.replace(settings, ready_timeout=timeout)
    seen, lines = set(), []
    for spec in engines:
        key = (tuple(spec.cmd), tuple(sorted(spec.options.items())))
        if key in seen:
            continue
        seen.add(key)
        task = GameTask(-1, -1, spec, spec, Opening(), wsettings, 0)
        from . import games

        if games.is_game_variant(settings.variant):
            from .game_referee import make_referee

            ref: Referee = make_referee(task)
        else:
            ref = Referee(task)
        _LIVE_REFEREES.add(ref)
        if progress is not None:
            ref.ready_progress = lambda name, t: progress(
                f"warming up {name}: waiting for readyok, {t:.0f} s (a first start compiles its kernels: minutes)")
        t0 = time.perf_counter()
        try:
            with control.waiting():
                ref._open(0)
        except GameOver as over:
            raise ValueError(f"engine {spec.name} failed to start ({over.reason}): {over.detail}") from None
        finally:
            ref.abandon()
        lines.append(f"{spec.name}: ready in {time.perf_counter() - t0:.1f} s")
    return lines


# ----------------------------------------------------------------- openings
#: the opening set used for a variant when ``--openings`` is not given (files in ``bench/openings/``)
DEFAULT_OPENINGS = {"shogi": "shogi-balanced.txt", "daishogi2017": "daishogi2017.txt"}


def default_openings_path(variant: str) -> Optional[Path]:
    """The shipped opening set for ``variant`` (``bench/openings/...``), or None (none for it, or not installed)."""
    name = DEFAULT_OPENINGS.get(variant)
    if name is None:
        return None
    path = Path(__file__).resolve().parent.parent / "bench" / "openings" / name
    return path if path.exists() else None


# ------------------------------------------------------------------- resume
MATCH_FILE = "match.json"  # in the output directory: what --resume needs to play the same match again
RESUME_OVERRIDES = ("--concurrency", "--cluster", "--quiet", "--no-warmup", "--warmup-timeout")


def read_records(path: Path) -> list[dict]:
    """The records of ``games.jsonl``. A last line cut short (the runner was killed while writing it, perhaps inside
    a multi-byte character) is dropped and the file rewritten without it, as is a last record missing its newline
    (the next record appended would run into it); a bad line elsewhere is an error."""
    if not path.exists():
        return []
    data = path.read_bytes()  # bytes: a cut can split a UTF-8 character, so each line is decoded alone
    lines = data.split(b"\n")
    if lines and not lines[-1]:
        lines.pop()  # the empty piece after the final newline
    out, cut = [], False
    for n, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw.decode("utf-8"))
            if not isinstance(record, dict):
                raise json.JSONDecodeError("not an object", "", 0)
            out.append(record)
        except (UnicodeDecodeError, json.JSONDecodeError):
            if n == len(lines):
                print(f"fantasista-match: {path}:{n}: dropping a record cut short", file=sys.stderr)
                cut = True
                break
            raise ValueError(f"{path}:{n}: not a JSON record") from None
    if cut or (data and not data.endswith(b"\n")):
        rec.write_text_atomic(path, "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in out))
    return out


def resume_argv(out_dir: Path, argv: Sequence[str], overrides: Sequence[str] = RESUME_OVERRIDES) -> list[str]:
    """The saved command line of the match in ``out_dir`` with the execution options of ``argv`` (those named in
    ``overrides``) appended; ValueError for any other option given beside ``--resume``."""
    meta_path = out_dir / MATCH_FILE
    if not meta_path.exists():
        raise ValueError(f"{out_dir}: no {MATCH_FILE} (not a match directory written by fantasista-match or "
                         "bench.strength)")
    extra, skip = [], False
    for i, word in enumerate(argv):
        if skip:
            skip = False
            continue
        if word.startswith("--resume"):
            skip = "=" not in word
            continue
        name = word.split("=", 1)[0]
        if word.startswith("--") and name not in overrides:
            raise ValueError(f"--resume takes the match's settings from {meta_path}; only "
                             f"{', '.join(overrides)} may be given with it, not {name}")
        extra.append(word)
    saved = json.loads(meta_path.read_text(encoding="utf-8"))
    return [*saved["argv"], "--out", str(out_dir), *extra]


def prepare_output(out: Path, tasks: Sequence[GameTask], argv: Sequence[str], openings_path: Optional[Path],
                   resume: bool) -> list[dict]:
    """Ready ``out`` for a match and return the games already played there (none unless ``resume``).

    A new match refuses a directory that already holds games and saves its command line and schedule fingerprint
    in ``out/match.json``; a resumed one checks that the schedule rebuilt from that command line is the one played
    (ValueError otherwise) and returns its finished records."""
    games_file = out / "games.jsonl"
    if resume:
        saved = json.loads((out / MATCH_FILE).read_text(encoding="utf-8"))
        if saved.get("schedule_sha256") != schedule_digest(tasks):
            raise ValueError(f"{out}: the schedule rebuilt from {MATCH_FILE} differs from the one played (the "
                             "openings file or the code changed); not resuming")
        return _check_done(read_records(games_file), tasks, out)
    if games_file.exists() and games_file.stat().st_size > 0:
        raise ValueError(f"{out} already holds games: --resume {out} continues that match, or give another --out")
    out.mkdir(parents=True, exist_ok=True)
    meta = {"argv": list(argv), "created": _dt.datetime.now().isoformat(timespec="seconds"),
            "openings": str(openings_path) if openings_path else None, "games_scheduled": len(tasks),
            "schedule_sha256": schedule_digest(tasks)}
    rec.write_text_atomic(out / MATCH_FILE, json.dumps(meta, indent=2))
    return []


def _check_done(records: list[dict], tasks: Sequence[GameTask], out_dir: Path) -> list[dict]:
    """The finished games of ``records`` (one per game number), each checked against the schedule."""
    by_game: dict[int, dict] = {}
    for r in records:
        i = r.get("game")
        if not isinstance(i, int) or not 0 <= i < len(tasks):
            raise ValueError(f"{out_dir}/games.jsonl: game {i!r} is not in this match's schedule")
        t = tasks[i]
        if (r.get("sente"), r.get("gote"), r.get("seed")) != (t.sente.name, t.gote.name, t.seed):
            raise ValueError(f"{out_dir}/games.jsonl: game {i} ({r.get('sente')} - {r.get('gote')}, seed "
                             f"{r.get('seed')}) does not match this match's schedule ({t.sente.name} - "
                             f"{t.gote.name}, seed {t.seed})")
        by_game.setdefault(i, r)
    return [by_game[i] for i in sorted(by_game)]


# ----------------------------------------------------------------------- CLI
def _ms(seconds: Optional[float]) -> Optional[int]:
    return None if seconds is None else int(round(seconds * 1000))


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="fantasista-match", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--engine", action="append", nargs="+", metavar="KEY=VALUE",
                   help="an engine: cmd=\"...\" [name=...] [option.<Name>=<value> ...] [nodes=N] [depth=N] "
                        "[movetime=MS]; give two or more")
    p.add_argument("--variant", default="shogi", help="game id (default shogi)")
    p.add_argument("--variant-option", action="append", default=[], metavar="NAME=VALUE",
                   help="a rule option of the variant (e.g. FantasistaFairyGote=ayumi, EnokianMichizane=9i); the "
                        "referee plays by it and sends it to the engines that offer it")
    p.add_argument("--games", type=int, default=2,
                   help="games per pairing: every pair of engines plays N games (with --gauntlet, the first engine "
                        "plays N against each other one); openings are played in pairs, colours swapped (default 2)")
    p.add_argument("--gauntlet", action="store_true",
                   help="the first engine plays each of the others (instead of every pair playing)")
    tc = p.add_argument_group("time control (seconds; combine --time with --byoyomi or --inc)")
    tc.add_argument("--time", type=float, help="main time per side (alone: sudden death)")
    tc.add_argument("--byoyomi", type=float, help="byoyomi per move")
    tc.add_argument("--inc", type=float, help="Fischer increment per move")
    tc.add_argument("--movetime", type=float, help="fixed time per move")
    tc.add_argument("--nodes", type=int, help="nodes per move")
    tc.add_argument("--depth", type=int, help="depth per move")
    p.add_argument("--openings", help="file of openings: SFENs or USI move lines, one per line (default for shogi: "
                                      "bench/openings/shogi-balanced.txt; dai shogi: bench/openings/daishogi2017.txt)")
    p.add_argument("--shuffle", action="store_true", help="shuffle the openings with the seed")
    p.add_argument("--concurrency", type=int, default=1, help="games in parallel (default 1)")
    p.add_argument("--cluster", help="Dask scheduler address (or 'local') to run the games on")
    p.add_argument("--seed", type=int, default=0,
                   help="match seed: opening order, chance events, each engine's own Seed option")
    p.add_argument("--max-plies", type=int, default=512, help="draw after this many plies (default 512)")
    p.add_argument("--resign-score", type=int, help="adjudicate a loss when a side reports <= -CP ...")
    p.add_argument("--resign-moves", type=int, default=3, help="... on this many consecutive moves (default 3)")
    p.add_argument("--entering-king", default="CSARule27", choices=["NoEnteringKing", "CSARule24", "CSARule27"])
    p.add_argument("--margin", type=int, default=1000, help="ms of grace before a time forfeit (default 1000)")
    p.add_argument("--handshake-timeout", type=float, default=10.0)
    p.add_argument("--ready-timeout", type=float, default=120.0,
                   help="s for readyok in each game (default 120; the warm-up covers a cold start)")
    p.add_argument("--warmup-timeout", type=float, default=COLD_START_TIMEOUT,
                   help=f"s for each engine's first readyok before the first game (default {COLD_START_TIMEOUT:.0f}: "
                        "a cold start of our engine compiles its numba kernels, 2-10 minutes)")
    p.add_argument("--no-warmup", action="store_true", help="no warm-up start of each engine before the first game")
    p.add_argument("--move-timeout", type=float, default=60.0, help="s per move without a time limit")
    p.add_argument("--sprt", nargs=4, type=float, metavar=("ELO0", "ELO1", "ALPHA", "BETA"),
                   help="stop early with a pentanomial SPRT")
    p.add_argument("--sprt-prior", nargs=2, metavar=("W/D/L", "PENTANOMIAL"),
                   help="continue an SPRT whose games are gone: add an earlier part's counts of the first engine "
                        "against the second (as a ledger line gives them, e.g. 291/1/194 [36,1,121,0,85]) to the "
                        "statistics; the same engines and settings, a new --seed")
    p.add_argument("--out", help="output directory (default ./matches/<date-time>)")
    p.add_argument("--resume", metavar="DIR",
                   help="continue the stopped match in DIR (its settings, same seeds; finished games are skipped); "
                        "only --concurrency, --cluster, --quiet, --no-warmup, --warmup-timeout may be added")
    p.add_argument("--formats", default="kif,csa", help="record files for standard shogi (default kif,csa)")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    return p


def _err(message: str) -> int:
    print(f"fantasista-match: error: {message}", file=sys.stderr)
    return 2


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The ``fantasista-match`` command (exit status 0; 2 for bad arguments; 128 + signal number when stopped by
    a signal, after the summary of the finished games)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    # before the runner's own positions load a kernel: one cached against an edited shared kernel crashes
    purge_stale_kernels()
    resume = Path(args.resume) if args.resume else None
    try:
        if resume is not None:
            argv = resume_argv(resume, argv)
            args = parser.parse_args(argv)
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
        engines = [EngineSpec.parse(items) for items in args.engine or []]
        if len(engines) < 2:
            raise ValueError("give at least two --engine")
        if args.games < 1:
            raise ValueError(f"--games must be at least 1, not {args.games}")
        if args.sprt_prior and not args.sprt:
            raise ValueError("--sprt-prior continues an SPRT: give --sprt too")
        prior = Prior.parse(*args.sprt_prior) if args.sprt_prior else None
        openings_path = Path(args.openings) if args.openings else default_openings_path(args.variant)
        openings = read_openings(openings_path, args.variant) if openings_path else None
    except ValueError as exc:
        return _err(str(exc))
    except json.JSONDecodeError as exc:
        return _err(f"{resume}/{MATCH_FILE}: {exc}")
    if openings and args.shuffle:
        random.Random(args.seed).shuffle(openings)
    settings = MatchSettings(
        variant=args.variant,
        tc=TimeControl(main=_ms(args.time), byoyomi=_ms(args.byoyomi), inc=_ms(args.inc),
                       movetime=_ms(args.movetime), nodes=args.nodes, depth=args.depth),
        max_plies=args.max_plies, resign_score=args.resign_score, resign_moves=args.resign_moves,
        entering_king_rule=args.entering_king, margin=args.margin, handshake_timeout=args.handshake_timeout,
        ready_timeout=args.ready_timeout, move_timeout=args.move_timeout, variant_options=variant_options)
    out = Path(args.out or f"matches/{_dt.datetime.now():%Y%m%d-%H%M%S}")
    tasks = schedule(engines, openings or [Opening()], args.games, settings, args.seed, args.gauntlet)
    try:
        done = prepare_output(out, tasks, argv, openings_path, resume is not None)
    except ValueError as exc:
        return _err(str(exc))
    except json.JSONDecodeError as exc:
        return _err(f"{out}/{MATCH_FILE}: {exc}")
    if not args.quiet or openings_path is None:
        if openings_path is not None and not args.openings:
            print(f"openings: {openings_path} ({len(openings or [])} lines; --openings FILE to choose others)",
                  file=sys.stderr)
        elif openings_path is None:
            print(f"WARNING: no --openings and no shipped opening set for {args.variant}: EVERY GAME STARTS FROM THE "
                  "START POSITION. Games then differ only through the variant's chance events and the engines' "
                  "seeds; two deterministic engines REPEAT THE SAME GAME. Give --openings FILE.", file=sys.stderr)
        if openings and args.games > 2 * len(openings):
            print(f"warning: {args.games} games a pairing from {len(openings)} openings: each opening is played "
                  f"{-(-args.games // (2 * len(openings)))} times a colour, so games repeat their starts (a longer "
                  "--openings file keeps them independent)", file=sys.stderr)
    if resume is not None and not args.quiet:
        print(f"resuming {out}: {len(done)} of {len(tasks)} games already played", file=sys.stderr)
    sprt = dict(zip(("elo0", "elo1", "alpha", "beta"), args.sprt)) if args.sprt else None

    show = progress_printer(args.quiet)

    control = StopControl()
    restore = control.install()
    executor, close = None, lambda: None
    try:
        try:
            if not args.no_warmup and len(done) < len(tasks) and (not args.cluster or args.cluster == "local"):
                for line in warm_up(engines, settings, args.warmup_timeout, show, control):
                    show(line)
                if not args.quiet:
                    print(file=sys.stderr)
        except ValueError as exc:
            return _err(str(exc))
        except MatchInterrupted:
            print("stopped during the warm-up: no game played", file=sys.stderr)
            return 128 + (control.signum or signal.SIGINT)
        executor, close = make_executor(args.concurrency, args.cluster)
        try:
            result = run_match(engines, games=args.games, settings=settings, openings=openings, seed=args.seed,
                               executor=executor, out=out, formats=tuple(f for f in args.formats.split(",") if f),
                               sprt=sprt, progress=show, gauntlet=args.gauntlet, done=done, control=control,
                               sprt_prior=prior)
        finally:
            close()
    except MatchAborted:
        abort_now(executor)
        _write_stderr(f"aborted: the finished games are in {out}/games.jsonl (no summary written); "
                      f"continue with: fantasista-match --resume {out}")
        os._exit(128 + (control.signum or signal.SIGINT))
    finally:
        restore()
    if not args.quiet:
        print(file=sys.stderr)
    for st in result.stats.values():
        print(st.report())
    if result.stopped_by_sprt:
        print("stopped early: SPRT decision reached")
    print(f"records: {out}/games.jsonl")
    if result.interrupted:
        print(f"stopped by {result.interrupted}: {len(result.records)} of {result.scheduled} games played (games in "
              f"progress were ended and not recorded); continue with: fantasista-match --resume {out}")
        return 128 + (control.signum or signal.SIGINT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
