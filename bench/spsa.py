"""SPSA tuning of the search parameters (issue 24, item 4) through the match runner.

::

    python -m bench.spsa --params LMPBase,LMPScale,RFPMargin,FutilityMargin --iterations 2000 --nodes 20000 \\
        --concurrency 2 --out runs/spsa-1
    python -m bench.spsa --resume runs/spsa-1          # continue a stopped run (Ctrl-C keeps every finished pair)
    python -m bench.spsa --report runs/spsa-1          # where the parameters went, as a SearchParams value

Simultaneous perturbation stochastic approximation, as fishtest runs it: at iteration ``k`` every tuned parameter
moves by ``±c_k`` (one random sign each, the same draw for all of them), the engine with ``θ + c_k Δ`` plays the one
with ``θ - c_k Δ`` a game pair (one opening of the balanced set, colours swapped; ``--concurrency 2`` plays the two
games at once), and with the pair's result ``r`` (wins minus losses of ``θ +``, -2..2)
``θ ← θ + a_k r Δ / c_k``. Gains: ``c_k = c / k^γ``, ``a_k = a / (A + k)^α`` with ``γ = 0.101``, ``α = 0.602``,
``A = 0.1 N``; ``c`` is set so that ``c_N`` is the parameter's ``step`` (search/params.py) and ``a`` so that
``a_N / c_N² = r_end`` (``--r-end``, fishtest's default 0.002). Integer parameters are played rounded; ``θ`` itself
stays real, clipped to the parameter's range.

Both engines are our own command (``python -m usi``) with the option ``SearchParams``; the control is a node budget
(equal work, independent of the machine's load) or a byoyomi. Every pair is appended to ``DIR/spsa.tsv`` (iteration,
seed, result, θ after it) and the settings to ``DIR/spsa.json``, so a run resumes where it stopped and its path can be
re-checked. SPSA's answer is only a candidate: it becomes the default after an SPRT against the defaults accepts it
(``fantasista-match ... option.SearchParams=<the --report line>``; ledger ``bench/strength/shogi-sprt.tsv``).
"""
from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import os
import random
import sys
from pathlib import Path
from typing import Optional, Sequence

from usi import match as M
from usi.client import COLD_START_TIMEOUT

ALPHA, GAMMA = 0.602, 0.101
R_END = 0.002
OPENINGS = M.default_openings_path("shogi")


def tunables() -> dict:
    """The parameter table (imported here: search.params loads the search package, numba)."""
    from search.params import PARAM_INDEX, TUNABLES

    return {name: TUNABLES[i] for name, i in PARAM_INDEX.items()}


