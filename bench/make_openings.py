"""Make the default standard-shogi opening set, ``bench/openings/shogi-balanced.txt``.

::

    python -m bench.make_openings                      # 120 lines, seed 2026, the committed file
    python -m bench.make_openings --count 20 --out /tmp/o.txt

How a line is made (only Fairy-Stockfish's *output* is used: its scores and moves over USI):

1. Plies: a random length of 6-10 plies (``--min-plies`` / ``--max-plies``).
2. Each ply is drawn uniformly among the *plausible* moves of the position: the moves of a MultiPV search of
   Debian's ``/usr/games/fairy-stockfish`` (``usi``, ``setoption name Threads value 1``, ``MultiPV 8``, ``go depth
   8``) whose score is within 80 cp of the best one. So lines look like human openings (no wasted rook moves into
   danger) and still spread widely.
3. The final position is scored by a single-PV ``go depth 12`` and converted to sente's point of view. It is kept
   when it is within ``--window`` (100 cp) of the *start position's* score at the same depth. Reading taken here:
   Fairy-Stockfish 11.1's classical evaluation gives the standard start position about +150-170 cp for sente at
   depths 12-14, so an absolute ``|score| < 100`` would keep only lines in which sente has already given away part
   of the first-move edge; the standard start is the reference of balance in shogi, so the filter measures the
   distance from it. Both figures (the score and the baseline) are written on every line, as a comment.
4. Lines are deduplicated by their final position (board, hands and side to move, so transpositions count once)
   and validated by our own rules (``engine.Position``).

The output's header says how the file was made (command, seed, engine, depths, time taken).
"""
from __future__ import annotations

import argparse
import datetime as _dt
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

from usi.client import DEBIAN_ENGINES
from usi.records import write_text_atomic

FSF = DEBIAN_ENGINES["fairy-stockfish"]
DEFAULT_OUT = Path(__file__).parent / "openings" / "shogi-balanced.txt"


