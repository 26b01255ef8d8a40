"""The fantasista strength ledger: every game of the own-loop matches (``tests/test_fantasista_match.py``), one line
each, so that matches of several runs and sessions are pooled pair by pair.

An edge of a few per cent (the chance-aware engine against the roll-blind one) needs a couple of thousand games,
more than one session can play; the per-game scores of a match printed to a terminal are lost with the session.
The ledger keeps them, and the report reads them with the game pair as the unit (games ``2j`` and ``2j + 1`` of a
seed share the fairies and the rolls with colours swapped) and runs a pentanomial SPRT over all the pairs of one
mode and node budget: a sequential test stays valid however often it is looked at and however many sessions add to
it, which a fixed-sample interval recomputed after every new batch would not.

``python -m bench.fantasista_strength [LEDGER] [--mode blind] [--nodes 40000]`` prints the report;
``... --import LOG --seed S [--revision R]`` adds the games of a progress log (the ``game k (sente, gote) score x``
lines the match script prints) that was played without ``--ledger``.
"""
from __future__ import annotations

import argparse
import random
import re
import subprocess
from pathlib import Path
from typing import Any, Iterable, NamedTuple

from engine.variants.fantasista import FAIRIES
from usi import stats

LEDGER = Path(__file__).parent / "strength" / "fantasista.tsv"
COLUMNS = ("mode", "nodes", "seed", "game", "sente", "gote", "score", "revision")
#: The SPRT of the report: H0 "no better" (Elo 0) against H1 "10 Elo better" (a score of about 0.514).
SPRT_ELO = (0.0, 10.0)
#: The engine settings (``FantasistaSearcher`` keywords, both engines alike) of the aware-against-roll-blind modes
#: of the match script, as their games were played: ``blind`` material only, twin drops searched; ``twins``
#: material only, twin drops pruned; ``positional`` with the piece-square terms (the default since pst-seat).
MODE_SETTINGS: dict[str, dict[str, Any]] = {"blind": {"prune_twin_drops": False, "positional": False},
                                            "twins": {"positional": False}, "positional": {"positional": True}}
_LOG_LINE = re.compile(r"^game (\d+) \('(\w+)', '(\w+)'\) score ([0-9.]+) ", re.M)


class Game(NamedTuple):
    """One finished game: the match mode (``blind``: aware against roll-blind, see the match script), nodes per
    turn, the match seed, the game's index in it, the fairies by seat, the first engine's score, the code's
    revision."""
    mode: str
    nodes: int
    seed: int
    game: int
    sente: str
    gote: str
    score: float
    revision: str


def pair_setups(seed: int, pairs: int) -> list[tuple[tuple[str, str], int]]:
    """(fairies, roll seed) of the first ``pairs`` game pairs of a match seed: the match script's draw, which the
    games of the ledger were played from."""
    rng = random.Random(seed)
    return [((rng.choice(FAIRIES), rng.choice(FAIRIES)), rng.randrange(1 << 30)) for _ in range(pairs)]


def revision(root: str | Path | None = None) -> str:
    """The checkout's short commit hash (``+`` when the work tree has changes outside ``bench/strength``, whose
    ledgers the running matches append to), or ``unknown``; ``root``: a directory of the checkout (default: this
    one's)."""
    cwd = Path(root) if root is not None else Path(__file__).parent
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=cwd, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ":(top)",
                                ":(top,exclude)bench/strength"], capture_output=True,
                               text=True, cwd=cwd, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+" if dirty else "")


def append(path: str | Path, game: Game) -> None:
    """Add one game to the ledger at ``path`` (created with its header line if missing)."""
    path = Path(path)
    new = not path.exists() or path.stat().st_size == 0
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as f:
        if new:
            f.write("\t".join(COLUMNS) + "\n")
        f.write("\t".join(str(x) for x in game) + "\n")


def read(path: str | Path) -> list[Game]:
    """The ledger's games; a malformed line raises ``ValueError`` naming the line."""
    games = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("mode\t"):
            continue
        cells = line.split("\t")
        if len(cells) != len(COLUMNS):
            raise ValueError(f"{path}:{n}: {len(cells)} columns, expected {len(COLUMNS)}")
        try:
            games.append(Game(cells[0], int(cells[1]), int(cells[2]), int(cells[3]), cells[4], cells[5],
                              float(cells[6]), cells[7]))
        except ValueError as e:
            raise ValueError(f"{path}:{n}: {e}") from None
    return games


def from_log(text: str, mode: str, nodes: int, seed: int, rev: str) -> list[Game]:
    """The games of a match script's progress log."""
    return [Game(mode, nodes, seed, int(k), sente, gote, float(score), rev)
            for k, sente, gote, score in _LOG_LINE.findall(text)]


def pair_scores(games: Iterable[Game]) -> list[float]:
    """Per-game scores in pair order (game ``2j`` then ``2j + 1`` of each seed), only pairs with both games; a
    game listed twice is an error (a log imported twice)."""
    by_key: dict[tuple[int, int], float] = {}
    for g in games:
        key = (g.seed, g.game)
        if key in by_key:
            raise ValueError(f"game {g.game} of seed {g.seed} is in the ledger twice")
        by_key[key] = g.score
    out = []
    for seed, k in sorted(by_key):
        if k % 2 == 0 and (seed, k + 1) in by_key:
            out += [by_key[seed, k], by_key[seed, k + 1]]
    return out


