"""Compile every numba kernel of the six variants once, into the disk cache, with a line per step.

Run it once after installing (``fantasista --compile``, ``fantasista-compile`` or ``python -m usi.compile``): a
cold cache takes a minute or two (see ``docs/engine.md``, "The first start"), after which every ``isready`` loads its
kernels from the cache in a second or two. Each variant is three steps:

- ``engine``: exactly what ``isready`` does for the variant (the variant's searcher's warm-up), first, so that
  on a cold cache its time is what a first ``isready`` would take;
- ``rules``: a seeded random playout through the rules layer as the referee and the GUI use it (legal moves,
  moves and chance events applied, check, results, SFEN), and ``perft 2`` for the shogi-like games;
- ``play``: four ``go depth 1`` decisions through the USI loop, for whatever a real search needs beyond the
  warm-up (on a warm cache it loads nothing new: the warm-ups cover it).

The variants compile in ``--jobs`` worker processes at once (default one per core: numba compiles on one core), a
group of variants each (:data:`WORKER_GROUPS`), and a line is printed as each step ends; ``--jobs 1`` compiles in
this process, printing a dot every few seconds while a step runs. A step's line gives its wall and CPU time and how
many kernel signatures it compiled (``compiled``) and loaded from the cache (``cached``). A step that fails is reported and the others still
run; the exit status is then 1. Temporary files left by a killed compile are removed first
(:func:`engine.kernels.safecache.sweep_temporary_files`). ``--measure`` then times ``usi`` and ``isready`` in a
fresh engine process per variant (:func:`measure_ready`).
"""
from __future__ import annotations

import argparse
import io
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, TextIO

from . import games
from .engine import VARIANT_IDS, UsiEngine, package_version
from .kernel_cache import KERNEL_PACKAGES, purge_stale_kernels

ROOT = Path(__file__).resolve().parents[1]
#: The packages whose modules hold kernels (their ``__pycache__`` holds numba's cache unless NUMBA_CACHE_DIR is set).
STEPS = ("engine", "rules", "play")
DOT_S = 5.0  # a dot this often while a step runs
PLAYOUT_TOKENS = 60  # moves and events of a rules playout
PLAYOUT_SEED = 2022
PLAY_DECISIONS = 4  # go depth 1 decisions of the play step


@dataclass
class StepResult:
    """One step's outcome: seconds, kernel signatures compiled and loaded from the cache, an error or None."""

    variant: str
    step: str
    seconds: float
    compiled: int
    cached: int
    error: str | None = None
    cpu: float = 0.0  # CPU seconds of this process (the wall time depends on what else the machine runs)


def kernel_counts() -> tuple[int, int]:
    """(signatures compiled, signatures loaded from the disk cache) so far, over the project's loaded kernels."""
    from numba.core.registry import CPUDispatcher

    compiled = cached = 0
    seen: set[int] = set()
    for name, mod in list(sys.modules.items()):
        if mod is None or name.split(".")[0] not in KERNEL_PACKAGES:
            continue
        for obj in list(vars(mod).values()):
            if isinstance(obj, CPUDispatcher) and id(obj) not in seen:
                seen.add(id(obj))
                stats = obj.stats  # numba's per-signature counters of compiles and cache loads
                compiled += sum(stats.cache_misses.values())
                cached += sum(stats.cache_hits.values())
    return compiled, cached


def _playout_position(variant: str) -> None:
    """The shogi-like rules layer: perft 2 and a seeded random game of legal moves with its checks and results."""
    from engine import Position

    rng = random.Random(PLAYOUT_SEED)
    pos = Position.startpos(variant)
    pos.perft(2)
    for _ in range(PLAYOUT_TOKENS):
        moves = pos.legal_moves()
        if not moves or pos.result() is not None:
            break
        pos.push(rng.choice(moves))
        pos.is_check()
        pos.repetition()
    Position.from_sfen(pos.sfen(), variant).legal_codes()


