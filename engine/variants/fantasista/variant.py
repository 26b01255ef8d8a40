"""Ousho Fantasista on the shared position: its variant record, kernel tables and position arrays.

The game's state fits the shared :data:`~engine.kernels.movegen.PosState` with a few additions, so the shared
generator and search kernel serve it (issue 50; :mod:`.board` is the readable twin, ``docs/fantasista.md`` the rules):

- **Tokens are their own piece kinds** (21-29: ``P' S' G' B' R' +P' +S' +B' +R'``); captured, they leave the game
  (``Tables.hand_type`` 0), and in hand they are separate kinds too. The six special pieces (15-20, ``D O Y T H W``)
  are always tokens. Kinds 1-14 are standard shogi's, in the order of :data:`engine.variant.STANDARD_PIECES`.
- **Square marks** (``FxPosState.marks``): invincible and carrier of the lower piece; a rider on a carrier is
  ``riders[sq]`` (its code) with its own invincible mark in ``rider_marks[sq]``.
- **Rights, emblem, move number, pending node, fairy tables** in the longer state vector ``st`` (``ST_*`` below).

:class:`FxTables` and :class:`FxPosState` are their own namedtuple classes: the kernels' rule hooks are chosen by
type when numba compiles (:mod:`engine.kernels.hooks`), so shogi's machine code never contains a fantasista branch.
"""
from __future__ import annotations

from collections import namedtuple
from functools import cache

import numpy as np

from ...geometry import SHOGI_GEOMETRY
from ...kernels.movegen import SCRATCH_LEVELS, PosState
from ...pieces import PieceType
from ...variant import STANDARD_PIECES, ZOBRIST_SEED, Tables, Variant
from . import magic
from .magic import RIGHT_AWAKEN, RIGHT_CURTAIN, RIGHT_EMBLEM, RIGHT_WAVE  # noqa: F401  (the kernels' names)
from . import pieces as PC

# ------------------------------------------------------------------ piece kinds
SPECIAL_PIECES: tuple[PieceType, ...] = (
    PieceType("fire dragon", "D", "RF", "火炎竜", value=1600, token=True, like="+R"),
    PieceType("king-god dragon", "O", "RFN", "王神竜", value=1500, token=True, like="+R"),
    PieceType("spear pawn", "Y", "fR", "槍歩兵", promotes_to="+P'", value=450, token=True, like="P"),
    PieceType("thunder horse", "T", "BW", "雷王馬", value=1300, token=True, like="+B"),
    PieceType("gale horse", "H", "BW", "疾風馬", value=1250, token=True, like="+B"),
    PieceType("sword silver", "W", "FfW", "剣の銀", value=800, token=True, like="S"),
)
TOKEN_PIECES: tuple[PieceType, ...] = (
    PieceType("pawn token", "P'", "fW", "歩", promotes_to="+P'", value=90, token=True, like="P"),
    PieceType("silver token", "S'", "FfW", "銀", promotes_to="+S'", value=495, token=True, like="S"),
    PieceType("gold token", "G'", "WfF", "金", value=540, token=True, like="G"),
    PieceType("bishop token", "B'", "B", "角", promotes_to="+B'", value=855, token=True, like="B"),
    PieceType("rook token", "R'", "R", "飛", promotes_to="+R'", value=990, token=True, like="R"),
    PieceType("tokin token", "+P'", "WfF", "と", value=540, token=True, like="+P"),
    PieceType("promoted silver token", "+S'", "WfF", "成銀", value=540, token=True, like="+S"),
    PieceType("horse token", "+B'", "BW", "馬", value=945, token=True, like="+B"),
    PieceType("dragon token", "+R'", "RF", "龍", value=1395, token=True, like="+R"),
)
#: kind numbers of the token pieces (1-based, after the 20 of :mod:`.pieces`)
(PT, ST, GT, BT, RT, PPT, PST, PBT, PRT) = range(21, 30)
#: ordinary kind -> its token kind (the kinds a token can be: tokens come from R B G S P, and Y promotes to +P')
TOKEN_OF = {PC.P: PT, PC.S: ST, PC.G: GT, PC.B: BT, PC.R: RT, PC.PP: PPT, PC.PS: PST, PC.PB: PBT, PC.PR: PRT}
ORDINARY_OF = {t: pt for pt, t in TOKEN_OF.items()}
#: hand kinds in the order of the extended SFEN: the ordinary hand, then the token hand (``h=``)
HAND_ORDER = ("R", "B", "G", "S", "N", "L", "P", "R'", "B'", "G'", "S'", "P'", "D", "O", "Y", "T", "H", "W")

