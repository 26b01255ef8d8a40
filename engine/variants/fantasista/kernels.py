"""numba kernels of Ousho Fantasista: the kernel state, full-turn generation, copy-make, attack tests, perft.

**Kernel state.** One position is one ``int8[S]`` row (layout ``ST_*`` below): the lower piece code, its marks, the
rider code and the rider's marks per square, ordinary and token hands (``[colour][ptype]``), rights
(awakening, curtain, wave), emblems, the side to move and the two king squares. Its Zobrist key is the XOR of
``Z[i, st[i]]`` over the row (the king squares are not hashed: they follow from the board), updated incrementally by
:func:`_put`, the only writer of hashed fields.

**Turns.** A turn is generated part by part as a run of decisions of the same side (``wk[level]`` holds the position
after ``level`` parts, copy-made from the level below): first parts (moves, drops, capture in place, the rights),
then the follow-ups (the rider after its carrier, the gale horse's second move, awakening's second leg, the curtain
move, the wave's next silver). At the end of each candidate turn the mover's own king must be safe; the turn is then
collapsed to its *outcome* (the position after it, opponent to move) in a hash set, so spellings of one outcome are
one turn, as in the Python layer (:func:`.board.legal_turns`). ``out[i]`` is outcome ``i``'s position and
``odesc[i]`` the parts of its first spelling. In *spell* mode every spelling is also recorded (``sp_desc``,
``sp_out``) so the Python layer can name the canonical one.

Uchifuzume: a pawn drop that checks the king right in front of it is kept aside (``oflag``) and tested afterwards
by :func:`legal_turns_k` with a second generator run for the defender (stop at the first legal turn; no recursion).

Part descriptors (``int16``): ``desc[0]`` = number of parts, part ``k`` at ``desc[1 + 5k : 6 + 5k]``:
``MOVE frm end via flags`` (flags: 1 promote, 2 rider), ``DROP ptype to flags x`` (flags: 1 token, 2 emblem tokin;
``x`` breath / sword capture square or -1), ``CIP frm target``, ``CURTAIN s1 s2``, ``WAVE`` (the wave's moves
follow as MOVE parts).

Kernels never allocate (``engine.kernels.kernel``: NRT off); every buffer is in :class:`GenBuf`.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ...kernels import inline_kernel, inner_kernel, kernel
from . import pieces as PC

# ----------------------------------------------------------------- state layout
ST_B, ST_M, ST_R, ST_RM = 0, 81, 162, 243
ST_HAND = 324    # + 21 * colour + ptype
ST_TH = 366      # + 21 * colour + ptype
ST_RIGHTS = 408  # + 3 * colour + (0 awakening, 1 curtain, 2 wave)
ST_EMBLEM = 414  # + colour
ST_STM = 416
ST_KSQ = 417     # + colour (not hashed); -1 = no king
S = 420

P_, L_, N_, S_, G_, B_, R_, K_, PP_, PL_, PN_, PS_, PB_, PR_, D_, O_, Y_, T_, H_, W_ = range(1, 21)
TOKEN, INVINCIBLE, CARRIER = PC.TOKEN, PC.INVINCIBLE, PC.CARRIER

PART_MOVE, PART_DROP, PART_CIP, PART_CURTAIN, PART_WAVE = 1, 2, 3, 4, 5
SAFE = 4  # _emit flag: the turn cannot have left the mover's king attacked (no test needed)
#: _emit flag: a multi-part turn that may leave the position as it was (a gale horse or an awakened rook out and
#: back, an empty silver wave): such a "pass disguised as a turn" is not legal (docs/fantasista.md). Only the silver
#: curtain with no free square passes.
NOPASS = 16
DESC_W = 128
MAX_LEVELS = 20
MAX_WAVE_SILVERS = 16
MV_CAP = 96
# The ``spell`` argument of the generator when a kernel passes "no": a typed int64, not the literal 0. numba compiles
# a kernel once per argument-type signature, and a literal 0 is a type of its own, so ``legal_turns_k(..., 0)`` in a
# kernel and ``legal_turns_k(..., spell)`` from Python were two full compiles of the generator (likewise keys must
# reach the kernels as uint64: see ``turngen.key``).
NO_SPELL = np.int64(0)
HSET = 1 << 15

# I_COUNT: keep keys only (leaf counting); I_SINGLES: single moves counted apart from the outcomes (count mode);
# I_CAPTURES: 0, or 1 + the enemy's piece count (enemy_pieces) before the turn: keep only the outcomes with fewer
# (the turns that took material, for the quiescence; see capture_turns_k); I_LAZY: 1 = the plain path leaves the
# rows of its ordinary drops unmade (``oflag`` OFLAG_LAZY, see :func:`make_lazy_row`); I_PARTS, I_PART: with
# I_PARTS > 1 only the outcomes whose key falls in part I_PART are kept (see :func:`in_part`: a position with more
# turns than the buffers hold is generated part by part). I_OVERFLOW: 1 = too many outcomes or spellings for the
# buffers, OVERFLOW_WAVE = the silver wave's seen-set (``wkeys``) is full (grow it; nothing was left out silently).
(I_N, I_NS, I_OVERFLOW, I_CAP, I_SCAP, I_COUNT, I_SINGLES, I_CAPTURES, I_LAZY, I_PARTS, I_PART) = range(11)
OVERFLOW_WAVE = 2
#: ``oflag`` of an outcome whose row ``out[i]`` is not made yet: an ordinary drop of the plain path with I_LAZY.
OFLAG_LAZY = 8

FTables = namedtuple("FTables", [
    "leap_n", "leap_sq",            # int8[64, 81], int8[64, 81, 16]: leap destinations per code and square
    "ray_n", "ray_len", "ray_sq",   # int8[64, 81], int8[64, 81, 8], int8[64, 81, 8, 8]: slide rays
    "lf_n", "lf_src", "lf_mask",    # leap attackers of a square: sources and the codes (bit mask) that leap in
    "full_len", "full_sq",          # int8[81, 8], int8[81, 8, 8]: whole rays from a square per direction
    "slide", "promo", "base",       # int8[64, 8] slide reach; int8[32] promoted ptype; int8[32] ptype to hand
    "nbr_n", "nbr_sq",              # king neighbourhood (sorted), for the curtain
    "Z",                            # uint64[S, 128] Zobrist keys (0 for value 0 and the king squares)
])

GenBuf = namedtuple("GenBuf", [
    "wk", "wh", "mv", "cur",        # int8[L, S] positions per part level, uint64[L] their keys, moves, parts so far
    "out", "oh", "oflag", "odesc", "oslot",   # outcomes: positions, keys, flags, first spelling, hash-set slot
    "hset",                         # int32[HSET] outcome index per slot (-1 empty)
    "wkeys", "wslots",              # wave (position, silvers done) seen-set (a power of two) and its used slots
    "sp_desc", "sp_out",            # spellings (spell mode): parts, outcome index
    "info",                         # int64[11]: I_N, I_NS, I_OVERFLOW, I_CAP, I_SCAP, ... (see I_PART)
    "tmp",                          # int32[256] scratch: capture targets / wave silvers [0:48), curtain [64:72),
                                    # wave levels [96:224)
])


def make_tables() -> FTables:
    leap_n = np.zeros((64, 81), np.int8)
    leap_sq = np.zeros((64, 81, 16), np.int8)
    ray_n = np.zeros((64, 81), np.int8)
    ray_len = np.zeros((64, 81, 8), np.int8)
    ray_sq = np.zeros((64, 81, 8, 8), np.int8)
    for code in range(64):
        for s in range(81):
            lp = PC.LEAPS[code][s]
            leap_n[code, s] = len(lp)
            leap_sq[code, s, :len(lp)] = lp
            rays = PC.RAYS[code][s]
            ray_n[code, s] = len(rays)
            for k, ray in enumerate(rays):
                ray_len[code, s, k] = len(ray)
                ray_sq[code, s, k, :len(ray)] = ray
    lf_n = np.zeros(81, np.int16)
    lf_src = np.zeros((81, 40), np.int8)
    lf_mask = np.zeros((81, 40), np.uint64)
    for t in range(81):
        for k, (s, codes) in enumerate(PC.LEAP_FROM[t]):
            lf_src[t, k] = s
            m = 0
            for cd in codes:
                m |= 1 << cd
            lf_mask[t, k] = np.uint64(m)
        lf_n[t] = len(PC.LEAP_FROM[t])
    full_len = np.zeros((81, 8), np.int8)
    full_sq = np.zeros((81, 8, 8), np.int8)
    for s in range(81):
        for d in range(8):
            r = PC.FULL_RAYS[s][d]
            full_len[s, d] = len(r)
            full_sq[s, d, :len(r)] = r
    slide = np.array([[min(x, 9) for x in row] for row in PC.SLIDE_RANGE], np.int8)
    promo = np.zeros(32, np.int8)
    base = np.arange(32, dtype=np.int8)
    for a, b in PC.PROMOTES_TO.items():
        promo[a] = b
    for a, b in PC.BASE.items():
        base[a] = b
    nbr_n = np.zeros(81, np.int8)
    nbr_sq = np.zeros((81, 8), np.int8)
    for s in range(81):
        f, r = divmod(s, 9)
        ns = sorted(PC.square(f + df, r + dr) for df, dr in PC.DIRS if PC.on_board(f + df, r + dr))
        nbr_n[s] = len(ns)
        nbr_sq[s, :len(ns)] = ns
    rng = np.random.default_rng(20260511)
    Z = rng.integers(1, 2 ** 63, size=(S, 128), dtype=np.int64).astype(np.uint64)
    Z[:, 0] = 0
    Z[ST_KSQ:, :] = 0
    return FTables(leap_n, leap_sq, ray_n, ray_len, ray_sq, lf_n, lf_src, lf_mask, full_len, full_sq, slide, promo,
                   base, nbr_n, nbr_sq, Z)


def make_genbuf(cap: int = 4096, spell_cap: int = 0, wave: int = HSET) -> GenBuf:
    """Buffers for ``cap`` outcomes, ``spell_cap`` spellings and a silver-wave seen-set of ``wave`` slots (a power
    of two; half of it can be used)."""
    if wave & (wave - 1) or wave < 2:
        raise ValueError(f"the wave seen-set size must be a power of two, not {wave}")
    info = np.zeros(11, np.int64)
    info[I_CAP] = cap
    info[I_SCAP] = spell_cap
    return GenBuf(np.zeros((MAX_LEVELS, S), np.int8), np.zeros(MAX_LEVELS, np.uint64),
                  np.zeros((MAX_LEVELS, MV_CAP, 4), np.int16), np.zeros(DESC_W, np.int16),
                  np.zeros((cap, S), np.int8), np.zeros(cap, np.uint64), np.zeros(cap, np.int8),
                  np.zeros((cap, DESC_W), np.int16), np.zeros(cap, np.int32),
                  np.full(HSET, -1, np.int32), np.zeros(wave, np.uint64), np.zeros(wave, np.int32),
                  np.zeros((max(spell_cap, 1), DESC_W), np.int16), np.zeros(max(spell_cap, 1), np.int32),
                  info, np.zeros(256, np.int32))


# ----------------------------------------------------------------- basics
@kernel
def zhash(st, T):
    h = np.uint64(0)
    for i in range(ST_KSQ):
        h ^= T.Z[i, st[i] & 127]
    return h


@inner_kernel
def _put(st, h, T, idx, v):
    old = st[idx]
    st[idx] = v
    return h ^ T.Z[idx, old & 127] ^ T.Z[idx, v & 127]


@inner_kernel
def can_capture(mpt, tpt, tmark):
    if tpt == K_:
        return False
    if tmark & INVINCIBLE:
        return mpt == K_
    if tpt == O_:
        return not (mpt == P_ or mpt == L_ or mpt == N_)
    if tpt == T_:
        return mpt == K_ or mpt == R_ or mpt == L_ or mpt == N_
    return True


@inner_kernel
def in_zone(c, sq):
    r = sq % 9
    return r <= 2 if c == 0 else r >= 6


@inner_kernel
def must_promote(pt, c, sq):
    r = sq % 9
    rel = r if c == 0 else 8 - r
    if pt == P_ or pt == L_ or pt == Y_:
        return rel == 0
    if pt == N_:
        return rel <= 1
    return False


@inner_kernel
def attacked(st, T, sq, by):
    """Whether colour ``by`` attacks ``sq`` (lower pieces and riders both attack from their square)."""
    lo = 32 * by
    hi = lo + 32
    for k in range(T.lf_n[sq]):
        src = T.lf_src[sq, k]
        pc = st[ST_B + src]
        if pc >= lo and pc < hi and pc != 0:
            m = T.lf_mask[sq, k]
            if (m >> np.uint64(pc)) & np.uint64(1):
                return True
            rc = st[ST_R + src]
            if rc != 0 and (m >> np.uint64(rc)) & np.uint64(1):
                return True
    for d in range(8):
        rd = (d + 4) & 7
        for i in range(T.full_len[sq, d]):
            s = T.full_sq[sq, d, i]
            pc = st[ST_B + s]
            if pc != 0:
                if pc >= lo and pc < hi:
                    if T.slide[pc, rd] >= i + 1:
                        return True
                    rc = st[ST_R + s]
                    if rc != 0 and T.slide[rc, rd] >= i + 1:
                        return True
                break
    return False


@inner_kernel
def in_check(st, T, c):
    k = st[ST_KSQ + c]
    return k >= 0 and attacked(st, T, np.int64(k), np.int64(1 - c))


@inner_kernel
def _capture(st, h, T, c, sq):
    """Colour ``c`` captures the stack on ``sq``: ordinary pieces go to ``c``'s hand unpromoted, tokens leave."""
    code = st[ST_B + sq]
    if code != 0 and not (st[ST_M + sq] & TOKEN):
        i = ST_HAND + 21 * c + T.base[code & 31]
        h = _put(st, h, T, np.int64(i), np.int64(st[i] + 1))
    code = st[ST_R + sq]
    if code != 0 and not (st[ST_RM + sq] & TOKEN):
        i = ST_HAND + 21 * c + T.base[code & 31]
        h = _put(st, h, T, np.int64(i), np.int64(st[i] + 1))
    h = _put(st, h, T, np.int64(ST_B + sq), 0)
    h = _put(st, h, T, np.int64(ST_M + sq), 0)
    h = _put(st, h, T, np.int64(ST_R + sq), 0)
    h = _put(st, h, T, np.int64(ST_RM + sq), 0)
    return h