def _playout_game(variant: str) -> None:
    """A GameState variant's rules layer as the referee drives it: chance events drawn, actions chosen at random."""
    rng = random.Random(PLAYOUT_SEED)
    opt = games.option_getter({})
    state = games.new_state(variant, opt)
    for _ in range(PLAYOUT_TOKENS):
        if state.result() is not None:
            break
        if state.node_kind().value == "chance":
            state.apply(games.sample_event(state.chance_events(), rng))
        else:
            actions = state.legal_actions()
            if not actions:
                break
            state.apply(rng.choice(actions))
        games.describe(state)
    games.state_from_sfen(variant, state.sfen(), opt)


def rules_step(variant: str) -> None:
    """Compile the rules-layer kernels of ``variant``."""
    if games.is_game_variant(variant):
        _playout_game(variant)
    else:
        _playout_position(variant)


def engine_step(variant: str) -> None:
    """Compile what ``isready`` needs for ``variant`` (the same warm-up)."""
    eng = UsiEngine(out=io.StringIO())
    eng.handle(f"setoption name USI_Variant value {variant}")
    eng._warmup()  # not cmd_isready: an error here must surface, not become an ``info string``


def play_step(variant: str) -> None:
    """A few ``go depth 1`` decisions through the USI loop from the start (chance events drawn here, as the referee
    does), so that whatever a real ``go`` needs beyond the warm-up is compiled too."""
    out = io.StringIO()
    eng = UsiEngine(out=out)
    rng = random.Random(PLAYOUT_SEED)
    opt = games.option_getter({})
    for cmd in (f"setoption name USI_Variant value {variant}", "isready", "usinewgame"):
        eng.handle(cmd)
    tokens: list[str] = []
    state = games.new_state(variant, opt) if games.is_game_variant(variant) else None
    for _ in range(PLAY_DECISIONS):
        while state is not None and state.result() is None and state.node_kind().value == "chance":
            tokens.append(games.sample_event(state.chance_events(), rng))
            state.apply(tokens[-1])
        if state is not None and state.result() is not None:
            break
        eng.handle("position startpos" + (" moves " + " ".join(tokens) if tokens else ""))
        mark = len(out.getvalue())
        eng.handle("go depth 1")
        while eng.searching:
            time.sleep(0.01)
        answer = [ln for ln in out.getvalue()[mark:].splitlines() if ln.startswith(("bestmove", "info string error"))]
        if not answer or not answer[-1].startswith("bestmove "):
            raise RuntimeError(f"no bestmove after go depth 1: {answer[-1] if answer else 'nothing'}")
        move = answer[-1].split()[1]
        if move in ("resign", "win"):
            break
        tokens.append(move)
        if state is not None:
            state.apply(move)


STEP_FUNCTIONS: dict[str, Callable[[str], None]] = {"engine": engine_step, "rules": rules_step, "play": play_step}


class _Dots:
    """Prints a dot every ``DOT_S`` seconds until stopped (so a long compile visibly progresses)."""

    def __init__(self, out: TextIO) -> None:
        self.out, self.done = out, threading.Event()
        self.thread = threading.Thread(target=self._run, name="compile-dots", daemon=True)

    def _run(self) -> None:
        while not self.done.wait(DOT_S):
            self.out.write(".")
            self.out.flush()

    def __enter__(self) -> "_Dots":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.done.set()
        self.thread.join()


def sweep(out: TextIO) -> int:
    """Remove temporary cache files a killed compile left behind; return how many."""
    from engine.kernels.safecache import sweep_temporary_files

    dirs = {p for pkg in KERNEL_PACKAGES for p in (ROOT / pkg).glob("**/__pycache__")}
    if os.environ.get("NUMBA_CACHE_DIR"):
        base = Path(os.environ["NUMBA_CACHE_DIR"])
        dirs |= {base} | {p for p in base.glob("**/*") if p.is_dir()}
    removed = sum(len(sweep_temporary_files(d)) for d in sorted(dirs))
    if removed:
        out.write(f"removed {removed} temporary cache file(s) left by an interrupted compile\n")
    return removed