@dataclasses.dataclass
class Spsa:
    """The state of a run: the tuned parameters, their current values ``theta`` and the gain schedule."""

    params: list[str]
    theta: list[float]
    lo: list[int]
    hi: list[int]
    c_end: list[float]
    iterations: int
    r_end: float = R_END
    k: int = 0  # iterations done

    @classmethod
    def start(cls, params: Sequence[str], iterations: int, r_end: float = R_END,
              start: Optional[dict] = None) -> "Spsa":
        """A new run over ``params`` (names of search/params.py) from their defaults, or from ``start``."""
        table = tunables()
        unknown = [p for p in params if p not in table]
        if unknown or not params:
            raise ValueError(f"unknown search parameter(s) {unknown} (known: {', '.join(table)})" if unknown
                             else "no parameter to tune")
        if len(set(params)) != len(params):
            raise ValueError("a parameter is named twice")
        if iterations < 1 or not r_end > 0:
            raise ValueError("--iterations must be at least 1 and --r-end positive")
        start = start or {}
        theta = [float(start.get(p, table[p].default)) for p in params]
        for p, v in zip(params, theta):
            if not table[p].lo <= v <= table[p].hi:
                raise ValueError(f"start value {p}={v:g} outside {table[p].lo}..{table[p].hi}")
        return cls(list(params), theta, [table[p].lo for p in params], [table[p].hi for p in params],
                   [float(table[p].step) for p in params], iterations, r_end)

    # gains of iteration k (1-based)
    def c_k(self, i: int, k: int) -> float:
        return self.c_end[i] * self.iterations ** GAMMA / k ** GAMMA

    def a_k(self, i: int, k: int) -> float:
        big_a = 0.1 * self.iterations
        a = self.r_end * self.c_end[i] ** 2 * (big_a + self.iterations) ** ALPHA
        return a / (big_a + k) ** ALPHA

    def perturbed(self, k: int, delta: Sequence[int]) -> tuple[dict, dict]:
        """The two engines' parameter values (rounded, clipped) for iteration ``k`` and signs ``delta``.

        >>> s = Spsa(["X"], [100.0], [0], [150], [10.0], iterations=100)
        >>> s.perturbed(100, [1])
        ({'X': 110}, {'X': 90})
        """
        plus, minus = {}, {}
        for i, p in enumerate(self.params):
            c = self.c_k(i, k)
            plus[p] = int(round(min(self.hi[i], max(self.lo[i], self.theta[i] + c * delta[i]))))
            minus[p] = int(round(min(self.hi[i], max(self.lo[i], self.theta[i] - c * delta[i]))))
        return plus, minus

    def update(self, k: int, delta: Sequence[int], result: float) -> None:
        """``θ ← θ + a_k r Δ / c_k`` (clipped to the ranges); ``result`` is the pair's wins minus losses of θ+.

        >>> s = Spsa(["X"], [100.0], [0], [150], [10.0], iterations=100, r_end=0.002)
        >>> s.update(100, [1], 2.0); round(s.theta[0], 3)     # a_N / c_N = r_end * c_N = 0.02 a point
        100.04
        """
        for i in range(len(self.params)):
            t = self.theta[i] + self.a_k(i, k) * result * delta[i] / self.c_k(i, k)
            self.theta[i] = min(self.hi[i], max(self.lo[i], t))
        self.k = k

    def values(self) -> dict:
        """The current values, rounded: a ``SearchParams`` candidate."""
        return {p: int(round(t)) for p, t in zip(self.params, self.theta)}


def signs(seed: int, k: int, n: int) -> list[int]:
    """Iteration ``k``'s perturbation signs: reproducible from the run's seed."""
    rng = random.Random(seed * 1_000_003 + k)
    return [rng.choice((-1, 1)) for _ in range(n)]


def pair_result(records: Sequence[dict], plus_name: str) -> float:
    """Wins minus losses of ``plus_name`` over a game pair's records (a draw counts 0)."""
    r = 0.0
    for rec in records:
        if rec["result"] == "draw":
            continue
        r += 1 if rec["winner"] == plus_name else -1
    return r


# ------------------------------------------------------------------ files
def _paths(out: Path) -> tuple[Path, Path]:
    return out / "spsa.json", out / "spsa.tsv"


