"""Where the games of a duplicate pair part: the first turn on which the chance-aware and the roll-blind engine
choose differently, for the decisive pairs of the strength ledger (:mod:`bench.fantasista_strength`).

With the fairies by seat both games of a pair are one game until the two engines disagree, so the whole result of
a decisive pair comes from that turn and what follows it. The engines are deterministic and no roll comes before
ply 15, so the turns before the first roll are the same in every game of a fairy pair: a disagreement there (a
*fork before the first roll*) is the same fork in every game of that pair, whatever the rolls. This tool replays
each decisive pair (same fairy draw and roll seed as the match script) until the engines disagree and tallies the
pair results by fork.

``python -m bench.fantasista_forks SEED [LEDGER] [--mode blind-seat]`` prints one TSV line per decisive pair (pair
index, fairies, the aware engine's points, the fork's move number, the side to move, both turns and the depths they
came from) and the tally. About a minute a pair at 40,000 nodes, on one core.
"""
from __future__ import annotations

import argparse
import random
from collections import Counter
from typing import Iterator, NamedTuple

from bench import fantasista_strength as ledger
from engine.game import NodeKind
from engine.variants.fantasista import new_game
from search.fantasista import FantasistaSearcher

#: The match script's game length (``tests/test_fantasista_match.py``, tested equal). The draw of fairies and
#: rolls and the modes' engine settings come from the ledger module, which the match script reads too.
MAX_PLIES = 200


class Fork(NamedTuple):
    """The first turn of a pair's game on which the engines disagree (``move`` 0: they never did)."""
    pair: int
    sente: str
    gote: str
    points: float  # the aware engine's points in the pair (0 or 2 for a decisive pair)
    move: int
    side: int
    aware: str
    blind: str
    aware_depth: int
    blind_depth: int


def first_fork(fairies: tuple[str, str], roll_seed: int, nodes: int, **settings) -> tuple:
    """Play the pair's game (rolls from ``roll_seed``) with both engines asked at every turn; the position and the
    two results where they first disagree, or (None, None, None)."""
    aware = FantasistaSearcher(chance_aware=True, **settings)
    blind = FantasistaSearcher(chance_aware=False, **settings)
    rng = random.Random(roll_seed)
    g = new_game(fairies, max_plies=MAX_PLIES)
    while g.node_kind() is not NodeKind.TERMINAL:
        if g.node_kind() is NodeKind.CHANCE:
            g.apply(f"roll={rng.randint(1, 20)}")
            continue
        aware.tt.clear()
        blind.tt.clear()
        a = aware.search(g, depth=6, node_limit=nodes)
        b = blind.search(g, depth=6, node_limit=nodes)
        if a.best != b.best:
            return g, a, b
        g.apply(a.best)
    return None, None, None


def forks(games: list[ledger.Game], mode: str, nodes: int, seed: int) -> Iterator[Fork]:
    """The fork of every decisive pair of ``seed`` in the ledger's ``mode`` (e.g. ``blind-seat``), pair by pair."""
    base = mode.removesuffix("-seat")
    if base not in ledger.MODE_SETTINGS or not mode.endswith("-seat"):
        raise ValueError(f"forks are defined for the duplicate modes "
                         f"{sorted(m + '-seat' for m in ledger.MODE_SETTINGS)}, not {mode!r}")
    by_game = {g.game: g for g in games if g.mode == mode and g.nodes == nodes and g.seed == seed}
    if not by_game:
        return
    setups = ledger.pair_setups(seed, max(by_game) // 2 + 1)
    for j, (fairies, roll_seed) in enumerate(setups):
        first, second = by_game.get(2 * j), by_game.get(2 * j + 1)
        if first is None or second is None or first.score + second.score == 1.0:
            continue
        if fairies != (first.sente, first.gote):
            raise ValueError(f"pair {j} of seed {seed}: the ledger has {first.sente}-{first.gote}, the draw "
                             f"{fairies[0]}-{fairies[1]} (another match script?)")
        g, a, b = first_fork(fairies, roll_seed, nodes, **ledger.MODE_SETTINGS[base])
        if g is None:
            yield Fork(j, *fairies, first.score + second.score, 0, -1, "", "", 0, 0)
        else:
            yield Fork(j, *fairies, first.score + second.score, g.move_number, g.side_to_move(), a.best, b.best,
                       a.depth, b.depth)


def tally(found: list[Fork]) -> list[str]:
    """Won / lost pairs by fork before the first roll (move 15 or earlier: the same in every game of the fairy pair)
    and after it, then each fork seen more than once."""
    lines = []
    for label, keep in (("before the first roll", lambda f: 0 < f.move <= 15), ("after it", lambda f: f.move > 15)):
        chosen = [f for f in found if keep(f)]
        won = sum(f.points == 2.0 for f in chosen)
        lines.append(f"forks {label}: aware won {won}, lost {len(chosen) - won} of {len(chosen)} pairs")
    counts = Counter((f.sente, f.gote, f.move, f.aware, f.blind) for f in found)
    for key, n in counts.most_common():
        if n > 1:
            won = sum(f.points == 2.0 for f in found if (f.sente, f.gote, f.move, f.aware, f.blind) == key)
            lines.append(f"  {key[0]}-{key[1]} move {key[2]}: aware {key[3]}, roll-blind {key[4]}: "
                         f"won {won}, lost {n - won}")
    return lines


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.fantasista_forks", description=__doc__.split("\n\n")[0])
    ap.add_argument("seed", type=int, help="the match seed (the mode's base seed plus the run's offset)")
    ap.add_argument("ledger", nargs="?", default=str(ledger.LEDGER))
    ap.add_argument("--mode", default="blind-seat")
    ap.add_argument("--nodes", type=int, default=40000)
    args = ap.parse_args(argv)
    found = []
    for f in forks(ledger.read(args.ledger), args.mode, args.nodes, args.seed):
        found.append(f)
        print("\t".join(str(x) for x in f), flush=True)
    print("\n".join(tally(found)))


if __name__ == "__main__":
    main()
