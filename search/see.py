"""Static exchange evaluation (SEE) for boards of any size, with or without drops.

The exchange on a move's target square is played out with each side recapturing with its least valuable attacker,
found on the mailbox with the variant's leap and ray tables (the same tables as
:func:`engine.kernels.movegen.is_attacked`), so 9x9 shogi and 13x13 dai shogi share one code path. Pieces that have
taken part are lifted off ``P.board`` while the exchange is worked out, which opens x-rays (a rook behind a rook, a
lance behind a lance) for free; the board is restored before returning. Only ``P.board`` is touched, never the
bitboards, keys or history.

Values: a captured piece is worth its board value plus what it is worth in the captor's hand
(:func:`capture_value`), because in shogi a capture both removes the piece and gives it to the captor; that is the
swing of the static evaluation. A royal is worth :data:`SEE_ROYAL`, and a royal may take part only as the last
capturer (it does not capture into an attacked square). Readings made here, for every variant:

* only the move's own promotion counts (later recaptures are valued unpromoted; they rarely change the sign);
* pins are ignored, as in most engines' SEE;
* drops are exchanges with nothing captured first: the dropped piece stands on the target and may be taken;
* the special movers' double moves (lion, passing captures) are not attackers here, only their ordinary steps.

Kernels take ``buf``: an ``int32[3, SEE_BUF]`` scratch array (kernels do not allocate): row 0 and 1 hold the lifted
squares and codes, row 2 the swap list of :func:`see`.
"""
from __future__ import annotations

import numpy as np

from engine.kernels import inner_kernel, kernel
from engine.kernels.movegen import DROP, PROMOTE, ST_STM

SEE_ROYAL = 1 << 20  # value of a royal in an exchange: taking it decides everything else
SEE_BUF = 64         # longest exchange followed (pieces lifted); more attackers than this are not looked at


@inner_kernel
def capture_value(T, E, code):
    """What capturing ``code`` gains: its board value plus its value in the captor's hand (0 for an empty square)."""
    if code == 0:
        return 0
    if T.royal[code]:
        return SEE_ROYAL
    return E.value[code] + E.hand_val[0, T.hand_type[code]]


@inner_kernel
def least_attacker(P, T, E, sq, by):
    """Square of colour ``by``'s least valuable piece attacking ``sq`` on the current mailbox (-1: none)."""
    board = P.board
    best = -1
    best_v = 1 << 30
    K = T.leap_dest.shape[1]
    for k in range(K):
        src = T.leap_dest[sq, T.rev_leap[k]]
        if src >= 0:
            pc = board[src]
            if pc != 0 and (pc >> 5) == by and T.leap_ok[pc, k]:
                v = capture_value(T, E, pc)
                if v < best_v:
                    best_v = v
                    best = src
    L = T.rays.shape[2]
    for d in range(8):
        rd = (d + 4) & 7
        for i in range(L):
            s = T.rays[sq, d, i]
            if s < 0:
                break
            pc = board[s]
            if pc != 0:
                if (pc >> 5) == by and T.slide_range[pc, rd] > i:
                    v = capture_value(T, E, pc)
                    if v < best_v:
                        best_v = v
                        best = s
                break
    return best


@inner_kernel
def _move_parts(P, T, mv):
    """(from square or -1 for a drop, code standing on the target after the move, captured code)."""
    to = mv & 0xFF
    if mv & DROP:
        frm = -1
        code = ((mv >> 8) & 0xFF) + (P.st[ST_STM] << 5)
        victim = 0
    else:
        frm = (mv >> 8) & 0xFF
        code = P.board[frm]
        victim = P.board[to]
    return frm, code, victim


@inner_kernel
def _restore(P, buf, n):
    for k in range(n - 1, -1, -1):
        P.board[buf[0, k]] = buf[1, k]


