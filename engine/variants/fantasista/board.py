"""The board of Ousho Fantasista and its full-turn generator.

:class:`Board` holds everything a turn can change: the mailbox (lower piece per square), the square marks (token,
invincible, carrier), the rider standing on a carrier (with its own marks), ordinary and token hands, rights, emblems
and the side to move. Turns are generated whole: :func:`legal_turns` returns ``{canonical text: resulting Board}``
with every spelling of the same outcome merged (see ``docs/fantasista.md`` for the notation).

Rules that hold for every part of every turn (``shared/spec/fantasista.md``): a king is never captured (the enemy
king is never left attacked at the start of a turn, and no later part may take it), check part-way is no foul, and
the turn is legal only if the mover's own king is not attacked when the whole turn ends.

This is plain Python (lists, no numpy), the readable twin of the shared generator (:mod:`.movers`; the game uses that
one through :mod:`.turns`); the independent slow oracle lives in ``tests/fantasista_reference.py``.
"""
from __future__ import annotations

from itertools import combinations

from .pieces import (BASE, CARRIER, DIRS, FULL_RAYS, INVINCIBLE, LEAP_FROM, LEAPS, N_RANKS, N_SQ, PROMOTES_TO,
                     RAYS, SLIDE_RANGE, SPECIALS, TOKEN, B, D, H, K, O, P, PB, PP, R, S, W, Y, can_capture,
                     in_zone, must_promote, on_board, square, square_name)

RIGHT_AWAKEN, RIGHT_CURTAIN, RIGHT_WAVE = 0, 1, 2


class Board:
    """One position between turns (or part-way through one while a turn is generated)."""

    __slots__ = ("b", "m", "r", "rm", "hand", "th", "rights", "emblem", "stm")

    def __init__(self) -> None:
        self.b = [0] * N_SQ  # lower piece code per square (ptype + 32 * colour), 0 = empty
        self.m = [0] * N_SQ  # marks of the lower piece: TOKEN | INVINCIBLE | CARRIER
        self.r = [0] * N_SQ  # rider code on a carrier, 0 = none (same colour as the carrier)
        self.rm = [0] * N_SQ  # marks of the rider: TOKEN | INVINCIBLE
        self.hand = [[0] * 21, [0] * 21]  # ordinary pieces in hand per colour and ptype
        self.th = [[0] * 21, [0] * 21]  # token pieces in hand per colour and ptype
        self.rights = [[0, 0, 0], [0, 0, 0]]  # awakening, curtain, wave counts per colour
        self.emblem = [False, False]
        self.stm = 0

    def copy(self) -> "Board":
        o = Board.__new__(Board)
        o.b, o.m, o.r, o.rm = self.b[:], self.m[:], self.r[:], self.rm[:]
        o.hand = [self.hand[0][:], self.hand[1][:]]
        o.th = [self.th[0][:], self.th[1][:]]
        o.rights = [self.rights[0][:], self.rights[1][:]]
        o.emblem = self.emblem[:]
        o.stm = self.stm
        return o

    def key(self) -> tuple:
        """A hashable identity of the whole position (used for merging turns and for repetition)."""
        return (tuple(self.b), tuple(self.m), tuple(self.r), tuple(self.rm), tuple(self.hand[0]),
                tuple(self.hand[1]), tuple(self.th[0]), tuple(self.th[1]), tuple(self.rights[0]),
                tuple(self.rights[1]), tuple(self.emblem), self.stm)

    # ------------------------------------------------------------ queries
    def king_square(self, c: int) -> int:
        k = K + 32 * c
        for s in range(N_SQ):
            if self.b[s] == k:
                return s
        return -1

    def attacked(self, sq: int, by: int) -> bool:
        """Whether colour ``by`` attacks ``sq`` (lower pieces and riders both attack from their square)."""
        b, r = self.b, self.r
        lo, hi = 32 * by, 32 * by + 32
        for src, codes in LEAP_FROM[sq]:
            pc = b[src]
            if pc and lo <= pc < hi and (pc in codes or (r[src] and r[src] in codes)):
                return True
        for d in range(8):
            rd = (d + 4) & 7
            i = 0
            for s in FULL_RAYS[sq][d]:
                i += 1
                pc = b[s]
                if pc:
                    if lo <= pc < hi and (SLIDE_RANGE[pc][rd] >= i or (r[s] and SLIDE_RANGE[r[s]][rd] >= i)):
                        return True
                    break
        return False

    def in_check(self, c: int) -> bool:
        k = self.king_square(c)
        return k >= 0 and self.attacked(k, 1 - c)

    # ---------------------------------------------------------- changes
    def capture(self, c: int, sq: int) -> None:
        """Colour ``c`` captures the stack on ``sq``: ordinary pieces go to ``c``'s hand unpromoted, tokens leave."""
        for code, mark in ((self.b[sq], self.m[sq]), (self.r[sq], self.rm[sq])):
            if code and not mark & TOKEN:
                pt = code & 31
                self.hand[c][BASE.get(pt, pt)] += 1
        self.b[sq] = self.m[sq] = self.r[sq] = self.rm[sq] = 0


