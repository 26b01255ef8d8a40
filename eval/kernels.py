"""The evaluation kernel: a sum of table lookups over the board and the hands (side-to-move point of view)."""
from __future__ import annotations

from collections import namedtuple

from numba.extending import overload

from engine.kernels import hash_slot, inline_kernel, inner_kernel, kernel
from engine.kernels.hooks import plain_tables
from engine.kernels.movegen import (DROP, HAS_MID, ST_KSQ, ST_PLY, ST_ROYALS, ST_STM, attacked_on_board,
                                    royal_square)
from engine.variant import P_LAST_ROYAL, P_N_RANKS, P_PAWN, P_TRY

EvalTables = namedtuple("EvalTables", [
    "pst",        # int32[64, n_sq]: material + piece-square of a piece code on a square, sente POV (gote negative)
    "hand_val",   # int32[2, 32]: value of one piece type in hand, sente POV (gote row negative)
    "king_rel",   # int16[n_sq, n_sq]: index of square b relative to a king on square a, into the tables below
    "near_own",   # int32[64, R]: king-safety term of a piece code near its own king, sente POV
    "near_enemy",  # int32[64, R]: term of a piece code near the enemy king, sente POV
    "value",      # int32[64]: plain material value of a piece code (unsigned), for move ordering and pruning
    "consts",     # int64[4]: [tempo, ...]
    "try_bonus",  # int32[n_ranks]: a royal's bonus by its distance from the far rank (zeros without a try rule)
    "mobility",   # int32[64]: centipawns per destination of a piece code, sente POV (all zero: no mobility term)
    "kp",         # int32[n_sq, 2 n_pt, n_sq]: KP table of eval.kp (shape (1, 1, 1) when consts[C_KP] == 0)
    "kp_hand",    # int32[n_sq, 2 n_pt, max hand + 1]: KP hand table of eval.kp (shape (1, 1, 1) likewise)
    "mirror",     # int32[n_sq]: the square seen from the other side (180-degree rotation)
    "ks",         # int32[KS_SIZE]: king-zone danger table, the attacker's view (shape (1,) when consts[C_KS] == 0)
    "zone_index",  # int8[n_sq, n_sq]: index (0..KS_ZONE-1) of square b in the zone of a king on a; -1: not next to it
    "zone_square",  # int16[n_sq, KS_ZONE]: the zone squares of a king on a, by index (-1 past the board's edge)
    "zone_leaper",  # bool[n_sq, n_sq]: a piece on b may leap into the zone of a king on a (within the longest leap)
    "zone_rays",  # uint8[n_sq, n_sq]: bit d: the ray from b in direction d crosses the zone of a king on a
    "threats",    # int32[threat_size(n_pt)]: threat table, side to move's view (shape (1,) when consts[C_THREATS] == 0)
    "smob",       # int32[(n_pt + 1) SM_BUCKETS]: safe-mobility table, sente POV (shape (1,) when consts[C_SMOB] == 0)
])
C_TEMPO = 0
C_MOBILITY = 1  # consts[C_MOBILITY] != 0: some piece code has a mobility weight
C_KP = 2        # consts[C_KP] != 0: the KP tables replace material, piece-square, near-king and hand terms
C_KS = 3        # consts[C_KS] != 0: the king-zone table E.ks is added on the KP path
C_THREATS = 4   # consts[C_THREATS] != 0: the threat table E.threats is added on the KP path
C_SMOB = 5      # consts[C_SMOB] != 0: the safe-mobility table E.smob is added on the KP path
N_CONSTS = 6

# King-zone danger (learned with the KP tables, `train fit --king-safety`): what a sum of piece-king pairs cannot
# see is how attacks around a king combine with what the attacker holds in hand. For each king, over its zone (the
# up to 8 squares next to it): `attacked`, the zone squares the enemy attacks; `weak`, those of them that no piece of
# the defender but the king guards; `weak_empty`, the weak ones that are empty (where a drop lands next to the king
# and holds); `hand`, the attacker's pieces in hand other than pawns, capped. Each king reads one entry of each of
# three one-hot tables, so the term is a learned function of the counts, not a linear one. A table entry is from
# the attacker's view: the value adds entries for the gote king and subtracts those for the sente king.
KS_ZONE = 8                  # squares next to a king (Chebyshev distance 1), at most
KS_HAND = 4                  # hand buckets: 0, 1, 2, 3 or more pieces other than pawns
KS_WEAK = 0                  # [weak][hand]
KS_WEAK_EMPTY = KS_WEAK + (KS_ZONE + 1) * KS_HAND  # [weak_empty][hand]
KS_ATTACKED = KS_WEAK_EMPTY + (KS_ZONE + 1) * KS_HAND  # [attacked]
KS_SIZE = KS_ATTACKED + KS_ZONE + 1


