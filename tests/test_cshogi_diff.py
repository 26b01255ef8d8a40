"""Differential test against cshogi, an independent rules implementation.

1,000 positions from seeded random games: the legal move sets must be identical, and SFEN must round-trip
(and agree with cshogi's own SFEN).
"""
import random

import cshogi
import pytest

from engine import Position


def random_game_positions(seed: int, n_positions: int, max_plies: int = 160):
    """Yield (our position, cshogi board) pairs along seeded random games, preferring captures sometimes so
    hands fill up and drops get exercised."""
    rng = random.Random(seed)
    produced = 0
    while produced < n_positions:
        pos, board = Position.startpos(), cshogi.Board()
        for _ in range(max_plies):
            yield pos, board
            produced += 1
            if produced >= n_positions:
                return
            moves = list(board.legal_moves)
            if not moves:
                break
            captures = [m for m in moves if board.piece(cshogi.move_to(m)) != 0]
            move = rng.choice(captures) if captures and rng.random() < 0.5 else rng.choice(moves)
            usi = cshogi.move_to_usi(move)
            board.push(move)
            pos.push(usi)
            if board.is_draw() == cshogi.REPETITION_DRAW:
                break


@pytest.mark.parametrize("seed", range(4))
def test_legal_moves_match_cshogi(seed):
    checked = 0
    for pos, board in random_game_positions(seed, 250):
        ours = sorted(pos.move_usi(m) for m in pos.legal_codes())
        theirs = sorted(cshogi.move_to_usi(m) for m in board.legal_moves)
        assert ours == theirs, board.sfen()
        assert pos.is_check() == board.is_check(), board.sfen()
        assert pos.sfen() == board.sfen()
        again = Position.from_sfen(pos.sfen())
        assert again.sfen() == pos.sfen()
        assert again.key == pos.key  # incremental Zobrist key equals the one computed from scratch
        checked += 1
    assert checked == 250


def test_mate_positions_match_cshogi():
    """Positions at the end of random games that ended in mate agree on mate."""
    rng = random.Random(99)
    mates = 0
    for _ in range(200):
        pos, board = Position.startpos(), cshogi.Board()
        for _ in range(300):
            moves = list(board.legal_moves)
            if not moves:
                assert pos.is_checkmate() == board.is_check()
                assert pos.legal_codes().size == 0
                mates += 1
                break
            m = rng.choice(moves)
            board.push(m)
            pos.push(cshogi.move_to_usi(m))
    assert mates > 0