def _step_figures(r: StepResult) -> str:
    """A step's line after its name: seconds, CPU seconds and signatures, or the failure."""
    tail = f"FAILED: {r.error}" if r.error else f"({r.compiled} compiled, {r.cached} cached)"
    return f"{r.seconds:6.1f} s, cpu {r.cpu:6.1f} s  {tail}"


def _summary(results: list[StepResult], n: int, seconds: float, out: TextIO) -> None:
    failed = [r for r in results if r.error]
    cpu = sum(r.cpu for r in results)
    where = os.environ.get("NUMBA_CACHE_DIR") or "the __pycache__ of engine/, search/, eval/"
    out.write(f"{'done' if not failed else f'{len(failed)} step(s) failed'}: {n} steps in {seconds:.1f} s "
              f"(cpu {cpu:.1f} s); kernels cached under {where}\n")
    out.flush()


def compile_all(variants: Iterable[str] = VARIANT_IDS, steps: Iterable[str] = STEPS,
                out: TextIO | None = None) -> list[StepResult]:
    """Run ``steps`` for each of ``variants``, printing a line per step to ``out`` (stdout); return the results."""
    out = out or sys.stdout
    variants, steps = list(variants), list(steps)
    t_start = time.perf_counter()
    out.write(f"compiling the numba kernels of {len(variants)} variant(s) into the disk cache "
              f"(a minute or two on a first run, seconds once cached)\n")
    out.flush()
    purge_stale_kernels()  # before any kernel is loaded; also installs the safe cache writer

    sweep(out)
    results = []
    n = len(variants) * len(steps)
    for i, (variant, step) in enumerate(((v, s) for v in variants for s in steps), 1):
        out.write(f"[{i:2d}/{n}] {variant:<12s} {step:<6s} ")
        out.flush()
        c0, h0 = kernel_counts()
        t0, cpu0 = time.perf_counter(), time.process_time()
        error = None
        with _Dots(out):
            try:
                STEP_FUNCTIONS[step](variant)
            except Exception as exc:  # report and go on: the other variants still get compiled
                error = f"{type(exc).__name__}: {exc}"
        seconds, cpu = time.perf_counter() - t0, time.process_time() - cpu0
        c1, h1 = kernel_counts()
        r = StepResult(variant, step, seconds, c1 - c0, h1 - h0, error, cpu)
        results.append(r)
        out.write(f" {_step_figures(r)}\n")
        out.flush()
    _summary(results, n, time.perf_counter() - t_start, out)
    return results


