"""The shogi strength bench: gauntlets of our engine against the engines users already have (issue 24).

::

    python -m bench.strength                           # 100 games each against fairy-stockfish and gpsusi, byoyomi 1 s
    python -m bench.strength --opponent fairy-stockfish --games 100 --quick       # byoyomi 300 ms
    python -m bench.strength --opponent fairy-stockfish --games 40 --nodes 20000  # equal nodes a move
    python -m bench.strength --report                  # pool the ledger's lines by opponent and control
    python -m bench.strength --plot                    # the ledgers as pictures in docs/img (bench.history)

A run is one ``fantasista-match`` gauntlet (:mod:`usi.match`: our referee, fresh processes per game, each engine's
warm-up first) of our engine (``python -m usi``, ``USI_Hash 64``) against the chosen opponents, both from Debian:

- ``fairy-stockfish`` (``/usr/games/fairy-stockfish``, Fairy-Stockfish 11.1, classical evaluation): ``Threads 1``,
  ``Hash 64``;
- ``gpsusi`` (``/usr/games/gpsusi``, gpsshogi 0.7.0): ``Thread 1``, ``BookDepth 0`` (no opening book: the openings
  are ours). It has no node limit (``go nodes`` is not obeyed), so an equal-nodes run leaves it out.

Colours alternate over the balanced opening set ``bench/openings/shogi-balanced.txt`` (each opening a game pair,
colours swapped; ``--shuffle`` orders it with the seed). Controls: byoyomi 1 s a move (the default), ``--quick``
byoyomi 300 ms, ``--byoyomi S``, or ``--nodes N`` for both engines. The report gives per opponent the W/D/L, score,
Elo with its 95% interval (pentanomial: the game pair is the unit), the pentanomial counts, the endings and the mean
depth each engine reported (the last ``info depth`` of each of its moves, from the runner's records).

Every complete run appends one line per opponent to the ledger ``bench/strength/shogi-gauntlet.tsv`` (date, commit,
opponent, control, games, W/D/L, pentanomial, score, Elo and interval, mean depths, endings, command), so figures of
several runs and sessions can be pooled (``--report``) and re-checked. A run stopped by Ctrl-C prints what it played
and writes no ledger line; ``python -m bench.strength --resume DIR`` plays the rest of it (same command line, kept
in ``DIR/match.json``) and, once complete, writes the run's line.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional, Sequence

from usi import match as M
from usi import stats
from usi.client import COLD_START_TIMEOUT, DEBIAN_ENGINES

from .ledger import COLUMNS, LEDGER, append_ledger, read_ledger  # noqa: F401  (bench.strength's names too)

OPENINGS = M.default_openings_path("shogi")
OURS = "fantasista"
#: the opponents: name -> (binary, engine settings for ``EngineSpec.parse`` ({hash}: the hash size), obeys ``go
#: nodes``, Debian package)
OPPONENTS = {
    "fairy-stockfish": (DEBIAN_ENGINES["fairy-stockfish"], ["option.Threads=1", "option.Hash={hash}"], True,
                        "fairy-stockfish"),
    "gpsusi": (DEBIAN_ENGINES["gpsusi"], ["option.Thread=1", "option.BookDepth=0"], False, "gpsshogi"),
}
BYOYOMI_S, QUICK_S = 1.0, 0.3
RESUME_OVERRIDES = ("--concurrency", "--quiet")  # the options --resume may change


# ------------------------------------------------------------------ figures
def movers(record: dict) -> tuple[str, str]:
    """The engine names in move order from the record's start position: ``(mover of even plies, of odd plies)``."""
    first = 0 if record.get("start_sfen", "b").split()[1:2] != ["w"] else 1
    names = (record["sente"], record["gote"])
    return names[first], names[1 - first]


