"""A slow, separately written reference generator of full Ousho Fantasista turns (the test oracle).

It shares nothing with ``engine/variants/fantasista`` except the extended SFEN it reads: its own piece movement
(owner-view vectors, no Betza), its own board (a dict of squares (file 1-9, rank 1-9) -> stack), its own capture,
promotion, carrier, drop and rights rules, written from ``shared/spec/fantasista.md`` and ``docs/fantasista.md``.
It returns the set of *outcomes* of the legal turns, each a neutral tuple (see :func:`outcome`).
"""
from __future__ import annotations

import re

# ----------------------------------------------------------------- pieces (owner view: x = right, y = forward)
ORTH = [(0, 1), (0, -1), (1, 0), (-1, 0)]
DIAG = [(1, 1), (-1, 1), (1, -1), (-1, -1)]
KNIGHT8 = [(1, 2), (-1, 2), (1, -2), (-1, -2), (2, 1), (-2, 1), (2, -1), (-2, -1)]
GOLD = [(0, 1), (1, 1), (-1, 1), (1, 0), (-1, 0), (0, -1)]
SILVER = [(0, 1), (1, 1), (-1, 1), (1, -1), (-1, -1)]
MOVES = {  # kind -> (steps, slide directions)
    "P": ([(0, 1)], []), "L": ([], [(0, 1)]), "N": ([(1, 2), (-1, 2)], []), "S": (SILVER, []),
    "G": (GOLD, []), "B": ([], DIAG), "R": ([], ORTH), "K": (ORTH + DIAG, []),
    "+P": (GOLD, []), "+L": (GOLD, []), "+N": (GOLD, []), "+S": (GOLD, []),
    "+B": (ORTH, DIAG), "+R": (DIAG, ORTH), "D": (DIAG, ORTH), "O": (DIAG + KNIGHT8, ORTH),
    "Y": ([], [(0, 1)]), "T": (ORTH, DIAG), "H": (ORTH, DIAG), "W": (SILVER, []),
}
PROMO = {"P": "+P", "L": "+L", "N": "+N", "S": "+S", "B": "+B", "R": "+R", "Y": "+P"}
SPECIAL = set("DOYTHW")
UNPROMOTE = {"+P": "P", "+L": "L", "+N": "N", "+S": "S", "+B": "B", "+R": "R"}


class Piece:
    __slots__ = ("owner", "kind", "token", "inv", "carrier", "rider")

    def __init__(self, owner, kind, token=False, inv=False, carrier=False, rider=None):
        self.owner, self.kind, self.token, self.inv, self.carrier, self.rider = owner, kind, token, inv, carrier, rider

    def clone(self):
        return Piece(self.owner, self.kind, self.token, self.inv, self.carrier,
                     self.rider.clone() if self.rider else None)

    def tup(self):
        return (self.owner, self.kind, self.token, self.inv, self.carrier, self.rider.tup() if self.rider else None)


class Pos:
    def __init__(self):
        self.sq = {}  # (file, rank) -> Piece
        self.hand = [{}, {}]
        self.thand = [{}, {}]
        self.rights = [{"A": 0, "C": 0, "W": 0}, {"A": 0, "C": 0, "W": 0}]
        self.emblem = [False, False]
        self.turn = 0

    def clone(self):
        p = Pos()
        p.sq = {k: v.clone() for k, v in self.sq.items()}
        p.hand = [dict(h) for h in self.hand]
        p.thand = [dict(h) for h in self.thand]
        p.rights = [dict(r) for r in self.rights]
        p.emblem = list(self.emblem)
        p.turn = self.turn
        return p


def outcome(p: Pos) -> tuple:
    """Neutral description of a position: board stacks, hands without zeros, rights, emblems, side to move."""
    clean = lambda h: tuple(sorted((k, v) for k, v in h.items() if v))
    return (tuple(sorted((k, v.tup()) for k, v in p.sq.items())), clean(p.hand[0]), clean(p.hand[1]),
            clean(p.thand[0]), clean(p.thand[1]),
            tuple(sorted(p.rights[0].items())), tuple(sorted(p.rights[1].items())), tuple(p.emblem), p.turn)


