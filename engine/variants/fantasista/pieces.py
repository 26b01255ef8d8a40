"""Piece types, letters and movement tables of Ousho Fantasista (王将ファンタジスタ).

Piece *codes* follow the core convention (``ptype + 32 * colour``, colour 0 = sente) so that a future kernel port
can share the layout; ptypes 1-14 are standard shogi's, 15-20 are the six special pieces (always tokens, never
promote). Movement is declared in Betza (:func:`engine.pieces.parse_betza`) and compiled here into per-square
destination lists in the board frame (``sq = file_index * 9 + rank_index``).
"""
from __future__ import annotations

from ...pieces import parse_betza

N_FILES = N_RANKS = 9
N_SQ = 81

(P, L, N, S, G, B, R, K, PP, PL, PN, PS, PB, PR, D, O, Y, T, H, W) = range(1, 21)
N_TYPES = 21  # ptype index range (0 unused)

#: SFEN letter of each ptype (index 0 unused).
LETTERS = ("", "P", "L", "N", "S", "G", "B", "R", "K", "+P", "+L", "+N", "+S", "+B", "+R",
           "D", "O", "Y", "T", "H", "W")
LETTER_TO_PT = {x: i for i, x in enumerate(LETTERS) if x}
NAMES = ("", "pawn", "lance", "knight", "silver", "gold", "bishop", "rook", "king", "tokin", "promoted lance",
         "promoted knight", "promoted silver", "horse", "dragon", "fire dragon", "king-god dragon", "spear pawn",
         "thunder horse", "gale horse", "sword silver")
KANJI = ("", "歩", "香", "桂", "銀", "金", "角", "飛", "玉", "と", "成香", "成桂", "成銀", "馬", "龍",
         "火炎竜", "王神竜", "槍歩兵", "雷王馬", "疾風馬", "剣の銀")
BETZA = ("", "fW", "fR", "ffN", "FfW", "WfF", "B", "R", "K", "WfF", "WfF", "WfF", "WfF", "BW", "RF",
         "RF", "RFN", "fR", "BW", "BW", "FfW")
#: ptype -> ptype after promotion (the spear pawn becomes a tokin; the token mark stays with the piece).
PROMOTES_TO = {P: PP, L: PL, N: PN, S: PS, B: PB, R: PR, Y: PP}
#: ptype -> the kind that goes to the captor's hand (promoted pieces return unpromoted).
BASE = {PP: P, PL: L, PN: N, PS: S, PB: B, PR: R}
SPECIALS = frozenset((D, O, Y, T, H, W))  # always tokens, never in an ordinary hand
HAND_ORDER = (R, B, G, S, N, L, P)  # ordinary hand, as in SFEN
TOKEN_HAND_ORDER = (R, B, G, S, P, D, O, Y, T, H, W)  # token hand (SFEN extra field ``h=``)

# Square marks (bit flags).
TOKEN, INVINCIBLE, CARRIER = 1, 2, 4

DIRS = ((0, -1), (-1, -1), (-1, 0), (-1, 1), (0, 1), (1, 1), (1, 0), (1, -1))  # (d file_index, d rank_index)


def square(f: int, r: int) -> int:
    return f * N_RANKS + r


def square_name(sq: int) -> str:
    return f"{sq // N_RANKS + 1}{chr(ord('a') + sq % N_RANKS)}"


def parse_square(text: str) -> int:
    if len(text) != 2 or text[0] not in "123456789" or text[1] not in "abcdefghi":
        raise ValueError(f"bad square {text!r} (expected e.g. 5e)")
    return square(int(text[0]) - 1, ord(text[1]) - ord("a"))


def on_board(f: int, r: int) -> bool:
    return 0 <= f < N_FILES and 0 <= r < N_RANKS


def _board_offset(color: int, dx: int, dy: int) -> tuple[int, int]:
    # owner view (right, forward) -> board (d file index, d rank index); sente's right is file 1, forward rank a
    return (-dx, -dy) if color == 0 else (dx, dy)


def _compile():
    leaps = [[[] for _ in range(N_SQ)] for _ in range(64)]   # leaps[code][sq] = destinations
    rays = [[[] for _ in range(N_SQ)] for _ in range(64)]    # rays[code][sq] = list of square lists
    slide_range = [[0] * 8 for _ in range(64)]               # slide_range[code][dir]
    leap_offsets = [set() for _ in range(64)]
    for pt in range(1, N_TYPES):
        lp, sl = parse_betza(BETZA[pt])
        for color in (0, 1):
            code = pt + 32 * color
            for dx, dy in lp:
                leap_offsets[code].add(_board_offset(color, dx, dy))
            for (dx, dy), reach in sl.items():
                bo = _board_offset(color, dx, dy)
                slide_range[code][DIRS.index(bo)] = reach
            for s in range(N_SQ):
                f, r = divmod(s, N_RANKS)
                for df, dr in sorted(leap_offsets[code]):
                    if on_board(f + df, r + dr):
                        leaps[code][s].append(square(f + df, r + dr))
                for d, (df, dr) in enumerate(DIRS):
                    reach = slide_range[code][d]
                    ray = []
                    i = 1
                    while i <= reach and on_board(f + df * i, r + dr * i):
                        ray.append(square(f + df * i, r + dr * i))
                        i += 1
                    if ray:
                        rays[code][s].append(ray)
    # Reverse leap table: leap_from[sq] = list of (src, set of codes that leap from src to sq).
    leap_from = [dict() for _ in range(N_SQ)]
    for code in range(64):
        for s in range(N_SQ):
            for t in leaps[code][s]:
                leap_from[t].setdefault(s, set()).add(code)
    leap_from = [[(s, frozenset(cs)) for s, cs in sorted(d.items())] for d in leap_from]
    # Full rays from each square in each direction (for reverse slide detection).
    full_rays = [[[] for _ in range(8)] for _ in range(N_SQ)]
    for s in range(N_SQ):
        f, r = divmod(s, N_RANKS)
        for d, (df, dr) in enumerate(DIRS):
            i = 1
            while on_board(f + df * i, r + dr * i):
                full_rays[s][d].append(square(f + df * i, r + dr * i))
                i += 1
    return leaps, rays, slide_range, leap_from, full_rays


LEAPS, RAYS, SLIDE_RANGE, LEAP_FROM, FULL_RAYS = _compile()


def must_promote(pt: int, color: int, sq: int) -> bool:
    """Whether an unpromoted piece of this kind could never move again from ``sq`` (P, L, Y last rank; N two)."""
    r = sq % N_RANKS
    rel = r if color == 0 else N_RANKS - 1 - r  # 0 = the mover's last rank
    if pt in (P, L, Y):
        return rel == 0
    if pt == N:
        return rel <= 1
    return False


def in_zone(color: int, sq: int) -> bool:
    r = sq % N_RANKS
    return r <= 2 if color == 0 else r >= 6


def can_capture(mover_pt: int, target_pt: int, target_mark: int) -> bool:
    """Capture immunities (the target is the lower piece of a carrier stack). A king is never captured.

    Invincible pieces fall only to the king; the king-god dragon not to an unpromoted pawn, lance or knight; the
    thunder horse only to a king, rook, lance or knight (unpromoted). The spear pawn is its own kind for all of this.
    """
    if target_pt == K:
        return False
    if target_mark & INVINCIBLE:
        return mover_pt == K
    if target_pt == O:
        return mover_pt not in (P, L, N)
    if target_pt == T:
        return mover_pt in (K, R, L, N)
    return True