def mean_depths(records: Iterable[dict]) -> dict[str, Optional[float]]:
    """Mean reported depth per engine name over all its moves with a depth (opening moves have none).

    The mover of ply ``i`` is the side to move of the start position for even ``i``.

    >>> r = {"start_sfen": "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1", "sente": "a",
    ...      "gote": "b", "depths": [None, None, 8, 12, 10, 14]}
    >>> mean_depths([r])
    {'a': 9.0, 'b': 13.0}
    """
    total: dict[str, list] = {}
    for r in records:
        order = movers(r)
        for i, d in enumerate(r.get("depths") or []):
            acc = total.setdefault(order[i % 2], [0, 0])
            if d is not None:
                acc[0] += d
                acc[1] += 1
    return {k: (s / n if n else None) for k, (s, n) in total.items()}


@dataclass
class TimeUsage:
    """How one engine used its clock over a run's games (from the records' move times; all ms).

    ``worst_overrun`` is the largest time a move used beyond what it had (its clock, plus the byoyomi under
    byoyomi; :func:`usi.match.spend`): negative is the smallest headroom left, above the referee's margin a time
    forfeit. ``min_clock`` is the lowest main clock after a move (Fischer: before the increment). ``byoyomi_use`` is
    the mean share of the byoyomi used by the moves made with no main time left (``None`` without byoyomi)."""

    moves: int = 0
    total: float = 0.0
    longest: float = 0.0
    worst_overrun: float = -math.inf
    min_clock: float = math.inf
    byoyomi_moves: int = 0
    byoyomi_used: float = 0.0
    forfeits: int = 0

    @property
    def mean(self) -> float:
        return self.total / self.moves if self.moves else 0.0

    @property
    def byoyomi_use(self) -> Optional[float]:
        return self.byoyomi_used / self.byoyomi_moves if self.byoyomi_moves else None

    def summary(self) -> str:
        """One line, e.g. ``312 moves, mean 0.81 s, longest 0.86 s, worst overrun -135 ms, byoyomi used 83%``."""
        if not self.moves:
            return "no timed moves"
        parts = [f"{self.moves} moves, mean {self.mean / 1000:.2f} s, longest {self.longest / 1000:.2f} s",
                 f"worst overrun {self.worst_overrun:+.0f} ms"]
        if math.isfinite(self.min_clock):
            parts.append(f"lowest clock {max(self.min_clock, 0) / 1000:.1f} s")
        if self.byoyomi_use is not None:
            parts.append(f"byoyomi used {100 * self.byoyomi_use:.0f}%")
        return ", ".join(parts) + f", time forfeits {self.forfeits}"


def time_usage(records: Iterable[dict], tc: M.TimeControl) -> dict[str, TimeUsage]:
    """Replay every game's clocks from its move times (seconds a ply; ``None`` for opening moves) under ``tc``.

    >>> tc = M.TimeControl(main=0, byoyomi=1000)
    >>> r = {"sente": "a", "gote": "b", "times": [None, 0.8, 0.9, 1.05], "reason": "checkmate", "result": "sente"}
    >>> u = time_usage([r], tc)
    >>> u["a"].moves, round(u["a"].worst_overrun), round(u["b"].worst_overrun), round(u["b"].byoyomi_use, 3)
    (1, -100, 50, 0.925)
    """
    usage: dict[str, TimeUsage] = {}
    for r in records:
        order = movers(r)
        clocks = {name: float(tc.main or 0) for name in order}
        for i, t in enumerate(r.get("times") or []):
            name = order[i % 2]
            u = usage.setdefault(name, TimeUsage())
            if t is None:
                continue
            used = 1000 * t
            u.moves += 1
            u.total += used
            u.longest = max(u.longest, used)
            if not tc.clocked:
                continue
            before = clocks[name]
            clocks[name], over = M.spend(tc, before, used)
            u.worst_overrun = max(u.worst_overrun, over)
            if tc.byoyomi is not None and before <= 0 and tc.byoyomi > 0:
                u.byoyomi_moves += 1
                u.byoyomi_used += used / tc.byoyomi
            if tc.main:
                left = clocks[name] - (tc.inc or 0) if tc.byoyomi is None else clocks[name]  # Fischer: before the inc
                u.min_clock = min(u.min_clock, left)
        if r.get("reason") == "time forfeit" and r.get("result") in M.SIDES:
            loser = (r["sente"], r["gote"])[1 - M.SIDES.index(r["result"])]
            usage.setdefault(loser, TimeUsage()).forfeits += 1
    return usage