@inner_kernel
def _copy(src, dst):
    for i in range(S):
        dst[i] = src[i]


# ----------------------------------------------------------------- one move of one piece
@inner_kernel
def _add_ends(T, frm, c, pt, end, via, boarding, mv, n):
    zone = in_zone(np.int64(c), np.int64(frm)) or in_zone(np.int64(c), np.int64(end)) or (via >= 0 and in_zone(np.int64(c), np.int64(via)))
    if n + 2 > MV_CAP:
        return n
    if T.promo[pt] != 0 and zone:
        mv[n, 0] = end
        mv[n, 1] = via
        mv[n, 2] = 1
        mv[n, 3] = boarding
        n += 1
        if not must_promote(np.int64(pt), np.int64(c), np.int64(end)):
            mv[n, 0] = end
            mv[n, 1] = via
            mv[n, 2] = 0
            mv[n, 3] = boarding
            n += 1
    else:
        mv[n, 0] = end
        mv[n, 1] = via
        mv[n, 2] = 0
        mv[n, 3] = boarding
        n += 1
    return n


@inner_kernel
def _consider(st, T, frm, c, pt, is_carrier, to, mv, n):
    tgt = st[ST_B + to]
    boarding = 0
    if tgt != 0:
        if (tgt >> 5) == c:
            if not (st[ST_M + to] & CARRIER) or st[ST_R + to] != 0 or pt == K_ or is_carrier:
                return n
            boarding = 1
        elif not can_capture(np.int64(pt), np.int64(tgt & 31), np.int64(st[ST_M + to])):
            return n
    n = _add_ends(T, np.int64(frm), np.int64(c), np.int64(pt), np.int64(to), -1, np.int64(boarding), mv, n)
    if pt == Y_ and tgt != 0 and boarding == 0:
        r_to = to % 9
        if (c == 0 and r_to > 0) or (c == 1 and r_to < 8):
            nxt = to - 1 if c == 0 else to + 1
            t2 = st[ST_B + nxt]
            if t2 != 0 and (t2 >> 5) != c and can_capture(Y_, np.int64(t2 & 31), np.int64(st[ST_M + nxt])):
                n = _add_ends(T, np.int64(frm), np.int64(c), np.int64(pt), np.int64(nxt), np.int64(to), 0, mv, n)
    return n


@inner_kernel
def piece_moves(st, T, frm, layer, mv):
    """Ordinary moves of the piece on ``frm`` (layer 0 lower, 1 rider) into ``mv`` rows (end, via, promote,
    boarding); the order is the Python generator's (leaps, then rays; promotion first)."""
    if layer == 0:
        code = st[ST_B + frm]
        mark = st[ST_M + frm]
    else:
        code = st[ST_R + frm]
        mark = 0
    c = code >> 5
    pt = code & 31
    is_carrier = layer == 0 and (mark & CARRIER) != 0
    n = 0
    for k in range(T.leap_n[code, frm]):
        n = _consider(st, T, np.int64(frm), np.int64(c), np.int64(pt), np.int64(is_carrier), np.int64(T.leap_sq[code, frm, k]), mv, n)
    for k in range(T.ray_n[code, frm]):
        for i in range(T.ray_len[code, frm, k]):
            to = T.ray_sq[code, frm, k, i]
            n = _consider(st, T, np.int64(frm), np.int64(c), np.int64(pt), np.int64(is_carrier), np.int64(to), mv, n)
            if st[ST_B + to] != 0:
                break
    return n


