"""A random-mover USI engine for runner tests: legal moves from ``engine.Position`` (shogi or ``USI_Variant``
daishogi2017), seeded by the ``Seed`` option.

It resigns when mated (no legal move), declares ``win`` when the entering-king rule allows it, and reports a
random ``score cp`` so that score recording can be tested. ``--delay <ms>`` sleeps before each ``bestmove``. Its
string option ``Mode`` takes only ``random``: another value is refused with ``info string error``, as our engine
refuses a bad ``SearchFeatures``.
"""
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
Position = None  # engine.Position, imported after usiok so that the handshake is instant


def main() -> None:
    delay = float(sys.argv[sys.argv.index("--delay") + 1]) / 1000 if "--delay" in sys.argv else 0.0
    global Position
    seed, pos, variant = 0, None, "shogi"
    rng = random.Random(seed)
    for line in sys.stdin:
        cmd, _, rest = line.strip().partition(" ")
        if cmd == "usi":
            print("id name RandomMover\nid author tests\noption name Seed type spin default 0 min 0 max 2147483647")
            print("option name USI_Hash type spin default 16 min 1 max 1024")
            print("option name Mode type string default random")
            print("option name USI_Variant type combo default shogi var shogi var daishogi2017\nusiok", flush=True)
        elif cmd == "setoption" and rest.split()[1] == "USI_Variant":
            variant = rest.split()[-1]
        elif cmd == "setoption" and rest.split()[1] == "Mode" and rest.split()[-1] != "random":
            print(f"info string error Mode not changed: {rest.split()[-1]!r} is not random", flush=True)
        elif cmd == "setoption" and rest.split()[1] == "Seed":
            seed = int(rest.split()[-1])
            rng = random.Random(seed)
        elif cmd == "isready":
            if Position is None:
                from engine import Position
                Position.startpos(variant).legal_codes()  # compile (or load) the kernels before readyok
            print("readyok", flush=True)
        elif cmd == "usinewgame":
            rng = random.Random(seed)
        elif cmd == "position":
            words = rest.split()
            moves = words.index("moves") if "moves" in words else len(words)
            pos = (Position.startpos(variant) if words[0] == "startpos"
                   else Position.from_sfen(" ".join(words[1:moves]), variant))
            for m in words[moves + 1:]:
                pos.push(m)
        elif cmd == "go":
            if delay:
                time.sleep(delay)
            codes = pos.legal_codes().tolist()
            if pos.can_declare_win():
                print("bestmove win", flush=True)
            elif not codes:
                print("bestmove resign", flush=True)
            else:
                move = pos.move_usi(rng.choice(codes))
                print(f"info depth 1 nodes {len(codes)} score cp {rng.randint(-300, 300)} pv {move}")
                print(f"bestmove {move}", flush=True)
        elif cmd == "quit":
            break


if __name__ == "__main__":
    main()
