"""How often the chance-aware and the roll-blind Ousho Fantasista searches choose different turns.

``python -m bench.fantasista_decisions [NODES] [GAMES] [KING_DROP_CP]``: plays ``GAMES`` seeded games (fairies
drawn, 3,000-node roll-blind player, up to ply 75) and, at every position within plies 12-16 of a 15-ply magic
cycle ("near rolls") and every fifth ply elsewhere, searches with both engines at ``NODES`` nodes (TT cleared),
counting the positions where their turns differ (both engines with the evaluation's king-drop weight
``KING_DROP_CP``, 0 = off). The ceiling on what the aware engine can gain: it can only win where it plays
differently.
"""
from __future__ import annotations

import random
import sys

from engine.game import NodeKind
from engine.variants.fantasista import FAIRIES, new_game
from search.fantasista import FantasistaSearcher


def differing_turns(nodes: int = 40_000, games: int = 6, king_drop_cp: int = 0,
                    seed: int = 99) -> dict[str, tuple[int, int]]:
    """{"near rolls": (differing, positions), "elsewhere": (differing, positions)}; prints a line per game."""
    rng = random.Random(seed)
    aware = FantasistaSearcher(True, king_drop_cp=king_drop_cp)
    blind = FantasistaSearcher(False, king_drop_cp=king_drop_cp)
    counts = {"near rolls": [0, 0], "elsewhere": [0, 0]}
    for k in range(games):
        g = new_game((rng.choice(FAIRIES), rng.choice(FAIRIES)), max_plies=200)
        player = FantasistaSearcher(False)
        while g.node_kind() is not NodeKind.TERMINAL and g.move_number < 75:
            if g.node_kind() is NodeKind.CHANCE:
                g.apply(f"roll={rng.randint(1, 20)}")
                continue
            if g.phase == "target":
                g.apply(g.legal_actions()[0])
                continue
            near = g.move_number % 15 in (12, 13, 14, 0, 1)
            if near or g.move_number % 5 == 0:
                aware.tt.clear()
                blind.tt.clear()
                differ = aware.search(g, depth=8, node_limit=nodes).best != blind.search(g, depth=8,
                                                                                          node_limit=nodes).best
                c = counts["near rolls" if near else "elsewhere"]
                c[0] += differ
                c[1] += 1
            player.tt.clear()
            g.apply(player.search(g, depth=8, node_limit=3000).best)
        print(f"after game {k + 1}: " + ", ".join(f"{name} {d}/{n} differ" for name, (d, n) in counts.items()),
              flush=True)
    return {name: (d, n) for name, (d, n) in counts.items()}


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:4]]
    differing_turns(*args)
