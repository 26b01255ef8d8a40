"""A random-legal USI engine for the GameState variants (fantasista, turncoat, mawarikudoi, enokian).

It offers ``USI_Variant``, ``Seed`` and the variants' rule options, rebuilds each ``position`` with the variant's
``GameState`` (moves and events alike) and answers ``go`` with a uniformly random legal action (seeded by ``Seed``,
reset on ``usinewgame``). ``--log FILE`` appends every ``position`` line it receives (for leak checks).
"""
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def main() -> None:
    log = sys.argv[sys.argv.index("--log") + 1] if "--log" in sys.argv else None
    games = None
    seed, variant, state, options = 0, "shogi", None, {}
    rng = random.Random(seed)
    for line in sys.stdin:
        cmd, _, rest = line.strip().partition(" ")
        if cmd == "usi":
            print("id name RandomGame\nid author tests\noption name Seed type spin default 0 min 0 max 2147483647")
            print("option name USI_Variant type combo default shogi var shogi var fantasista var turncoat "
                  "var mawarikudoi var daishogi2017 var enokian")
            print("option name FantasistaFairyGote type combo default hiko var hiko var ayumi var yokaku var ginsara")
            print("usiok", flush=True)
        elif cmd == "setoption":
            words = rest.split()
            name, value = words[1], words[-1]
            if name == "Seed":
                seed = int(value)
                rng = random.Random(seed)
            elif name == "USI_Variant":
                variant = value
            else:
                options[name] = value
        elif cmd == "isready":
            if games is None:
                from usi import games
            if games.is_game_variant(variant):  # import the rules now (numba), not during the first move
                state = games.new_state(variant, games.option_getter(options))
                state.legal_actions() if state.node_kind().value == "decision" else None
            print("readyok", flush=True)
        elif cmd == "usinewgame":
            rng = random.Random(seed)
        elif cmd == "position":
            if log:
                with open(log, "a", encoding="utf-8") as f:
                    f.write(line.strip() + "\n")
            words = rest.split()
            mi = words.index("moves") if "moves" in words else len(words)
            state = games.build_state(variant, words[:mi], words[mi + 1:], games.option_getter(options))
        elif cmd == "go":
            if getattr(state, "phase", None) == "turn" and hasattr(state, "end_states"):
                # mawarikudoi: listing every turn of a long throw is slow; pick an end state instead
                ends = list(state.end_states())
                actions = [state.turn_token(int(rng.choice(ends)))]
            else:
                actions = state.legal_actions() if state.node_kind().value == "decision" else []
            if not actions:
                print("bestmove resign", flush=True)
            else:
                act = rng.choice(sorted(actions))
                print(f"info depth 1 nodes {len(actions)} score cp {rng.randint(-300, 300)}")
                print(f"bestmove {act}", flush=True)
        elif cmd == "quit":
            break


if __name__ == "__main__":
    main()
