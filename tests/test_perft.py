"""Perft against published counts (tests/data/perft.txt); the deep ones are marked slow."""
import pytest

from engine import Position

from .perft_data import read_perft_file

CASES = read_perft_file()


@pytest.mark.parametrize(
    "case", [pytest.param(c, id=f"{c.name}-d{c.depth}", marks=[pytest.mark.slow] if c.slow else [])
             for c in CASES])
def test_perft(case):
    pos = Position.from_sfen(case.sfen)
    before = pos.sfen()
    assert pos.perft(case.depth) == case.nodes
    assert pos.sfen() == before  # make/unmake restored everything


def test_divide_sums_to_perft():
    pos = Position.from_sfen(CASES[0].sfen)
    divide = pos.divide(3)
    assert len(divide) == 30
    assert sum(divide.values()) == 25470


def test_perft_of_push_equals_divide_entry():
    pos = Position.startpos()
    divide = pos.divide(3)
    pos.push("2g2f")
    assert pos.perft(2) == divide["2g2f"]
