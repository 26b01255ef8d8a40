"""The variant record: a flat description of a game whose defaults are standard shogi.

A :class:`Variant` is pure data (board, pieces, start position, rule flags). :func:`Variant.tables` compiles it once
into :class:`Tables`, the read-only numpy arrays that the numba kernels take as their only view of the rules.
Piece *codes* in the kernels are ``ptype + 32 * color`` with ``ptype`` = 1 + the index of the piece in
``Variant.pieces`` and color 0 = sente (black, moves first, toward rank a), 1 = gote.
"""
from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .geometry import DIRECTIONS, N_DIRECTIONS, SHOGI_GEOMETRY, BoardGeometry
from .pieces import PieceType

N_CODES = 64  # piece codes 1..31 (sente) and 33..63 (gote); 0 is an empty square
COLOR_SHIFT = 5
MAX_HAND = 40  # hand counts hashed per count; more than any variant can hold of one kind
ZOBRIST_SEED = 0x5F0A_7A51_57A0_2026  # fixed, so keys (and transposition tables) are reproducible

# Indices of the small integer parameter vector handed to kernels.
(P_N_SQUARES, P_N_FILES, P_N_RANKS, P_WORD_STRIDE, P_PAWN, P_NIFU, P_UCHIFUZUME, P_DROPS,
 P_LAST_ROYAL, P_TRY) = range(10)
N_PARAMS = 16

# Special movers (what Betza cannot say), by PieceType.special.
SPECIAL_NONE = 0
SPECIAL_PASS_ORTHOGONAL = 1  # violent ox: to the 2nd square orthogonally, capturing on the 1st in passing
SPECIAL_PASS_DIAGONAL = 2  # flying dragon: the same diagonally
SPECIAL_LION = 3  # chu-shogi lion: two king steps capturing on both, igui, pass
SPECIAL_KINDS = {"": SPECIAL_NONE, "pass-orthogonal": SPECIAL_PASS_ORTHOGONAL,
                 "pass-diagonal": SPECIAL_PASS_DIAGONAL, "lion": SPECIAL_LION}

Tables = namedtuple("Tables", [
    "params",        # int64[N_PARAMS]: see the P_* indices
    "sq_word",       # int64[n_sq]: bitboard word of a square
    "sq_mask",       # uint64[n_sq]: bit of a square inside its word
    "board_bb",      # uint64[W]: every square
    "file_bb",       # uint64[n_files, W]
    "rays",          # int16[n_sq, 8, L]: squares along a direction, -1 past the edge
    "line_dir",      # int8[n_sq, n_sq]: direction from a to b, -1 if not aligned
    "between_bb",    # uint64[n_sq, n_sq, W]: squares strictly between two aligned squares
    "leap_dest",     # int16[n_sq, K]: destination of leap kind k from a square, -1 off the board
    "rev_leap",      # int16[K]: the leap kind with the opposite offset
    "leap_ok",       # bool[64, K]: piece code leaps with leap kind k
    "leap_list",     # int16[64, K]: leap kinds of a piece code, -1 terminated
    "slide_range",   # int16[64, 8]: how far a piece code slides in a direction (0 = not at all)
    "slide_list",    # int16[64, 9]: directions a piece code slides in, -1 terminated
    "royal",         # bool[64]
    "royal_types",   # int8[n]: the royal piece types
    "special",       # int8[64]: SPECIAL_* mover of a piece code
    "exchange",      # bool[64]: capturing this code converts it and removes the captor (drunk elephant)
    "far_rank",      # bool[2, n_sq]: each colour's last rank (for the try rule)
    "promote_code",  # int8[64]: code after promotion, 0 if it cannot promote
    "hand_type",     # int8[64]: piece type that goes to the captor's hand (0: leaves the game)
    "prefer_promote",  # bool[64]: search may skip the non-promotion (pawn, bishop, rook)
    "zone",          # bool[2, n_sq]: promotion zone of each colour
    "must_promote",  # bool[64, n_sq]: the unpromoted piece could never move again from this square
    "drop_bb",       # uint64[2, 32, W]: where a piece type may be dropped (it must be able to move later)
    "hand_types",    # int8[n]: droppable piece types in SFEN hand order
    "zob_board",     # uint64[64, n_sq]
    "zob_hand",      # uint64[2, 32, MAX_HAND + 1]
    "zob_side",      # uint64[1]
])


def _board_offset(color: int, dx: int, dy: int) -> tuple[int, int]:
    """Owner-view (right, forward) -> board (d_file_index, d_rank_index). Sente's right is file 1."""
    return (-dx, -dy) if color == 0 else (dx, dy)