@inline_kernel
def _plain_piece_moves(st, leap_n, leap_sq, ray_n, ray_len, ray_sq, promo, frm, captures_only, mv):
    """:func:`piece_moves` of the lower piece on ``frm`` of a plain position (no rider anywhere, no spear pawn of
    the mover), the same rows in the same order; ``captures_only``: only the moves onto an enemy piece. Inlined
    into :func:`_plain_turns`, and given the table arrays rather than ``T``: a kernel call per piece (and one per
    target inside ``piece_moves``) passes every array as a dozen scalars, and measured 3x the cost of the moves."""
    code = st[ST_B + frm]
    c = np.int64(code >> 5)
    pt = np.int64(code & 31)
    zone_from = in_zone(c, np.int64(frm))
    may_board = pt != K_ and (st[ST_M + frm] & CARRIER) == 0
    n_leap = leap_n[code, frm]
    n = 0
    for k in range(n_leap + ray_n[code, frm]):
        kr = k - n_leap
        i = 0
        while True:  # a leap: one target; a ray: its squares up to the first occupied one
            if kr < 0:
                to = np.int64(leap_sq[code, frm, k])
            elif i < ray_len[code, frm, kr]:
                to = np.int64(ray_sq[code, frm, kr, i])
            else:
                break
            i += 1
            tgt = st[ST_B + to]
            boarding = 0
            if tgt == 0:
                ok = not captures_only
            elif (tgt >> 5) == c:
                ok = not captures_only and may_board and (st[ST_M + to] & CARRIER) != 0
                boarding = 1
            else:
                ok = can_capture(pt, np.int64(tgt & 31), np.int64(st[ST_M + to]))
            if ok and n + 2 <= MV_CAP:
                mv[n, 0] = to
                mv[n, 1] = -1
                mv[n, 3] = boarding
                if promo[pt] != 0 and (zone_from or in_zone(c, to)):  # as _add_ends: the promotion first
                    mv[n, 2] = 1
                    n += 1
                    if not must_promote(pt, c, to):
                        mv[n, 0] = to
                        mv[n, 1] = -1
                        mv[n, 2] = 0
                        mv[n, 3] = boarding
                        n += 1
                else:
                    mv[n, 2] = 0
                    n += 1
            if kr < 0 or tgt != 0:
                break
    return n


@inner_kernel
def apply_move(st, h, T, frm, layer, end, via, promo, boarding):
    """Play one move on ``st`` (in place); returns the new key."""
    if layer == 0:
        code = st[ST_B + frm]
        mark = st[ST_M + frm]
        rider = st[ST_R + frm]
        rmark = st[ST_RM + frm]
        h = _put(st, h, T, np.int64(ST_B + frm), 0)
        h = _put(st, h, T, np.int64(ST_M + frm), 0)
        h = _put(st, h, T, np.int64(ST_R + frm), 0)
        h = _put(st, h, T, np.int64(ST_RM + frm), 0)
    else:
        code = st[ST_R + frm]
        mark = st[ST_RM + frm]
        rider = 0
        rmark = 0
        h = _put(st, h, T, np.int64(ST_R + frm), 0)
        h = _put(st, h, T, np.int64(ST_RM + frm), 0)
    c = code >> 5
    pt = code & 31
    newcode = (T.promo[pt] + 32 * c) if promo else code
    if via >= 0:
        h = _capture(st, h, T, np.int64(c), np.int64(via))
    if boarding:
        h = _put(st, h, T, np.int64(ST_R + end), np.int64(newcode))
        h = _put(st, h, T, np.int64(ST_RM + end), np.int64(mark & (TOKEN | INVINCIBLE)))
    else:
        if st[ST_B + end] != 0:
            h = _capture(st, h, T, np.int64(c), np.int64(end))
        h = _put(st, h, T, np.int64(ST_B + end), np.int64(newcode))
        h = _put(st, h, T, np.int64(ST_M + end), np.int64(mark))
        h = _put(st, h, T, np.int64(ST_R + end), np.int64(rider))
        h = _put(st, h, T, np.int64(ST_RM + end), np.int64(rmark))
        if pt == K_:
            st[ST_KSQ + c] = end
    return h


@inner_kernel
def _cip_targets(st, T, c, code, sq, tmp, base):
    """Enemy squares ``code`` on ``sq`` could capture in place (breath, sword), sorted, into tmp[base:]."""
    n = 0
    mpt = code & 31
    for k in range(T.leap_n[code, sq]):
        t = T.leap_sq[code, sq, k]
        n = _cip_add(st, np.int64(c), np.int64(mpt), np.int64(t), tmp, np.int64(base), n)
    for k in range(T.ray_n[code, sq]):
        for i in range(T.ray_len[code, sq, k]):
            t = T.ray_sq[code, sq, k, i]
            if st[ST_B + t] != 0:
                n = _cip_add(st, np.int64(c), np.int64(mpt), np.int64(t), tmp, np.int64(base), n)
                break
    # insertion sort
    for i in range(1, n):
        x = tmp[base + i]
        j = i - 1
        while j >= 0 and tmp[base + j] > x:
            tmp[base + j + 1] = tmp[base + j]
            j -= 1
        tmp[base + j + 1] = x
    return n


@inner_kernel
def _cip_add(st, c, mpt, t, tmp, base, n):
    tgt = st[ST_B + t]
    if tgt != 0 and (tgt >> 5) != c and can_capture(np.int64(mpt), np.int64(tgt & 31), np.int64(st[ST_M + t])):
        for i in range(n):
            if tmp[base + i] == t:
                return n
        tmp[base + n] = t
        n += 1
    return n


# ----------------------------------------------------------------- turn assembly
@inner_kernel
def _set_part(cur, k, kind, a, b, c, d):
    cur[0] = k + 1
    o = 1 + 5 * k
    cur[o] = kind
    cur[o + 1] = a
    cur[o + 2] = b
    cur[o + 3] = c
    cur[o + 4] = d


@inline_kernel
def _square_enemies(st, s, c):
    """Square ``s``'s part of :func:`enemy_pieces` for colour ``c``."""
    code = st[ST_B + s]
    if code == 0 or (code >> 5) == c:
        return 0
    return 1 + (1 if st[ST_R + s] != 0 else 0)


@kernel
def enemy_pieces(st, c):
    """Board pieces (riders included) not of colour ``c``: a turn of ``c`` took material when it lowers this."""
    k = 0
    for s in range(81):
        k += _square_enemies(st, s, c)
    return k


@inner_kernel
def _emit(w, h, T, G, c, spell, flag):
    """End of a candidate turn in position ``w`` (key ``h``): keep it if the mover's king is safe; merge outcomes.
    ``flag``: 1 = a pawn drop to test for uchifuzume (kept in ``oflag``), | SAFE = the caller knows the king is safe
    (see :func:`generate`), so the attack test is skipped; | NOPASS = a turn that may leave the position as it was
    (compared with ``G.wh[0]``, the root's key without its rights): then it is no turn."""
    h2 = h ^ T.Z[ST_STM, c] ^ T.Z[ST_STM, 1 - c]
    if G.info[I_PARTS] > 1 and not in_part(h2, G.info[I_PARTS], G.info[I_PART]):
        return
    if flag & NOPASS:
        hr = h
        for i in range(ST_RIGHTS, ST_RIGHTS + 6):
            hr ^= T.Z[i, w[i] & 127]
        if hr == G.wh[0]:
            return  # a pass disguised as a turn (rights aside, the position is the root's)
    if G.info[I_CAPTURES] != 0 and enemy_pieces(w, c) >= G.info[I_CAPTURES] - 1:
        return  # capture mode: this turn took nothing
    k = w[ST_KSQ + c]
    if not (flag & SAFE) and k >= 0 and attacked(w, T, np.int64(k), np.int64(1 - c)):
        return
    flag &= 1
    mask = HSET - 1
    slot = np.int64(h2 & np.uint64(mask))
    idx = -1
    while True:
        j = G.hset[slot]
        if j < 0:
            break
        if G.oh[j] == h2:
            idx = j
            break
        slot = (slot + 1) & mask
    if idx < 0:
        n = G.info[I_N]
        if n >= G.info[I_CAP] or n >= HSET // 2:
            G.info[I_OVERFLOW] = 1
            return
        if G.info[I_COUNT] == 0 or flag:
            o = G.out[n]
            for i in range(S):
                o[i] = w[i]
            o[ST_STM] = 1 - c
        G.oh[n] = h2
        G.oflag[n] = flag
        G.oslot[n] = slot
        G.hset[slot] = n
        nd = 1 + 5 * G.cur[0]
        for i in range(nd):
            G.odesc[n, i] = G.cur[i]
        G.info[I_N] = n + 1
        idx = n
    if spell:
        ns = G.info[I_NS]
        if ns >= G.info[I_SCAP]:
            G.info[I_OVERFLOW] = 1
            return
        nd = 1 + 5 * G.cur[0]
        for i in range(nd):
            G.sp_desc[ns, i] = G.cur[i]
        G.sp_out[ns] = idx
        G.info[I_NS] = ns + 1