def variant_terms(P, T, E):
    """A variant's evaluation terms beyond the board and hands, sente's view (a rule hook like those of
    :mod:`engine.kernels.hooks`: its plain overload below is 0; fantasista's is in :mod:`eval.fantasista`)."""
    return 0


@overload(variant_terms, inline="always")
def _variant_terms_plain(P, T, E):
    if plain_tables(T):
        return lambda P, T, E: 0


def kp_follows_moves(T):
    """Whether :func:`kp_delta` may follow the last move of a position with tables ``T`` (a rule hook like
    :func:`variant_terms`): the shared move encoding, yes; fantasista's turns and magic, no (:mod:`eval.fantasista`:
    its KP sums are summed afresh)."""
    return True


@overload(kp_follows_moves, inline="always")
def _kp_follows_moves_plain(T):
    if plain_tables(T):
        return lambda T: True


@kernel
def piece_mobility(board, T, code, sq):
    """Destinations of the piece ``code`` standing on ``sq``: its leaps and slide squares that do not hold an own
    piece (captures count, checks and pins are ignored; a special mover's two-step moves add nothing, their
    destinations are already leaps)."""
    c = code >> 5
    n = 0
    for j in range(T.leap_list.shape[1]):
        k = T.leap_list[code, j]
        if k < 0:
            break
        to = T.leap_dest[sq, k]
        if to >= 0:
            t = board[to]
            if t == 0 or (t >> 5) != c:
                n += 1
    for j in range(T.slide_list.shape[1]):
        d = T.slide_list[code, j]
        if d < 0:
            break
        passed, stop = slide_stop(board, T, code, sq, d)
        n += passed
        if stop >= 0 and (board[stop] >> 5) != c:
            n += 1
    return n


@inner_kernel
def slide_stop(board, T, code, sq, d):
    """The slide of the piece ``code`` on ``sq`` in direction ``d``: ``(empty squares passed, the square of the first
    piece met within its reach, or -1)``."""
    reach = T.slide_range[code, d]
    for i in range(T.rays.shape[2]):
        if i >= reach:
            return i, -1
        to = T.rays[sq, d, i]
        if to < 0:
            return i, -1
        if board[to] != 0:
            return i, to
    return T.rays.shape[2], -1


@inner_kernel
def _kp_piece(E, k0, kb, code, sq):
    """One piece's KP entries, sente's view: its pair with the sente king on ``k0`` minus its pair with the gote king
    (``kb``: the gote king's square on the rotated board)."""
    npt = E.kp.shape[1] // 2
    pt = (code & 31) - 1
    if (code >> 5) == 0:
        return E.kp[k0, pt, sq] - E.kp[kb, npt + pt, E.mirror[sq]]
    return E.kp[k0, npt + pt, sq] - E.kp[kb, pt, E.mirror[sq]]


@inner_kernel
def _kp_in_hand(E, k0, kb, c, pt, n):
    """The KP entries of colour ``c`` holding ``n`` pieces of type ``pt`` (1-based), sente's view."""
    kh = E.kp_hand
    npt = kh.shape[1] // 2
    n = min(n, kh.shape[2] - 1)
    if c == 0:
        return kh[k0, pt - 1, n] - kh[kb, npt + pt - 1, n]
    return kh[k0, npt + pt - 1, n] - kh[kb, pt - 1, n]


@inner_kernel
def kp_sum(P, T, E, k0, k1):
    """The KP tables summed over the board and both hands, sente's view, kings on ``k0`` and ``k1`` (both >= 0):
    ``f(sente) - f(gote)``, gote reading the tables on the rotated board (see :mod:`eval.kp`)."""
    board = P.board
    kb = E.mirror[k1]
    s = 0
    for sq in range(board.shape[0]):
        code = board[sq]
        if code != 0:
            s += _kp_piece(E, k0, kb, code, sq)
    for h in range(T.hand_types.shape[0]):
        pt = T.hand_types[h]
        s += _kp_in_hand(E, k0, kb, 0, pt, int(P.hands[0, pt])) + _kp_in_hand(E, k0, kb, 1, pt, int(P.hands[1, pt]))
    return s


