"""What fantasista's first rules engine answered, frozen as the oracle its port to the shared generator is held to
(issue 50).

The first engine had its own board row and generator (``kernels.py``, ``turngen.py``, deleted once the game layer
named turns from the shared generator, ``turns.py``). This fixture is what it answered (the separately written
reference, ``tests/fantasista_reference.py``, checks outcomes; this also checks the spelling of every action and
perft counts). ``python -m tests.fantasista_fixture`` would write it again from today's engine, which makes it no
longer an independent oracle: do that only for a deliberate change of the rules or the notation.

- ``positions``: the decision nodes of seeded random games with every fairy pair and ``reserved`` reading, biased
  toward turns that use magic (:func:`magic_biased_walk`, which ``tests/test_fantasista_reference.py`` walks too):
  the extended SFEN, the phase, every
  legal action as the game layer spells it (sorted);
- ``features``: more decision nodes of another seed's walk, taken until every kind of multi-part or special turn
  (:func:`turn_features`) occurs in at least :data:`FEATURE_COUNT` of them (the first walk has few of some);
- ``perft``: turn counts (rolls not played) at depths 1-3 from the start and ``bench.fantasista``'s mid-game
  positions, 1-2 from its shogi twins (their depth 3 is millions of turns).
"""
from __future__ import annotations

import gzip
import json
import random
from pathlib import Path
from typing import Iterator

FIXTURE = Path(__file__).resolve().parent / "data" / "fantasista-fixture.json.gz"
SEED = 7
N_POSITIONS = 400
PERFT_DEPTH = 3  # the shogi twins: one less
FEATURES_SEED = 8
FEATURE_COUNT = 12
FEATURE_MAX_ACTIONS = 1500  # a node with more (big silver waves) is not taken: the file stays small
#: the kinds of turn :func:`turn_features` names, which ``features`` holds each at least FEATURE_COUNT times
FEATURES = ("breath", "sword drop", "sword in place", "spear", "gale", "awakening", "follow-up", "rider", "emblem",
            "curtain", "wave")


def magic_biased_walk(seed: int) -> Iterator[tuple[object, list[str] | None]]:
    """The nodes of seeded random fantasista games, endlessly: ``(state, legal actions)`` at a decision node,
    ``(state, None)`` at a chance node (the roll is drawn after it). Fairies and the ``reserved`` reading are drawn per
    game; half the time a turn that uses magic is played when there is one. The caller stops taking nodes."""
    from engine.game import NodeKind
    from engine.variants.fantasista import FAIRIES, new_game

    rng = random.Random(seed)
    while True:
        g = new_game((rng.choice(FAIRIES), rng.choice(FAIRIES)), reserved=rng.choice(["1", "2", "3", "4-8"]),
                     max_plies=110)
        while g.node_kind() is not NodeKind.TERMINAL:
            if g.node_kind() is NodeKind.CHANCE:
                yield g, None
                g.apply(f"roll={rng.randint(1, 20)}")
                continue
            acts = sorted(g.legal_actions())  # the walk does not depend on the generator's order
            yield g, acts
            magic = [t for t in acts if ":" in t or "," in t or "'" in t or t[0] in "DOYTHW"]
            g.apply(rng.choice(magic) if magic and rng.random() < 0.5 else rng.choice(acts))


def turn_features(state, actions: list[str]) -> set[str]:
    """The kinds of special or multi-part turn among ``actions`` (names of :data:`FEATURES`), read from their
    spelling (docs/fantasista.md, "Notation") and the piece each starts with."""
    from engine.variants.fantasista import pieces as PC

    two_legs = {PC.Y: "spear", PC.H: "gale", PC.R: "awakening"}
    found = set()
    for a in actions:
        rider = a.startswith("rider:")
        a = a.removeprefix("rider:")
        if a.startswith(("curtain:", "wave:")):
            found.add(a.split(":")[0])
        elif ":x" in a:
            found.add({"D": "breath", "W": "sword drop"}[a[0]] if "*" in a else "sword in place")
        elif ",rider:" in a:
            found.add("follow-up")
        elif rider:
            found.add("rider")
        elif "*" in a and a.endswith("+"):
            found.add("emblem")
        elif a.count(",") == 1:
            frm = PC.parse_square(a[:2])
            kind = two_legs.get(state.bd.b[frm] & 31)
            if kind:
                found.add(kind)
    return found


def _entry(g, acts) -> dict:
    return {"sfen": g.sfen(), "phase": g.phase, "actions": sorted(acts)}


def build(n_positions: int = N_POSITIONS, seed: int = SEED) -> dict:
    """The fixture as today's engine computes it."""
    from bench.fantasista import MIDGAMES, START, TWINS
    from engine.variants.fantasista.state import FantasistaState
    from engine.variants.fantasista.turns import perft

    positions = []
    for g, acts in magic_biased_walk(seed):
        if len(positions) >= n_positions:
            break
        if acts is not None:
            positions.append(_entry(g, acts))
    features = []
    seen = dict.fromkeys(FEATURES, 0)
    for g, acts in magic_biased_walk(FEATURES_SEED):
        if min(seen.values()) >= FEATURE_COUNT:
            break
        if acts is None or len(acts) > FEATURE_MAX_ACTIONS:
            continue
        kinds = turn_features(g, acts)
        if any(seen.get(k, FEATURE_COUNT) < FEATURE_COUNT for k in kinds):
            features.append(_entry(g, acts))
            for k in kinds:
                seen[k] += 1
    counts = {}
    perft_positions = ([("start", START + " f=hy", PERFT_DEPTH)] + [(n, s, PERFT_DEPTH) for n, s, _ in MIDGAMES]
                       + [(n, s + " f=hy", PERFT_DEPTH - 1) for n, s, _ in TWINS])
    for name, sfen, depth in perft_positions:
        bd = FantasistaState.from_sfen(sfen).bd
        counts[name] = {"sfen": sfen, "counts": [perft(bd, d) for d in range(1, depth + 1)]}
    return {"seed": seed, "positions": positions, "features": features, "perft": counts}


def load() -> dict:
    """The fixture as written."""
    with gzip.open(FIXTURE, "rt", encoding="utf-8") as f:
        return json.load(f)


def write() -> None:
    """Compute the fixture with today's engine and write it."""
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(FIXTURE, "wt", encoding="utf-8") as f:
        json.dump(build(), f, separators=(",", ":"))


if __name__ == "__main__":
    write()
    data = load()
    print(f"{FIXTURE}: {len(data['positions'])} positions, perft of {len(data['perft'])}")