def save_settings(out: Path, settings: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    _paths(out)[0].write_text(json.dumps(settings, indent=2) + "\n")


def read_log(out: Path) -> list[dict]:
    """The logged pairs of the run in ``out`` (the rows of ``spsa.tsv``; none before the first pair)."""
    log_path = _paths(out)[1]
    if not log_path.exists():
        return []
    with open(log_path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def load_run(out: Path) -> tuple[dict, Spsa]:
    """The settings of the run in ``out`` and its state replayed from the log."""
    settings_path, log_path = _paths(out)
    if not settings_path.exists():
        raise ValueError(f"{settings_path} not found: not an SPSA run directory")
    settings = json.loads(settings_path.read_text())
    spsa = Spsa.start(settings["params"], settings["iterations"], settings["r_end"], settings.get("start"))
    for row in read_log(out):
        k = int(row["k"])
        spsa.update(k, signs(settings["seed"], k, len(spsa.params)), float(row["result"]))
        logged = [float(row[p]) for p in spsa.params]
        if any(abs(a - b) > 1e-6 for a, b in zip(logged, spsa.theta)):
            raise ValueError(f"{log_path}: iteration {k} does not replay to its logged values")
    return settings, spsa


def append_log(out: Path, spsa: Spsa, k: int, result: float, plus: dict, minus: dict) -> None:
    log_path = _paths(out)[1]
    new = not log_path.exists()
    with open(log_path, "a", encoding="utf-8", newline="") as f:
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        if new:
            w.writerow(["k", "result", "plus", "minus", *spsa.params])
        w.writerow([k, f"{result:g}", json.dumps(plus, separators=(",", ":")),
                    json.dumps(minus, separators=(",", ":")), *(f"{t:.6f}" for t in spsa.theta)])


def gradients(out: Path, params: Sequence[str]) -> dict[str, tuple[int, float, float, float]]:
    """Whether the run saw a slope, parameter by parameter: over the logged pairs in which the two engines' values
    of ``p`` differed, the pentanomial Elo of the engine with the higher value against the one with the lower
    (pair points ``1 + r * sign / 2``); ``p -> (pairs, elo, lower, upper)``. An interval that holds 0 means the
    games could not tell the two sides apart, and where θ went is noise (the perturbation ``c_k`` shrinks over the
    run, so this pools larger and smaller steps)."""
    from usi.stats import pentanomial_elo

    pairs = [(json.loads(row["plus"]), json.loads(row["minus"]), int(round(float(row["result"]))))
             for row in read_log(out)]
    found = {}
    for p in params:
        penta = [0] * 5
        for plus, minus, result in pairs:
            if plus[p] != minus[p]:
                penta[2 + result * (1 if plus[p] > minus[p] else -1)] += 1
        found[p] = (sum(penta), *pentanomial_elo(penta))
    return found


def report(settings: dict, spsa: Spsa, out: Optional[Path] = None) -> str:
    """The run's state as text: each parameter's value and, with the run directory ``out``, its measured slope
    (:func:`gradients`); the last line is the candidate as a ``SearchParams`` value."""
    from search.params import format_params

    table = tunables()
    slopes = gradients(out, spsa.params) if out is not None else {}
    lines = [f"SPSA {spsa.k} of {spsa.iterations} iterations ({2 * spsa.k} games, "
             f"{settings['control']}), r_end {spsa.r_end:g}:"]
    for p, t in zip(spsa.params, spsa.theta):
        line = f"  {p:<18} {t:9.2f}   (default {table[p].default}, range {table[p].lo}..{table[p].hi})"
        if slopes.get(p, (0,))[0]:
            n, elo, lo, hi = slopes[p]
            line += f"   higher value: Elo {elo:+.1f} [{lo:+.1f}, {hi:+.1f}] over {n} pairs"
        lines.append(line)
    lines.append(f"SearchParams={format_params(spsa.values())}")
    return "\n".join(lines)


# ------------------------------------------------------------------- run
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.spsa", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--params", help="comma-separated parameter names of search/params.py")
    p.add_argument("--iterations", type=int, default=1000, help="N, the planned game pairs (default 1000)")
    p.add_argument("--r-end", type=float, default=R_END, help=f"a_N / c_N^2 (default {R_END:g})")
    p.add_argument("--start", default="", help="start values as a SearchParams text (default: the defaults)")
    control = p.add_mutually_exclusive_group()
    control.add_argument("--nodes", type=int, help="nodes a move (default 20000)")
    control.add_argument("--byoyomi", type=float, help="byoyomi in seconds a move instead of a node budget")
    p.add_argument("--engine-cmd", default="python -m usi")
    p.add_argument("--engine-option", action="append", default=[], metavar="NAME=VALUE",
                   help="another USI option of both engines (repeatable)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--concurrency", type=int, default=2, help="games at once (default 2: the pair's two games)")
    p.add_argument("--out", help="run directory (new)")
    p.add_argument("--resume", metavar="DIR", help="continue the run in DIR")
    p.add_argument("--report", metavar="DIR", help="print the run's parameters; no games")
    p.add_argument("--quiet", action="store_true")
    return p


def _new_settings(args: argparse.Namespace) -> dict:
    from search.params import parse_params

    if not args.params or not args.out:
        raise ValueError("a new run needs --params and --out (or --resume DIR)")
    params = [p.strip() for p in args.params.split(",") if p.strip()]
    start = parse_params(args.start)
    Spsa.start(params, args.iterations, args.r_end, start)  # checks names, ranges, gains
    if args.byoyomi is not None:
        if args.byoyomi <= 0:
            raise ValueError("--byoyomi must be positive")
        control = {"byoyomi": int(round(args.byoyomi * 1000))}
    else:
        nodes = 20000 if args.nodes is None else args.nodes
        if nodes < 1:
            raise ValueError("--nodes must be at least 1")
        control = {"nodes": nodes}
    bad = [o for o in args.engine_option if "=" not in o]
    if bad:
        raise ValueError(f"--engine-option wants NAME=VALUE, not {bad[0]!r}")
    label = f"nodes {control['nodes']}" if "nodes" in control else f"byoyomi {control['byoyomi']}ms"
    return {"params": params, "iterations": args.iterations, "r_end": args.r_end, "start": start,
            "seed": args.seed, "engine_cmd": args.engine_cmd, "engine_options": args.engine_option,
            "tc": control, "control": label, "openings": str(OPENINGS)}


def _specs(settings: dict, plus: dict, minus: dict) -> tuple[M.EngineSpec, M.EngineSpec]:
    from search.params import format_params

    def spec(name: str, values: dict) -> M.EngineSpec:
        return M.EngineSpec.parse([f"cmd={settings['engine_cmd']}", f"name={name}", "option.USI_Hash=16",
                                   *(f"option.{o}" for o in settings["engine_options"]),
                                   f"option.SearchParams={format_params(values)}"])
    return spec("plus", plus), spec("minus", minus)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    from usi.kernel_cache import purge_stale_kernels

    purge_stale_kernels()  # before the first kernel loads: one cached against an edited shared kernel crashes
    try:
        if args.report:
            settings, spsa = load_run(Path(args.report))
            print(report(settings, spsa, Path(args.report)))
            return 0
        if args.resume:
            out = Path(args.resume)
            settings, spsa = load_run(out)
        else:
            settings = _new_settings(args)
            out = Path(args.out)
            if _paths(out)[0].exists():
                raise ValueError(f"{out} already holds an SPSA run: --resume it, or choose another --out")
            spsa = Spsa.start(settings["params"], settings["iterations"], settings["r_end"], settings["start"])
            save_settings(out, settings)
        openings = M.read_openings(settings["openings"])
    except (ValueError, OSError, json.JSONDecodeError, KeyError) as exc:
        print(f"bench.spsa: error: {exc}", file=sys.stderr)
        return 2
    if spsa.k >= spsa.iterations:
        print(report(settings, spsa, out))
        return 0
    tc = M.TimeControl(**({"main": 0} if "byoyomi" in settings["tc"] else {}), **settings["tc"])
    match_settings = M.MatchSettings(tc=tc, margin=1000, move_timeout=120.0)
    order = list(range(len(openings)))
    random.Random(settings["seed"]).shuffle(order)

    show = M.progress_printer(args.quiet)

    control = M.StopControl()
    restore = control.install()
    executor, close = M.make_executor(args.concurrency)
    try:
        for line in M.warm_up(_specs(settings, spsa.values(), spsa.values())[:1], match_settings,
                              COLD_START_TIMEOUT, show, control):
            show(line)
        for k in range(spsa.k + 1, spsa.iterations + 1):
            delta = signs(settings["seed"], k, len(spsa.params))
            plus, minus = spsa.perturbed(k, delta)
            a, b = _specs(settings, plus, minus)
            opening = openings[order[(k - 1) % len(order)]]
            game_seed = random.Random(settings["seed"] * 7919 + k).getrandbits(31)
            tasks = [M.GameTask(2 * k, k, a, b, opening, match_settings, game_seed),
                     M.GameTask(2 * k + 1, k, b, a, opening, match_settings, game_seed)]
            with control.waiting():  # a Ctrl-C here ends the pair's games; the pair is not counted
                futures = [executor.submit(M.play_game, t) for t in tasks]
                records = [f.result() for f in futures]
            result = pair_result(records, "plus")
            spsa.update(k, delta, result)
            append_log(out, spsa, k, result, plus, minus)
            show(f"[{k}/{spsa.iterations}] r {result:+g}  " + " ".join(
                f"{p}={t:.1f}" for p, t in zip(spsa.params, spsa.theta)))
    except (M.MatchInterrupted, M.MatchAborted, KeyboardInterrupt):
        M.abort_now(executor)  # the unfinished pair's engines and workers: its result is not used
        print(f"\nbench.spsa: stopped after iteration {spsa.k}; continue with: python -m bench.spsa --resume {out}",
              file=sys.stderr, flush=True)
        os._exit(128 + (control.signum or 2))  # as fantasista-match: no waiting on the killed games' threads
    except ValueError as exc:
        print(f"\nbench.spsa: error: {exc}", file=sys.stderr)
        return 2
    finally:
        close()
        restore()
    if not args.quiet:
        print(file=sys.stderr)
    print(report(settings, spsa, out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