# ----------------------------------------------------------------- reading the extended SFEN
def parse(sfen: str) -> Pos:
    board, side, hand, _num, extra = sfen.split()
    p = Pos()
    for i, row in enumerate(board.split("/")):
        rank = i + 1
        file = 9
        for tok in re.findall(r"\d|\+?[A-Za-z]", row):
            if tok.isdigit():
                file -= int(tok)
                continue
            kind = tok.upper()
            p.sq[(file, rank)] = Piece(0 if tok[-1].isupper() else 1, kind, token=kind in SPECIAL)
            file -= 1
    p.turn = 0 if side == "b" else 1
    if hand != "-":
        for n, ch in re.findall(r"(\d*)([A-Za-z])", hand):
            h = p.hand[0 if ch.isupper() else 1]
            h[ch.upper()] = h.get(ch.upper(), 0) + (int(n) if n else 1)
    for item in extra.split(";"):
        k, v = item.split("=", 1)
        if k == "r":
            for n, ch in re.findall(r"(\d*)([A-Za-z])", v):
                c = 0 if ch.isupper() else 1
                if ch.upper() == "E":
                    p.emblem[c] = True
                else:
                    p.rights[c][ch.upper()] += int(n) if n else 1
        elif k == "h":
            for n, ch in re.findall(r"(\d*)([A-Za-z])", v):
                h = p.thand[0 if ch.isupper() else 1]
                h[ch.upper()] = h.get(ch.upper(), 0) + (int(n) if n else 1)
        elif k == "m" and v:
            for e in v.split(","):
                m = re.fullmatch(r"(\d)([a-i])('?)(!?)(@(\+?[A-Za-z])?('?)(!?))?", e)
                at = (int(m.group(1)), ord(m.group(2)) - 96)
                pc = p.sq[at]
                pc.token = pc.token or bool(m.group(3))
                pc.inv = bool(m.group(4))
                if m.group(5):
                    pc.carrier = True
                    if m.group(6):
                        kind = m.group(6).upper()
                        pc.rider = Piece(pc.owner, kind, token=bool(m.group(7)) or kind in SPECIAL,
                                         inv=bool(m.group(8)))
    return p


# ----------------------------------------------------------------- geometry
def vec(owner, dx, dy):
    """Owner view -> board (d file, d rank): sente's right is file 1 and its forward is rank 1 (a)."""
    return (-dx, -dy) if owner == 0 else (dx, dy)


def on(f, r):
    return 1 <= f <= 9 and 1 <= r <= 9


def reach(p: Pos, piece: Piece, at):
    """Squares the piece reaches from ``at``: its steps, and its slides up to and including the first piece."""
    steps, slides = MOVES[piece.kind]
    out = []
    for dx, dy in steps:
        df, dr = vec(piece.owner, dx, dy)
        t = (at[0] + df, at[1] + dr)
        if on(*t):
            out.append(t)
    for dx, dy in slides:
        df, dr = vec(piece.owner, dx, dy)
        t = (at[0] + df, at[1] + dr)
        while on(*t):
            out.append(t)
            if t in p.sq:
                break
            t = (t[0] + df, t[1] + dr)
    return out


def attacked(p: Pos, target, by) -> bool:
    for at, pc in p.sq.items():
        for x in (pc, pc.rider):
            if x is not None and x.owner == by and target in reach(p, x, at):
                return True
    return False


def king_at(p: Pos, c):
    for at, pc in p.sq.items():
        if pc.owner == c and pc.kind == "K":
            return at
    return None


def last_ranks(owner, rank):
    return rank if owner == 0 else 10 - rank  # 1 = the owner's last rank


