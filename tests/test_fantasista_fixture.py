"""The frozen answers of fantasista's rules engine (tests/fantasista_fixture.py) are what the engine answers now."""
from __future__ import annotations

from engine.variants.fantasista.state import FantasistaState

from . import fantasista_fixture as FX


def test_todays_engine_reproduces_the_fixture():
    want = FX.load()
    got = FX.build(n_positions=len(want["positions"]), seed=want["seed"])
    assert len(want["positions"]) == FX.N_POSITIONS
    for w, g in zip(want["positions"], got["positions"]):
        assert g == w, w["sfen"]
    assert got["features"] == want["features"]
    assert got["perft"] == want["perft"]
    # the walk reaches what the port must keep: magic turns, tokens, special pieces and a target choice
    actions = [a for p in want["positions"] for a in p["actions"]]
    assert any("," in a for a in actions) and any("'*" in a for a in actions)
    assert any(a[:2] in ("D*", "O*", "Y*", "T*", "H*", "W*") for a in actions)
    assert any(p["phase"] == "target" for p in want["positions"])
    for kind in FX.FEATURES:  # and the second walk every special or multi-part turn, often enough
        holding = [p for p in want["features"]
                   if kind in FX.turn_features(FantasistaState.from_sfen(p["sfen"]), p["actions"])]
        assert len(holding) >= FX.FEATURE_COUNT, kind