#: The widest move list of a fantasista position: a side holding every kind may have over 1,500 moves (a king each,
#: both hands full: 1,536 with the emblem), past shogi's 1,024; one-part moves stay below 4,100 (20 drops a square,
#: breath and sword drops on up to 8 targets, the board's moves), and the multi-part turns fill what is left.
FX_MAX_MOVES = 8192
FANTASISTA = Variant(id="fantasista", pieces=STANDARD_PIECES + SPECIAL_PIECES + TOKEN_PIECES, hand_order=HAND_ORDER,
                     max_moves=FX_MAX_MOVES)

# ------------------------------------------------------------------ state layout
MARK_INVINCIBLE, MARK_CARRIER = PC.INVINCIBLE, PC.CARRIER  # bits of ``marks`` (and ``rider_marks``: invincible)
N_RIGHTS = 4  # awakening, curtain, wave, emblem (an emblem counts 0 or 1)
MAX_RIGHT = 31  # most uses of one right a side can hold (rights hashed per count)
ST_RIGHTS = 8  # st[ST_RIGHTS + N_RIGHTS * colour + right]
ST_MOVENO = 16  # number of the next ply (kifu numbering, from 1): where the magic schedule stands
ST_PENDING = 17  # the node after the last ply: PENDING_* below
ST_TABLE = 18  # st[ST_TABLE + colour]: that side's magic table (fairy and reserved result), -1 before the game
ST_RIDERS = 20  # st[ST_RIDERS + colour]: that side's riders on the board
ST_GENERATION = 22  # counts the generations that merge outcomes (tags FxPosState.seen_keys)
ST_TRUNCATED = 23  # 1 when a generation had more multi-part turns than its buffer, the arena or the set holds
ST_SEEN = 24  # entries of this generation's outcome set
ST_SEEN_LIMIT = 25  # the most entries a generation's outcome set takes before the generation is cut (0: 3/4 of its
# slots): a search's budget for the silver wave, whose turns in a position of many silvers run to millions
ST_SPELL = 26  # 1: a generation lists every spelling of the multi-part turns, not one per outcome (the game layer
# names turns from them: movers.gen_turns, turns.py)
FX_ST_SIZE = 32
PENDING_NONE, PENDING_ROLL, PENDING_INVINCIBLE, PENDING_CARRIER = range(4)
#: special actions of a move (bits 27-30 of the shared encoding, engine.kernels.movegen)
SP_SHIFT = 27
SP_BOARD = 1 << SP_SHIFT  # the mover boards the own empty carrier on ``to``
SP_RIDER = 2 << SP_SHIFT  # the mover is the rider on ``from`` (it moves off, captures, or boards another carrier)
SP_PLACE = 3 << SP_SHIFT  # a part of the curtain: a silver token from outside the game put on ``to``
SP_TURN = 4 << SP_SHIFT  # a multi-part turn: a row of this ply's part of the turn arena (FxPosState.turns), below
SP_TARGET = 5 << SP_SHIFT  # the roller puts the pending magic mark (invincible, carrier) on its piece on ``to``
SP_MASK = 15 << SP_SHIFT
# An SP_TURN move spells its row index i (from its ply's first row) in the fields the shared kernels read as squares:
# to = i % 81, from = i // 81 % 81, the middle square's bits = i // 81**2 (HAS_MID, DROP, PROMOTE clear). So the
# search's ordering tables, indexed by squares, never reach past the board with it (movers.turn_move, turn_index).
TURN_SQ = 81
MAX_PARTS = 16  # parts of one turn: a silver wave moves each silver once
TURN_WIDTH = 1 + MAX_PARTS  # a turn arena row: a head (number of parts | (right spent + 1) << 8), the parts
ARENA_ROWS = 1 << 16  # multi-part turns held by the plies of one search at once
HASH_SLOTS = 1 << 20  # the outcome set of one generation, 3/4 full at most (a 29,937-turn wave fills 139,973)
#: Chance rows: a roll's distinct results for one magic table (magic.roll_rows); the table of a side is
#: st[ST_TABLE + colour] = magic.table_id(fairy, reserved).
MAX_ROWS = 6
#: Points of the magic schedule (what the TT key adds to the position key): the next ply's number up to 15, then
#: its place in the 15-ply cycle of rolls (rolls follow plies 15k and 15k + 1): movers.schedule_point.
SCHEDULE_POINTS = 31
PENDING_OF_PHASE = {("move", ""): PENDING_NONE, ("roll", ""): PENDING_ROLL, ("target", "i"): PENDING_INVINCIBLE,
                     ("target", "c"): PENDING_CARRIER}