# ------------------------------------------------------------------ parts
def _targets(bd: Board, code: int, frm: int):
    """Squares the piece ``code`` on ``frm`` reaches (first occupied square of a slide included)."""
    for t in LEAPS[code][frm]:
        yield t
    b = bd.b
    for ray in RAYS[code][frm]:
        for t in ray:
            yield t
            if b[t]:
                break


def _attacked_squares(bd: Board, code: int, frm: int):
    return _targets(bd, code, frm)


def piece_moves(bd: Board, frm: int, layer: int):
    """One ordinary move of the piece on ``frm`` (``layer`` 0 = the lower piece, 1 = the rider).

    Yields ``(text, board, end)``: the part's notation, the board after it (side to move unchanged) and where the
    moved piece stands afterwards as ``(square, layer)``. Covers captures (with immunities; never a king), boarding
    an own empty carrier, promotion (optional or forced), the carrier carrying its rider, and the spear pawn's extra
    capture.
    """
    b = bd.b
    if layer == 0:
        code, mark = b[frm], bd.m[frm]
    else:
        code, mark = bd.r[frm], bd.rm[frm]
    c = code >> 5
    pt = code & 31
    prefix = "rider:" if layer else ""
    is_stack = layer == 0 and bd.r[frm] != 0
    is_carrier = layer == 0 and mark & CARRIER
    for to in _targets(bd, code, frm):
        tgt = b[to]
        boarding = False
        if tgt:
            if tgt >> 5 == c:
                # Board an own empty carrier: a single non-king piece that is not itself a carrier.
                if not (bd.m[to] & CARRIER) or bd.r[to] or pt == K or is_carrier:
                    continue
                boarding = True
            elif not can_capture(pt, tgt & 31, bd.m[to]):
                continue
        ends = [(to, -1)]
        if pt == Y and tgt and not boarding:
            # Spear pawn: after a capture, one more step straight ahead onto a capturable enemy (never a king).
            r_to = to % N_RANKS
            if (c == 0 and r_to > 0) or (c == 1 and r_to < N_RANKS - 1):
                nxt = to - 1 if c == 0 else to + 1
                t2 = b[nxt]
                if t2 and t2 >> 5 != c and can_capture(Y, t2 & 31, bd.m[nxt]):
                    ends.append((nxt, to))
        for end, via in ends:
            zone = in_zone(c, frm) or in_zone(c, end) or (via >= 0 and in_zone(c, via))
            promo_opts = [False]
            if pt in PROMOTES_TO and zone:
                promo_opts = [True] if must_promote(pt, c, end) else [True, False]
            for promote in promo_opts:
                nb = bd.copy()
                rider, rmark = (nb.r[frm], nb.rm[frm]) if is_stack else (0, 0)
                if layer == 0:
                    nb.b[frm] = nb.m[frm] = nb.r[frm] = nb.rm[frm] = 0
                else:
                    nb.r[frm] = nb.rm[frm] = 0
                newcode = (PROMOTES_TO[pt] + 32 * c) if promote else code
                if via >= 0:
                    nb.capture(c, via)
                if boarding:
                    nb.r[end], nb.rm[end] = newcode, mark & (TOKEN | INVINCIBLE)
                    where = (end, 1)
                else:
                    if nb.b[end]:
                        nb.capture(c, end)
                    nb.b[end], nb.m[end] = newcode, mark
                    nb.r[end], nb.rm[end] = rider, rmark
                    where = (end, 0)
                leg = f"{square_name(frm)}{square_name(via if via >= 0 else end)}"
                if via >= 0:
                    leg += f",{square_name(via)}{square_name(end)}"
                yield f"{prefix}{leg}{'+' if promote else ''}", nb, where