def report(games: list[Game], mode: str, nodes: int) -> list[str]:
    """Lines: one per seed, then all seeds pooled with the SPRT, and, once the SPRT has decided, the games up to
    its first decision (:func:`first_decision`)."""
    chosen = [g for g in games if g.mode == mode and g.nodes == nodes]
    lines = [f"{mode} at {nodes} nodes: {len(chosen)} games in the ledger"]
    for seed in sorted({g.seed for g in chosen}):
        sc = pair_scores(g for g in chosen if g.seed == seed)
        lines.append(f"  seed {seed}: " + pairs_line(sc))
    sc = pair_scores(chosen)
    lines.append("  pooled: " + pairs_line(sc))
    lines.append("  " + sprt_line(sc))
    stop = first_decision(chosen)
    if stop is not None:
        read_, pairs, _ = stop
        lines.append(f"  the SPRT stopped at its first decision, after {pairs} pairs ({read_} games in the ledger's "
                     f"order; {len(chosen) - read_} games after it):")
        head = pair_scores(chosen[:read_])
        lines.append("    " + pairs_line(head))
        lines.append("    " + sprt_line(head))
    return lines


def first_decision(games: Iterable[Game]) -> tuple[int, int, stats.SprtResult] | None:
    """The SPRT as the sequential test it is: the games in the ledger's order (the order they ended; a log
    imported afterwards comes in at once), the LLR looked at whenever a pair completes. Returns (games read, pairs
    complete, the SPRT) at the first look that decides, or None. Games after that look are overshoot: the test had
    already stopped."""
    seen: dict[tuple[int, int], float] = {}
    penta = [0] * 5
    for read_, g in enumerate(games, 1):
        seen[g.seed, g.game] = g.score
        partner = seen.get((g.seed, g.game ^ 1))  # games 2j and 2j + 1 form pair j
        if partner is None:
            continue
        penta[int(round(2 * (g.score + partner)))] += 1
        s = stats.sprt(penta, *SPRT_ELO)
        if s.decision is not None:
            return read_, sum(penta), s
    return None


def sprt_line(scores: list[float]) -> str:
    """The SPRT on the pairs of per-game ``scores`` (in pair order): its LLR, bounds and verdict."""
    s = stats.sprt(stats.pentanomial(scores), *SPRT_ELO)
    verdict = {"H1": "H1 accepted (the first engine is better)", "H0": "H0 accepted (not 10 Elo better)",
               None: "no decision yet"}[s.decision]
    return (f"SPRT({SPRT_ELO[0]:g}, {SPRT_ELO[1]:g}) on pairs: LLR {s.llr:.2f} in [{s.lower:.2f}, "
            f"{s.upper:.2f}]: {verdict}")


def pairs_line(scores: list[float]) -> str:
    """W/D/L, the pair counts and the score and Elo intervals with the pair as the unit, of per-game ``scores``
    in pair order."""
    if not scores:
        return "no complete pair"
    penta = stats.pentanomial(scores)
    m, lo, hi = stats.pentanomial_score(penta)
    elo, elo_lo, elo_hi = (x + 0.0 for x in stats.pentanomial_elo(penta))  # + 0.0: no "-0" printed
    return (f"{len(scores)} games, W{scores.count(1.0)} D{scores.count(0.5)} L{scores.count(0.0)}, pairs {penta}: "
            f"{m:.3f} [{lo:.3f}, {hi:.3f}], Elo {elo:+.0f} [{elo_lo:+.0f}, {elo_hi:+.0f}]")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.fantasista_strength")
    from usi.kernel_cache import purge_stale_kernels

    purge_stale_kernels()  # before the first kernel loads: one cached against an edited shared kernel crashes
    ap.add_argument("ledger", nargs="?", default=str(LEDGER))
    ap.add_argument("--mode", default="blind")
    ap.add_argument("--nodes", type=int, default=40000)
    ap.add_argument("--import", dest="log", help="add the games of this progress log to the ledger first")
    ap.add_argument("--seed", type=int, help="the log's match seed (the mode's seed plus the offset)")
    ap.add_argument("--revision", help="the code the log was played with (default: this checkout's)")
    args = ap.parse_args(argv)
    if args.log:
        if args.seed is None:
            ap.error("--import needs --seed")
        have = read(args.ledger) if Path(args.ledger).exists() else []
        new = from_log(Path(args.log).read_text(encoding="utf-8"), args.mode, args.nodes, args.seed,
                       args.revision or revision())
        pair_scores(have + new)  # refuses a game already in the ledger before anything is written
        for g in new:
            append(args.ledger, g)
        print(f"{len(new)} games of {args.log} added to {args.ledger}")
    print("\n".join(report(read(args.ledger), args.mode, args.nodes)))


if __name__ == "__main__":
    main()