def figures(st: stats.MatchStats) -> dict:
    """Score, Elo and its 95% interval with the game pair as the unit (the trinomial one when no pair is complete)."""
    if sum(st.penta):
        elo, lo, hi = stats.pentanomial_elo(st.penta)
    else:
        elo, lo, hi = st.elo()
    return {"score": st.score, "elo": elo, "elo_lower": lo, "elo_upper": hi}


def _num(x: Optional[float], fmt: str = "{:.1f}") -> str:
    if x is None:
        return "-"
    if isinstance(x, float) and math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    return fmt.format(x)


def _float(text: str) -> Optional[float]:
    return None if text in ("-", "") else float(text)


def describe(opponent: str, control: str, wdl: Sequence[int], penta: Sequence[int], fig: dict,
             depth_ours: Optional[float], depth_opp: Optional[float], endings: str = "") -> str:
    """The lines a run or a pooled report prints for one opponent."""
    w, d, l = wdl
    return (f"{OURS} vs {opponent} at {control}: {w + d + l} games, +{w} ={d} -{l}, score {100 * fig['score']:.1f}%\n"
            f"  Elo {_num(fig['elo'], '{:+.0f}')} [{_num(fig['elo_lower'], '{:+.0f}')}, "
            f"{_num(fig['elo_upper'], '{:+.0f}')}] (95%, game pairs), pentanomial {list(penta)}\n"
            f"  mean depth: {OURS} {_num(depth_ours)}, {opponent} {_num(depth_opp)}"
            + (f"\n  endings: {endings}" if endings else ""))


# ------------------------------------------------------------------- ledger
def commit_id() -> str:
    """The current commit, with ``+dirty`` when tracked files differ from it (the figures may not be its own)."""
    root = Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                              timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (head or "unknown") + ("+dirty" if dirty else "")


def ledger_line(opponent: str, control: str, st: stats.MatchStats, depths: dict, command: str,
                commit: str, date: Optional[str] = None, usage: Optional[dict[str, TimeUsage]] = None) -> dict:
    """One ledger row; ``usage`` (from :func:`time_usage`) fills the time columns of a timed run ("-" otherwise)."""
    fig = figures(st)
    usage = usage or {}

    def timing(name: str) -> str:
        return usage[name].summary() if name in usage and usage[name].moves else "-"

    return {"date": date or _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "commit": commit,
            "opponent": opponent, "control": control, "games": str(st.games), "wins": str(st.wins),
            "draws": str(st.draws), "losses": str(st.losses), "pentanomial": ",".join(map(str, st.penta)),
            "score": f"{fig['score']:.4f}", "elo": _num(fig["elo"]), "elo_lower": _num(fig["elo_lower"]),
            "elo_upper": _num(fig["elo_upper"]), "depth_ours": _num(depths.get(OURS), "{:.2f}"),
            "depth_opponent": _num(depths.get(opponent), "{:.2f}"),
            "endings": ", ".join(f"{k} {v}" for k, v in sorted(st.reasons.items())),
            "time_ours": timing(OURS), "time_opponent": timing(opponent), "command": command}


def pooled_report(rows: Sequence[dict]) -> str:
    """Pool ledger lines by (opponent, control): W/D/L and pentanomial counts add up; the mean depths are averaged
    weighted by games (each line's mean is over its moves: an approximation when game lengths differ)."""
    groups: dict[tuple, list] = {}
    for row in rows:
        groups.setdefault((row["opponent"], row["control"]), []).append(row)
    out = []
    for (opp, control), lines in sorted(groups.items()):
        st = stats.MatchStats(OURS, opp)
        st.wins = sum(int(r["wins"]) for r in lines)
        st.draws = sum(int(r["draws"]) for r in lines)
        st.losses = sum(int(r["losses"]) for r in lines)
        st.penta = [sum(int(r["pentanomial"].split(",")[i]) for r in lines) for i in range(5)]

        def depth(key: str) -> Optional[float]:
            got = [(_float(r[key]), int(r["games"])) for r in lines if _float(r[key]) is not None]
            n = sum(g for _, g in got)
            return sum(d * g for d, g in got) / n if n else None

        commits = sorted({r["commit"] for r in lines})
        out.append(describe(opp, control, (st.wins, st.draws, st.losses), st.penta, figures(st), depth("depth_ours"),
                            depth("depth_opponent"))
                   + f"\n  pooled from {len(lines)} ledger line(s), commits {', '.join(commits)}")
    return "\n".join(out) if out else "the ledger is empty"


