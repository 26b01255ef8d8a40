"""numba kernels of Enokian shogi: card effects, the player's moves, the static evaluation, expectimax and rollouts.

The whole game state is one ``int32`` vector (layout below), so a search copies a state with one loop and the
kernels take nothing but arrays and scalars. Like every kernel of the project they run with NRT off
(:data:`engine.kernels.kernel`): they never allocate; the search stack, move buffers and the transposition table are
allocated by the Python layer (:mod:`search.enokian`) and passed in.

Squares: ``sq = f * 9 + r`` with ``f`` = file - 1 (0 = file 1, the east edge) and ``r`` = rank index (0 = rank a,
the north edge), as in :mod:`engine.geometry`.

Cards are indexed ``suit * 13 + rank - 1`` (suits S C H D, ranks A=1 .. K=13). The search only needs the *effect
class* of a card (27 classes, :func:`card_class`): a number card matters by its rank and axis (♠/♣ give a file,
♥/♦ a rank, and a same-axis pair is a stand-off whatever the suits), a ten by nothing else, J and Q of a suit are the
same slide, and each king is a slide plus Michizane's step. The deck is therefore also kept as class counts
(``O_CC``), and the transposition key hashes those counts rather than the exact cards.

The search draws a whole round at once (:func:`gen_outcomes`): a ten or court card, a number card spent on one, or a
pair of number cards in either order (one outcome: the same state follows), at most :data:`MAX_OUTCOMES` outcomes.
The draw just before the horizon is evaluated board by board (:func:`horizon_chance`), which is why the static
evaluation is split into what it reads of the board (:func:`static_features`) and of the cards (:func:`static_value`).
"""
from __future__ import annotations

import math

import numpy as np

from ...kernels import inline_kernel, inner_kernel, kernel

# ---------------------------------------------------------------- board codes
EMPTY, GUARD, EMPEROR = 0, 1, 2
MOVER0 = 3  # MOVER0 + suit: the horse/dragon of that suit (S, C = dragons on rank e; H, D = horses on file 5)
FLAME = 7
MICHIZANE = 8
N_CODES = 9

SPADES, CLUBS, HEARTS, DIAMONDS = 0, 1, 2, 3

# ---------------------------------------------------------------- state vector layout
O_MSQ = 81  # 4: square of each suit's mover, -1 when captured
O_HD = 85  # 4: heading (+1/-1 along the mover's line: file index for S/C, rank index for H/D)
O_MICH = 89  # Michizane's square, -1 when captured
O_EMP = 90  # the emperor's square, -1 when dead
O_PEND = 91  # class of the pending first number card, -1 if none
O_PENDCARD = 92  # its card index (only the Python layer needs it), -1 if none
O_SIDE = 93  # 0: the player moves (decision node), 1: a card is drawn (chance node)
O_NFLAME = 94  # flames on the board (the supply is FLAME_SUPPLY minus this)
O_NCARDS = 95  # cards left in the draw pile
O_PLY = 96  # actions and events applied since the start (the SFEN move number is this + 1)
O_NGUARD = 97  # guards on the board
O_CC = 98  # 27: cards left per effect class
# 4: 1 while a mover stands on its centre (5e) with its heading flipped by a court card that could not move it, so
# the heading there equals the direction of its last move instead of its opposite (0 everywhere else)
O_FLIP = 125
O_DECK = 129  # 52: 1 if that exact card is still in the draw pile
STATE_LEN = 181
SEARCH_LEN = O_DECK  # the search never looks at the exact cards, only at the class counts

FLAME_SUPPLY = 12

# ---------------------------------------------------------------- card classes
N_CLASSES = 27
C_TEN = 18  # classes 0..17 are numbers: (rank - 1) * 2 + axis, axis 0 = file (S/C), 1 = rank (H/D)
C_JQ = 19  # + suit
C_K = 23  # + suit

# ---------------------------------------------------------------- terminal codes and scores
T_NONE, T_LOSS, T_SURVIVED, T_SUBDUED = 0, 1, 2, 3
#: Score of a game won by subduing Michizane; surviving scores 1.0, losing 0.0. The small bonus is the tie-break
#: toward subduing; the win probability reported is the score minus at most this bonus.
SUBDUE_BONUS = 1e-4

#: Weights of the static evaluation (see :func:`static_eval`), passed as an array so they can be tuned.
EVAL_PARAMS = np.array([
    0.5,   # 0: weight of a spark square (a red piece next to the emperor) relative to a direct hit
    2.0,   # 1: rounds over which the local lightning hazard applies before the emperor can walk away
    0.6,   # 2: part of the largest immediate threat left after the player's one move
    0.012,  # 3: loss per missing guard
    0.002,  # 4: bonus per red piece removed (toward subduing)
], dtype=np.float64)


