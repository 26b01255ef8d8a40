"""The frozen answers of fantasista's rules engine (tests/fantasista_fixture.py) are what the engine answers now."""
from __future__ import annotations

from engine.variants.fantasista.state import FantasistaState

from . import fantasista_fixture as FX


def test_todays_engine_reproduces_the_fixture():
    """Every recorded node (turns, targets, pre-game choices) has the recorded legal actions, names included, and
    every recorded perft count is today's. (The nodes are read back rather than walked again: a walk picks its moves
    from the generator's list, whose order is not part of the rules.)"""
    from engine.variants.fantasista.turns import perft

    want = FX.load()
    assert len(want["positions"]) == FX.N_POSITIONS
    for node in want["positions"] + want["features"]:
        g = FantasistaState.from_sfen(node["sfen"])
        assert g.phase == node["phase"], node["sfen"]
        assert sorted(g.legal_actions()) == node["actions"], node["sfen"]
    for name, entry in want["perft"].items():
        bd = FantasistaState.from_sfen(entry["sfen"]).bd
        assert [perft(bd, d) for d in range(1, len(entry["counts"]) + 1)] == entry["counts"], name
    # the walk reaches what the port must keep: magic turns, tokens, special pieces and a target choice
    actions = [a for p in want["positions"] for a in p["actions"]]
    assert any("," in a for a in actions) and any("'*" in a for a in actions)
    assert any(a[:2] in ("D*", "O*", "Y*", "T*", "H*", "W*") for a in actions)
    assert any(p["phase"] == "target" for p in want["positions"])
    for kind in FX.FEATURES:  # and the second walk every special or multi-part turn, often enough
        holding = [p for p in want["features"]
                   if kind in FX.turn_features(FantasistaState.from_sfen(p["sfen"]), p["actions"])]
        assert len(holding) >= FX.FEATURE_COUNT, kind
