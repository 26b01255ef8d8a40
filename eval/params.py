"""Every tunable evaluation constant in one place (centipawns; 100 = one pawn, nominally).

Values are from the owner's point of view. Ranks are counted from the owner's side: ``rank 0`` is the rank the owner
promotes furthest into (the enemy's back rank), ``rank n_ranks - 1`` is the owner's own back rank. Files are counted
from the board edge (``0`` = edge file, ``4`` = centre file on a 9x9 board).
See ``docs/search.md`` for the reasoning behind each number.
"""

# Material on the board, by SFEN letter. Promoted minor pieces are worth a little less than a gold because they
# return to hand as the weaker unpromoted piece when captured.
PIECE_VALUES: dict[str, int] = {
    "P": 90, "L": 315, "N": 405, "S": 495, "G": 540, "B": 855, "R": 990, "K": 0,
    "+P": 530, "+L": 530, "+N": 530, "+S": 530, "+B": 945, "+R": 1395,
}
# A piece in hand can be dropped anywhere, so it is worth more than the same piece on the board: value * num / den
# plus a flat bonus.
HAND_NUM, HAND_DEN, HAND_BONUS = 11, 10, 10

# Piece-square terms (owner's view).
PAWN_ADVANCE = 3          # per rank a pawn has advanced beyond its start rank (capped at PAWN_ADVANCE_CAP ranks)
PAWN_ADVANCE_CAP = 4
MINOR_ADVANCE = 4         # silver/gold/knight per rank advanced up to 3 ranks (development), then flat
CENTER_FILE_BONUS = 3     # silver, gold, knight, promoted minors: per file nearer the centre
KING_RANK_PENALTY = 25    # king: per rank above its own back rank (a king in the open is unsafe)
KING_EDGE_BONUS = 6       # king: per file away from the centre (castles sit on the wings)
BIG_PIECE_ADVANCE = 0     # rook and bishop: no positional term (mobility is left to search)
PROMOTED_ADVANCE = 4      # tokin and friends: per rank advanced (they attack the enemy camp)

# King safety, by Chebyshev distance (1 or 2) from a king.
# Defenders: own pieces close to the own king.
DEFENDER_BONUS: dict[str, tuple[int, int]] = {
    "G": (30, 12), "S": (22, 10), "+P": (18, 8), "+L": (18, 8), "+N": (18, 8), "+S": (18, 8),
    "N": (6, 4), "L": (4, 2), "P": (4, 2), "B": (6, 2), "R": (0, 0), "+B": (28, 12), "+R": (10, 6),
}
# Attackers: own pieces close to the enemy king.
ATTACKER_BONUS: dict[str, tuple[int, int]] = {
    "G": (45, 20), "S": (40, 18), "+P": (45, 20), "+L": (45, 20), "+N": (45, 20), "+S": (45, 20),
    "N": (25, 15), "L": (15, 8), "P": (15, 6), "B": (20, 10), "R": (30, 15), "+B": (50, 25), "+R": (70, 35),
}
TEMPO = 20  # side to move bonus

# Try rule (dai shogi): a royal this many ranks from the far rank threatens to win by reaching it uncapturable
# (index 0 = on it). Offsets the king's rank penalty near the goal; the search itself sees a completed try.
TRY_BONUS = (300, 180, 70, 20)

# Mobility, by variant id: centipawns per destination (its leaps, and its slide squares up to and including the first
# piece, when that square does not hold an own piece) of each piece that slides or is a special mover (lion, violent
# ox, flying dragon); royals and short steppers have no term. Only dai shogi has it: its piece
# values are averages over open and blocked positions (eval/material.py), and on 13x13 most pieces start walled in,
# so how much a piece can do *now* matters more than on 9x9. Standard shogi leaves mobility to the search.
# Variants not listed get no term (and pay nothing for it in the kernel).
MOBILITY_CP: dict[str, int] = {"daishogi2017": 4}

# Fantasista's terms beyond material (a prior, the hand-set values of its first engine): uses of the rights
# (awakening, curtain, wave), the emblem (and per pawn in hand, which it can drop as a tokin), the invincible and
# carrier marks, a piece riding a carrier (besides its own value).
FANTASISTA_RIGHT_VALUES = (450, 350, 350)
FANTASISTA_EMBLEM, FANTASISTA_EMBLEM_PER_PAWN = 400, 60
FANTASISTA_INVINCIBLE, FANTASISTA_CARRIER, FANTASISTA_RIDER = 250, 300, 150
