"""Make a tree-size position set from recorded games: ``bench/positions/shogi-games.txt``.

::

    python -m bench.make_positions --games /work/sprt-runs/n5-mt200/games.jsonl --every 30 \\
        --plies 20 40 60 --out bench/positions/shogi-games.txt

The six ``search.bench_positions`` are too few to compare the size of the tree under two pruning rules: the node
count to a fixed depth swings by a factor of two per position either way. This takes positions from real games
instead (the ``games.jsonl`` of a ``usi.match`` run): every ``--every``-th game, after each of ``--plies`` plies
the game reached (not its last position, which may be mate), deduplicated by position, in game order. The output
has one SFEN per line (``#`` comments: the command and where each line came from) and is read by ``python -m
bench.search_nodes --positions FILE``.
"""
from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from usi.records import write_text_atomic


def positions_from_games(lines: list[str], every: int, plies: list[int]) -> list[tuple[str, str]]:
    """``(sfen, origin)`` for every ``every``-th game of the JSON ``lines`` after each ply count in ``plies`` that
    the game passed; ``origin`` names the game and ply. Positions already taken are skipped."""
    from engine import Position
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for n, line in enumerate(lines):
        if n % every or not line.strip():
            continue
        game = json.loads(line)
        moves = game["moves"]
        wanted = sorted({p for p in plies if p < len(moves)})  # the last position may have no move (mate)
        pos = Position.from_sfen(game["start_sfen"]) if game.get("start_sfen") else Position.startpos()
        done = 0
        for ply in wanted:  # one replay of the game, stopping at each wanted ply
            for mv in moves[done:ply]:
                pos.push(mv)
            done = ply
            sfen = pos.sfen(with_move_number=False)
            if sfen not in seen:
                seen.add(sfen)
                out.append((pos.sfen(), f"game {game.get('game', n + 1)} ply {ply}"))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    from usi.kernel_cache import purge_stale_kernels

    purge_stale_kernels()  # before the first kernel loads: one cached against an edited shared kernel crashes
    ap.add_argument("--games", required=True, help="a games.jsonl written by python -m usi.match")
    ap.add_argument("--every", type=int, default=30, help="take every N-th game (default 30)")
    ap.add_argument("--plies", type=int, nargs="+", default=[20, 40, 60], help="the plies after which to take one")
    ap.add_argument("--out", default="bench/positions/shogi-games.txt")
    a = ap.parse_args(argv)
    if a.every < 1 or min(a.plies) < 0:
        ap.error("--every must be >= 1 and --plies >= 0")
    rows = positions_from_games(Path(a.games).read_text().splitlines(), a.every, a.plies)
    cmd = "python -m bench.make_positions " + " ".join(shlex.quote(x) for x in (argv or sys.argv[1:]))
    text = "".join(["# Positions for python -m bench.search_nodes --positions (tree size to a fixed depth).\n",
                    f"# Made by: {cmd}\n"] + [f"{sfen}  # {origin}\n" for sfen, origin in rows])
    write_text_atomic(Path(a.out), text)
    print(f"{len(rows)} positions written to {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
