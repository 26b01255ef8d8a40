"""Material values for large variants from mobility: ``python -m eval.material daishogi2017``.

For a game without published piece values (dai shogi 2017 has 26 kinds) we derive them from how far each kind
moves: the geometric mean of its average number of moves on an empty board (its reach) and its average number of
moves in positions from random games (what it can do among other pieces), scaled so the pawn is 100. Royals get no
material value (their loss decides the game); a lion is worth 1.5 free kings (its double move, which mobility does
not see, is what makes it the strongest piece in chu shogi practice). The numbers printed are then written into the
variant's piece table (``PieceType.value``), so the engine never recomputes them at run time.
"""
from __future__ import annotations

import math
import random
import sys
from collections import defaultdict

from engine import Position, get_variant
from engine.move import Move
from engine.pieces import parse_betza


def empty_board_mobility(betza: str, n_files: int, n_ranks: int) -> float:
    """Average number of moves of a piece over all squares of an empty board."""
    leaps, slides = parse_betza(betza)
    total = 0
    for f in range(n_files):
        for r in range(n_ranks):
            total += sum(1 for dx, dy in leaps if 0 <= f + dx < n_files and 0 <= r + dy < n_ranks)
            for (dx, dy), reach in slides.items():
                x, y, k = f + dx, r + dy, 1
                while 0 <= x < n_files and 0 <= y < n_ranks and k <= reach:
                    total, x, y, k = total + 1, x + dx, y + dy, k + 1
    return total / (n_files * n_ranks)


def game_mobility(variant_id: str, positions: int = 400, plies: int = 200, seed: int = 3) -> dict[str, float]:
    """Average number of (non-promoting) legal moves per piece kind of the side to move, over random games."""
    rng = random.Random(seed)
    counts: dict[str, list[int]] = defaultdict(list)
    seen = 0
    while seen < positions:
        pos = Position.startpos(variant_id)
        for _ in range(plies):
            codes = pos.legal_codes()
            if len(codes) == 0 or seen >= positions:
                break
            per_square: dict[int, int] = defaultdict(int)
            for c in codes:
                m = Move(int(c), pos.variant.geometry)
                if not m.is_promotion and m.from_sq is not None:
                    per_square[m.from_sq] += 1
            for sq in range(pos.variant.geometry.n_squares):
                piece = pos.piece_at(sq)
                if piece and piece[1] == pos.turn:
                    counts[piece[0]].append(per_square.get(sq, 0))
            seen += 1
            pos.push_unchecked(int(rng.choice(list(codes))))
    return {k: sum(v) / len(v) for k, v in counts.items()}


def mobility_values(variant_id: str) -> dict[str, int]:
    """Piece values by SFEN letter (see the module docstring for the method)."""
    v = get_variant(variant_id)
    g = v.geometry
    in_game = game_mobility(variant_id)
    empty = {p.letter: empty_board_mobility(p.betza, g.n_files, g.n_ranks) for p in v.pieces}
    pawn = math.sqrt(empty[v.pawn] * in_game[v.pawn])
    values: dict[str, int] = {}
    for p in v.pieces:
        if p.royal:
            values[p.letter] = 0
            continue
        # Kinds that never appear in random games (promoted ones) borrow the game/empty ratio of a kind that moves
        # the same way, else that of the whole army.
        twin = next((q.letter for q in v.pieces if q.betza == p.betza and q.letter in in_game), None)
        if p.letter in in_game or twin:
            ratio = in_game[p.letter if p.letter in in_game else twin] / empty[p.letter]
        else:
            ratio = sum(in_game.values()) / sum(empty[k] for k in in_game)
        values[p.letter] = round(100 * math.sqrt(empty[p.letter] * empty[p.letter] * ratio) / pawn)
    if "Z" in values and "F" in values and v.id == "daishogi2017":
        values["Z"] = round(1.5 * values["F"])
    return values


if __name__ == "__main__":
    variant = sys.argv[1] if len(sys.argv) > 1 else "daishogi2017"
    for letter, value in sorted(mobility_values(variant).items(), key=lambda kv: kv[1]):
        print(f"{letter:>3} {value:6d}")