@inner_kernel
def kp_delta(P, T, E, k0, k1):
    """``(True, d)``: the KP sum of this position is that of the position before the last move plus ``d`` (kings on
    ``k0`` and ``k1`` in both); ``(False, 0)`` when the last move changed what a difference can follow cheaply: a
    royal moved, was captured or was made (both tables' king index changes), or a piece was captured or converted on a
    middle square or by exchange (dai shogi). A null move (``P.moves`` 0) changes nothing."""
    aply = P.st[ST_PLY]
    if aply == 0:
        return False, 0
    mv = P.moves[aply - 1]
    if mv == 0:
        return True, 0
    rec = P.undo[aply - 1]
    cap = rec & 0xFF
    mover = (rec >> 24) & 0x7F
    if ((rec >> 8) & 0xFFFF) != 0 or (mv & HAS_MID) != 0:  # a middle-square capture or an exchange conversion
        return False, 0
    to = mv & 0xFF
    placed = P.board[to]
    if T.royal[mover] or T.royal[placed] or (cap != 0 and T.royal[cap]):
        return False, 0
    c = placed >> 5  # the mover's colour
    kb = E.mirror[k1]
    d = _kp_piece(E, k0, kb, placed, to)
    if mv & DROP:
        pt = (mv >> 8) & 0xFF
        n = int(P.hands[c, pt])
        return True, d + _kp_in_hand(E, k0, kb, c, pt, n) - _kp_in_hand(E, k0, kb, c, pt, n + 1)
    d -= _kp_piece(E, k0, kb, mover, (mv >> 8) & 0xFF)
    if cap != 0:
        d -= _kp_piece(E, k0, kb, cap, to)
        hp = T.hand_type[cap]
        if hp != 0:
            n = int(P.hands[c, hp])
            d += _kp_in_hand(E, k0, kb, c, hp, n) - _kp_in_hand(E, k0, kb, c, hp, n - 1)
    return True, d


@inner_kernel
def kp_sum_cached(P, T, E, k0, k1, ply, cache_key, cache_val):
    """:func:`kp_sum`, carried from the parent position when it can be (the incremental update): ``cache_key[i]`` /
    ``cache_val[i]`` hold the position key and KP sum last computed at search ply ``i``; the value at ``ply`` is the
    one at ``ply - 1`` plus :func:`kp_delta` when that entry is this position's parent (its key is the key before the
    last move), else the full sum. The caller clears the cache when the tables change (a new search)."""
    aply = P.st[ST_PLY]
    key = P.keys[aply]
    if cache_key[ply] == key:
        return cache_val[ply]
    s = 0
    done = False
    if kp_follows_moves(T) and ply > 0 and aply > 0 and cache_key[ply - 1] == P.keys[aply - 1]:
        done, d = kp_delta(P, T, E, k0, k1)
        s = cache_val[ply - 1] + d
    if not done:
        s = kp_sum(P, T, E, k0, k1)
    cache_key[ply] = key
    cache_val[ply] = s
    return s


@inner_kernel
def king_zone_entries(board, hands, T, ksq):
    """The three entries of ``E.ks`` that the king on ``ksq`` reads (see ``KS_*``): its zone's weak squares by the
    attacker's hand, the weak empty ones by the hand, and the attacked ones. ``hands`` is ``P.hands``. The
    definition, asked square by square of :func:`attacked_on_board`; training reads it (:func:`king_zone_rows`), the
    evaluation the one-pass :func:`king_zone_sum`, which a test holds equal to it."""
    n_ranks = T.params[P_N_RANKS]
    n_files = board.shape[0] // n_ranks
    defender = board[ksq] >> 5
    attacker = 1 - defender
    kf, kr = ksq // n_ranks, ksq % n_ranks
    attacked = 0
    weak = 0
    weak_empty = 0
    for df in range(-1, 2):
        f = kf + df
        if f < 0 or f >= n_files:
            continue
        for dr in range(-1, 2):
            r = kr + dr
            if r < 0 or r >= n_ranks or (df == 0 and dr == 0):
                continue
            z = f * n_ranks + r
            if attacked_on_board(board, T, z, attacker, -1):
                attacked += 1
                if not attacked_on_board(board, T, z, defender, ksq):
                    weak += 1
                    if board[z] == 0:
                        weak_empty += 1
    return _ks_entries(attacked, weak, weak_empty, _hand_bucket(hands, T, attacker))


@inner_kernel
def _ks_entries(attacked, weak, weak_empty, hand_bucket):
    """The three entries of ``E.ks`` (see ``KS_*``) for a king's zone counts and the attacker's hand bucket."""
    return (KS_WEAK + weak * KS_HAND + hand_bucket, KS_WEAK_EMPTY + weak_empty * KS_HAND + hand_bucket,
            KS_ATTACKED + attacked)