def _children_cpu() -> float:
    """CPU seconds of the waited-for child processes so far (0 where the platform does not count them)."""
    try:
        import resource
    except ImportError:
        return 0.0
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _checkout_env() -> dict[str, str]:
    """The environment of a child process that must import this checkout (an engine to time, a compile worker)."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def measure_ready(variants: Iterable[str] = VARIANT_IDS, out: TextIO | None = None,
                  timeout_s: float = 1800.0) -> dict[str, tuple[float, float]]:
    """Start a fresh engine process per variant (``python -m usi``, this checkout) and time ``usi`` → ``usiok`` and
    ``setoption name USI_Variant value <id>`` + ``isready`` → ``readyok``; print a line each and return
    ``{variant: (usiok_s, isready_s)}``. On a warm cache this is what a GUI waits for."""
    out = out or sys.stdout
    env = _checkout_env()
    times = {}
    for variant in variants:
        cpu0 = _children_cpu()
        p = subprocess.Popen([sys.executable, "-m", "usi"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, env=env, cwd=ROOT)
        # Reading stdout blocks: a watchdog kills a silent engine at the deadline, which ends the read.
        watchdog = threading.Timer(timeout_s, p.kill)
        watchdog.start()
        try:
            marks = []
            for cmd, answer in (("usi", "usiok"), (f"setoption name USI_Variant value {variant}\nisready", "readyok")):
                t0 = time.perf_counter()
                p.stdin.write(cmd + "\n")
                p.stdin.flush()
                for line in p.stdout:
                    if line.strip() == answer:
                        break
                else:
                    if not watchdog.is_alive():
                        raise RuntimeError(f"{variant}: no {answer} within {timeout_s:.0f} s")
                    raise RuntimeError(f"{variant}: the engine ended before {answer}")
                marks.append(time.perf_counter() - t0)
            p.stdin.write("quit\n")
            p.stdin.flush()
        finally:
            watchdog.cancel()
            p.stdin.close()
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        times[variant] = (marks[0], marks[1])
        cpu = _children_cpu() - cpu0
        out.write(f"{variant:<12s} usi -> usiok {marks[0]:5.2f} s   isready -> readyok {marks[1]:6.2f} s   "
                  f"(the process's cpu, start to quit: {cpu:.2f} s)\n")
        out.flush()
    return times


#: Variants compiled in the same worker, in this order: turncoat searches with shogi's kernels, so it only loads
#: what shogi compiled (two workers compiling the same kernels at once would each pay for them). Shogi starts first
#: (it is the variant most users start), then the longest first (cold CPU seconds on 2026-12-07: fantasista ~65,
#: shogi with turncoat ~43, dai shogi ~43, enokian ~6, mawarikudoi ~4): on two cores shogi then dai shogi in one
#: worker, fantasista, enokian and mawarikudoi in the other, 86 s where dai shogi beside shogi took 111 s.
WORKER_GROUPS = (("shogi", "turncoat"), ("fantasista",), ("daishogi2017",), ("enokian",), ("mawarikudoi",))
RESULT_TAG = "compile-result "  # a worker's line carrying one StepResult as JSON


def default_jobs() -> int:
    """Worker processes of a parallel compile: one per core (numba compiles on one core), at most one per group."""
    return max(1, min(os.cpu_count() or 1, len(WORKER_GROUPS)))


def worker_groups(variants: Iterable[str]) -> list[list[str]]:
    """``variants`` split into the groups that compile in one worker process, in :data:`WORKER_GROUPS`' order
    (shogi, then the long ones, so that the short ones fill in); a variant of no listed group is a group of its
    own."""
    chosen = list(dict.fromkeys(variants))
    groups = [[v for v in group if v in chosen] for group in WORKER_GROUPS]
    grouped = {v for g in groups for v in g}
    return [g for g in groups if g] + [[v] for v in chosen if v not in grouped]


def _worker_command(group: list[str], steps: list[str]) -> list[str]:
    cmd = [sys.executable, "-m", "usi.compile", "--worker"]
    for v in group:
        cmd += ["--variant", v]
    for s in steps:
        cmd += ["--step", s]
    return cmd


def compile_parallel(variants: Iterable[str] = VARIANT_IDS, steps: Iterable[str] = STEPS, jobs: int = 2,
                     out: TextIO | None = None) -> list[StepResult]:
    """Like :func:`compile_all`, with the variants' groups (:func:`worker_groups`) compiled in up to ``jobs``
    worker processes at once: numba compiles on one core, so on two cores two variants compile in the time of one.
    Each step's line is printed when it ends (in the order they end)."""
    import json
    from concurrent.futures import ThreadPoolExecutor

    out = out or sys.stdout
    variants, steps = list(variants), list(steps)
    groups = worker_groups(variants)
    n = len(variants) * len(steps)
    out.write(f"compiling the numba kernels of {len(variants)} variant(s) into the disk cache in "
              f"{min(jobs, len(groups))} processes (a minute or two on a first run, seconds once cached)\n")
    out.flush()
    purge_stale_kernels()  # here, before the workers start (theirs then find the stamp fresh)
    sweep(out)
    t_start = time.perf_counter()
    results: list[StepResult] = []
    lock = threading.Lock()
    env = _checkout_env()
    if min(jobs, len(groups)) > 1:  # the workers fill the cores: no compile helper beside each (search/prefetch.py)
        env["FANTASISTA_PREFETCH"] = "0"

    def report(r: StepResult) -> None:
        with lock:
            results.append(r)
            out.write(f"[{len(results):2d}/{n}] {r.variant:<12s} {r.step:<6s}  {_step_figures(r)}\n")
            out.flush()

    def run(group: list[str]) -> None:
        done = set()
        # stderr goes to a file, not a pipe: a worker writing much there (numba's warnings) would block on a
        # pipe nobody reads while its stdout is read
        with tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace") as err:
            try:
                p = subprocess.Popen(_worker_command(group, steps), stdout=subprocess.PIPE, stderr=err, text=True,
                                     errors="replace", env=env, cwd=ROOT)
            except OSError as exc:
                failure = f"worker did not start: {exc}"
            else:
                with p:
                    for line in p.stdout:
                        if not line.startswith(RESULT_TAG):
                            continue
                        try:
                            r = StepResult(**json.loads(line[len(RESULT_TAG):]))
                        except (ValueError, TypeError):  # not a result line, or one cut short by a dying worker
                            continue
                        done.add((r.variant, r.step))
                        report(r)
                err.seek(0)
                tail = err.read().strip()[-300:]
                failure = f"worker exited with status {p.returncode}" + (f": {tail}" if tail else "")
        for v in group:  # a worker that died mid-way: its missing steps are failures, not silently absent
            for s in steps:
                if (v, s) not in done:
                    report(StepResult(v, s, 0.0, 0, 0, failure))

    with ThreadPoolExecutor(max_workers=max(1, min(jobs, len(groups)))) as pool:
        list(pool.map(run, groups))
    _summary(results, n, time.perf_counter() - t_start, out)
    return results