# ---------------------------------------------------------------------- run
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.strength", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--opponent", action="append", choices=sorted(OPPONENTS),
                   help="an opponent (repeatable; default: both)")
    p.add_argument("--games", type=int, default=100, help="games against each opponent (default 100)")
    control = p.add_mutually_exclusive_group()
    control.add_argument("--quick", action="store_true", help=f"byoyomi {int(QUICK_S * 1000)} ms a move")
    control.add_argument("--byoyomi", type=float, help=f"byoyomi in seconds a move (default {BYOYOMI_S:g})")
    control.add_argument("--inc", type=float, help="Fischer increment in seconds a move (with --time)")
    control.add_argument("--nodes", type=int, help="nodes a move for both engines (equal nodes)")
    p.add_argument("--time", type=float, help="main time in seconds a side: alone sudden death, with --byoyomi or "
                   "--inc before them (default: none, byoyomi only)")
    p.add_argument("--engine-cmd", default="python -m usi", help="our engine's command (default: python -m usi)")
    p.add_argument("--engine-option", action="append", default=[], metavar="NAME=VALUE",
                   help="a USI option for our engine (repeatable), e.g. SearchFeatures=see+histlmr")
    p.add_argument("--hash", type=int, default=64, help="hash MB for the engines that have one (default 64)")
    p.add_argument("--concurrency", type=int, default=1,
                   help="games at a time (default 1: on 2 cores a second game at once skews timed controls)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--shuffle", action="store_true", help="shuffle the openings with the seed")
    p.add_argument("--openings", default=str(OPENINGS), help="openings file (default: the balanced set)")
    p.add_argument("--margin", type=int, default=1000, help="ms of grace before a time forfeit (default 1000)")
    p.add_argument("--out", help="directory for the records (default matches/strength-<date-time>)")
    p.add_argument("--resume", metavar="DIR", help="finish the stopped run in DIR (its settings come from "
                   "DIR/match.json; only --concurrency and --quiet may be given with it)")
    p.add_argument("--ledger", default=str(LEDGER), help="the ledger (default bench/strength/shogi-gauntlet.tsv)")
    p.add_argument("--no-ledger", action="store_true", help="do not append to the ledger")
    p.add_argument("--report", action="store_true", help="print the ledger pooled by opponent and control; no games")
    p.add_argument("--plot", nargs="?", const="", metavar="DIR",
                   help="draw the ledger and the SPRT ledger as pictures (strength-gauntlet.png, strength-sprt.png) "
                        "into DIR (default docs/img of the checkout); no games. Needs matplotlib: "
                        "pip install -e '.[bench]'")
    p.add_argument("--sprt-ledger", default=None, metavar="FILE",
                   help="the SPRT ledger --plot reads (default bench/strength/shogi-sprt.tsv)")
    p.add_argument("--quiet", action="store_true")
    return p