@inner_kernel
def _hand_bucket(hands, T, attacker):
    """The attacker's pieces in hand other than pawns, capped at ``KS_HAND - 1``."""
    held = 0
    pawn = T.params[P_PAWN]
    for h in range(T.hand_types.shape[0]):
        pt = T.hand_types[h]
        if pt != pawn:
            held += hands[attacker, pt]
    return min(held, KS_HAND - 1)


@inner_kernel
def _zone_mark(E, ksq, to, by_attacker, from_king, attacked, guarded):
    """A piece reaches square ``to``: mark it in the masks of the king on ``ksq`` when it is in that king's zone
    (attacked by the enemy; guarded by the king's side, the king itself left out)."""
    i = E.zone_index[ksq, to]
    if i >= 0:
        if by_attacker:
            attacked |= 1 << i
        elif not from_king:
            guarded |= 1 << i
    return attacked, guarded


@inner_kernel
def king_zone_masks(board, T, E, k0, k1):
    """The zones of both kings in one pass over the board: bit ``i`` of each mask is the zone square of index ``i``
    (``E.zone_index``). Returns ``(attacked0, guarded0, attacked1, guarded1)``: the sente king's zone squares that gote
    attacks and that sente guards with a piece other than that king, then the same for the gote king. The same
    attacks as :func:`engine.kernels.movegen.attacked_on_board` asked of each zone square (a leap, or a slide up to
    and including the first piece), found from the pieces forwards: a piece's leaps are looked at only when it
    stands within a leap of a zone, a slider's ray is walked only when it crosses a zone, once for both kings."""
    a0 = 0
    g0 = 0
    a1 = 0
    g1 = 0
    L = T.rays.shape[2]
    for sq in range(board.shape[0]):
        code = board[sq]
        if code == 0:
            continue
        c = code >> 5
        near0 = E.zone_leaper[k0, sq]
        near1 = E.zone_leaper[k1, sq]
        if near0 or near1:
            for j in range(T.leap_list.shape[1]):
                k = T.leap_list[code, j]
                if k < 0:
                    break
                to = T.leap_dest[sq, k]
                if to < 0:
                    continue
                if near0:
                    a0, g0 = _zone_mark(E, k0, to, c == 1, sq == k0, a0, g0)
                if near1:
                    a1, g1 = _zone_mark(E, k1, to, c == 0, sq == k1, a1, g1)
        crossing = E.zone_rays[k0, sq] | E.zone_rays[k1, sq]
        if crossing == 0:
            continue
        for j in range(T.slide_list.shape[1]):
            d = T.slide_list[code, j]
            if d < 0:
                break
            if (crossing >> d) & 1 == 0:
                continue
            reach = T.slide_range[code, d]
            for n in range(L):
                if n >= reach:
                    break
                to = T.rays[sq, d, n]
                if to < 0:
                    break
                a0, g0 = _zone_mark(E, k0, to, c == 1, sq == k0, a0, g0)
                a1, g1 = _zone_mark(E, k1, to, c == 0, sq == k1, a1, g1)
                if board[to] != 0:
                    break
    return a0, g0, a1, g1


@inner_kernel
def _bit_count(x):
    """The set bits of a zone mask."""
    n = 0
    while x != 0:
        x &= x - 1
        n += 1
    return n


@inner_kernel
def _zone_entries_from_masks(board, hands, T, E, ksq, attacked, guarded):
    """:func:`king_zone_entries` of the king on ``ksq`` from its zone's masks (:func:`king_zone_masks`)."""
    weak = attacked & ~guarded
    weak_empty = 0
    for i in range(KS_ZONE):
        if (weak >> i) & 1 and board[E.zone_square[ksq, i]] == 0:
            weak_empty += 1
    hand_bucket = _hand_bucket(hands, T, 1 - (board[ksq] >> 5))
    return _ks_entries(_bit_count(attacked), _bit_count(weak), weak_empty, hand_bucket)


@inner_kernel
def king_zone_sum(P, T, E, k0, k1):
    """The king-zone term, sente's view: the entries of the gote king (sente attacks) minus the sente king's. The
    same entries as :func:`king_zone_entries` (a test holds them equal), found in one pass (:func:`king_zone_masks`)
    instead of 16 to 24 reverse attack queries."""
    a0, g0, a1, g1 = king_zone_masks(P.board, T, E, k0, k1)
    a, b, c = _zone_entries_from_masks(P.board, P.hands, T, E, k1, a1, g1)
    s = E.ks[a] + E.ks[b] + E.ks[c]
    a, b, c = _zone_entries_from_masks(P.board, P.hands, T, E, k0, a0, g0)
    return s - E.ks[a] - E.ks[b] - E.ks[c]