def zone(owner, rank):
    return last_ranks(owner, rank) <= 3


def may_capture(mover: str, target: Piece) -> bool:
    if target.kind == "K":
        return False
    if target.inv:
        return mover == "K"
    if target.kind == "O":
        return mover not in ("P", "L", "N")
    if target.kind == "T":
        return mover in ("K", "R", "L", "N")
    return True


def take(p: Pos, c, at):
    pc = p.sq.pop(at)
    for x in (pc, pc.rider):
        if x is not None and not x.token:
            k = UNPROMOTE.get(x.kind, x.kind)
            p.hand[c][k] = p.hand[c].get(k, 0) + 1


def stuck(kind, owner, rank):
    lr = last_ranks(owner, rank)
    return (kind in ("P", "L", "Y") and lr == 1) or (kind == "N" and lr <= 2)


# ----------------------------------------------------------------- one move of a piece
def moves_of(p: Pos, at, upper: bool):
    """(board after, where the moved piece ends as (square, upper)) for every ordinary move of a piece."""
    stack = p.sq[at]
    piece = stack.rider if upper else stack
    c = piece.owner
    out = []
    for t in reach(p, piece, at):
        other = p.sq.get(t)
        board_it = False
        if other is not None:
            if other.owner == c:
                if not other.carrier or other.rider is not None or piece.kind == "K" or piece.carrier:
                    continue
                board_it = True
            elif not may_capture(piece.kind, other):
                continue
        finals = [(t, None)]
        if piece.kind == "Y" and other is not None and not board_it:
            df, dr = vec(c, 0, 1)
            t2 = (t[0] + df, t[1] + dr)
            o2 = p.sq.get(t2)
            if on(*t2) and o2 is not None and o2.owner != c and may_capture("Y", o2):
                finals.append((t2, t))
        for final, via in finals:
            can = piece.kind in PROMO and (zone(c, at[1]) or zone(c, final[1]))
            for promote in ([True] if can and stuck(piece.kind, c, final[1]) else [True, False] if can else [False]):
                q = p.clone()
                moving = q.sq[at].rider if upper else q.sq[at]
                if upper:
                    q.sq[at].rider = None
                else:
                    del q.sq[at]
                if promote:
                    moving.kind = PROMO[moving.kind]
                if via is not None:
                    take(q, c, via)
                if board_it:
                    moving.carrier = False
                    q.sq[final].rider = moving
                    out.append((q, (final, True)))
                else:
                    if final in q.sq:
                        take(q, c, final)
                    q.sq[final] = moving
                    out.append((q, (final, False)))
    return out


def in_place_captures(p: Pos, piece: Piece, at):
    out = []
    for t in set(reach(p, piece, at)):
        other = p.sq.get(t)
        if other is not None and other.owner != piece.owner and may_capture(piece.kind, other):
            q = p.clone()
            take(q, piece.owner, t)
            out.append(q)
    return out


