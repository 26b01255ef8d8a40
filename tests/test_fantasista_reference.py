"""Ousho Fantasista: the turn generator against the separately written reference (tests/fantasista_reference.py).

Positions come from seeded random games with every fairy, the ``reserved`` rolls mapped to each table row, and a
bias toward turns that use magic, so tokens, special pieces, rights, carriers and riders all occur. On each position
the set of outcomes of the legal turns must be the same, and the extended SFEN must round-trip.
"""
from __future__ import annotations

import pytest

from engine.variants.fantasista import FantasistaState
from engine.variants.fantasista.pieces import CARRIER, INVINCIBLE, LETTERS, TOKEN

from engine.variants.fantasista import board as PY

from . import fantasista_reference as REF
from .fantasista_fixture import magic_biased_walk


def outcome_of(bd) -> tuple:
    """The engine's board as the reference's neutral outcome tuple."""
    sq = []
    for s in range(81):
        code = bd.b[s]
        if code:
            m = bd.m[s]
            rider = None
            if bd.r[s]:
                rc, rm = bd.r[s], bd.rm[s]
                rider = (rc >> 5, LETTERS[rc & 31], bool(rm & TOKEN), bool(rm & INVINCIBLE), False, None)
            sq.append(((s // 9 + 1, s % 9 + 1),
                       (code >> 5, LETTERS[code & 31], bool(m & TOKEN), bool(m & INVINCIBLE), bool(m & CARRIER),
                        rider)))
    hand = lambda arr: tuple(sorted((LETTERS[i], n) for i, n in enumerate(arr) if n))
    rights = lambda r: (("A", r[0]), ("C", r[1]), ("W", r[2]))
    return (tuple(sorted(sq)), hand(bd.hand[0]), hand(bd.hand[1]), hand(bd.th[0]), hand(bd.th[1]),
            rights(bd.rights[0]), rights(bd.rights[1]), tuple(bd.emblem), bd.stm)


FEATURES = {"breath/sword": lambda t: ":x" in t, "curtain": lambda t: t.startswith("curtain:"),
            "wave": lambda t: t.startswith("wave:"), "rider": lambda t: "rider:" in t,
            "token drop": lambda t: "'*" in t, "special drop": lambda t: t[:2] in ("D*", "O*", "Y*", "T*", "H*", "W*"),
            "emblem drop": lambda t: "*" in t and t.endswith("+"), "two parts": lambda t: "," in t}


def compare(n_positions: int, seed: int, python_too: bool = False) -> dict[str, int]:
    """Random positions: the numba generator (``g.turns()``) against the reference (outcomes) and, with
    ``python_too``, against the Python generator of ``board.py`` (canonical texts, outcomes and aliases)."""
    seen = dict.fromkeys(FEATURES, 0)
    n = 0
    for g, acts in magic_biased_walk(seed):
        if n >= n_positions:
            break
        s = g.sfen()
        assert FantasistaState.from_sfen(s).sfen() == s
        if acts is None:  # a chance node
            continue
        if g.phase == "move":
            turns = g.turns()[0]
            mine = {outcome_of(b) for b in turns.values()}
            assert len(mine) == len(turns)
            ref = REF.legal_outcomes(REF.parse(s))
            assert mine == ref, (s, len(mine), len(ref))
            if python_too:
                py, py_alias, _ = PY.legal_turns(g.bd)
                assert {t: turns[t].key() for t in turns} == {t: b.key() for t, b in py.items()}, s
                assert g.turns()[1] == py_alias, s
            n += 1
            for name, test in FEATURES.items():
                seen[name] += any(test(t) for t in acts)
    return seen


def test_agrees_with_reference_on_random_positions():
    compare(60, seed=7, python_too=True)


@pytest.mark.slow
def test_agrees_with_reference_on_600_positions():
    # seed 2033: every feature occurs (seed 2026 had no rider once the empty wave stopped being a turn, 2026-12-02)
    seen = compare(600, seed=2033, python_too=True)
    assert all(seen.values()), seen