@kernel
def king_zone_rows(boards, hands, T, out):
    """For training: ``out[i]`` (float, zeroed, ``KS_SIZE`` wide) gets the king-zone entries of row ``i`` of the
    stored ``boards`` / ``hands``, +1 for the gote king's and -1 for the sente king's (sente's view); the first
    royal of each colour, as :func:`train.features.king_squares`."""
    royal = T.royal
    for i in range(boards.shape[0]):
        board = boards[i]
        seen0 = False
        seen1 = False
        for sq in range(board.shape[0]):
            code = board[sq]
            if code != 0 and royal[code]:
                if (code >> 5) == 0:
                    if seen0:
                        continue
                    seen0 = True
                else:
                    if seen1:
                        continue
                    seen1 = True
                a, b, c = king_zone_entries(board, hands[i], T, sq)
                sign = 1.0 if (code >> 5) == 1 else -1.0
                out[i, a] += sign
                out[i, b] += sign
                out[i, c] += sign


# Threats (learned with the other tables, `train fit --threats`, or on top of fixed ones, add-threats): what a sum
# of piece-king pairs cannot see is a piece en prise. From the side to move's view, for each side (0: the side to
# move's pieces, 1: the opponent's) and each non-royal piece type, the count of that side's pieces attacked by a
# cheaper enemy piece (kind 0) and of those attacked and not defended, not by a cheaper piece (kind 1); then, per
# side, one entry when two or more of its pieces are so threatened (a fork) and one when three or more are. Pins,
# x-rays, drops and promotions are not looked at. The table is laid out [side][kind][piece type 0..n_pt] (type 0
# unused), then [side][multi] (threat_entry, threat_multi_entry).
TH_KINDS = 2
TH_MULTI = 2                 # entries for 2 and for 3 or more threatened pieces
TH_NO_ATTACK = 1 << 30       # att[0, sq] when no enemy piece attacks sq
TH_ROYAL_VALUE = 1 << 29     # a royal attacks as the dearest piece: it never threatens a defended piece
ATT_ROWS = 4                 # rows of the scratch of _piece_walk (eval.threat_scratch)
ATT_COUNT_SHIFT = 2          # att[2, sq]: the attack bits of both colours, then the piece's destination count

# Safe mobility (learned with the other tables, `train fit --safe-mobility`): for each non-royal piece, its
# destinations (as piece_mobility counts them) that no enemy piece attacks, one-hot by piece type and count
# (SM_BUCKETS: 0 .. SM_BUCKETS - 2, and more), sente's view (a gote piece's entry subtracted). Where the linear
# mobility weight counts every destination alike, this is the freedom a piece has without being exchanged: a rook
# boxed in by enemy guards, a bishop with only attacked squares.
SM_BUCKETS = 9


@kernel
def threat_size(n_pt):
    """Length of the threat table of a variant with ``n_pt`` piece types."""
    return 2 * TH_KINDS * (n_pt + 1) + 2 * TH_MULTI


@kernel
def threat_entry(n_pt1, side, kind, pt):
    """The table entry of a threatened piece of type ``pt`` of ``side`` (0: the side to move's), threat ``kind``
    (0: attacked by a cheaper piece, 1: undefended); ``n_pt1`` is the number of piece types + 1."""
    return (side * TH_KINDS + kind) * n_pt1 + pt


@kernel
def threat_multi_entry(n_pt1, side, n):
    """The table entry of ``n`` (>= 2) threatened pieces of ``side``."""
    return 2 * TH_KINDS * n_pt1 + side * TH_MULTI + min(n, TH_MULTI + 1) - 2


@inner_kernel
def _threat_mark(board, to, c, v, att):
    """A piece of colour ``c`` worth ``v`` attacks square ``to``: a defender of an own piece there, else the enemy
    piece's attacker, the cheapest kept."""
    t = board[to]
    if t != 0:
        if (t >> 5) == c:
            att[1, to] = 1
        elif v < att[0, to]:
            att[0, to] = v