@kernel
def card_class(card):
    suit = card // 13
    rank = card % 13 + 1
    if rank <= 9:
        return (rank - 1) * 2 + (suit >> 1)
    if rank == 10:
        return C_TEN
    if rank == 13:
        return C_K + suit
    return C_JQ + suit


@inner_kernel
def copy_state(src, dst, n):
    for i in range(n):
        dst[i] = src[i]


# ---------------------------------------------------------------- card effects
@kernel
def _kill(s, sq):
    """A guard or the emperor on ``sq`` dies (no-op for any other code)."""
    c = s[sq]
    if c == GUARD:
        s[sq] = EMPTY
        s[O_NGUARD] -= 1
    elif c == EMPEROR:
        s[sq] = EMPTY
        s[O_EMP] = -1


@kernel
def slide(s, suit):
    """A court card of ``suit``: its mover slides along its line in its heading, then the heading reverses."""
    sq = s[O_MSQ + suit]
    if sq < 0:
        return
    h = s[O_HD + suit]
    if suit < 2:
        c = sq // 9
        step = 9 * h
    else:
        c = sq % 9
        step = h
    to = sq
    while True:
        c += h
        if c < 0 or c > 8:
            break
        nxt = to + step
        code = s[nxt]
        if code >= MOVER0:
            break
        to = nxt
        if code != EMPTY:  # a guard or the emperor: captured, the slide stops there
            _kill(s, nxt)
            break
    if to != sq:
        s[sq] = EMPTY
        s[to] = MOVER0 + suit
        s[O_MSQ + suit] = to
        s[O_FLIP + suit] = 0  # the new heading is opposite to this move
    elif (sq // 9 if suit < 2 else sq % 9) == 4:
        s[O_FLIP + suit] ^= 1  # no move: the heading turns, the last move stays (it matters to a ten on the centre)
    s[O_HD + suit] = -h


@inner_kernel
def michizane_step(s):
    """Michizane steps one square toward the emperor; a red piece there stops him, a guard or the emperor dies."""
    m = s[O_MICH]
    e = s[O_EMP]
    if m < 0 or e < 0:
        return
    mf, mr = m // 9, m % 9
    ef, er = e // 9, e % 9
    df = 1 if ef > mf else (-1 if ef < mf else 0)
    dr = 1 if er > mr else (-1 if er < mr else 0)
    to = (mf + df) * 9 + mr + dr
    if s[to] >= MOVER0:
        return
    _kill(s, to)
    s[m] = EMPTY
    s[to] = MICHIZANE
    s[O_MICH] = to


@inner_kernel
def ten(s, tgt):
    """A ten: the four movers step one square toward the centre of their lines at once. ``tgt``: int32[4] scratch.

    A mover on the centre steps opposite to its last move (its heading, unless a blocked court card flipped it).
    Afterwards every heading points away from the centre: off the centre that is opposite to the step toward it;
    on the centre it is the step itself, whether the piece stepped off (the direction it stepped) or was cancelled
    (back where it came from, opposite to the move that brought it there).
    """
    for suit in range(4):
        sq = s[O_MSQ + suit]
        tgt[suit] = -1
        if sq < 0:
            continue
        c = sq // 9 if suit < 2 else sq % 9
        if c == 4:
            h = s[O_HD + suit]
            d = -h if s[O_FLIP + suit] else h
            s[O_HD + suit] = d
        else:
            d = 1 if c < 4 else -1
            s[O_HD + suit] = -d
        s[O_FLIP + suit] = 0
        t = sq + (9 * d if suit < 2 else d)
        if s[t] >= MOVER0:  # into a red piece (judged before anyone moves): cancelled
            continue
        tgt[suit] = t
    for a in range(4):  # two pieces onto one square: both cancelled
        if tgt[a] < 0:
            continue
        clash = False
        for b in range(4):
            if b != a and tgt[b] == tgt[a]:
                clash = True
        if clash:
            for b in range(4):
                if b != a and tgt[b] == tgt[a]:
                    tgt[b] = -2
            tgt[a] = -2
    for suit in range(4):
        t = tgt[suit]
        if t < 0:
            continue
        _kill(s, t)
        s[s[O_MSQ + suit]] = EMPTY
        s[t] = MOVER0 + suit
        s[O_MSQ + suit] = t


@inner_kernel
def lightning(s, sq):
    """Lightning on ``sq``: fizzles while the flame supply is empty; sparks around a red piece; else a flame."""
    if s[O_NFLAME] >= FLAME_SUPPLY:
        return
    if s[sq] >= MOVER0:
        f0, r0 = sq // 9, sq % 9
        for df in range(-1, 2):
            for dr in range(-1, 2):
                f, r = f0 + df, r0 + dr
                if (df != 0 or dr != 0) and 0 <= f <= 8 and 0 <= r <= 8:
                    _kill(s, f * 9 + r)
        return
    _kill(s, sq)
    s[sq] = FLAME
    s[O_NFLAME] += 1


@kernel
def resolve(s, cls, tgt):
    """The effect of a ten or court card (``cls`` >= C_TEN)."""
    if cls == C_TEN:
        ten(s, tgt)
    elif cls < C_K:
        slide(s, cls - C_JQ)
    else:
        slide(s, cls - C_K)
        michizane_step(s)


@kernel
def draw_class(s, cls, tgt):
    """A card of class ``cls`` is drawn (the caller removes the exact card from ``O_DECK`` if it tracks it)."""
    s[O_CC + cls] -= 1
    s[O_NCARDS] -= 1
    s[O_PLY] += 1
    pend = s[O_PEND]
    if pend < 0:
        if cls < C_TEN:
            if s[O_NCARDS] > 0:  # a first number card: draw a second one
                s[O_PEND] = cls
            # else a lone number card drawn last: its second card does not exist, so the game ends at once
            # (survived: O_SIDE stays 1 with no cards left, see terminal)
            return
        resolve(s, cls, tgt)
    else:
        s[O_PEND] = -1
        s[O_PENDCARD] = -1
        if cls >= C_TEN:
            resolve(s, cls, tgt)
        else:
            ax0 = pend & 1
            ax1 = cls & 1
            if ax0 != ax1:  # else a stand-off: nothing happens
                if ax0 == 0:
                    f, r = pend >> 1, cls >> 1
                else:
                    f, r = cls >> 1, pend >> 1
                lightning(s, f * 9 + r)
    s[O_SIDE] = 0


# ---------------------------------------------------------------- the player's moves
@inner_kernel
def _red_on_board(s):
    if s[O_NFLAME] > 0:
        return True
    for suit in range(4):
        if s[O_MSQ + suit] >= 0:
            return True
    return False


@kernel
def gen_moves(s, out):
    """Legal moves of the player into ``out`` (codes ``from * 81 + to``); returns their number."""
    n = 0
    michi_ok = not _red_on_board(s)
    for sq in range(81):
        code = s[sq]
        if code != GUARD and code != EMPEROR:
            continue
        f0, r0 = sq // 9, sq % 9
        for df in range(-1, 2):
            for dr in range(-1, 2):
                if df == 0 and dr == 0:
                    continue
                if code == GUARD and df != 0 and dr != 0:
                    continue
                f, r = f0 + df, r0 + dr
                if f < 0 or f > 8 or r < 0 or r > 8:
                    continue
                to = f * 9 + r
                t = s[to]
                if t == GUARD or t == EMPEROR:
                    continue
                if t == MICHIZANE and not michi_ok:
                    continue
                out[n] = sq * 81 + to
                n += 1
    return n


@kernel
def do_move(s, mv):
    """Play the player's move ``mv`` (``-1`` = pass when there is none); a card is drawn next."""
    s[O_PLY] += 1
    s[O_SIDE] = 1
    if mv < 0:
        return
    fr, to = mv // 81, mv % 81
    t = s[to]
    if t >= MOVER0 and t < FLAME:
        s[O_MSQ + t - MOVER0] = -1
        s[O_HD + t - MOVER0] = 0  # canonical: a captured piece has no heading
        s[O_FLIP + t - MOVER0] = 0
    elif t == FLAME:
        s[O_NFLAME] -= 1
    elif t == MICHIZANE:
        s[O_MICH] = -1
    code = s[fr]
    s[to] = code
    s[fr] = EMPTY
    if code == EMPEROR:
        s[O_EMP] = to


@kernel
def terminal(s):
    if s[O_EMP] < 0:
        return T_LOSS
    if s[O_MICH] < 0:
        return T_SUBDUED
    if s[O_SIDE] == 1 and s[O_NCARDS] == 0:
        return T_SURVIVED
    return T_NONE


@kernel
def terminal_score(t):
    if t == T_LOSS:
        return 0.0
    if t == T_SUBDUED:
        return 1.0 + SUBDUE_BONUS
    return 1.0


# ---------------------------------------------------------------- static evaluation
# It is split in two so that the states of one draw that share a board (a court card drawn alone or after a number
# card, any stand-off) read the board once: :func:`static_features` writes what the evaluation needs of the board
# into an int32 vector, :func:`static_value` combines it with the cards left.
SF_TERM = 0  # terminal code of the state (the other entries are unset unless T_NONE)
SF_EF, SF_ER = 1, 2  # the emperor's file and rank index
SF_LIVE = 3  # 1 while lightning can still strike (the flame supply is not empty)
SF_NGUARD = 4  # guards on the board
SF_RED = 5  # red pieces on the board but Michizane (movers and flames)
SF_MDIST = 6  # Michizane's distance (king steps) to the emperor, -1 when captured
SF_NNB = 7  # red pieces next to the emperor (targets of sparks), their (file, rank) from SF_NB
SF_NB = 8
SF_NTH = SF_NB + 16  # movers with a clear line to the emperor, (suit, facing away, adjacent) each from SF_TH
SF_TH = SF_NTH + 1
SF_LEN = SF_TH + 12


@inner_kernel
def static_features(s, feat):
    """What :func:`static_value` needs of the board of ``s``, written into ``feat`` (int32[SF_LEN])."""
    t = terminal(s)
    feat[SF_TERM] = t
    if t != T_NONE:
        return
    e = s[O_EMP]
    ef, er = e // 9, e % 9
    feat[SF_EF] = ef
    feat[SF_ER] = er
    feat[SF_LIVE] = 0 if s[O_NFLAME] >= FLAME_SUPPLY else 1
    feat[SF_NGUARD] = s[O_NGUARD]
    nb = 0
    for df in range(-1, 2):
        for dr in range(-1, 2):
            f, r = ef + df, er + dr
            if (df != 0 or dr != 0) and 0 <= f <= 8 and 0 <= r <= 8 and s[f * 9 + r] >= MOVER0:
                feat[SF_NB + 2 * nb] = f
                feat[SF_NB + 2 * nb + 1] = r
                nb += 1
    feat[SF_NNB] = nb
    nth = 0
    red = s[O_NFLAME]
    for suit in range(4):
        m = s[O_MSQ + suit]
        if m < 0:
            continue
        red += 1
        if suit < 2:
            if er != 4:
                continue
            a, b = m // 9, ef
            step = 9
        else:
            if ef != 4:
                continue
            a, b = m % 9, er
            step = 1
        lo = min(a, b)
        hi = max(a, b)
        clear = True
        base = m - a * step
        for c in range(lo + 1, hi):
            if s[base + c * step] != EMPTY:
                clear = False
                break
        if clear:
            feat[SF_TH + 3 * nth] = suit
            feat[SF_TH + 3 * nth + 1] = 1 if (b - a) * s[O_HD + suit] < 0 else 0
            feat[SF_TH + 3 * nth + 2] = 1 if hi - lo == 1 else 0
            nth += 1
    feat[SF_NTH] = nth
    feat[SF_RED] = red
    m = s[O_MICH]
    feat[SF_MDIST] = max(abs(m // 9 - ef), abs(m % 9 - er)) if m >= 0 else -1


@inner_kernel
def static_value(feat, s, prm):
    """Estimated score (win probability, plus the subdue bonus) of a state whose board gave ``feat``
    (:func:`static_features`) and whose cards left are those of ``s`` (counts, number, pending card).

    Three hazards: lightning (the chance that the remaining number pairs hit the emperor's square or a red piece next
    to it, counting the exact cards left; the local hazard applies for ``prm[1]`` rounds, after which the emperor is
    assumed to have walked to an average square), immediate threats (a mover with a clear line to the emperor, times
    the chance its suit's court card comes next; Michizane next to the emperor with kings left; a ten stepping onto
    the emperor) of which one can be parried by the player's next move, and missing guards (shields).
    """
    if feat[SF_TERM] != T_NONE:
        return terminal_score(feat[SF_TERM])
    ef, er = feat[SF_EF], feat[SF_ER]
    n = s[O_NCARDS]
    if n == 0:
        return 1.0
    nx = 0.0
    ny = 0.0
    for k in range(9):
        nx += s[O_CC + 2 * k]
        ny += s[O_CC + 2 * k + 1]
    nnum = nx + ny
    # lightning per round and rounds left
    plight = 0.0
    if n >= 2:
        plight = 2.0 * nx * ny / (n * (n - 1.0))
    if s[O_PEND] >= 0:
        nnum += 1.0
    rounds = n / (1.0 + nnum / (n + 1.0))
    lights = rounds * plight
    if s[O_PEND] >= 0:  # the pending card decides the first pair
        pa = s[O_PEND] & 1
        lights += (ny if pa == 0 else nx) / n
    live = 1.0 if feat[SF_LIVE] else 0.0
    hazard_local = 0.0
    hazard_avg = 0.0
    if nx > 0 and ny > 0:
        hazard_local = s[O_CC + 2 * ef] * s[O_CC + 2 * er + 1] / (nx * ny)
        for i in range(feat[SF_NNB]):
            f, r = feat[SF_NB + 2 * i], feat[SF_NB + 2 * i + 1]
            hazard_local += prm[0] * s[O_CC + 2 * f] * s[O_CC + 2 * r + 1] / (nx * ny)
        hazard_avg = 1.0 / 81.0
    near = min(lights, prm[1] * plight)
    surv = math.exp(-live * (near * hazard_local + (lights - near) * hazard_avg))
    # immediate threats of the next draw
    tot = 0.0
    big = 0.0
    for i in range(feat[SF_NTH]):
        suit = feat[SF_TH + 3 * i]
        p = (s[O_CC + C_JQ + suit] + s[O_CC + C_K + suit]) / n
        if feat[SF_TH + 3 * i + 1]:  # facing away: only after it turns
            p *= 0.3
        if feat[SF_TH + 3 * i + 2]:  # adjacent: a ten may step onto it too
            p += s[O_CC + C_TEN] / n * 0.5
        tot += p
        big = max(big, p)
    dist = feat[SF_MDIST]
    if dist >= 0:
        kings = 0.0
        for suit in range(4):
            kings += s[O_CC + C_K + suit]
        if kings > 0 and dist <= 2:
            p = kings / n * (1.0 if dist == 1 else 0.25)
            tot += p
            big = max(big, p)
    left = tot - big + prm[2] * big
    if left > 0.95:
        left = 0.95
    surv *= 1.0 - left
    surv *= 1.0 - prm[3] * (8 - feat[SF_NGUARD])
    return surv + prm[4] * SUBDUE_BONUS * (16 - feat[SF_RED])


@inline_kernel
def static_eval(s, prm, feat):
    """The static evaluation of a non-terminal state ``s`` (:func:`static_value`); ``feat``: int32[SF_LEN] scratch."""
    static_features(s, feat)
    return static_value(feat, s, prm)


# ---------------------------------------------------------------- hashing
@inner_kernel
def state_key(s, zob):
    """Zobrist key of the search-relevant state: board, headings (with the centre flips), class counts, pending
    class, node kind."""
    k = np.uint64(0)
    for sq in range(81):
        c = s[sq]
        if c != EMPTY:
            k ^= zob[sq * N_CODES + c]
    base = 81 * N_CODES
    for suit in range(4):
        if s[O_MSQ + suit] >= 0:
            k ^= zob[base + suit * 2 + (1 if s[O_HD + suit] > 0 else 0)]
    base += 8
    for suit in range(4):
        if s[O_FLIP + suit] != 0:
            k ^= zob[base + suit]
    base += 4
    for cls in range(N_CLASSES):
        k ^= zob[base + cls * 5 + s[O_CC + cls]]
    base += N_CLASSES * 5
    k ^= zob[base + s[O_PEND] + 1]
    base += N_CLASSES + 1
    k ^= zob[base + s[O_SIDE]]
    return k


ZOBRIST_LEN = 81 * N_CODES + 8 + 4 + N_CLASSES * 5 + N_CLASSES + 1 + 2


def make_zobrist(seed: int = 20050517) -> np.ndarray:
    return np.random.default_rng(seed).integers(1, 2**63, ZOBRIST_LEN, dtype=np.int64).astype(np.uint64)


# ---------------------------------------------------------------- rollouts
@inner_kernel
def _policy_move(s, moves, n, prm, work, feat):
    """The rollout policy: the move whose resulting state the static evaluation likes best."""
    best = -1.0
    bi = 0
    for i in range(n):
        copy_state(s, work, SEARCH_LEN)
        do_move(work, moves[i])
        work[O_SIDE] = 0  # evaluate as if the player could still react (the threat terms assume one reply)
        v = static_eval(work, prm, feat) + np.random.random() * 1e-9
        if v > best:
            best = v
            bi = i
    return moves[bi]


@inner_kernel
def rollout(s, prm, work, feat, moves, tgt, deckbuf):
    """Play the game out once from ``s`` (modified) with a random order of the remaining cards; returns the score.
    ``work``: a state of scratch, ``feat``: int32[SF_LEN] scratch."""
    # the remaining cards as a class list, shuffled
    n = 0
    for cls in range(N_CLASSES):
        for _ in range(s[O_CC + cls]):
            deckbuf[n] = cls
            n += 1
    for i in range(n - 1, 0, -1):
        j = np.random.randint(0, i + 1)
        tmp = deckbuf[i]
        deckbuf[i] = deckbuf[j]
        deckbuf[j] = tmp
    pos = 0
    while True:
        t = terminal(s)
        if t != T_NONE:
            return terminal_score(t)
        if s[O_SIDE] == 1:
            draw_class(s, deckbuf[pos], tgt)
            pos += 1
        else:
            nm = gen_moves(s, moves)
            if nm == 0:
                do_move(s, -1)
            else:
                do_move(s, _policy_move(s, moves, nm, prm, work, feat))


@kernel
def seed_rng(seed):
    np.random.seed(seed)


# ---------------------------------------------------------------- draw outcomes
#: Distinct outcomes of one round's draw at most: 9 ten/court classes, 18 number classes times 9 ten/court classes
#: (a number card spent on a court card), and the 171 unordered pairs of number classes.
MAX_OUTCOMES = 9 + 18 * 9 + 18 * 19 // 2


@inline_kernel
def gen_outcomes(s, oa, ob, op):
    """The distinct outcomes of the draw at chance node ``s``: class ``oa[k]`` drawn, then class ``ob[k]`` (``-1``:
    none) with probability ``op[k]``; returns their number.

    Without a pending card a whole round's draw is one node: a ten or court card; a number card then a ten or court
    card (the number is spent); two number cards, drawn in either order (the same lightning or stand-off, the same
    deck left: one outcome with both orders' probability); a number card drawn last (the game ends). With a pending
    number card (a state set up between the two draws) it is the one card that pairs with it.
    """
    n = s[O_NCARDS]
    k = 0
    if s[O_PEND] >= 0:
        for c in range(N_CLASSES):
            if s[O_CC + c] > 0:
                oa[k] = c
                ob[k] = -1
                op[k] = s[O_CC + c] / n
                k += 1
        return k
    for c in range(C_TEN, N_CLASSES):
        if s[O_CC + c] > 0:
            oa[k] = c
            ob[k] = -1
            op[k] = s[O_CC + c] / n
            k += 1
    if n == 1:  # a number card drawn last: the game ends at once
        for a in range(C_TEN):
            if s[O_CC + a] > 0:
                oa[k] = a
                ob[k] = -1
                op[k] = s[O_CC + a] / n
                k += 1
        return k
    nn = n * (n - 1.0)
    for a in range(C_TEN):
        na = s[O_CC + a]
        if na == 0:
            continue
        for c in range(C_TEN, N_CLASSES):
            if s[O_CC + c] > 0:
                oa[k] = a
                ob[k] = c
                op[k] = na * s[O_CC + c] / nn
                k += 1
        if na > 1:
            oa[k] = a
            ob[k] = a
            op[k] = na * (na - 1.0) / nn
            k += 1
        for b in range(a + 1, C_TEN):
            if s[O_CC + b] > 0:
                oa[k] = a
                ob[k] = b
                op[k] = 2.0 * na * s[O_CC + b] / nn
                k += 1
    return k


@inline_kernel
def _spent_value(feat, work, cls, prm):
    """:func:`static_value` of ``work`` with one more card of class ``cls`` spent (``work`` is left unchanged)."""
    work[O_CC + cls] -= 1
    work[O_NCARDS] -= 1
    v = static_value(feat, work, prm)
    work[O_CC + cls] += 1
    work[O_NCARDS] += 1
    return v


@inline_kernel
def _lightning_change(s, sq):
    """What lightning on ``sq`` does to the board of ``s`` as the static evaluation sees it: 0 nothing (the flame
    supply is empty, or sparks around a red piece reach no guard and not the emperor), 1 one more flame and no other
    change (an empty square neither next to the emperor nor on its file or rank, where it could block a line),
    2 anything else."""
    if s[O_NFLAME] >= FLAME_SUPPLY:
        return 0
    code = s[sq]
    f0, r0 = sq // 9, sq % 9
    if code >= MOVER0:
        for df in range(-1, 2):
            for dr in range(-1, 2):
                f, r = f0 + df, r0 + dr
                if (df != 0 or dr != 0) and 0 <= f <= 8 and 0 <= r <= 8:
                    c = s[f * 9 + r]
                    if c == GUARD or c == EMPEROR:
                        return 2
        return 0
    if code != EMPTY:
        return 2
    e = s[O_EMP]
    ef, er = e // 9, e % 9
    if f0 == ef or r0 == er or (abs(f0 - ef) <= 1 and abs(r0 - er) <= 1):
        return 2
    return 1


@inner_kernel
def horizon_chance(s, work, spare, feat, prm, tgt, counters):
    """Expected static evaluation over the draw at chance node ``s`` (no pending card) when the decision after it is
    beyond the horizon, over the outcomes of :func:`gen_outcomes`, each counted as a node in ``counters[0]``.

    Outcomes that leave one board are evaluated together: a ten or court card drawn alone or after any number card,
    and every stand-off, read the board once (:func:`static_features`) and differ only in the cards left, and so does
    a lightning that leaves the board or adds a flame the evaluation sees only as one more red piece
    (:func:`_lightning_change`). ``work``, ``spare``: states of scratch, ``feat``: int32[2, SF_LEN] scratch.
    """
    n = s[O_NCARDS]
    nn = n * (n - 1.0)
    acc = 0.0
    nout = 0
    for c in range(C_TEN, N_CLASSES):  # a ten or court card, alone or after a number card
        nc = s[O_CC + c]
        if nc == 0:
            continue
        copy_state(s, work, SEARCH_LEN)
        draw_class(work, c, tgt)
        static_features(work, feat[0])
        acc += nc / n * static_value(feat[0], work, prm)
        nout += 1
        if n >= 2:
            for a in range(C_TEN):
                if s[O_CC + a] > 0:
                    acc += s[O_CC + a] * nc / nn * _spent_value(feat[0], work, a, prm)
                    nout += 1
    if n == 1:  # a number card drawn last: the game ends
        for a in range(C_TEN):
            if s[O_CC + a] > 0:
                acc += s[O_CC + a] / n * terminal_score(T_SURVIVED)
                nout += 1
        counters[0] += nout
        return acc
    # two number cards: the board stays for a stand-off, and for many a lightning (see _lightning_change)
    copy_state(s, work, SEARCH_LEN)
    work[O_SIDE] = 0
    work[O_NCARDS] -= 1
    base = feat[0]
    static_features(work, base)
    live_after = 0 if s[O_NFLAME] + 1 >= FLAME_SUPPLY else 1
    for a in range(C_TEN):
        na = s[O_CC + a]
        if na == 0:
            continue
        work[O_CC + a] -= 1
        for b in range(a, C_TEN):
            nb = work[O_CC + b]
            if nb == 0:
                continue
            p = (1.0 if b == a else 2.0) * na * nb / nn
            nout += 1
            kind = 0
            if (a & 1) != (b & 1):  # lightning on the square of the file card and the rank card
                sq = (a >> 1) * 9 + (b >> 1) if (a & 1) == 0 else (b >> 1) * 9 + (a >> 1)
                kind = _lightning_change(s, sq)
            if kind == 2:
                copy_state(s, spare, SEARCH_LEN)
                draw_class(spare, a, tgt)
                draw_class(spare, b, tgt)
                acc += p * static_eval(spare, prm, feat[1])
            elif kind == 1:  # one more flame, far from the emperor
                base[SF_RED] += 1
                base[SF_LIVE] = live_after
                acc += p * _spent_value(base, work, b, prm)
                base[SF_RED] -= 1
                base[SF_LIVE] = 1  # kind 1 only while the supply is not empty
            else:
                acc += p * _spent_value(base, work, b, prm)
        work[O_CC + a] += 1
    counters[0] += nout
    return acc


# ---------------------------------------------------------------- expectimax
F_DEPTH, F_I, F_N, F_SLOT, F_EXACT = 0, 1, 2, 3, 4
FRAME_INTS = 5
M_ENTER, M_RETURN, M_ADVANCE = 0, 1, 2


@kernel
def expectimax(s, depth, stack, moves, frames, fvals, fkeys, tgt, tt_key, tt_val, tt_depth, zob, prm, counters,
               leaf_mode, n_rollouts, deckbuf, oa, ob, op, feat):
    """Expectimax value of ``s`` searching ``depth`` more player decisions (chance nodes do not count).

    Iterative, with an explicit stack (numba cannot cache recursive functions, numba issue #6061): ``stack[ply]`` is
    the state at that ply, ``moves[ply]`` its move list, ``oa/ob/op[ply]`` its draw outcomes (:func:`gen_outcomes`:
    one node per round's draw, the two orders of a number pair merged), ``frames[ply]`` / ``fvals[ply]`` /
    ``fkeys[ply]`` its loop index, child count, depth, table slot and running value. Decision nodes take the best
    child and stop early on a certain win. A chance node whose next decision is beyond the horizon is valued in one
    loop (:func:`horizon_chance`; with rollouts or a pending card its outcomes are expanded as any others). Values
    are memoised in the transposition table with the depth they were searched to; a depth beyond the cards left
    means the value is exact. At depth 0 a decision node is scored by the static evaluation (``leaf_mode`` 0) or by
    the mean of ``n_rollouts`` rollouts (``leaf_mode`` 1, in the last two rows of ``stack``). ``feat`` is
    int32[2, SF_LEN] scratch. ``counters[0]`` counts nodes (each outcome of a draw before the horizon one); when
    ``counters[1]`` is positive the search aborts (returning -1) once ``counters[0]`` reaches it, so setting
    ``counters[1] = 1`` from another thread stops a running search.
    """
    copy_state(s, stack[0], SEARCH_LEN)
    frames[0, F_DEPTH] = depth
    mask = tt_key.shape[0] - 1
    ply = 0
    mode = M_ENTER
    v = 0.0
    while True:
        if mode == M_ENTER:
            node = stack[ply]
            d = frames[ply, F_DEPTH]
            counters[0] += 1
            if counters[1] > 0 and counters[0] >= counters[1]:
                return -1.0  # aborted: node limit reached or stop requested (another thread set counters[1] = 1)
            t = terminal(node)
            mode = M_RETURN
            if t != T_NONE:
                v = terminal_score(t)
            elif node[O_SIDE] == 0 and d <= 0:
                if leaf_mode == 0:
                    v = static_eval(node, prm, feat[0])
                else:
                    nrow = stack.shape[0]
                    acc = 0.0
                    for _ in range(n_rollouts):
                        copy_state(node, stack[nrow - 1], SEARCH_LEN)
                        acc += rollout(stack[nrow - 1], prm, stack[nrow - 2], feat[0], moves[moves.shape[0] - 1],
                                       tgt, deckbuf)
                    v = acc / n_rollouts
            else:
                exact = 1000 if d > node[O_NCARDS] else d
                key = state_key(node, zob)
                slot = np.int64(key & np.uint64(mask))
                if tt_key[slot] == key and tt_depth[slot] >= exact:
                    v = tt_val[slot]
                elif node[O_SIDE] == 1 and d <= 0 and leaf_mode == 0 and node[O_PEND] < 0:
                    v = horizon_chance(node, stack[ply + 1], stack[ply + 2], feat, prm, tgt, counters)
                    if tt_key[slot] != key or tt_depth[slot] <= exact:
                        tt_key[slot] = key
                        tt_val[slot] = v
                        tt_depth[slot] = exact
                else:
                    fkeys[ply] = key
                    frames[ply, F_SLOT] = slot
                    frames[ply, F_EXACT] = exact
                    frames[ply, F_I] = 0
                    fvals[ply, 0] = 0.0
                    if node[O_SIDE] == 1:
                        frames[ply, F_N] = gen_outcomes(node, oa[ply], ob[ply], op[ply])
                    else:
                        fvals[ply, 0] = -1.0
                        nm = gen_moves(node, moves[ply])
                        if nm == 0:
                            moves[ply, 0] = -1
                            nm = 1
                        frames[ply, F_N] = nm
                    mode = M_ADVANCE
        if mode == M_RETURN:
            if ply == 0:
                return v
            ply -= 1
            if stack[ply][O_SIDE] == 1:
                fvals[ply, 0] += fvals[ply, 1] * v
            elif v > fvals[ply, 0]:
                fvals[ply, 0] = v
            mode = M_ADVANCE
        # M_ADVANCE: the next child of the node at ``ply``, or its value when all are done
        node = stack[ply]
        child = stack[ply + 1]
        i = frames[ply, F_I]
        if node[O_SIDE] == 1:
            if i < frames[ply, F_N]:
                frames[ply, F_I] = i + 1
                fvals[ply, 1] = op[ply, i]
                copy_state(node, child, SEARCH_LEN)
                draw_class(child, oa[ply, i], tgt)
                if ob[ply, i] >= 0:
                    draw_class(child, ob[ply, i], tgt)
                frames[ply + 1, F_DEPTH] = frames[ply, F_DEPTH]
                ply += 1
                mode = M_ENTER
                continue
            v = fvals[ply, 0]
        else:
            if i < frames[ply, F_N] and fvals[ply, 0] < 1.0 + SUBDUE_BONUS - 1e-12:
                frames[ply, F_I] = i + 1
                copy_state(node, child, SEARCH_LEN)
                do_move(child, moves[ply, i])
                frames[ply + 1, F_DEPTH] = frames[ply, F_DEPTH] - 1
                ply += 1
                mode = M_ENTER
                continue
            v = fvals[ply, 0]
        slot = frames[ply, F_SLOT]
        key = fkeys[ply]
        exact = frames[ply, F_EXACT]
        if tt_key[slot] != key or tt_depth[slot] <= exact:
            tt_key[slot] = key
            tt_val[slot] = v
            tt_depth[slot] = exact
        mode = M_RETURN