@inner_kernel
def in_part(h, parts, part):
    """Whether an outcome key belongs to part ``part`` of ``parts`` (its high bits: the hash set uses the low ones)."""
    return np.int64((h >> np.uint64(40)) % np.uint64(parts)) == part


@inner_kernel
def _follow(T, G, c, spell, lvl, sq, layer, part_k):
    """Every follow-up move of the piece on (sq, layer) in wk[lvl]: emit each as the turn's part ``part_k``."""
    w = G.wk[lvl]
    mv = G.mv[lvl]
    nm = piece_moves(w, T, np.int64(sq), np.int64(layer), mv)
    w2 = G.wk[lvl + 1]
    for j in range(nm):
        _copy(w, w2)
        h2 = apply_move(w2, G.wh[lvl], T, np.int64(sq), np.int64(layer), np.int64(mv[j, 0]), np.int64(mv[j, 1]), np.int64(mv[j, 2]), np.int64(mv[j, 3]))
        _set_part(G.cur, np.int64(part_k), PART_MOVE, np.int64(sq), np.int64(mv[j, 0]), np.int64(mv[j, 1]), np.int64(mv[j, 2] | (layer << 1)))
        _emit(w2, h2, T, G, np.int64(c), spell, NOPASS)


@inner_kernel
def generate(st, h0, T, G, spell, uchi, stop):
    """Every legal turn of the side to move of ``st`` (key ``h0``) into ``G`` (see the module doc); returns the
    number of outcomes. ``stop``: return as soon as one legal turn is found. ``uchi``: set ``oflag`` on pawn drops
    that may be uchifuzume (checked by :func:`legal_turns_k`)."""
    G.info[I_N] = 0
    G.info[I_NS] = 0
    G.info[I_OVERFLOW] = 0
    c = st[ST_STM]
    hr = h0  # the root's key without its rights: a turn that comes back to it is no turn (NOPASS)
    for i in range(ST_RIGHTS, ST_RIGHTS + 6):
        hr ^= T.Z[i, st[i] & 127]
    G.wh[0] = hr
    cur = G.cur
    mv0 = G.mv[0]
    w1 = G.wk[1]
    awaken = st[ST_RIGHTS + 3 * c] > 0
    # Single-part turns that cannot expose the own king skip the test at the end: when not in check, every plain
    # drop and curtain (they only add own pieces), and, with no rider on the board (a rider could pin), a one-part
    # move of a piece other than the king that is not pinned and takes nothing off a square it does not land on.
    # A capture that empties the square (breath, sword capture, the spear pawn's first victim) can open an enemy
    # line to the own king: the enemy piece taken may have stood in it. Those are always tested.
    ksq = np.int64(st[ST_KSQ + c])
    checked = ksq >= 0 and attacked(st, T, ksq, np.int64(1 - c))
    no_riders = True
    for s in range(81):
        if st[ST_R + s] != 0:
            no_riders = False
            break
    pin_lo, pin_hi = _pinned_mask(st, T, np.int64(c), ksq)
    quiet_safe = SAFE if not checked else 0
    # Count mode: the single moves of pieces whose single moves can share an outcome with no other turn (not the
    # gale horse: its double move can end where a single one does; not the spear pawn, the king, a pinned piece or
    # a carrier stack) are only counted, into I_SINGLES; every other turn still goes through the hash set.
    G.info[I_SINGLES] = 0
    count_singles = G.info[I_COUNT] != 0 and spell == 0 and stop == 0 and quiet_safe != 0 and no_riders
    captures = G.info[I_CAPTURES] != 0
    for frm in range(81):
        pc = st[ST_B + frm]
        if pc == 0 or (pc >> 5) != c:
            continue
        nl = 2 if st[ST_R + frm] != 0 else 1
        for layer in range(nl):
            code = pc if layer == 0 else st[ST_R + frm]
            pt = code & 31
            cwr = layer == 0 and st[ST_R + frm] != 0
            n0 = 0
            move_safe = 0
            if quiet_safe and no_riders and frm != ksq:
                if frm < 64:
                    pinned = (pin_lo >> np.int64(frm)) & 1 != 0
                else:
                    pinned = (pin_hi >> np.int64(frm - 64)) & 1 != 0
                move_safe = 0 if pinned else SAFE
            counted = count_singles and move_safe != 0 and pt != H_ and pt != Y_
            if counted:
                G.info[I_SINGLES] += _count_moves(st, T.leap_n, T.leap_sq, T.ray_n, T.ray_len, T.ray_sq, T.promo,
                                                  np.int64(c), np.int64(code), np.int64(frm))
            if not counted or (pt == R_ and awaken):
                n0 = piece_moves(st, T, np.int64(frm), np.int64(layer), mv0)
            for i in range(0 if counted else n0):
                end = np.int64(mv0[i, 0])
                el = np.int64(mv0[i, 3])
                if captures and not cwr and pt != H_ and mv0[i, 1] < 0 and (el != 0 or st[ST_B + end] == 0):
                    continue  # capture mode: a one-part move that takes nothing (a boarding rider moves later)
                _copy(st, w1)
                h1 = apply_move(w1, h0, T, np.int64(frm), np.int64(layer), np.int64(end), np.int64(mv0[i, 1]), np.int64(mv0[i, 2]), np.int64(mv0[i, 3]))
                G.wh[1] = h1
                _set_part(cur, 0, PART_MOVE, np.int64(frm), np.int64(end), np.int64(mv0[i, 1]), np.int64(mv0[i, 2] | (layer << 1)))
                _emit(w1, h1, T, G, np.int64(c), spell, np.int64(move_safe if mv0[i, 1] < 0 else 0))
                if cwr:
                    _follow(T, G, np.int64(c), spell, 1, np.int64(end), 1, 1)
                elif pt == H_:
                    df = abs(frm // 9 - end // 9)
                    dr = abs(frm % 9 - end % 9)
                    if max(df, dr) >= 4:
                        _follow(T, G, np.int64(c), spell, 1, np.int64(end), np.int64(el), 1)
            if pt == R_ and awaken:
                for i in range(n0):
                    end = np.int64(mv0[i, 0])
                    el = np.int64(mv0[i, 3])
                    _copy(st, w1)
                    h1 = _put(w1, h0, T, np.int64(ST_RIGHTS + 3 * c), np.int64(w1[ST_RIGHTS + 3 * c] - 1))
                    h1 = apply_move(w1, h1, T, np.int64(frm), np.int64(layer), np.int64(end), np.int64(mv0[i, 1]), np.int64(mv0[i, 2]), np.int64(mv0[i, 3]))
                    G.wh[1] = h1
                    _set_part(cur, 0, PART_MOVE, np.int64(frm), np.int64(end), np.int64(mv0[i, 1]), np.int64(mv0[i, 2] | (layer << 1)))
                    _follow(T, G, np.int64(c), spell, 1, np.int64(end), np.int64(el), 1)
            if pt == W_ and layer == 0:
                nt = _cip_targets(st, T, np.int64(c), np.int64(code), np.int64(frm), G.tmp, 0)
                for i in range(nt):
                    t = G.tmp[i]
                    _copy(st, w1)
                    h1 = _capture(w1, h0, T, np.int64(c), np.int64(t))
                    _set_part(cur, 0, PART_CIP, np.int64(frm), np.int64(t), 0, 0)
                    _emit(w1, h1, T, G, np.int64(c), spell, 0)
        if stop and G.info[I_N] > 0:
            return G.info[I_N]
    _drops(st, h0, T, G, c, spell, uchi, np.int64(quiet_safe))
    if stop and G.info[I_N] > 0:
        return G.info[I_N]
    _rights(st, h0, T, G, c, spell, np.int64(quiet_safe), stop)
    return G.info[I_N]


@inner_kernel
def _pawn_files(st, c):
    """Bit f set when colour ``c`` has an unpromoted pawn on file f (on the board or riding a carrier): nifu."""
    pawn_files = 0
    pcode = P_ + 32 * c
    for s in range(81):
        if st[ST_B + s] == pcode or st[ST_R + s] == pcode:
            pawn_files |= 1 << (s // 9)
    return pawn_files


@inner_kernel
def _drops(st, h0, T, G, c, spell, uchi, safe):
    cur = G.cur
    w1 = G.wk[1]
    w2 = G.wk[2]
    pawn_files = _pawn_files(st, c)
    ek = st[ST_KSQ + 1 - c]
    emblem = st[ST_EMBLEM + c] != 0
    captures = G.info[I_CAPTURES] != 0
    for tok in range(2):
        hbase = (ST_TH if tok else ST_HAND) + 21 * c
        for pt in range(1, 21):
            if st[hbase + pt] == 0:
                continue
            if captures and pt != D_ and pt != W_:
                continue  # only a breath or a sword silver takes material on its drop
            for to in range(81):
                if st[ST_B + to] != 0:
                    continue
                if not must_promote(np.int64(pt), np.int64(c), np.int64(to)) and not (pt == P_ and (pawn_files >> (to // 9)) & 1):
                    _copy(st, w1)
                    h1 = _put(w1, h0, T, np.int64(hbase + pt), np.int64(w1[hbase + pt] - 1))
                    h1 = _put(w1, h1, T, np.int64(ST_B + to), np.int64(pt + 32 * c))
                    h1 = _put(w1, h1, T, np.int64(ST_M + to), np.int64(TOKEN if tok else 0))
                    _set_part(cur, 0, PART_DROP, np.int64(pt), np.int64(to), np.int64(tok), -1)
                    flag = 0
                    if pt == P_ and uchi and ek >= 0 and ek == to + (-1 if c == 0 else 1) and ek // 9 == to // 9:
                        flag = 1
                    _emit(w1, h1, T, G, np.int64(c), spell, np.int64(flag | safe))
                    if pt == D_ or pt == W_:
                        nt = _cip_targets(w1, T, np.int64(c), np.int64(pt + 32 * c), np.int64(to), G.tmp, 0)
                        for i in range(nt):
                            t = G.tmp[i]
                            _copy(w1, w2)
                            h2 = _capture(w2, h1, T, np.int64(c), np.int64(t))
                            _set_part(cur, 0, PART_DROP, np.int64(pt), np.int64(to), np.int64(tok), np.int64(t))
                            _emit(w2, h2, T, G, np.int64(c), spell, 0)
                if pt == P_ and emblem:
                    _copy(st, w1)
                    h1 = _put(w1, h0, T, np.int64(hbase + pt), np.int64(w1[hbase + pt] - 1))
                    h1 = _put(w1, h1, T, np.int64(ST_B + to), np.int64(PP_ + 32 * c))
                    h1 = _put(w1, h1, T, np.int64(ST_M + to), np.int64(TOKEN if tok else 0))
                    _set_part(cur, 0, PART_DROP, np.int64(pt), np.int64(to), np.int64(tok | 2), -1)
                    _emit(w1, h1, T, G, np.int64(c), spell, np.int64(safe))


@inner_kernel
def _rights(st, h0, T, G, c, spell, safe, stop):
    cur = G.cur
    w1 = G.wk[1]
    if st[ST_RIGHTS + 3 * c + 1] > 0 and st[ST_KSQ + c] >= 0:
        ksq = st[ST_KSQ + c]
        ne = 0
        for k in range(T.nbr_n[ksq]):
            s = T.nbr_sq[ksq, k]
            if st[ST_B + s] == 0:
                G.tmp[64 + ne] = s
                ne += 1
        kk = min(2, ne)
        ncomb = 1 if kk == 0 else (ne if kk == 1 else ne * (ne - 1) // 2)
        a = 0
        b = 1
        for ci in range(ncomb):
            s1 = -1
            s2 = -1
            if kk == 1:
                s1 = G.tmp[64 + ci]
            elif kk == 2:
                s1 = G.tmp[64 + a]
                s2 = G.tmp[64 + b]
                b += 1
                if b >= ne:
                    a += 1
                    b = a + 1
            _copy(st, w1)
            h1 = _put(w1, h0, T, np.int64(ST_RIGHTS + 3 * c + 1), np.int64(w1[ST_RIGHTS + 3 * c + 1] - 1))
            if s1 >= 0:
                h1 = _put(w1, h1, T, np.int64(ST_B + s1), np.int64(S_ + 32 * c))
                h1 = _put(w1, h1, T, np.int64(ST_M + s1), TOKEN)
            if s2 >= 0:
                h1 = _put(w1, h1, T, np.int64(ST_B + s2), np.int64(S_ + 32 * c))
                h1 = _put(w1, h1, T, np.int64(ST_M + s2), TOKEN)
            G.wh[1] = h1
            _set_part(cur, 0, PART_CURTAIN, np.int64(s1), np.int64(s2), 0, 0)
            _emit(w1, h1, T, G, np.int64(c), spell, np.int64(safe))
            if s1 >= 0:
                _follow(T, G, np.int64(c), spell, 1, np.int64(s1), 0, 1)
                _set_part(cur, 0, PART_CURTAIN, np.int64(s1), np.int64(s2), 0, 0)
            if s2 >= 0:
                _follow(T, G, np.int64(c), spell, 1, np.int64(s2), 0, 1)
    if st[ST_RIGHTS + 3 * c + 2] > 0 and not (stop and G.info[I_N] > 0):
        _wave(st, h0, T, G, c, spell, stop)


@inner_kernel
def _wave(st, h0, T, G, c, spell, stop):
    """Silver wave: each own unpromoted silver (riders after lower pieces) moves at most once, in any order; a
    (position, silvers done) pair is expanded once, in the Python generator's depth-first order. When the seen-set
    ``G.wkeys`` is full the generation stops with ``I_OVERFLOW`` = OVERFLOW_WAVE (the caller grows it): no wave is
    left out silently. ``stop``: return at the first legal turn."""
    scode = S_ + 32 * c
    ns = 0
    for s in range(81):
        if st[ST_B + s] == scode and ns < MAX_WAVE_SILVERS:
            G.tmp[ns] = s
            G.tmp[32 + ns] = 0
            ns += 1
    for s in range(81):
        if st[ST_R + s] == scode and ns < MAX_WAVE_SILVERS:
            G.tmp[ns] = s
            G.tmp[32 + ns] = 1
            ns += 1
    if ns == 0:
        return
    cur = G.cur
    w1 = G.wk[1]
    _copy(st, w1)
    G.wh[1] = _put(w1, h0, T, np.int64(ST_RIGHTS + 3 * c + 2), np.int64(w1[ST_RIGHTS + 3 * c + 2] - 1))
    _set_part(cur, 0, PART_WAVE, 0, 0, 0, 0)
    # per level: done mask, silver index, move index, move count (kept in tmp[96:])
    done = G.tmp[96:96 + MAX_LEVELS]
    nused = 0
    lvl = 1
    done[1] = 0
    entering = True
    mask = len(G.wkeys) - 1
    si = G.tmp[128:128 + MAX_LEVELS]
    mi = G.tmp[160:160 + MAX_LEVELS]
    mn = G.tmp[192:192 + MAX_LEVELS]
    while lvl >= 1:
        if entering:
            entering = False
            key = G.wh[lvl] ^ (np.uint64(done[lvl] + 1) * np.uint64(0x9E3779B97F4A7C15))
            if key == 0:
                key = np.uint64(1)
            slot = np.int64(key & np.uint64(mask))
            seen = False
            while G.wkeys[slot] != 0:
                if G.wkeys[slot] == key:
                    seen = True
                    break
                slot = (slot + 1) & mask
            if seen:
                lvl -= 1
                continue
            if nused >= len(G.wkeys) // 2 or G.info[I_OVERFLOW] != 0 or (stop and G.info[I_N] > 0):
                if nused >= len(G.wkeys) // 2:
                    G.info[I_OVERFLOW] = OVERFLOW_WAVE
                break
            G.wkeys[slot] = key
            G.wslots[nused] = slot
            nused += 1
            cur[0] = lvl
            _emit(G.wk[lvl], G.wh[lvl], T, G, np.int64(c), spell, NOPASS)
            si[lvl] = -1
            mi[lvl] = 0
            mn[lvl] = 0
        advanced = False
        while True:
            if mi[lvl] < mn[lvl] and lvl + 1 < MAX_LEVELS - 1:
                j = mi[lvl]
                mi[lvl] += 1
                k = si[lvl]
                s = G.tmp[k]
                layer = G.tmp[32 + k]
                mvl = G.mv[lvl]
                w = G.wk[lvl]
                w2 = G.wk[lvl + 1]
                _copy(w, w2)
                G.wh[lvl + 1] = apply_move(w2, G.wh[lvl], T, np.int64(s), np.int64(layer), np.int64(mvl[j, 0]), np.int64(mvl[j, 1]), np.int64(mvl[j, 2]), np.int64(mvl[j, 3]))
                done[lvl + 1] = done[lvl] | (1 << k)
                _set_part(cur, np.int64(lvl), PART_MOVE, np.int64(s), np.int64(mvl[j, 0]), np.int64(mvl[j, 1]), np.int64(mvl[j, 2] | (layer << 1)))
                lvl += 1
                entering = True
                advanced = True
                break
            si[lvl] += 1
            while si[lvl] < ns and (done[lvl] >> si[lvl]) & 1:
                si[lvl] += 1
            if si[lvl] >= ns:
                break
            k = si[lvl]
            mn[lvl] = piece_moves(G.wk[lvl], T, np.int64(G.tmp[k]), np.int64(G.tmp[32 + k]), G.mv[lvl])
            mi[lvl] = 0
        if not advanced:
            lvl -= 1
    for i in range(nused):
        G.wkeys[G.wslots[i]] = 0


@inner_kernel
def _clear(G):
    n = G.info[I_N]
    for i in range(n):
        G.hset[G.oslot[i]] = -1


# ----------------------------------------------------------------- plain positions (fast path)
@kernel
def is_plain(st, c):
    """Whether every turn of colour ``c`` is one ordinary shogi move (boarding an own empty carrier included) or
    drop, or one of the one-part specials the fast path :func:`_plain_turns` also lists: an emblem drop, a drop of
    a fire dragon or sword silver with its breath / capture in place, a sword silver's capture in place. So: no
    rights, no spear pawn or gale horse of ``c`` on the board, and no rider anywhere. Then the only turns that can
    share an outcome are two sword silvers' captures in place of one piece (merged there), and a one-part move
    other than a king move, a move of a pinned piece or a move out of check cannot expose the own king.

    Enemy specials and marks are allowed: they only change which captures are possible (``can_capture``) and how
    the enemy attacks (the tables)."""
    for i in range(3):
        if st[ST_RIGHTS + 3 * c + i] != 0:
            return False
    for s in range(81):
        if st[ST_R + s] != 0:
            return False
        pc = st[ST_B + s]
        if pc != 0 and (pc >> 5) == c:
            pt = pc & 31
            if pt == Y_ or pt == H_:
                return False
    return True


@inner_kernel
def _pinned_mask(st, T, c, ksq):
    """Bit masks (squares 0-63, 64-80) of colour ``c``'s pieces pinned to its king on ``ksq`` (no riders)."""
    lo = np.int64(0)
    hi = np.int64(0)
    if ksq < 0:
        return lo, hi
    for d in range(8):
        rd = (d + 4) & 7
        cand = -1
        for i in range(T.full_len[ksq, d]):
            s = T.full_sq[ksq, d, i]
            pc = st[ST_B + s]
            if pc == 0:
                continue
            if cand < 0:
                if (pc >> 5) != c:
                    break
                cand = s
            else:
                if (pc >> 5) != c and T.slide[pc, rd] >= i + 1:
                    if cand < 64:
                        lo |= np.int64(1) << np.int64(cand)
                    else:
                        hi |= np.int64(1) << np.int64(cand - 64)
                break
    return lo, hi


@inner_kernel
def _plain_move_safe(st, T, c, ksq, checked, frm, to, pinned):
    """Whether moving the (non-king, riderless) piece on ``frm`` to ``to`` leaves colour ``c``'s king safe."""
    if ksq < 0 or not (checked or pinned):
        return True
    code = st[ST_B + frm]
    tgt = st[ST_B + to]
    st[ST_B + frm] = 0
    st[ST_B + to] = code
    ok = not attacked(st, T, np.int64(ksq), np.int64(1 - c))
    st[ST_B + to] = tgt
    st[ST_B + frm] = code
    return ok


@inner_kernel
def _plain_king_safe(st, T, c, ksq, to):
    """Whether colour ``c``'s king on ``ksq`` may go to ``to`` (tested with the king lifted off the board)."""
    code = st[ST_B + ksq]
    st[ST_B + ksq] = 0
    ok = not attacked(st, T, np.int64(to), np.int64(1 - c))
    st[ST_B + ksq] = code
    return ok


@inner_kernel
def _plain_drop_mates(st, T, G2, c, tok, to):
    """Uchifuzume test of a pawn drop on ``to`` (right in front of the enemy king): the defender has no legal turn
    (magic included), found with a stop-at-first generator run in ``G2`` on a copy in ``G2.wk[0]``."""
    w = G2.wk[0]
    _copy(st, w)
    hb = (ST_TH if tok else ST_HAND) + 21 * c
    w[hb + P_] -= 1
    w[ST_B + to] = P_ + 32 * c
    w[ST_M + to] = TOKEN if tok else 0
    w[ST_STM] = 1 - c
    k = generate(w, zhash(w, T), T, G2, NO_SPELL, np.int64(0), np.int64(1))
    _clear(G2)
    return k == 0


@inner_kernel
def _count_target(st, c, pt, promotes, zone_from, may_board, to):
    """Moves of a piece of type ``pt`` to ``to`` (0 if blocked or uncapturable, else 1 or 2 promotion choices);
    ``may_board``: the piece may board an own empty carrier (it is neither the king nor a carrier)."""
    tgt = st[ST_B + to]
    if tgt != 0:
        if (tgt >> 5) == c:
            if not (may_board and (st[ST_M + to] & CARRIER) != 0 and st[ST_R + to] == 0):
                return 0
        elif not can_capture(pt, np.int64(tgt & 31), np.int64(st[ST_M + to])):
            return 0
    if promotes and (zone_from or in_zone(c, to)):
        return 1 if must_promote(pt, c, to) else 2
    return 1


@inline_kernel
def _count_moves(st, leap_n, leap_sq, ray_n, ray_len, ray_sq, promo, c, code, frm):
    """The number of :func:`piece_moves` of ``code`` on ``frm`` in a plain position, without writing them. (Takes
    the table arrays it reads rather than ``T``: passing the whole namedtuple to a hot callee measured ~15% slower.)"""
    pt = np.int64(code & 31)
    promotes = promo[pt] != 0
    zone_from = in_zone(c, frm)
    may_board = pt != K_ and (st[ST_M + frm] & CARRIER) == 0
    n = 0
    for k in range(leap_n[code, frm]):
        n += _count_target(st, c, pt, promotes, zone_from, may_board, np.int64(leap_sq[code, frm, k]))
    for k in range(ray_n[code, frm]):
        for i in range(ray_len[code, frm, k]):
            to = np.int64(ray_sq[code, frm, k, i])
            n += _count_target(st, c, pt, promotes, zone_from, may_board, to)
            if st[ST_B + to] != 0:
                break
    return n


@inner_kernel
def _close_plain_row(T, G, n, h, c):
    """Finish outcome row ``n`` of a plain turn made on it with key ``h``: opponent to move, key, no flag."""
    G.out[n, ST_STM] = 1 - c
    G.oh[n] = h ^ T.Z[ST_STM, c] ^ T.Z[ST_STM, 1 - c]
    G.oflag[n] = 0


@inner_kernel
def _plain_drop(st, h0, T, G, G2, c, ksq, checked, tok, pt, placed, to, count_only, n):
    """A drop of ``pt`` from hand ``tok`` (1 = tokens) on the empty ``to`` as ``placed`` (a tokin for an emblem
    drop) in a plain position: blocked check and uchifuzume (an ordinary pawn only) tested; written as outcome row
    ``n`` unless ``count_only``. Returns the new count (``n`` if illegal), -1 when ``G.out`` is full."""
    e = 1 - c
    if checked:
        st[ST_B + to] = placed + 32 * c
        safe = not attacked(st, T, ksq, np.int64(e))
        st[ST_B + to] = 0
        if not safe:
            return n
    ek = st[ST_KSQ + e]
    if placed == P_ and ek >= 0 and ek == to + (-1 if c == 0 else 1) and ek // 9 == to // 9:
        if _plain_drop_mates(st, T, G2, np.int64(c), np.int64(tok), np.int64(to)):
            return n
    if count_only:
        return n + 1
    if n >= G.info[I_CAP]:
        return -1
    # the key from the parent's (the row is not needed for it): one fewer in hand, the piece and its mark placed
    hb = (ST_TH if tok else ST_HAND) + 21 * c
    h = h0 ^ T.Z[hb + pt, st[hb + pt] & 127] ^ T.Z[hb + pt, (st[hb + pt] - 1) & 127]
    h ^= T.Z[ST_B + to, (placed + 32 * c) & 127]  # (the square was empty: its old key is 0)
    h ^= T.Z[ST_M + to, st[ST_M + to] & 127] ^ T.Z[ST_M + to, (TOKEN if tok else 0) & 127]
    _close_plain_row(T, G, n, h, np.int64(c))
    if G.info[I_LAZY] != 0:  # the key and the turn only: make_lazy_row makes the row if the search reaches it
        G.oflag[n] = OFLAG_LAZY
    else:
        _drop_row(st, G.out[n], c, tok, pt, placed, to)
    _set_part(G.odesc[n], 0, PART_DROP, np.int64(pt), np.int64(to), np.int64(tok | (0 if placed == pt else 2)), -1)
    return n + 1


@kernel
def make_lazy_row(st, G, i):
    """Make outcome ``i``'s row if the generator left it unmade (``oflag`` OFLAG_LAZY, an ordinary drop from
    ``st``): exactly the row :func:`_plain_drop` would have written."""
    if G.oflag[i] != OFLAG_LAZY:
        return
    d = G.odesc[i]
    _drop_row(st, G.out[i], np.int64(st[ST_STM]), np.int64(d[4] & 1), np.int64(d[2]),
              np.int64(PP_ if d[4] & 2 else d[2]), np.int64(d[3]))
    G.oflag[i] = 0


@inner_kernel
def _drop_row(st, o, c, tok, pt, placed, to):
    """``o`` = ``st`` after colour ``c`` drops ``pt`` from hand ``tok`` (1 = tokens) on the empty ``to`` as
    ``placed`` (a tokin for an emblem drop), the opponent to move."""
    _copy(st, o)
    o[(ST_TH if tok else ST_HAND) + 21 * c + pt] -= 1
    o[ST_B + to] = placed + 32 * c
    o[ST_M + to] = TOKEN if tok else 0
    o[ST_STM] = 1 - c


@inner_kernel
def _plain_capture_in_place(st, h0, T, G, c, ksq, drop_pt, sq, t, count_only, n):
    """A capture in place of the enemy piece on ``t`` in a plain position: by the sword silver on ``sq`` when
    ``drop_pt`` is 0, else by a ``drop_pt`` token (fire dragon, sword silver) dropped on ``sq`` first. The own king
    is always tested: the emptied square may have shielded it. Written as outcome row ``n`` unless ``count_only``;
    returns the new count (``n`` if illegal), -1 when ``G.out`` is full."""
    victim = st[ST_B + t]
    if drop_pt > 0:
        st[ST_B + sq] = drop_pt + 32 * c
    st[ST_B + t] = 0
    safe = ksq < 0 or not attacked(st, T, np.int64(ksq), np.int64(1 - c))
    st[ST_B + t] = victim
    if drop_pt > 0:
        st[ST_B + sq] = 0
    if not safe:
        return n
    if count_only:
        return n + 1
    if n >= G.info[I_CAP]:
        return -1
    o = G.out[n]
    _copy(st, o)
    h = h0
    if drop_pt > 0:
        hb = ST_TH + 21 * c
        h = _put(o, h, T, np.int64(hb + drop_pt), np.int64(o[hb + drop_pt] - 1))
        h = _put(o, h, T, np.int64(ST_B + sq), np.int64(drop_pt + 32 * c))
        h = _put(o, h, T, np.int64(ST_M + sq), np.int64(TOKEN))
        _set_part(G.odesc[n], 0, PART_DROP, np.int64(drop_pt), np.int64(sq), 1, np.int64(t))
    else:
        _set_part(G.odesc[n], 0, PART_CIP, np.int64(sq), np.int64(t), 0, 0)
    h = _capture(o, h, T, np.int64(c), np.int64(t))
    _close_plain_row(T, G, n, h, np.int64(c))
    return n + 1


@inner_kernel
def _count_plain_drops(st, h0, T, G, G2, c, ksq, pawn_files, emblem):
    """The number of drops of a plain position not in check, counted per rank instead of tried per square (perft
    leaves): every empty square where the piece may stand (pawns off the nifu files), less an uchifuzume square;
    emblem drops on every empty square; fire dragon and sword silver drops with their captures in place one by
    one. Equal to what :func:`_plain_turns` counts square by square."""
    held = 0
    for i in range(21):
        held += st[ST_HAND + 21 * c + i] + st[ST_TH + 21 * c + i]
    if held == 0:
        return 0  # no board scan for an empty hand (the start and most opening leaves)
    empty = 0  # empty squares; on the mover's last rank / last but one; on nifu files (all, last rank)
    last = 0
    last2 = 0
    nifu = 0
    nifu_last = 0
    for s in range(81):
        if st[ST_B + s] != 0:
            continue
        r = s % 9
        rel = r if c == 0 else 8 - r
        f_nifu = (pawn_files >> (s // 9)) & 1
        empty += 1
        nifu += f_nifu
        if rel == 0:
            last += 1
            nifu_last += f_nifu
        elif rel == 1:
            last2 += 1
    ek = st[ST_KSQ + 1 - c]
    u = -1  # the square in front of the enemy king, where a pawn drop may be uchifuzume
    if ek >= 0:
        u = ek + (1 if c == 0 else -1)
        if u < 0 or u > 80 or u // 9 != ek // 9 or st[ST_B + u] != 0 or (pawn_files >> (u // 9)) & 1:
            u = -1
        elif (u % 9 if c == 0 else 8 - u % 9) == 0:
            u = -1
    n = 0
    for tok in range(2):
        hb = (ST_TH if tok else ST_HAND) + 21 * c
        for pt in range(1, 21):
            if st[hb + pt] == 0:
                continue
            if pt == D_ or pt == W_:
                for to in range(81):
                    if st[ST_B + to] != 0:
                        continue
                    n += 1
                    nt = _cip_targets(st, T, np.int64(c), np.int64(pt + 32 * c), np.int64(to), G.tmp, 0)
                    for k in range(nt):
                        n = _plain_capture_in_place(st, h0, T, G, np.int64(c), ksq, np.int64(pt), np.int64(to),
                                                    np.int64(G.tmp[k]), 1, n)
            elif pt == P_:
                n += empty - last - (nifu - nifu_last)
                if u >= 0 and _plain_drop_mates(st, T, G2, np.int64(c), np.int64(tok), np.int64(u)):
                    n -= 1
                if emblem:
                    n += empty
            elif pt == L_ or pt == Y_:
                n += empty - last
            elif pt == N_:
                n += empty - last - last2
            else:
                n += empty
    return n


@inner_kernel
def _plain_turns(st, h0, T, G, G2, c, count_only, captures_only):
    """Legal turns of a plain position (:func:`is_plain`). ``count_only``: return their number and write nothing;
    otherwise fill ``G.out``/``G.oh``/``G.odesc`` in :func:`generate`'s order (no hash set: the one possible merge,
    two sword silvers taking the same piece in place, is kept at the first) and return the number, or -1 when
    ``G.out`` is too small. ``captures_only``: only the turns that take material (moves onto an enemy piece,
    captures in place, breath), in the same order."""
    ksq = np.int64(st[ST_KSQ + c])
    e = 1 - c
    checked = ksq >= 0 and attacked(st, T, ksq, np.int64(e))
    pin_lo, pin_hi = _pinned_mask(st, T, np.int64(c), ksq)
    cap = G.info[I_CAP]
    mv = G.mv[0]
    n = 0
    taken_lo = np.int64(0)  # squares already taken in place by a sword silver (bit s: square s, 64-80 in taken_hi)
    taken_hi = np.int64(0)
    for frm in range(81):
        pc = st[ST_B + frm]
        if pc == 0 or (pc >> 5) != c:
            continue
        is_king = frm == ksq
        if frm < 64:
            pinned = (pin_lo >> np.int64(frm)) & 1 != 0
        else:
            pinned = (pin_hi >> np.int64(frm - 64)) & 1 != 0
        if count_only and not (is_king or pinned or checked):
            n += _count_moves(st, T.leap_n, T.leap_sq, T.ray_n, T.ray_len, T.ray_sq, T.promo, np.int64(c), np.int64(pc),
                              np.int64(frm))
        else:
            nm = _plain_piece_moves(st, T.leap_n, T.leap_sq, T.ray_n, T.ray_len, T.ray_sq, T.promo, np.int64(frm),
                                    captures_only, mv)
            for i in range(nm):
                to = np.int64(mv[i, 0])
                if is_king:
                    if not _plain_king_safe(st, T, np.int64(c), ksq, to):
                        continue
                elif not _plain_move_safe(st, T, np.int64(c), ksq, checked, np.int64(frm), to, pinned):
                    continue
                if not count_only:
                    if n >= cap:
                        return -1
                    o = G.out[n]
                    _copy(st, o)
                    h = apply_move(o, h0, T, np.int64(frm), 0, to, -1, np.int64(mv[i, 2]), np.int64(mv[i, 3]))
                    _close_plain_row(T, G, n, h, np.int64(c))
                    _set_part(G.odesc[n], 0, PART_MOVE, np.int64(frm), to, -1, np.int64(mv[i, 2]))
                n += 1
        if (pc & 31) == W_:  # the sword silver's captures in place, after its moves (generate's order)
            nt = _cip_targets(st, T, np.int64(c), np.int64(pc), np.int64(frm), G.tmp, 0)
            for k in range(nt):
                t = np.int64(G.tmp[k])
                if t < 64:
                    bit = np.int64(1) << t
                    if taken_lo & bit:
                        continue
                    taken_lo |= bit
                else:
                    bit = np.int64(1) << (t - 64)
                    if taken_hi & bit:
                        continue
                    taken_hi |= bit
                n = _plain_capture_in_place(st, h0, T, G, np.int64(c), ksq, 0, np.int64(frm), t, count_only, n)
                if n < 0:
                    return -1
    # Drops (the order of _drops: ordinary hand, then tokens; piece type; square; per square the drop, its
    # breath / capture in place, the emblem drop).
    pawn_files = 0  # nifu files, found only when a pawn is in hand (no 81-square scan at most perft leaves)
    if not captures_only and st[ST_HAND + 21 * c + P_] + st[ST_TH + 21 * c + P_] > 0:
        pawn_files = _pawn_files(st, np.int64(c))
    emblem = st[ST_EMBLEM + c] != 0
    if count_only and not checked:
        return n + _count_plain_drops(st, h0, T, G, G2, np.int64(c), ksq, pawn_files, emblem)
    for tok in range(2):
        hb = (ST_TH if tok else ST_HAND) + 21 * c
        for pt in range(1, 21):
            if st[hb + pt] == 0:
                continue
            in_place = pt == D_ or pt == W_
            if captures_only and not in_place:
                continue
            for to in range(81):
                if st[ST_B + to] != 0:
                    continue
                if not must_promote(np.int64(pt), np.int64(c), np.int64(to)) and not (
                        pt == P_ and (pawn_files >> (to // 9)) & 1):
                    if not captures_only:
                        n = _plain_drop(st, h0, T, G, G2, np.int64(c), ksq, checked, np.int64(tok), np.int64(pt),
                                        np.int64(pt), np.int64(to), count_only, n)
                        if n < 0:
                            return -1
                    if in_place:
                        nt = _cip_targets(st, T, np.int64(c), np.int64(pt + 32 * c), np.int64(to), G.tmp, 0)
                        for k in range(nt):
                            n = _plain_capture_in_place(st, h0, T, G, np.int64(c), ksq, np.int64(pt), np.int64(to),
                                                        np.int64(G.tmp[k]), count_only, n)
                            if n < 0:
                                return -1
                if pt == P_ and emblem:  # (never in captures_only: pawns were skipped above)
                    n = _plain_drop(st, h0, T, G, G2, np.int64(c), ksq, checked, np.int64(tok), np.int64(pt),
                                    np.int64(PP_), np.int64(to), count_only, n)
                    if n < 0:
                        return -1
    return n


@kernel
def legal_turns_k(st, h0, T, G, G2, spell):
    """All legal turns of ``st`` into ``G`` (outcomes compacted, uchifuzume settled with ``G2``); returns their
    number, or -1 if a buffer overflowed (the caller retries with larger ones). A plain position (:func:`is_plain`)
    outside spell mode takes the fast path :func:`_plain_turns`."""
    if not spell and is_plain(st, np.int64(st[ST_STM])):
        G.info[I_NS] = 0
        n = _plain_turns(st, h0, T, G, G2, np.int64(st[ST_STM]), 0, 0)
        G.info[I_N] = max(n, 0)
        G.info[I_OVERFLOW] = 1 if n < 0 else 0
        return n
    n = generate(st, h0, T, G, spell, np.int64(1), np.int64(0))
    _clear(G)
    if G.info[I_OVERFLOW]:
        return -1
    removed = 0
    for i in range(n):
        if G.oflag[i] == 1:
            k = generate(G.out[i], G.oh[i], T, G2, NO_SPELL, np.int64(0), np.int64(1))
            _clear(G2)
            if k == 0 and G2.info[I_OVERFLOW] == OVERFLOW_WAVE:
                G.info[I_OVERFLOW] = OVERFLOW_WAVE  # the defender's waves did not fit: grow G2's seen-set too
                return -1
            if k == 0:
                G.oflag[i] = 2
                removed += 1
    if removed == 0:
        return n
    # compact outcomes; remap spellings (tmp is free again here: use sp_out in place)
    j = 0
    for i in range(n):
        if G.oflag[i] == 2:
            G.oslot[i] = -1
            continue
        G.oslot[i] = j
        if j != i:
            for x in range(S):
                G.out[j, x] = G.out[i, x]
            G.oh[j] = G.oh[i]
            G.oflag[j] = G.oflag[i]
            for x in range(DESC_W):
                G.odesc[j, x] = G.odesc[i, x]
        j += 1
    if spell:
        ns = G.info[I_NS]
        for i in range(ns):
            G.sp_out[i] = G.oslot[G.sp_out[i]]
    G.info[I_N] = j
    return j


@kernel
def capture_turns_k(st, h0, T, G, G2):
    """The legal turns of ``st`` that take material (fewer :func:`enemy_pieces` after them), for the quiescence:
    exactly those of :func:`legal_turns_k`, in the same order among themselves. A plain position
    (:func:`is_plain`) generates only those (moves onto an enemy piece, captures in place, breath); any other runs
    the full generator in capture mode (``I_CAPTURES``: no ordinary drop tried, every turn that took nothing
    dropped at :func:`_emit`; a special piece or a right can take material without moving onto it). No drops and
    no quiet moves is most of the saving in a mid-game node with pieces in hand. Returns their number, -1 on overflow; zero turns here does not mean
    that the side has no legal turn."""
    c = np.int64(st[ST_STM])
    if not is_plain(st, c):
        G.info[I_CAPTURES] = enemy_pieces(st, c) + 1
        n = legal_turns_k(st, h0, T, G, G2, NO_SPELL)
        G.info[I_CAPTURES] = 0
        return n
    G.info[I_NS] = 0
    n = _plain_turns(st, h0, T, G, G2, c, 0, 1)
    G.info[I_N] = max(n, 0)
    G.info[I_OVERFLOW] = 1 if n < 0 else 0
    return n


@kernel
def has_legal_turn(st, h0, T, G, G2):
    """1 when the side to move has a legal turn, 0 when not, -1 when a wave seen-set overflowed (grow it)."""
    n = generate(st, h0, T, G, NO_SPELL, np.int64(1), np.int64(1))
    _clear(G)
    if n == 0 and G.info[I_OVERFLOW] == OVERFLOW_WAVE:
        return -1
    if n == 0:
        return 0
    if G.oflag[0] != 1:
        return 1
    k = legal_turns_k(st, h0, T, G, G2, NO_SPELL)
    return -1 if k < 0 else (1 if k != 0 else 0)


@kernel
def perft2_k(st, h0, T, G, Gc, G2):
    """perft(2) from ``st``: the legal turns and, for each, the number of legal replies (leaves counted)."""
    n = legal_turns_k(st, h0, T, G, G2, NO_SPELL)
    if n < 0:
        return n
    total = 0
    for i in range(n):
        k = count_turns_k(G.out[i], G.oh[i], T, Gc, G2)
        if k < 0:
            return k
        total += k
    return total


@kernel
def perft3_k(st, h0, T, G, Gb, Gc, G2):
    """perft(3) from ``st`` in one kernel call (:func:`perft2_k` under each legal turn)."""
    n = legal_turns_k(st, h0, T, G, G2, NO_SPELL)
    if n < 0:
        return n
    total = 0
    for i in range(n):
        k = perft2_k(G.out[i], G.oh[i], T, Gb, Gc, G2)
        if k < 0:
            return k
        total += k
    return total


@kernel
def count_turns_k(st, h0, T, G, G2):
    """The number of legal turns of ``st`` (what :func:`legal_turns_k` returns) without writing the outcome rows
    (``G`` keeps keys only); -1 on overflow."""
    c = np.int64(st[ST_STM])
    if is_plain(st, c):
        return _plain_turns(st, h0, T, G, G2, c, 1, 0)
    G.info[I_COUNT] = 1
    n = legal_turns_k(st, h0, T, G, G2, NO_SPELL)
    G.info[I_COUNT] = 0
    return n if n < 0 else n + G.info[I_SINGLES]