@inline_kernel
def _walk_reach(board, to, c, record, att, top):
    """A piece of colour ``c`` reaches square ``to`` in :func:`_piece_walk`: mark the attack and, when ``to`` is a
    destination (empty or an enemy's), record it at ``att[3, top]`` with ``record``. Returns ``(1 if a destination
    else 0, the next free slot)``."""
    att[2, to] |= 1 << c
    t = board[to]
    if t == 0 or (t >> 5) != c:
        if record:
            att[3, top] = to
            top += 1
        return 1, top
    return 0, top


@inner_kernel
def _piece_walk(board, T, value, mobility, with_mobility, record, att):
    """One pass over the pieces' leaps and slides (as :func:`piece_mobility` walks them) for the terms that read
    attacks, filling the scratch ``att`` (int32[ATT_ROWS, >= n_sq * n_sq]):

    - ``att[0, sq]``: the value of the cheapest enemy piece attacking the piece on ``sq`` (``TH_NO_ATTACK``: none; a
      royal attacks as ``TH_ROYAL_VALUE``), ``att[1, sq]``: 1 when an own piece guards it (the threat term);
    - ``att[2, sq]``: bit ``c`` set when a piece of colour ``c`` attacks ``sq`` (any square); with ``record``, from
      bit ``ATT_COUNT_SHIFT`` on, the number of destinations of the piece on ``sq``;
    - with ``record``, ``att[3]``: the destinations of the pieces one after another, in square order (the
      safe-mobility term reads them once the attacks of both sides are known).

    Returns the mobility term (sente's view: ``mobility[code]`` times :func:`piece_mobility` summed over the pieces;
    a test holds it equal) with ``with_mobility``, else 0: the search walks the pieces once for all these terms."""
    n_sq = board.shape[0]
    L = T.rays.shape[2]
    for sq in range(n_sq):
        att[0, sq] = TH_NO_ATTACK
        att[1, sq] = 0
        att[2, sq] = 0
    mob = 0
    top = 0
    for sq in range(n_sq):
        code = board[sq]
        if code == 0:
            continue
        c = code >> 5
        v = TH_ROYAL_VALUE if T.royal[code] else value[code]
        n = 0  # the piece's destinations (piece_mobility)
        for j in range(T.leap_list.shape[1]):
            k = T.leap_list[code, j]
            if k < 0:
                break
            to = T.leap_dest[sq, k]
            if to >= 0:
                dest, top = _walk_reach(board, to, c, record, att, top)
                n += dest
                _threat_mark(board, to, c, v, att)
        for j in range(T.slide_list.shape[1]):
            d = T.slide_list[code, j]
            if d < 0:
                break
            reach = T.slide_range[code, d]
            for i in range(L):  # the squares slide_stop passes, and the piece it stops at
                if i >= reach:
                    break
                to = T.rays[sq, d, i]
                if to < 0:
                    break
                dest, top = _walk_reach(board, to, c, record, att, top)
                n += dest
                if board[to] != 0:
                    _threat_mark(board, to, c, v, att)
                    break
        if record:
            att[2, sq] |= n << ATT_COUNT_SHIFT
        if with_mobility:
            mob += mobility[code] * n
    return mob


@inner_kernel
def _threat_index(board, T, value, stm, att, sq, n_pt1):
    """``(entry, side)``: the threat-table entry of the piece on ``sq`` and its side (0: the side to move's), after
    :func:`_piece_walk`; ``(-1, -1)`` when it is not threatened (or is empty or royal)."""
    code = board[sq]
    if code == 0 or T.royal[code] or att[0, sq] == TH_NO_ATTACK:
        return -1, -1
    if att[0, sq] < value[code]:
        kind = 0
    elif att[1, sq] == 0:
        kind = 1
    else:
        return -1, -1
    side = 0 if (code >> 5) == stm else 1
    return threat_entry(n_pt1, side, kind, code & 31), side


@inner_kernel
def _threat_entry_add(table, i, count):
    """With ``count``: add 1 to ``table[i]`` and give 0; else give ``table[i]``."""
    if count:
        table[i] += 1
        return 0
    return table[i]


@inner_kernel
def _threat_entries(board, T, value, stm, att, table, count):
    """The threat entries of ``board`` (side to move ``stm``), ``att`` filled by :func:`_piece_walk`: with
    ``count``, 1 added to ``table`` at each of them (the features) and 0 returned, else the sum of ``table`` at them
    (the term). One definition for training and the search."""
    n_pt1 = (table.shape[0] - 2 * TH_MULTI) // (2 * TH_KINDS)
    s = 0
    n0 = 0
    n1 = 0
    for sq in range(board.shape[0]):
        i, side = _threat_index(board, T, value, stm, att, sq, n_pt1)
        if i >= 0:
            s += _threat_entry_add(table, i, count)
            if side == 0:
                n0 += 1
            else:
                n1 += 1
    if n0 >= 2:
        s += _threat_entry_add(table, threat_multi_entry(n_pt1, 0, n0), count)
    if n1 >= 2:
        s += _threat_entry_add(table, threat_multi_entry(n_pt1, 1, n1), count)
    return s