FxTables = namedtuple("FxTables", Tables._fields + (
    "capture_ok",    # bool[64, 64]: mover code may capture target code (immunities; kings never captured)
    "zob_mark",      # uint64[3, n_sq]: invincible lower piece, carrier, invincible rider
    "zob_rider",     # uint64[64, n_sq]: rider code on a square
    "zob_right",     # uint64[2, N_RIGHTS, MAX_RIGHT + 1]: a side's count of a right
    "zob_sched",     # uint64[SCHEDULE_POINTS, 4]: the schedule point and the pending node (the TT key's share)
    "ch_n",          # int8[magic.N_TABLES]: distinct results of a roll for that table
    "ch_w",          # int32[magic.N_TABLES, MAX_ROWS]: faces of the d20 giving each result, most probable first
    "ch_hand",       # int8[magic.N_TABLES, MAX_ROWS, 32]: pieces each result adds to the roller's hand, by kind
    "ch_right",      # int8[magic.N_TABLES, MAX_ROWS, N_RIGHTS]: uses of rights it adds (the emblem: held once)
    "ch_target",     # int8[magic.N_TABLES, MAX_ROWS]: the magic target it asks for (PENDING_INVINCIBLE / _CARRIER)
))
FxPosState = namedtuple("FxPosState", PosState._fields + (
    "marks",        # int8[n_sq]: MARK_* bits of the lower piece
    "riders",       # int8[n_sq]: code of the rider on a carrier, 0 = none
    "rider_marks",  # int8[n_sq]: MARK_INVINCIBLE of the rider
    "xundo",        # int64[capacity, MAX_PARTS]: per ply and part, what make/unmake needs back (movers.fx_apply)
    "turns",        # int32[ARENA_ROWS, TURN_WIDTH]: the multi-part turns generated at each ply (SP_TURN moves)
    "turn_base",    # int32[capacity]: the arena row where a ply's turns start
    "turn_top",     # int32[capacity]: past the last arena row a ply's turns use
    "seen_keys",    # uint64[HASH_SLOTS]: outcome keys of the generation under way (turns merged by outcome)
    "seen_tags",    # int32[HASH_SLOTS]: the generation each slot belongs to (st[ST_GENERATION])
    "turn_work",    # int32[2, TURN_WORK]: a turn being built and its candidate parts (0: generation, 1: uchifuzume)
))
TURN_WORK = 512  # turn_work columns: [0, 16) the parts, [16, 32) wave silvers, then candidate lists (movers.py)


def _capture_table() -> np.ndarray:
    """``capture_ok[mover, target]`` for enemy codes: ``pieces.can_capture`` by kind (a token by its ordinary kind),
    the invincible mark aside (it lives on the square)."""
    ok = np.zeros((64, 64), dtype=np.bool_)
    for mover in range(1, 30):
        for target in range(1, 30):
            allowed = PC.can_capture(ORDINARY_OF.get(mover, mover), ORDINARY_OF.get(target, target), 0)
            for c in (0, 1):
                ok[mover + 32 * c, target + 32 * (1 - c)] = allowed
    return ok


def _chance_arrays() -> dict[str, np.ndarray]:
    """The chance rows of every magic table (:func:`.magic.roll_rows`) as FxTables arrays."""
    n_t = magic.N_TABLES
    a = dict(ch_n=np.zeros(n_t, np.int8), ch_w=np.zeros((n_t, MAX_ROWS), np.int32),
             ch_hand=np.zeros((n_t, MAX_ROWS, 32), np.int8), ch_right=np.zeros((n_t, MAX_ROWS, N_RIGHTS), np.int8),
             ch_target=np.zeros((n_t, MAX_ROWS), np.int8))
    target_pending = {magic.TARGET_INVINCIBLE: PENDING_INVINCIBLE, magic.TARGET_CARRIER: PENDING_CARRIER}
    for fairy in magic.FAIRIES:
        for reserved in magic.RESERVED_RESULTS:
            t = magic.table_id(fairy, reserved)
            rows = magic.roll_rows(fairy, reserved)
            a["ch_n"][t] = len(rows)
            for r, (faces, effect) in enumerate(rows):
                a["ch_w"][t, r] = faces
                for kind, count in effect.tokens:
                    a["ch_hand"][t, r, shared_kind(kind, PC.TOKEN)] = count
                for right in effect.rights:
                    a["ch_right"][t, r, right] = 1
                a["ch_target"][t, r] = target_pending.get(effect.target, PENDING_NONE)
    return a


