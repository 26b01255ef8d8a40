"""Board frame, runners and their movement tables.

Everything the kernels see is in **sente's frame**: gote's runner is rotated by 180 degrees (square ``sq`` ->
``80 - sq``, facing ``f`` -> ``f + 2``), so both sides start on 1i facing north and the tables serve both.

Squares use the engine's numbering ``sq = file_index * 9 + rank_index`` (file index 0 = file 1, rank index 0 = rank
a). Facings are absolute: ``n`` (toward rank a, sente's forward), ``e`` (toward file 1), ``s`` (toward rank i), ``w``
(toward file 9); each facing's right hand is the next one clockwise (n -> e -> s -> w).

A runner state packs (runner, square, facing, corner record) into one index::

    s = ((runner * 81 + sq) * 4 + facing) * 5 + corners          0 <= s < N_STATES = 11340

``corners`` records the corners touched this leg: 0 none, 1 + i exactly the i-th of the other corners
(1a, 9a, 9i in sente's frame), 4 = two or more (only the return to the start corner is missing). Turn generation adds
one bit, the stomp used this turn: ``t = s * 2 + stomp``. ``WIN`` (= ``N_STATES``) and ``WIN2`` (= ``2 * N_STATES``)
are the absorbing "king's leg completed" states.
"""
from __future__ import annotations

import numpy as np

from ...variant import STANDARD_PIECES

N_FILES = N_RANKS = 9
N_SQUARES = 81
RUNNERS = "PLNSBRK"  # relay order 歩 香 桂 銀 角 飛 王
RUNNER_NAMES = ("pawn", "lance", "knight", "silver", "bishop", "rook", "king")
N_RUNNERS = len(RUNNERS)
FINISHED = N_RUNNERS  # runner index of a side whose king has completed its leg
SILVER = RUNNERS.index("S")
KING = RUNNERS.index("K")
FACINGS = "nesw"
FACING_VECTORS = ((0, -1), (-1, 0), (0, 1), (1, 0))  # (d file_index, d rank_index)
N_FACINGS = 4
N_CORNER_CODES = 5
CORNERS_DONE = 4
N_STATES = N_RUNNERS * N_SQUARES * N_FACINGS * N_CORNER_CODES
WIN = N_STATES
N_STATES2 = 2 * N_STATES
WIN2 = N_STATES2
MAX_TARGETS = 16
MAX_ACTIONS = MAX_TARGETS + N_FACINGS - 1


def square(file: int, rank: int) -> int:
    """Square index of file 1-9 and rank 1-9 (rank 1 = a)."""
    return (file - 1) * N_RANKS + (rank - 1)


START_SQ = square(1, 9)  # 1i, sente's start / relay / goal corner
OTHER_CORNERS = (square(1, 1), square(9, 1), square(9, 9))  # 1a, 9a, 9i in sente's frame
START_FACING = 0  # north


def square_name(sq: int) -> str:
    return f"{sq // N_RANKS + 1}{chr(ord('a') + sq % N_RANKS)}"


def parse_square(text: str) -> int:
    if len(text) != 2 or text[0] not in "123456789" or text[1] not in "abcdefghi":
        raise ValueError(f"bad square {text!r} (expected a file 1-9 and a rank a-i, e.g. 1i)")
    return square(int(text[0]), ord(text[1]) - ord("a") + 1)


def rotate_sq(sq: int) -> int:
    return N_SQUARES - 1 - sq


def to_frame(side: int, sq: int, facing: int) -> tuple[int, int]:
    """(square, facing) on the board -> in sente's frame (identity for sente)."""
    if side == 0:
        return sq, facing
    return rotate_sq(sq), (facing + 2) % N_FACINGS


from_frame = to_frame  # the rotation is its own inverse


def corners_of(side: int) -> tuple[int, ...]:
    """The board squares of a side's three other corners, in the order of the corner codes."""
    return OTHER_CORNERS if side == 0 else tuple(rotate_sq(c) for c in OTHER_CORNERS)


def start_square(side: int) -> int:
    return START_SQ if side == 0 else rotate_sq(START_SQ)


def pack(runner: int, sq: int, facing: int, corners: int) -> int:
    return ((runner * N_SQUARES + sq) * N_FACINGS + facing) * N_CORNER_CODES + corners


def unpack(s: int) -> tuple[int, int, int, int]:
    corners = s % N_CORNER_CODES
    s //= N_CORNER_CODES
    facing = s % N_FACINGS
    s //= N_FACINGS
    return s // N_SQUARES, s % N_SQUARES, facing, corners


def runner_betza() -> tuple[str, ...]:
    """The Betza of each runner, reused from the standard shogi pieces (runners move like shogi pieces)."""
    by_letter = {p.letter: p for p in STANDARD_PIECES}
    return tuple(by_letter[ch].betza for ch in RUNNERS)


def build_targets() -> tuple[np.ndarray, np.ndarray]:
    """``targets[r, sq, f, j]`` (int16) and ``n_targets[r, sq, f]``: where runner r facing f can move from sq.

    Runners never block each other, so a slide always runs to the edge. Targets are sorted by square.
    """
    by_letter = {p.letter: p for p in STANDARD_PIECES}
    targets = np.full((N_RUNNERS, N_SQUARES, N_FACINGS, MAX_TARGETS), -1, dtype=np.int16)
    n_targets = np.zeros((N_RUNNERS, N_SQUARES, N_FACINGS), dtype=np.int16)
    for r, ch in enumerate(RUNNERS):
        piece = by_letter[ch]
        for f in range(N_FACINGS):
            fwd = FACING_VECTORS[f]
            right = FACING_VECTORS[(f + 1) % N_FACINGS]

            def board(dx: int, dy: int) -> tuple[int, int]:
                return dx * right[0] + dy * fwd[0], dx * right[1] + dy * fwd[1]

            for sq in range(N_SQUARES):
                x, y = divmod(sq, N_RANKS)
                found = set()
                for dx, dy in piece.leaps:
                    bx, by = board(dx, dy)
                    if 0 <= x + bx < N_FILES and 0 <= y + by < N_RANKS:
                        found.add((x + bx) * N_RANKS + y + by)
                for (dx, dy), rng in piece.slides:
                    bx, by = board(dx, dy)
                    tx, ty, k = x + bx, y + by, 1
                    while 0 <= tx < N_FILES and 0 <= ty < N_RANKS and k <= rng:
                        found.add(tx * N_RANKS + ty)
                        tx, ty, k = tx + bx, ty + by, k + 1
                found = sorted(found)
                targets[r, sq, f, :len(found)] = found
                n_targets[r, sq, f] = len(found)
    return targets, n_targets


TARGETS, N_TARGETS = build_targets()