@inner_kernel
def threat_counts(board, T, value, stm, att, counts):
    """Add the threat features of ``board`` (side to move ``stm``) to ``counts`` (``threat_size`` long, see
    ``TH_*``); ``att`` is scratch (:func:`eval.threat_scratch`). ``value``: the plain material value of a piece code
    (``E.value``)."""
    _piece_walk(board, T, value, value, False, False, att)
    _threat_entries(board, T, value, stm, att, counts, True)


@kernel
def threat_rows(boards, stms, T, value, att, out):
    """For training: ``out[i]`` (zeroed, ``threat_size`` wide) gets the threat features (:func:`threat_counts`) of
    row ``i`` of the stored ``boards`` with side to move ``stms[i]``; ``att`` is scratch as there."""
    for i in range(boards.shape[0]):
        threat_counts(boards[i], T, value, stms[i], att, out[i])


@inner_kernel
def _safe_mobility(board, T, att, table, count):
    """The safe-mobility entries of ``board`` (``SM_BUCKETS`` per piece type, sente's view), ``att`` filled by
    :func:`_piece_walk` with ``record``: with ``count``, +1 (a sente piece) or -1 added to ``table`` at each non-royal
    piece's entry (the features) and 0 returned, else the signed sum of ``table`` at them (the term). One definition
    for training and the search."""
    s = 0
    top = 0
    for sq in range(board.shape[0]):
        code = board[sq]
        if code == 0:
            continue
        n = att[2, sq] >> ATT_COUNT_SHIFT
        if not T.royal[code]:
            enemy = 1 << (1 - (code >> 5))
            safe = 0
            for i in range(top, top + n):
                if (att[2, att[3, i]] & enemy) == 0:
                    safe += 1
            e = (code & 31) * SM_BUCKETS + min(safe, SM_BUCKETS - 1)
            sign = 1 if (code >> 5) == 0 else -1
            if count:
                table[e] += sign
            else:
                s += sign * table[e]
        top += n
    return s


@kernel
def safe_mobility_rows(boards, T, value, att, out):
    """For training: ``out[i]`` (zeroed, ``(n_pt + 1) * SM_BUCKETS`` wide) gets the safe-mobility features of
    row ``i`` of the stored ``boards`` (sente's view, see ``SM_BUCKETS``); ``att`` is scratch as for
    :func:`threat_rows`."""
    for i in range(boards.shape[0]):
        _piece_walk(boards[i], T, value, value, False, True, att)
        _safe_mobility(boards[i], T, att, out[i], True)


@inner_kernel
def _mobility_term(P, T, E):
    """The mobility term, sente's view (0 when no piece code has a mobility weight)."""
    s = 0
    if E.consts[C_MOBILITY] != 0:
        board = P.board
        for sq in range(board.shape[0]):
            code = board[sq]
            if code != 0 and E.mobility[code] != 0:
                s += E.mobility[code] * piece_mobility(board, T, code, sq)
    return s


@inner_kernel
def _try_term(P, T, E):
    """The try term (the variants that have a try rule), sente's view: what the KP tables leave out."""
    s = 0
    if T.params[P_TRY] != 0:
        last = T.params[P_N_RANKS] - 1
        for c in range(2):
            for i in range(P.st[ST_ROYALS + c]):
                r = royal_square(P, T, c, i) % T.params[P_N_RANKS]
                bonus = E.try_bonus[r if c == 0 else last - r]
                s += bonus if c == 0 else -bonus
    return s


@inner_kernel
def _king_squares(P, T):
    """The squares the evaluation reads the kings on (-1: none stands): with several royals, the first of each side."""
    if T.params[P_LAST_ROYAL] != 0:  # several royals may stand: king safety is measured around the first
        return (royal_square(P, T, 0, 0) if P.st[ST_ROYALS] > 0 else -1,
                royal_square(P, T, 1, 0) if P.st[ST_ROYALS + 1] > 0 else -1)
    return P.st[ST_KSQ], P.st[ST_KSQ + 1]