@kernel
def see_ge(P, T, E, mv, threshold, buf):
    """Whether the exchange started by ``mv`` (legal, side to move's) gains at least ``threshold`` for the mover.

    The threshold form (as in Stockfish's ``see_ge``) stops as soon as the outcome relative to the threshold is
    known, so it is cheaper than :func:`see`; ``see_ge(mv, t) == (see(mv) >= t)``."""
    to = mv & 0xFF
    frm, code, victim = _move_parts(P, T, mv)
    swap = capture_value(T, E, victim) - threshold
    if mv & PROMOTE:
        pcode = T.promote_code[code]
        swap += E.value[pcode] - E.value[code]
        code = pcode
    if swap < 0:
        return False
    swap = capture_value(T, E, code) - swap
    if swap <= 0:
        return True
    board = P.board
    n = 0
    if frm >= 0:
        buf[0, 0] = frm
        buf[1, 0] = board[frm]
        board[frm] = 0
        n = 1
    side = P.st[ST_STM]
    res = 1
    while n < buf.shape[1]:
        side = 1 - side
        s = least_attacker(P, T, E, to, side)
        if s < 0:
            break
        res ^= 1
        pc = board[s]
        if T.royal[pc]:
            # a royal recaptures only if the other side cannot take it back
            if least_attacker(P, T, E, to, 1 - side) >= 0:
                res ^= 1
            break
        swap = capture_value(T, E, pc) - swap
        if swap < res:
            break
        buf[0, n] = s
        buf[1, n] = pc
        board[s] = 0
        n += 1
    _restore(P, buf, n)
    return res == 1


@kernel
def see(P, T, E, mv, buf):
    """Material outcome of the exchange on ``mv``'s target for the side making ``mv`` (each side may stop
    recapturing when that is better for it; the first move is made)."""
    to = mv & 0xFF
    frm, code, victim = _move_parts(P, T, mv)
    gain = buf[2]
    gain[0] = capture_value(T, E, victim)
    if mv & PROMOTE:
        pcode = T.promote_code[code]
        gain[0] += E.value[pcode] - E.value[code]
        code = pcode
    on_sq = capture_value(T, E, code)
    board = P.board
    n = 0
    if frm >= 0:
        buf[0, 0] = frm
        buf[1, 0] = board[frm]
        board[frm] = 0
        n = 1
    side = P.st[ST_STM]
    d = 0
    while n < buf.shape[1] and d < gain.shape[0] - 1:
        side = 1 - side
        s = least_attacker(P, T, E, to, side)
        if s < 0:
            break
        pc = board[s]
        if T.royal[pc] and least_attacker(P, T, E, to, 1 - side) >= 0:
            break  # the royal may not take into an attacked square
        d += 1
        gain[d] = on_sq - gain[d - 1]
        on_sq = capture_value(T, E, pc)
        buf[0, n] = s
        buf[1, n] = pc
        board[s] = 0
        n += 1
    _restore(P, buf, n)
    while d > 0:
        if gain[d] > -gain[d - 1]:  # the side to capture at d takes only if that beats stopping
            gain[d - 1] = -gain[d]
        d -= 1
    return gain[0]


def see_buffer() -> np.ndarray:
    """A scratch array for :func:`see` and :func:`see_ge`."""
    return np.zeros((3, SEE_BUF), np.int32)


def static_exchange(pos, mv: int) -> int:
    """Python entry: :func:`see` of legal move ``mv`` (a move code) in ``pos`` (an :class:`engine.Position`)."""
    from eval import build_eval_tables
    if mv not in pos.legal_codes().tolist():
        raise ValueError(f"not a legal move here: {mv}")
    return int(see(pos.state, pos.tables, build_eval_tables(pos.variant), np.int64(mv), see_buffer()))


def static_exchange_ge(pos, mv: int, threshold: int) -> bool:
    """Python entry: :func:`see_ge` of legal move ``mv`` in ``pos`` against ``threshold``."""
    from eval import build_eval_tables
    if mv not in pos.legal_codes().tolist():
        raise ValueError(f"not a legal move here: {mv}")
    return bool(see_ge(pos.state, pos.tables, build_eval_tables(pos.variant), np.int64(mv), np.int64(threshold),
                       see_buffer()))