STANDARD_PIECES: tuple[PieceType, ...] = (
    PieceType("pawn", "P", "fW", "歩", promotes_to="+P", value=90),
    PieceType("lance", "L", "fR", "香", promotes_to="+L", value=315),
    PieceType("knight", "N", "ffN", "桂", promotes_to="+N", value=405),
    PieceType("silver", "S", "FfW", "銀", promotes_to="+S", value=495),
    PieceType("gold", "G", "WfF", "金", value=540),
    PieceType("bishop", "B", "B", "角", promotes_to="+B", value=855),
    PieceType("rook", "R", "R", "飛", promotes_to="+R", value=990),
    PieceType("king", "K", "K", "玉", royal=True, value=15000),
    PieceType("tokin", "+P", "WfF", "と", value=540),
    PieceType("promoted lance", "+L", "WfF", "成香", value=540),
    PieceType("promoted knight", "+N", "WfF", "成桂", value=540),
    PieceType("promoted silver", "+S", "WfF", "成銀", value=540),
    PieceType("horse", "+B", "BW", "馬", value=945),
    PieceType("dragon", "+R", "RF", "龍", value=1395),
)


#: more than the 593 legal moves of the richest known shogi position (``Variant.max_moves``'s default)
MAX_MOVES = 1024


@dataclass(frozen=True)
class Variant:
    """Rules of one game as data. The defaults are standard shogi."""

    id: str = "shogi"
    geometry: BoardGeometry = SHOGI_GEOMETRY
    pieces: tuple[PieceType, ...] = STANDARD_PIECES
    start_sfen: str = "lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1"
    promotion_ranks: int = 3
    drops: bool = True
    nifu: bool = True
    uchifuzume: bool = True
    hand_order: str | tuple[str, ...] = "RBGSNLP"  # SFEN hand order: letters (a tuple where a letter is two characters)
    pawn: str = "P"
    #: "check": one king that may never be left attacked (shogi); "last_royal": several royals, and a move is
    #: illegal only if it leaves the opponent able to capture the mover's last one (dai shogi).
    royal_rule: str = "check"
    try_rule: bool = False  # a royal on the far rank that the opponent cannot capture wins
    exchange_piece: str | None = None  # letter of the drunk-elephant-style exchange piece
    max_plies: int = 0  # game-length cap (a draw), 0 for none; a rule option
    #: width of a move list (the generator does not check it): more than any position of the variant has
    max_moves: int = MAX_MOVES

    # ------------------------------------------------------------- lookups
    @cached_property
    def ptype_of_letter(self) -> dict[str, int]:
        """SFEN letter (``P``, ``+P``) -> piece type number (1-based)."""
        return {p.letter: i + 1 for i, p in enumerate(self.pieces)}

    def piece(self, ptype: int) -> PieceType:
        return self.pieces[ptype - 1]

    def code(self, ptype: int, color: int) -> int:
        return ptype + (color << COLOR_SHIFT)

    @cached_property
    def royal_ptypes(self) -> tuple[int, ...]:
        return tuple(i + 1 for i, p in enumerate(self.pieces) if p.royal)

    @cached_property
    def hand_ptypes(self) -> tuple[int, ...]:
        return tuple(self.ptype_of_letter[ch] for ch in self.hand_order) if self.drops else ()

    # -------------------------------------------------------------- tables
    @cached_property
    def tables(self) -> Tables:
        """Compile the record into kernel tables (done once per variant object)."""
        g = self.geometry
        n_sq, W = g.n_squares, g.n_words
        if len(self.pieces) > 31:
            raise ValueError("a variant may define at most 31 piece types")
        lt = self.ptype_of_letter

        # Leap kinds: every board-frame offset any piece of either colour uses, closed under negation so that
        # attack detection can look backwards from a target square.
        offsets: list[tuple[int, int]] = []
        for p in self.pieces:
            for color in (0, 1):
                for dx, dy in sorted(p.leaps):
                    for o in (_board_offset(color, dx, dy), _board_offset(color, -dx, -dy)):
                        if o not in offsets:
                            offsets.append(o)
        K = len(offsets)
        leap_dest = np.full((n_sq, K), -1, dtype=np.int16)
        for sq in range(n_sq):
            f, r = g.file_of(sq), g.rank_of(sq)
            for k, (df, dr) in enumerate(offsets):
                if g.on_board(f + df, r + dr):
                    leap_dest[sq, k] = g.square(f + df, r + dr)
        rev_leap = np.array([offsets.index((-df, -dr)) for df, dr in offsets], dtype=np.int16)

        leap_ok = np.zeros((N_CODES, K), dtype=np.bool_)
        leap_list = np.full((N_CODES, K), -1, dtype=np.int16)
        slide_range = np.zeros((N_CODES, N_DIRECTIONS), dtype=np.int16)
        slide_list = np.full((N_CODES, N_DIRECTIONS + 1), -1, dtype=np.int16)
        royal = np.zeros(N_CODES, dtype=np.bool_)
        special = np.zeros(N_CODES, dtype=np.int8)
        exchange = np.zeros(N_CODES, dtype=np.bool_)
        promote_code = np.zeros(N_CODES, dtype=np.int8)
        hand_type = np.zeros(N_CODES, dtype=np.int8)
        prefer_promote = np.zeros(N_CODES, dtype=np.bool_)
        # Captured pieces go to hand unpromoted; a promoted kind must then come from exactly one base kind (tokens
        # never reach a hand).
        demoted_ptype: dict[int, int] = {}
        if self.drops:
            for i, p in enumerate(self.pieces):
                if p.promotes_to and not p.token:
                    if lt[p.promotes_to] in demoted_ptype:
                        raise ValueError(f"{p.promotes_to} is the promotion of two kinds: cannot drop it unpromoted")
                    demoted_ptype[lt[p.promotes_to]] = i + 1
        for i, p in enumerate(self.pieces):
            pt = i + 1
            for color in (0, 1):
                code = self.code(pt, color)
                kinds = sorted(offsets.index(_board_offset(color, dx, dy)) for dx, dy in p.leaps)
                leap_ok[code, kinds] = True
                leap_list[code, :len(kinds)] = kinds
                dirs = []
                for (dx, dy), reach in p.slides:
                    d = DIRECTIONS.index(_board_offset(color, dx, dy))
                    slide_range[code, d] = min(reach, 255)
                    dirs.append(d)
                slide_list[code, :len(dirs)] = sorted(dirs)
                royal[code] = p.royal
                special[code] = SPECIAL_KINDS[p.special]
                exchange[code] = p.letter == self.exchange_piece
                if p.promotes_to:
                    promote_code[code] = self.code(lt[p.promotes_to], color)
                base = demoted_ptype.get(pt, pt)
                hand_type[code] = base if (self.drops and not p.royal and not p.token) else 0
                prefer_promote[code] = p.letter.rstrip("'") in ("P", "B", "R")  # tokens too

        if self.royal_rule not in ("check", "last_royal"):
            raise ValueError(f"unknown royal_rule {self.royal_rule!r}")
        far_rank = np.zeros((2, n_sq), dtype=np.bool_)
        for sq in range(n_sq):
            far_rank[0, sq] = g.rank_of(sq) == 0
            far_rank[1, sq] = g.rank_of(sq) == g.n_ranks - 1
        zone = np.zeros((2, n_sq), dtype=np.bool_)
        for sq in range(n_sq):
            r = g.rank_of(sq)
            zone[0, sq] = r < self.promotion_ranks
            zone[1, sq] = r >= g.n_ranks - self.promotion_ranks

        # A piece may not stand where it has no move at all (ignoring other pieces).
        can_move = np.zeros((N_CODES, n_sq), dtype=np.bool_)
        for code in range(N_CODES):
            for sq in range(n_sq):
                can_move[code, sq] = (any(leap_dest[sq, k] >= 0 for k in leap_list[code] if k >= 0)
                                      or any(g.rays[sq, d, 0] >= 0 for d in slide_list[code] if d >= 0))
        must_promote = np.zeros((N_CODES, n_sq), dtype=np.bool_)
        for code in range(N_CODES):
            if promote_code[code]:
                must_promote[code] = ~can_move[code]
        drop_bb = np.zeros((2, 32, W), dtype=np.uint64)
        for pt in self.hand_ptypes:
            for color in (0, 1):
                code = self.code(pt, color)
                drop_bb[color, pt] = g.bb_of(sq for sq in range(n_sq) if can_move[code, sq])

        rng = np.random.default_rng(ZOBRIST_SEED)
        draw = lambda *shape: rng.integers(0, np.iinfo(np.uint64).max, size=shape, dtype=np.uint64,
                                           endpoint=True)
        zob_board = draw(N_CODES, n_sq)
        zob_hand = draw(2, 32, MAX_HAND + 1)
        zob_side = draw(1)

        params = np.zeros(N_PARAMS, dtype=np.int64)
        params[P_N_SQUARES], params[P_N_FILES], params[P_N_RANKS] = n_sq, g.n_files, g.n_ranks
        params[P_WORD_STRIDE] = g.word_stride
        params[P_PAWN] = lt.get(self.pawn, 0)
        params[P_NIFU], params[P_UCHIFUZUME], params[P_DROPS] = self.nifu, self.uchifuzume, self.drops
        params[P_LAST_ROYAL], params[P_TRY] = self.royal_rule == "last_royal", self.try_rule

        return Tables(
            params=params, sq_word=g.sq_word, sq_mask=g.sq_mask, board_bb=g.board_bb, file_bb=g.file_bb,
            rays=g.kernel_rays, line_dir=g.line_dir, between_bb=g.between_bb,
            leap_dest=leap_dest, rev_leap=rev_leap, leap_ok=leap_ok, leap_list=leap_list,
            slide_range=slide_range, slide_list=slide_list, royal=royal,
            royal_types=np.array(self.royal_ptypes, dtype=np.int8), special=special, exchange=exchange,
            far_rank=far_rank, promote_code=promote_code,
            hand_type=hand_type, prefer_promote=prefer_promote, zone=zone,
            must_promote=must_promote, drop_bb=drop_bb,
            hand_types=np.array(self.hand_ptypes, dtype=np.int8), zob_board=zob_board, zob_hand=zob_hand,
            zob_side=zob_side,
        )