def _chebyshev(a: int, b: int) -> int:
    return max(abs(a // N_RANKS - b // N_RANKS), abs(a % N_RANKS - b % N_RANKS))


def _capture_in_place(bd: Board, c: int, code: int, sq: int):
    """Enemy squares the piece ``code`` on ``sq`` could capture without moving (breath, sword)."""
    seen = []
    for t in _targets(bd, code, sq):
        tgt = bd.b[t]
        if tgt and tgt >> 5 != c and can_capture(code & 31, tgt & 31, bd.m[t]) and t not in seen:
            seen.append(t)
    return sorted(seen)


def _first_parts(bd: Board):
    """Every candidate turn of the side to move as ``(text, board)`` (own king safety not yet tested)."""
    c = bd.stm
    b = bd.b
    awaken = bd.rights[c][RIGHT_AWAKEN] > 0
    for frm in range(N_SQ):
        pc = b[frm]
        if not pc or pc >> 5 != c:
            continue
        for layer in ((0, 1) if bd.r[frm] else (0,)):
            code = pc if layer == 0 else bd.r[frm]
            pt = code & 31
            carrier_with_rider = layer == 0 and bd.r[frm] != 0
            for text, nb, (end, el) in piece_moves(bd, frm, layer):
                yield text, nb
                if carrier_with_rider:
                    # The carrier moved with its rider: the rider may make one move of its own.
                    for t2, nb2, _ in piece_moves(nb, end, 1):
                        yield f"{text},{t2}", nb2
                elif pt == H and _chebyshev(frm, end) >= 4:
                    # Gale horse: a move of 4+ squares lets it move once more (a follow-up opens no further one).
                    for t2, nb2, _ in piece_moves(nb, end, el):
                        yield f"{text},{t2}", nb2
            if pt == R and awaken:
                # Rook awakening: the rook moves twice; both legs are ordinary moves of that piece.
                for text, nb, (end, el) in piece_moves(bd, frm, layer):
                    nb.rights[c][RIGHT_AWAKEN] -= 1
                    for t2, nb2, _ in piece_moves(nb, end, el):
                        yield f"{text},{t2}", nb2
            if pt == W and layer == 0:
                for t in _capture_in_place(bd, c, code, frm):
                    nb = bd.copy()
                    nb.capture(c, t)
                    yield f"{square_name(frm)}:x{square_name(t)}", nb
    yield from _drops(bd, c)
    yield from _rights(bd, c)


def _drops(bd: Board, c: int):
    b = bd.b
    empties = [s for s in range(N_SQ) if not b[s]]
    pawn_files = {s // N_RANKS for s in range(N_SQ)
                  if b[s] == P + 32 * c or bd.r[s] == P + 32 * c}
    for hand, token in ((bd.hand[c], False), (bd.th[c], True)):
        for pt in range(1, 21):
            if not hand[pt]:
                continue
            letter = ("P", "L", "N", "S", "G", "B", "R")[pt - 1] if pt <= R else "DOYTHW"[pt - D]
            mark_txt = "'" if token and pt not in SPECIALS else ""
            for to in empties:
                base_text = f"{letter}{mark_txt}*{square_name(to)}"
                ok = not must_promote(pt, c, to) and not (pt == P and to // N_RANKS in pawn_files)
                if ok:
                    nb = bd.copy()
                    hand_nb = nb.th[c] if token else nb.hand[c]
                    hand_nb[pt] -= 1
                    nb.b[to] = pt + 32 * c
                    nb.m[to] = TOKEN if token else 0
                    if pt == P and _pawn_drop_mates(nb, c, to):
                        pass  # uchifuzume (magic defences counted)
                    else:
                        yield base_text, nb
                    if pt in (D, W):
                        # Fire-dragon breath / sword silver: capture one piece it attacks without moving.
                        for t in _capture_in_place(nb, c, pt + 32 * c, to):
                            nb2 = nb.copy()
                            nb2.capture(c, t)
                            yield f"{base_text}:x{square_name(t)}", nb2
                if pt == P and bd.emblem[c]:
                    # Emblem: a pawn from hand may be dropped as a tokin (nifu, last rank, uchifuzume ignored).
                    nb = bd.copy()
                    hand_nb = nb.th[c] if token else nb.hand[c]
                    hand_nb[pt] -= 1
                    nb.b[to] = PP + 32 * c
                    nb.m[to] = TOKEN if token else 0
                    yield base_text + "+", nb


def _pawn_drop_mates(nb: Board, c: int, to: int) -> bool:
    """Uchifuzume: the pawn just dropped on ``to`` checks and the opponent has no legal turn (magic included)."""
    e = 1 - c
    ek = nb.king_square(e)
    if ek < 0 or ek != to + (-1 if c == 0 else 1) or ek // N_RANKS != to // N_RANKS:
        return False
    if nb.in_check(c):
        return False  # the drop is illegal anyway (own king attacked)
    test = nb.copy()
    test.stm = e
    return not has_legal_turn(test)


def _rights(bd: Board, c: int):
    rights = bd.rights[c]
    if rights[RIGHT_CURTAIN]:
        ksq = bd.king_square(c)
        if ksq >= 0:
            kf, kr = divmod(ksq, N_RANKS)
            empty = sorted(square(kf + df, kr + dr) for df, dr in DIRS
                           if on_board(kf + df, kr + dr) and not bd.b[square(kf + df, kr + dr)])
            for chosen in combinations(empty, min(2, len(empty))):
                nb = bd.copy()
                nb.rights[c][RIGHT_CURTAIN] -= 1
                for s in chosen:
                    nb.b[s], nb.m[s] = S + 32 * c, TOKEN
                text = "curtain:" + ",".join(square_name(s) for s in chosen)
                yield text, nb
                for s in chosen:
                    for t2, nb2, _ in piece_moves(nb, s, 0):
                        yield f"{text},{t2}", nb2
    if rights[RIGHT_WAVE]:
        silvers = [(s, 0) for s in range(N_SQ) if bd.b[s] == S + 32 * c] + \
                  [(s, 1) for s in range(N_SQ) if bd.r[s] == S + 32 * c]
        if silvers:
            nb = bd.copy()
            nb.rights[c][RIGHT_WAVE] -= 1
            yield from _wave(nb, silvers, 0, [], set())


def _wave(bd: Board, silvers, done: int, parts: list, seen: set):
    """Silver wave: each silver moves at most once, in any order (outcomes are merged by the caller)."""
    k = (bd.key(), done)
    if k in seen:
        return
    seen.add(k)
    yield "wave:" + ",".join(parts), bd
    for i, (s, layer) in enumerate(silvers):
        if done >> i & 1:
            continue
        for t, nb, _ in piece_moves(bd, s, layer):
            yield from _wave(nb, silvers, done | 1 << i, parts + [t], seen)


# ------------------------------------------------------------------ turns
def legal_turns(bd: Board) -> tuple[dict[str, Board], dict[str, str], dict[tuple, str]]:
    """``({canonical text: board after}, {other spelling: canonical text}, {outcome key: canonical text})``.

    Turns with the same outcome (the whole position after the turn) are one turn. Its canonical spelling is the
    one with the fewest parts (commas), then the smallest in string order; every other generated spelling is an
    alias. The boards returned have the opponent to move.
    """
    c = bd.stm
    best: dict[tuple, tuple[tuple, str, Board]] = {}
    spellings: dict[str, tuple] = {}
    for text, nb in _first_parts(bd):
        if text in spellings:
            continue
        if nb.in_check(c) or is_disguised_pass(bd, nb, text):
            continue
        nb.stm = 1 - c
        k = nb.key()
        spellings[text] = k
        rank = (text.count(","), text)
        cur = best.get(k)
        if cur is None or rank < cur[0]:
            best[k] = (rank, text, nb)
    by_key = {k: v[1] for k, v in best.items()}
    out = {v[1]: v[2] for v in best.values()}
    alias = {t: by_key[k] for t, k in spellings.items() if by_key[k] != t}
    return out, alias, by_key


def follow_wave(bd: Board, text: str) -> Board | None:
    """Play a silver-wave token part by part (any order the rules allow); ``None`` if it is not legal.

    Used to accept a wave spelt in an order the generator merged away; the result is then looked up by outcome.
    """
    c = bd.stm
    if not text.startswith("wave:") or not bd.rights[c][RIGHT_WAVE]:
        return None
    silvers = [(s, 0) for s in range(N_SQ) if bd.b[s] == S + 32 * c] + \
              [(s, 1) for s in range(N_SQ) if bd.r[s] == S + 32 * c]
    if not silvers:
        return None
    cur = bd.copy()
    cur.rights[c][RIGHT_WAVE] -= 1
    done = set()
    body = text[5:]
    for part in filter(None, body.split(",")):
        layer = 1 if part.startswith("rider:") else 0
        frm_name = part[6:8] if layer else part[:2]
        match = None
        for i, (s, lay) in enumerate(silvers):
            if i not in done and square_name(s) == frm_name and lay == layer:
                for t, nb, _ in piece_moves(cur, s, lay):
                    if t == part:
                        match = (i, nb)
                        break
        if match is None:
            return None
        done.add(match[0])
        cur = match[1]
    if cur.in_check(c) or is_disguised_pass(bd, cur, text):
        return None
    cur.stm = 1 - c
    return cur


def has_legal_turn(bd: Board) -> bool:
    c = bd.stm
    for text, nb in _first_parts(bd):
        if not nb.in_check(c) and not is_disguised_pass(bd, nb, text):
            return True
    return False


def is_disguised_pass(bd: Board, nb: Board, text: str) -> bool:
    """**[reading, 2026-12-02]** A turn that leaves the position as it was (board, marks, hands, emblems; rights
    aside from the one it spends) is no turn: a gale horse or an awakened rook out and back, an empty silver wave.
    The only pass is the silver curtain with no free square around the king (``curtain:``)."""
    return text != "curtain:" and nb.b == bd.b and nb.m == bd.m and nb.r == bd.r and nb.rm == bd.rm and \
        nb.hand == bd.hand and nb.th == bd.th and nb.emblem == bd.emblem