class Fsf:
    """A minimal USI pipe to Fairy-Stockfish: ``search(moves, depth, multipv)`` returns ``[(move, cp), ...]``,
    best first, scores from the side to move's point of view (mates as ±30000)."""

    def __init__(self, cmd: str = FSF, hash_mb: int = 16) -> None:
        self.proc = subprocess.Popen([cmd], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.name = ""
        self._send("usi")
        for line in self._lines("usiok"):
            if line.startswith("id name "):
                self.name = line[len("id name "):]
        for name, value in (("Threads", 1), ("Hash", hash_mb)):
            self._send(f"setoption name {name} value {value}")
        self._send("isready")
        list(self._lines("readyok"))
        self._multipv = 1

    def _send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def _lines(self, until: str):
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            line = line.strip()
            yield line
            if line.split(" ", 1)[0] == until:
                return
        raise RuntimeError("fairy-stockfish exited")

    def search(self, moves: list[str], depth: int, multipv: int = 1) -> list[tuple[str, int]]:
        if multipv != self._multipv:
            self._send(f"setoption name MultiPV value {multipv}")
            self._multipv = multipv
        self._send("position startpos" + (" moves " + " ".join(moves) if moves else ""))
        self._send(f"go depth {depth}")
        best: dict[int, tuple[str, int]] = {}
        for line in self._lines("bestmove"):
            words = line.split()
            if not words or words[0] != "info" or "pv" not in words or "score" not in words:
                continue
            if "lowerbound" in words or "upperbound" in words:
                continue
            k = int(words[words.index("multipv") + 1]) if "multipv" in words else 1
            i = words.index("score")
            kind, value = words[i + 1], int(words[i + 2])
            cp = value if kind == "cp" else (30000 if value > 0 else -30000)
            best[k] = (words[words.index("pv") + 1], cp)  # the deepest line of each rank wins
        return [best[k] for k in sorted(best)]

    def close(self) -> None:
        try:
            self._send("quit")
            self.proc.wait(timeout=5)
        except Exception:
            self.proc.kill()


def position_key(moves: list[str]) -> str:
    """Our rules' SFEN of the line's final position without the move number (transpositions share a key)."""
    from engine import Position

    pos = Position.startpos()
    for m in moves:
        pos.push(m)  # raises on an illegal move: fairy-stockfish and our rules must agree
    return " ".join(pos.sfen().split()[:3])


def make(count: int, seed: int, min_plies: int, max_plies: int, window: int, plausible: int, multipv: int,
         pick_depth: int, eval_depth: int, fsf: str = FSF, log=print) -> tuple[list[str], dict]:
    """``count`` balanced lines (each ``"<moves>  # fsf <score> (start <baseline>)"``) and the run's figures."""
    rng = random.Random(seed)
    engine = Fsf(fsf)
    t0 = time.perf_counter()
    seen: set[str] = set()
    lines: list[str] = []
    tried = rejected = duplicates = 0
    try:
        baseline = engine.search([], eval_depth)[0][1]
        while len(lines) < count:
            tried += 1
            moves: list[str] = []
            for _ in range(rng.randint(min_plies, max_plies)):
                ranked = engine.search(moves, pick_depth, multipv)
                if not ranked:
                    break
                top = ranked[0][1]
                moves.append(rng.choice([m for m, cp in ranked if cp >= top - plausible]))
            key = position_key(moves)
            if key in seen:
                duplicates += 1
                continue
            cp = engine.search(moves, eval_depth)[0][1]
            sente_cp = cp if len(moves) % 2 == 0 else -cp
            if abs(sente_cp - baseline) >= window:
                rejected += 1
                continue
            seen.add(key)
            lines.append(f"{' '.join(moves):<60}  # fsf {sente_cp:+d} (start {baseline:+d})")
            log(f"{len(lines)}/{count} kept ({tried} tried, {rejected} off balance, {duplicates} duplicates)")
    finally:
        engine.close()
    return lines, {"engine": engine.name, "baseline": baseline, "tried": tried, "rejected": rejected,
                   "duplicates": duplicates, "seconds": time.perf_counter() - t0}


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.make_openings", description=__doc__.split("\n\n")[0])
    from usi.kernel_cache import purge_stale_kernels

    purge_stale_kernels()  # before the first kernel loads: one cached against an edited shared kernel crashes
    p.add_argument("--count", type=int, default=120, help="lines to make (default 120)")
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--min-plies", type=int, default=6)
    p.add_argument("--max-plies", type=int, default=10)
    p.add_argument("--window", type=int, default=100, help="cp from the start position's score (default 100)")
    p.add_argument("--plausible", type=int, default=80, help="cp from the best move for a plausible one (80)")
    p.add_argument("--multipv", type=int, default=8, help="moves considered at each ply (8)")
    p.add_argument("--pick-depth", type=int, default=8, help="depth of the MultiPV search at each ply (8)")
    p.add_argument("--eval-depth", type=int, default=12, help="depth of the final score (12)")
    p.add_argument("--fsf", default=FSF, help=f"the Fairy-Stockfish binary (default {FSF})")
    p.add_argument("--out", default=str(DEFAULT_OUT))
    a = p.parse_args(argv)
    if not 1 <= a.min_plies <= a.max_plies:
        p.error("need 1 <= --min-plies <= --max-plies")
    if not Path(a.fsf).exists():
        print(f"make_openings: error: {a.fsf} not found (apt-get install fairy-stockfish)", file=sys.stderr)
        return 2
    started = _dt.datetime.now(_dt.timezone.utc)
    lines, fig = make(a.count, a.seed, a.min_plies, a.max_plies, a.window, a.plausible, a.multipv, a.pick_depth,
                      a.eval_depth, a.fsf, log=lambda s: print("\r" + s, end="", file=sys.stderr, flush=True))
    print(file=sys.stderr)
    cmd = "python -m bench.make_openings " + " ".join(argv if argv is not None else sys.argv[1:])
    header = [
        f"# Balanced standard-shogi openings, {len(lines)} lines of USI moves from the start position; each is",
        "# played twice with colours swapped. fantasista-match uses this file for shogi when --openings is not given.",
        f"# Made by: {cmd.strip()}   (bench/make_openings.py; its docstring explains every step)",
        f"# on {started:%Y-%m-%d %H:%M} UTC in {fig['seconds']:.0f} s (one thread of a shared 2-core machine) with "
        f"{fig['engine']} (Debian's {a.fsf}, Threads 1).",
        f"# Seed {a.seed}; {a.min_plies}-{a.max_plies} plies, each drawn uniformly among the MultiPV-{a.multipv} "
        f"moves within {a.plausible} cp of the best at depth {a.pick_depth};",
        f"# kept when the depth-{a.eval_depth} score (sente's view) is within {a.window} cp of the start position's "
        f"own score ({fig['baseline']:+d} cp at that depth),",
        f"# deduplicated by final position: {fig['tried']} lines tried, {fig['rejected']} off balance, "
        f"{fig['duplicates']} duplicates.",
    ]
    write_text_atomic(a.out, "\n".join(header + lines) + "\n")  # the shipped set stays whole if this is killed
    print(f"wrote {len(lines)} lines to {a.out} in {fig['seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