def _worker(variants: list[str], steps: list[str]) -> int:
    """One worker of :func:`compile_parallel`: compile quietly, one tagged JSON line per step on stdout."""
    import dataclasses
    import json

    for r in compile_all(variants, steps, out=io.StringIO()):
        print(RESULT_TAG + json.dumps(dataclasses.asdict(r)), flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Console entry point (``fantasista-compile``, ``fantasista --compile``, ``python -m usi.compile``)."""
    parser = argparse.ArgumentParser(prog="fantasista --compile", description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    parser.add_argument("--variant", action="append", choices=VARIANT_IDS, metavar="ID",
                        help=f"compile only this variant (repeatable; default all: {', '.join(VARIANT_IDS)})")
    parser.add_argument("--step", action="append", choices=STEPS, help="only this step (repeatable; default all three)")
    parser.add_argument("--jobs", type=int, default=default_jobs(), metavar="N",
                        help="compile in up to N processes at once, a group of variants each (default: the number "
                             f"of cores, here {default_jobs()}; 1: in this process, one step after another)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)  # one process of --jobs
    parser.add_argument("--measure", action="store_true",
                        help="then time usi and isready in a fresh engine process per variant")
    parser.add_argument("--measure-only", action="store_true", help="only time usi and isready (no compile)")
    args = parser.parse_args(argv)
    variants = args.variant or VARIANT_IDS
    failed = False
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, not {args.jobs}")
    if args.worker:
        return _worker(variants, args.step or STEPS)
    if not args.measure_only:
        if args.jobs > 1 and len(worker_groups(variants)) > 1:
            results = compile_parallel(variants, args.step or STEPS, jobs=args.jobs)
        else:
            results = compile_all(variants, args.step or STEPS)
        failed = any(r.error for r in results)
    if args.measure or args.measure_only:
        try:
            measure_ready(variants)
        except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
            print(f"measuring failed: {exc}")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