def control_of(args: argparse.Namespace) -> tuple[str, M.TimeControl]:
    """The ledger's label and the runner's time control of the command line.

    >>> control_of(build_parser().parse_args(["--time", "60", "--inc", "0.5"]))[0]
    'fischer 60s+500ms'
    """
    if args.nodes is not None:
        if args.time is not None:
            raise ValueError("--nodes is a control of its own: no --time with it")
        return f"nodes {args.nodes}", M.TimeControl(nodes=args.nodes)
    main_ms = None if args.time is None else int(round(args.time * 1000))
    if main_ms is not None and main_ms < 0:
        raise ValueError("--time must not be negative")
    if args.inc is not None:
        inc_ms = int(round(args.inc * 1000))
        if not main_ms or inc_ms < 0:
            raise ValueError("--inc needs a positive --time (the increment is added after each move)")
        return f"fischer {main_ms / 1000:g}s+{inc_ms}ms", M.TimeControl(main=main_ms, inc=inc_ms)
    if main_ms and args.byoyomi is None and not args.quick:
        return f"sudden death {main_ms / 1000:g}s", M.TimeControl(main=main_ms)
    seconds = QUICK_S if args.quick else args.byoyomi if args.byoyomi is not None else BYOYOMI_S
    ms = int(round(seconds * 1000))
    if ms <= 0:
        raise ValueError("--byoyomi must be positive")
    label = f"byoyomi {ms}ms" if not main_ms else f"byoyomi {main_ms / 1000:g}s+{ms}ms"
    return label, M.TimeControl(main=main_ms or 0, byoyomi=ms)


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    from usi.kernel_cache import purge_stale_kernels

    purge_stale_kernels()  # before the first kernel loads: one cached against an edited shared kernel crashes
    resumed = bool(args.resume)
    if resumed:
        try:
            argv = M.resume_argv(Path(args.resume), argv, overrides=RESUME_OVERRIDES)
        except (ValueError, OSError, json.JSONDecodeError) as exc:
            print(f"bench.strength: error: {exc}", file=sys.stderr)
            return 2
        args = parser.parse_args(argv)
    ledger = Path(args.ledger)
    if args.plot is not None:
        from . import chart, history

        try:
            written = history.draw(Path(args.plot or history.DEFAULT_PLOT_DIR), ledger,
                                   Path(args.sprt_ledger or history.SPRT_LEDGER))
        except (ValueError, chart.ChartError, OSError) as exc:
            print(f"bench.strength: error: {exc}", file=sys.stderr)
            return 2
        print("\n".join(f"wrote {path}" for path in written) if written else "nothing to draw: the ledgers are empty")
        return 0
    if args.report:
        try:
            print(pooled_report(read_ledger(ledger)))
        except ValueError as exc:
            print(f"bench.strength: error: {exc}", file=sys.stderr)
            return 2
        return 0
    opponents = args.opponent or sorted(OPPONENTS)
    try:
        label, tc = control_of(args)
        if args.games < 1:
            raise ValueError("--games must be at least 1")
        if args.nodes is not None and args.nodes < 1:
            raise ValueError("--nodes must be at least 1")
        for name in opponents:
            if not Path(OPPONENTS[name][0]).exists():
                raise ValueError(f"{OPPONENTS[name][0]} not found (Debian: apt-get install {OPPONENTS[name][3]})")
            if args.nodes is not None and not OPPONENTS[name][2]:
                raise ValueError(f"{name} has no node limit (it does not obey go nodes): use a time control, "
                                 "or --opponent fairy-stockfish")
        openings = M.read_openings(args.openings)
    except ValueError as exc:
        print(f"bench.strength: error: {exc}", file=sys.stderr)
        return 2
    if args.shuffle:
        import random

        random.Random(args.seed).shuffle(openings)
    try:
        bad = [o for o in args.engine_option if "=" not in o]
        if bad:
            raise ValueError(f"--engine-option wants NAME=VALUE, not {bad[0]!r}")
        ours = M.EngineSpec.parse([f"cmd={args.engine_cmd}", f"name={OURS}", f"option.USI_Hash={args.hash}",
                                   *(f"option.{o}" for o in args.engine_option)])
    except ValueError as exc:
        print(f"bench.strength: error: {exc}", file=sys.stderr)
        return 2
    engines = [ours]
    for name in opponents:
        binary, settings, _, _ = OPPONENTS[name]
        engines.append(M.EngineSpec.parse([f"cmd={binary}", f"name={name}",
                                           *(s.format(hash=args.hash) for s in settings)]))
    settings = M.MatchSettings(tc=tc, margin=args.margin, move_timeout=120.0)
    out = Path(args.out or f"matches/strength-{_dt.datetime.now():%Y%m%d-%H%M%S}")
    tasks = M.schedule(engines, openings, args.games, settings, args.seed, gauntlet=True)
    try:
        saved_argv = argv if args.out else [*argv, "--out", str(out)]  # what --resume replays
        done = M.prepare_output(out, tasks, saved_argv, Path(args.openings), resumed)
    except (ValueError, OSError, json.JSONDecodeError) as exc:
        print(f"bench.strength: error: {exc}", file=sys.stderr)
        return 2
    if resumed and len(done) == len(tasks):
        print(f"bench.strength: {out} is complete ({len(done)} games): nothing to resume (its ledger line, if the run "
              "ended normally, is already written)", file=sys.stderr)
        return 0
    if resumed and not args.quiet:
        print(f"resuming {out}: {len(done)} of {len(tasks)} games already played", file=sys.stderr)
    command = "python -m bench.strength " + " ".join(shlex.quote(a) for a in argv)
    commit = commit_id()

    show = M.progress_printer(args.quiet)

    control = M.StopControl()
    restore = control.install()
    executor, close = M.make_executor(args.concurrency)
    try:
        try:
            for line in M.warm_up(engines, settings, COLD_START_TIMEOUT, show, control):
                show(line)
        except ValueError as exc:
            print(f"\nbench.strength: error: {exc}", file=sys.stderr)
            return 2
        result = M.run_match(engines, games=args.games, settings=settings, openings=openings, seed=args.seed,
                             executor=executor, out=out, formats=("kif",), progress=show, gauntlet=True,
                             done=done, control=control)
    except M.MatchInterrupted:
        print("\nbench.strength: stopped during the warm-up; nothing played", file=sys.stderr)
        return 128 + (control.signum or 2)
    except M.MatchAborted:
        M.abort_now(executor)
        print(f"\nbench.strength: aborted; no ledger line; continue with: python -m bench.strength --resume {out}",
              file=sys.stderr, flush=True)
        os._exit(128 + (control.signum or 2))  # as fantasista-match: no waiting on the killed games' threads
    finally:
        close()
        restore()
    if not args.quiet:
        print(file=sys.stderr)
    rows = []
    for name in opponents:
        st = result.stats[f"{OURS} vs {name}"]
        games = [r for r in result.records if name in (r["sente"], r["gote"])]
        depths = mean_depths(games)
        usage = time_usage(games, tc) if tc.clocked else {}
        endings = ", ".join(f"{k} {v}" for k, v in sorted(st.reasons.items()))
        print(describe(name, label, (st.wins, st.draws, st.losses), st.penta, figures(st), depths.get(OURS),
                       depths.get(name), endings))
        for who in (OURS, name):
            if who in usage:
                print(f"  time, {who}: {usage[who].summary()}")
        rows.append(ledger_line(name, label, st, depths, command, commit, usage=usage))
    print(f"records: {out}/games.jsonl")
    if result.interrupted:
        print(f"stopped by {result.interrupted}: {len(result.records)} of {result.scheduled} games played; no ledger "
              f"line (a ledger line is a whole run); continue with: python -m bench.strength --resume {out}")
        return 128 + (control.signum or 2)
    if not args.no_ledger:
        append_ledger(ledger, rows)
        print(f"ledger: {len(rows)} line(s) appended to {ledger}")
        print(f"picture: {history_picture(ledger, out)}")
    return 0


def history_picture(ledger: Path, out: Path) -> str:
    """Draw the ledger's gauntlets over time into ``out`` (:mod:`bench.history`) for a run's final summary: the
    picture's path, or why there is none (no matplotlib, an unreadable ledger line); never raises for those."""
    from . import chart, history

    try:
        return str(history.plot_gauntlet(history.read_gauntlet(ledger), out / history.GAUNTLET_PNG, ledger.name))
    except (ValueError, chart.ChartError, OSError) as exc:
        return f"none ({exc})"


if __name__ == "__main__":
    sys.exit(main())