def table_ids(fairies, reserved) -> tuple[int, int]:
    """Both sides' magic table ids (``st[ST_TABLE + c]``) from their fairies and reserved results (names); a side
    whose fairy or reserved result is not chosen yet has -1."""
    return tuple(-1 if f is None or r is None else magic.table_id(f, r) for f, r in zip(fairies, reserved))


@cache
def fx_tables() -> FxTables:
    """The kernel tables of fantasista (built once). Its rule hooks, which kernels compiled for these tables inline,
    are registered by the package (``engine/variants/fantasista/__init__.py``)."""
    T = FANTASISTA.tables
    rng = np.random.default_rng(ZOBRIST_SEED ^ 0xFA17A515)
    draw = lambda *shape: rng.integers(0, np.iinfo(np.uint64).max, size=shape, dtype=np.uint64, endpoint=True)
    n_sq = SHOGI_GEOMETRY.n_squares
    return FxTables(*T, capture_ok=_capture_table(), zob_mark=draw(3, n_sq), zob_rider=draw(64, n_sq),
                    zob_right=draw(2, N_RIGHTS, MAX_RIGHT + 1), zob_sched=draw(SCHEDULE_POINTS, 4),
                    **_chance_arrays())


# ------------------------------------------------------------------ conversion
def shared_kind(code: int, mark: int) -> int:
    """The shared kind of a :class:`.board.Board` code with its token mark."""
    pt = code & 31
    if mark & PC.TOKEN and pt not in PC.SPECIALS:
        if pt not in TOKEN_OF:
            raise ValueError(f"no token kind of {PC.LETTERS[pt]}")
        return TOKEN_OF[pt]
    return pt


#: Columns of an outcome row (``movers.outcome_rows``, :func:`pos_row`): the board, marks, riders and rider marks by
#: square, both hands by kind, the rights (N_RIGHTS per side).
OUT_BOARD, OUT_MARKS, OUT_RIDERS, OUT_RIDER_MARKS, OUT_HANDS, OUT_RIGHTS, OUT_SIZE = 0, 81, 162, 243, 324, 388, 396


def new_pos(capacity: int = 256, arena_rows: int = ARENA_ROWS, hash_slots: int = HASH_SLOTS) -> FxPosState:
    """Empty position arrays (``capacity``: plies of history the search may push; ``arena_rows``: multi-part turns
    all its plies may hold at once; ``hash_slots``, a power of two: the outcome set of one generation)."""
    n_sq, W = SHOGI_GEOMETRY.n_squares, SHOGI_GEOMETRY.n_words
    return FxPosState(board=np.zeros(n_sq, np.int8), hands=np.zeros((2, 32), np.int8),
                      bb=np.zeros((66, W), np.uint64), st=np.zeros(FX_ST_SIZE, np.int64),
                      keys=np.zeros(capacity, np.uint64), moves=np.zeros(capacity, np.int32),
                      undo=np.zeros(capacity, np.int32), scratch=np.zeros((SCRATCH_LEVELS, 64), np.int64),
                      marks=np.zeros(n_sq, np.int8), riders=np.zeros(n_sq, np.int8),
                      rider_marks=np.zeros(n_sq, np.int8), xundo=np.zeros((capacity, MAX_PARTS), np.int64),
                      turns=np.zeros((arena_rows, TURN_WIDTH), np.int32), turn_base=np.zeros(capacity, np.int32),
                      turn_top=np.zeros(capacity, np.int32), seen_keys=np.zeros(hash_slots, np.uint64),
                      seen_tags=np.zeros(hash_slots, np.int32), turn_work=np.zeros((2, TURN_WORK), np.int32))
