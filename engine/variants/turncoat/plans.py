"""Physical pieces (named by start square) and the secret plans (埋伏の毒) of turncoat shogi.

A plan of side ``s`` names pieces of the *enemy* army (side ``1 - s``) by their start squares, in one of four
packages. Plans are written as their squares in ascending square order (file 1 first, then rank a first), joined by
commas: ``8b``, ``4a,9c``, ``3a,5c``, ``1a,2a,9a``. The set of squares determines the package.

>>> len(all_plans(0)), len(all_plans(1))
(332, 332)
>>> [len([p for p in all_plans(0) if package_of(p) == k]) for k in (1, 2, 3, 4)]
[2, 18, 26, 286]
>>> plan_text(parse_plan("9c,4a", 0))
'4a,9c'
"""
from __future__ import annotations

from functools import lru_cache
from itertools import combinations

from ...game import GameError

N_FILES = N_RANKS = 9
RANKS = "abcdefghi"
START_SFEN = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1"

Plan = tuple  # tuple[int, ...]: start squares, ascending


def square(file_index: int, rank_index: int) -> int:
    return file_index * N_RANKS + rank_index


def square_name(sq: int) -> str:
    return f"{sq // N_RANKS + 1}{RANKS[sq % N_RANKS]}"


def parse_square(text: str) -> int:
    """``"7g"`` -> square index; raises :class:`GameError` for anything else."""
    if len(text) != 2 or text[0] not in "123456789" or text[1] not in RANKS:
        raise GameError(f"not a square: {text!r} (expected a file 1-9 and a rank a-i, e.g. 7g)")
    return square(int(text[0]) - 1, RANKS.index(text[1]))


@lru_cache(maxsize=None)
def start_pieces() -> dict[int, tuple[str, int]]:
    """``{start square: (letter, colour)}`` for the 40 pieces of the start position."""
    out = {}
    for r, row in enumerate(START_SFEN.split()[0].split("/")):
        f = N_FILES - 1
        for ch in row:
            if ch.isdigit():
                f -= int(ch)
                continue
            out[square(f, r)] = (ch.upper(), 0 if ch.isupper() else 1)
            f -= 1
    return out


def kind_of(piece_id: int) -> str:
    """Unpromoted letter of the physical piece that started on ``piece_id``."""
    return start_pieces()[piece_id][0]


def army_of(piece_id: int) -> int:
    """The side whose army the piece started in."""
    return start_pieces()[piece_id][1]


def _enemy_ids(side: int, letters: str) -> list[int]:
    return sorted(sq for sq, (letter, color) in start_pieces().items() if color != side and letter in letters)


@lru_cache(maxsize=None)
def all_plans(side: int) -> tuple[Plan, ...]:
    """The 332 plans of ``side`` in package order, each a tuple of enemy start squares (ascending)."""
    plans: list[Plan] = [(sq,) for sq in _enemy_ids(side, "RB")]  # 1: one rook or bishop
    plans += [tuple(sorted((g, p))) for g in _enemy_ids(side, "G") for p in _enemy_ids(side, "P")]  # 2
    plans += [tuple(sorted((s, x))) for s in _enemy_ids(side, "S") for x in _enemy_ids(side, "NLP")]  # 3
    plans += [tuple(c) for c in combinations(_enemy_ids(side, "NLP"), 3)]  # 4: any three knights/lances/pawns
    return tuple(plans)


@lru_cache(maxsize=None)
def _plan_set(side: int) -> frozenset:
    return frozenset(all_plans(side))


def package_of(plan: Plan) -> int:
    """Package number 1-4 of a well-formed plan."""
    kinds = sorted(kind_of(sq) for sq in plan)
    if len(plan) == 1:
        return 1
    if len(plan) == 3:
        return 4
    return 2 if "G" in kinds else 3


def plan_text(plan: Plan) -> str:
    return ",".join(square_name(sq) for sq in sorted(plan))


def parse_plan(text: str, side: int) -> Plan:
    """Squares of a plan of ``side`` (any order accepted; the result is canonical). Raises :class:`GameError`."""
    parts = text.split(",")
    squares = tuple(sorted(parse_square(p) for p in parts))
    if len(set(squares)) != len(squares):
        raise GameError(f"plan {text!r} names a piece twice")
    for sq in squares:
        if sq not in start_pieces() or army_of(sq) == side:
            raise GameError(f"plan {text!r}: {square_name(sq)} is not the start square of a piece of the enemy "
                            f"army ({'gote' if side == 0 else 'sente'})")
    if squares not in _plan_set(side):
        raise GameError(f"plan {text!r} is none of the four packages (one rook or bishop; gold + pawn; "
                        f"silver + knight, lance or pawn; three knights, lances or pawns)")
    return squares