@inner_kernel
def _learned(P, T, E, k0, k1, kp, att):
    """The learned evaluation, side to move's view, from the position's KP sum ``kp`` (``att``: scratch of the
    piece walk, :func:`eval.threat_scratch`)."""
    s = kp + _try_term(P, T, E) + variant_terms(P, T, E)
    if E.consts[C_KS] != 0:
        s += king_zone_sum(P, T, E, k0, k1)
    threats = 0
    smob = E.consts[C_SMOB] != 0
    if E.consts[C_THREATS] != 0 or smob:
        # one walk for the mobility, threat and safe-mobility terms
        s += _piece_walk(P.board, T, E.value, E.mobility, E.consts[C_MOBILITY] != 0, smob, att)
        if smob:
            s += _safe_mobility(P.board, T, att, E.smob, False)
        if E.consts[C_THREATS] != 0:
            threats = _threat_entries(P.board, T, E.value, P.st[ST_STM], att, E.threats, False)
    else:
        s += _mobility_term(P, T, E)
    if P.st[ST_STM] != 0:
        s = -s
    return s + threats + E.consts[C_TEMPO]


@kernel
def evaluate_k(P, T, E, att):
    """Static evaluation in centipawns from the side to move's point of view; ``att`` is scratch
    (:func:`eval.threat_scratch`, one per thread) for the terms that walk the pieces."""
    k0, k1 = _king_squares(P, T)
    if E.consts[C_KP] != 0 and k0 >= 0 and k1 >= 0:  # learned tables (a lost king: the hand-set terms)
        return _learned(P, T, E, k0, k1, kp_sum(P, T, E, k0, k1), att)
    return _hand_set(P, T, E, k0, k1)


@inner_kernel
def evaluate_cached(P, T, E, ply, cache_key, cache_val, att, ev_key, ev_val):
    """:func:`evaluate_k` for the search at ``ply``, its KP sum updated from the parent's (:func:`kp_sum_cached`),
    the value looked up in (else stored into) the evaluation hash ``ev_key`` / ``ev_val`` (a power-of-two number of
    entries, indexed by the position key's low bits, cleared by the caller when the tables change).

    The search evaluates many positions more than once (a reduced move's re-search, the null-window search before a
    PV re-search, razoring's quiescence search of the same node, ProbCut's): a hit skips the board passes (threats,
    mobility, king zones). The KP sum is carried even on a hit, so that the children's incremental update still finds
    this ply's sum."""
    k0, k1 = _king_squares(P, T)
    learned = E.consts[C_KP] != 0 and k0 >= 0 and k1 >= 0
    kp = kp_sum_cached(P, T, E, k0, k1, ply, cache_key, cache_val) if learned else 0
    key = P.keys[P.st[ST_PLY]]
    i = hash_slot(key, ev_key.shape[0])
    if ev_key[i] == key:
        return ev_val[i]
    v = _learned(P, T, E, k0, k1, kp, att) if learned else _hand_set(P, T, E, k0, k1)
    ev_key[i] = key
    ev_val[i] = v
    return v


@inner_kernel
def _hand_set(P, T, E, k0, k1):
    """The hand-set evaluation (material, piece-square, near-king, mobility, try and hand terms), side to move's
    view."""
    board = P.board
    s = 0
    mobility = E.consts[C_MOBILITY] != 0
    for sq in range(board.shape[0]):
        code = board[sq]
        if code == 0:
            continue
        s += E.pst[code, sq]
        if mobility and E.mobility[code] != 0:
            s += E.mobility[code] * piece_mobility(board, T, code, sq)
        if (code >> 5) == 0:
            if k0 >= 0:
                s += E.near_own[code, E.king_rel[k0, sq]]
            if k1 >= 0:
                s += E.near_enemy[code, E.king_rel[k1, sq]]
        else:
            if k1 >= 0:
                s += E.near_own[code, E.king_rel[k1, sq]]
            if k0 >= 0:
                s += E.near_enemy[code, E.king_rel[k0, sq]]
    if T.params[P_TRY] != 0:
        last = T.params[P_N_RANKS] - 1
        for c in range(2):
            for i in range(P.st[ST_ROYALS + c]):
                r = royal_square(P, T, c, i) % T.params[P_N_RANKS]
                bonus = E.try_bonus[r if c == 0 else last - r]
                s += bonus if c == 0 else -bonus
    for h in range(T.hand_types.shape[0]):
        pt = T.hand_types[h]
        s += E.hand_val[0, pt] * P.hands[0, pt] + E.hand_val[1, pt] * P.hands[1, pt]
    s += variant_terms(P, T, E)
    if P.st[ST_STM] == 0:
        return s + E.consts[C_TEMPO]
    return -s + E.consts[C_TEMPO]
