"""Simulate games of Enokian shogi and compare policies: ``python -m bench.enokian_sim --policy engine --games 2000``.

Game ``i`` of a run uses the deck order drawn from seed ``seed + i`` (and a separate stream for the policy's own
random choices), so every policy faces the same decks. The referee here is the simulator: it owns the order of the
deck and tells the state only which card was drawn (``card=..`` events), exactly as a match referee would.

Policies:
- ``random``: a uniformly random legal move.
- ``greedy``: capture if possible (Michizane, then a horse or dragon, then a flame; the emperor captures only when no
  guard can), else a random move.
- ``engine``: :class:`search.enokian.EnokianSearch` at ``--depth`` decisions (or ``--time`` seconds per move).
"""
from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from engine.variants.enokian import EnokianState, card_name
from engine.variants.enokian import kernels as K
from engine.game import NodeKind
from usi.engine import package_version
from usi.stats import wilson

POLICIES = ("engine", "greedy", "random")


def deck_order(seed: int) -> list[str]:
    """The referee's shuffled deck for one game (card names, top card first)."""
    return [card_name(int(c)) for c in np.random.default_rng(seed).permutation(52)]


def random_policy(state: EnokianState, rng: np.random.Generator) -> str:
    acts = state.legal_actions()
    return acts[int(rng.integers(len(acts)))]


def greedy_policy(state: EnokianState, rng: np.random.Generator) -> str:
    s = state.s
    best, best_rank = [], 0
    for mv in state.legal_codes():
        if mv < 0:
            return "pass"
        t = int(s[mv % 81])
        rank = {K.MICHIZANE: 6, K.FLAME: 2}.get(t, 4 if K.MOVER0 <= t < K.FLAME else 0)
        if rank and s[mv // 81] == K.GUARD:
            rank += 1
        if rank > best_rank:
            best, best_rank = [mv], rank
        elif rank == best_rank:
            best.append(mv)
    from engine.variants.enokian import move_name
    return move_name(best[int(rng.integers(len(best)))])


class EnginePolicy:
    def __init__(self, depth: int | None = 1, max_time: float | None = None, leaf: str = "static", rollouts: int = 8,
                 seed: int = 0):
        from search.enokian import EnokianSearch
        self.searcher = EnokianSearch(seed=seed)
        self.depth, self.max_time, self.leaf, self.rollouts = depth, max_time, leaf, rollouts

    def __call__(self, state: EnokianState, rng: np.random.Generator) -> str:
        return self.searcher.search(state, depth=self.depth, max_time=self.max_time, leaf=self.leaf,
                                    rollouts=self.rollouts).best


def make_policy(name: str, **kw):
    if name == "random":
        return random_policy
    if name == "greedy":
        return greedy_policy
    if name == "engine":
        return EnginePolicy(**kw)
    raise ValueError(f"unknown policy {name!r} (one of {', '.join(POLICIES)})")


def play_game(seed: int, policy, michizane: str = "1a", record: list | None = None) -> str:
    """Play one game; returns its reason (``'survived'``, ``'subdued'`` or ``'emperor killed'``)."""
    deck = deck_order(seed)
    rng = np.random.default_rng([seed, 1])
    g = EnokianState.new(michizane)
    top = 0
    while g.result() is None:
        if g.node_kind() is NodeKind.CHANCE:
            tok = "card=" + deck[top]
            top += 1
        else:
            tok = policy(g, rng)
        g.apply(tok)
        if record is not None:
            record.append(tok)
    return g.result()[1]


def _run_chunk(args) -> Counter:
    policy_name, seeds, michizane, kw = args
    policy = make_policy(policy_name, **kw)
    return Counter(play_game(sd, policy, michizane) for sd in seeds)


def simulate(policy: str, games: int, seed: int = 0, michizane: str = "1a", jobs: int = 1, **kw) -> Counter:
    """Outcome counts of ``games`` games (``policy`` keyword options go to :class:`EnginePolicy`)."""
    seeds = list(range(seed, seed + games))
    if jobs <= 1:
        return _run_chunk((policy, seeds, michizane, kw))
    chunks = [(policy, seeds[i::jobs], michizane, kw) for i in range(jobs)]
    total = Counter()
    with ProcessPoolExecutor(jobs) as ex:
        for c in ex.map(_run_chunk, chunks):
            total.update(c)
    return total


def report(policy: str, counts: Counter, seconds: float | None = None) -> str:
    n = sum(counts.values())
    wins = counts["survived"] + counts["subdued"]
    lo, hi = wilson(wins, n)
    line = (f"{policy:>8}: {n} games, win {wins / n:.3f} [95% {lo:.3f}, {hi:.3f}]  "
            f"subdued {counts['subdued']} survived {counts['survived']} lost {counts['emperor killed']}")
    if seconds is not None:
        line += f"  ({seconds:.1f} s)"
    return line


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="fantasista-enokian-sim", description=__doc__.splitlines()[0])
    from usi.kernel_cache import purge_stale_kernels

    purge_stale_kernels()  # before the first kernel loads: one cached against an edited shared kernel crashes
    ap.add_argument("--policy", choices=POLICIES + ("all",), default="all")
    ap.add_argument("--games", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--depth", type=int, default=1, help="engine: player decisions searched (default 1)")
    ap.add_argument("--time", type=float, default=None, help="engine: seconds per move (iterative deepening)")
    ap.add_argument("--leaf", choices=("static", "rollout"), default="static")
    ap.add_argument("--rollouts", type=int, default=8)
    ap.add_argument("--michizane", choices=("1a", "9i"), default="1a")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--show", type=int, default=None, metavar="SEED", help="print one game's record and exit")
    ap.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    a = ap.parse_args(argv)
    kw = dict(depth=None if a.time else a.depth, max_time=a.time, leaf=a.leaf, rollouts=a.rollouts)
    if a.show is not None:
        rec: list[str] = []
        pol = a.policy if a.policy != "all" else "engine"
        reason = play_game(a.show, make_policy(pol, **kw) if pol == "engine" else make_policy(pol), a.michizane, rec)
        print(" ".join(rec))
        print(reason)
        return 0
    for pol in (POLICIES if a.policy == "all" else (a.policy,)):
        t0 = time.perf_counter()
        counts = simulate(pol, a.games, a.seed, a.michizane, a.jobs, **(kw if pol == "engine" else {}))
        print(report(pol, counts, time.perf_counter() - t0), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