# ----------------------------------------------------------------- whole turns
def candidate_turns(p: Pos):
    """Boards after every candidate turn of the side to move (own king safety not yet checked)."""
    c = p.turn
    res = []
    for at in sorted(p.sq):
        stack = p.sq[at]
        if stack.owner != c:
            continue
        for upper in ([False, True] if stack.rider else [False]):
            piece = stack.rider if upper else stack
            for q, (end, up) in moves_of(p, at, upper):
                res.append(q)
                if not upper and stack.rider is not None:
                    res.extend(q2 for q2, _ in moves_of(q, end, True))
                elif piece.kind == "H" and max(abs(end[0] - at[0]), abs(end[1] - at[1])) >= 4:
                    res.extend(q2 for q2, _ in moves_of(q, end, up))
            if piece.kind == "R" and p.rights[c]["A"] > 0:
                for q, (end, up) in moves_of(p, at, upper):
                    q.rights[c]["A"] -= 1
                    res.extend(q2 for q2, _ in moves_of(q, end, up))
            if piece.kind == "W" and not upper:
                res.extend(in_place_captures(p, piece, at))
    # drops
    empties = [(f, r) for f in range(1, 10) for r in range(1, 10) if (f, r) not in p.sq]
    for token, hand in ((False, p.hand[c]), (True, p.thand[c])):
        for kind, n in hand.items():
            if n <= 0:
                continue
            for t in empties:
                q = p.clone()
                (q.thand if token else q.hand)[c][kind] -= 1
                if p.emblem[c] and kind == "P":
                    q2 = q.clone()
                    q2.sq[t] = Piece(c, "+P", token=token)
                    res.append(q2)
                if stuck(kind, c, t[1]):
                    continue
                if kind == "P" and any(pc.owner == c and pc.kind == "P" and at[0] == t[0]
                                       for at, s in p.sq.items() for pc in (s, s.rider) if pc is not None):
                    continue
                q.sq[t] = Piece(c, kind, token=token)
                if kind == "P" and drop_mates(q, c, t):
                    continue
                res.append(q)
                if kind in ("D", "W"):
                    res.extend(in_place_captures(q, q.sq[t], t))
    # silver curtain
    k = king_at(p, c)
    if p.rights[c]["C"] > 0 and k is not None:
        free = [(k[0] + a, k[1] + b) for a in (-1, 0, 1) for b in (-1, 0, 1) if (a, b) != (0, 0)]
        free = [s for s in free if on(*s) and s not in p.sq]
        want = min(2, len(free))
        pairs = [()] if want == 0 else [(s,) for s in free] if want == 1 else \
            [(a, b) for i, a in enumerate(free) for b in free[i + 1:]]
        for pair in pairs:
            q = p.clone()
            q.rights[c]["C"] -= 1
            q.curtain_pass = not pair  # the seed's one pass: no free square around the king
            for s in pair:
                q.sq[s] = Piece(c, "S", token=True)
            res.append(q)
            for s in pair:
                res.extend(q2 for q2, _ in moves_of(q, s, False))
    # silver wave
    if p.rights[c]["W"] > 0:
        silvers = [(at, up) for at, s in p.sq.items() for up, pc in ((False, s), (True, s.rider))
                   if pc is not None and pc.owner == c and pc.kind == "S"]
        if silvers:
            q = p.clone()
            q.rights[c]["W"] -= 1
            frontier = [(q, frozenset())]
            seen = set()
            while frontier:
                cur, done = frontier.pop()
                key = (outcome(cur), done)
                if key in seen:
                    continue
                seen.add(key)
                res.append(cur)
                for i, (at, up) in enumerate(silvers):
                    if i not in done:
                        frontier.extend((q2, done | {i}) for q2, _ in moves_of(cur, at, up))
    return res


def drop_mates(q: Pos, c, t) -> bool:
    e = 1 - c
    k = king_at(q, e)
    df, dr = vec(c, 0, 1)
    if k != (t[0] + df, t[1] + dr):
        return False
    test = q.clone()
    test.turn = e
    return not legal_outcomes(test, stop_at_first=True)


def _without_rights(o: tuple) -> tuple:
    return o[:5] + o[7:]


def legal_outcomes(p: Pos, stop_at_first: bool = False) -> set:
    """Outcomes of the legal turns. A turn after which everything but the rights is as before (a gale horse or an
    awakened rook out and back, an empty wave) is a pass in disguise and no turn; only the curtain with no free
    square passes (spec, 2026-12-02)."""
    c = p.turn
    out = set()
    before = _without_rights(outcome(p))
    for q in candidate_turns(p):
        k = king_at(q, c)
        if k is not None and attacked(q, k, 1 - c):
            continue
        if not getattr(q, "curtain_pass", False) and _without_rights(outcome(q)) == before:
            continue
        q.turn = 1 - c
        out.add(outcome(q))
        if stop_at_first:
            return out
    return out
