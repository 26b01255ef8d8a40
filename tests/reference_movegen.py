"""A slow, separately written reference move generator for leaper/slider variants (tests only).

It shares nothing with the kernels but the piece definitions (Betza strings, re-parsed here): positions are a dict
of ``(file, rank) -> (letter, colour)``, legality is decided the naive way (play the move on a copy, then see
whether any enemy move could take the king). Use it as an oracle for boards and rules cshogi cannot check
(13x13, variants).
"""
from __future__ import annotations

from engine import Position
from engine.geometry import RANK_LETTERS
from engine.pieces import parse_betza


class RefBoard:
    def __init__(self, pos: Position) -> None:
        v = pos.variant
        g = v.geometry
        self.variant = v
        self.nf, self.nr = g.n_files, g.n_ranks
        self.cells: dict[tuple[int, int], tuple[str, int]] = {}
        for sq in range(g.n_squares):
            piece = pos.piece_at(sq)
            if piece:
                self.cells[(g.file_of(sq), g.rank_of(sq))] = piece
        self.hands = [dict(pos.hand(0)), dict(pos.hand(1))]
        self.turn = pos.turn
        self.moves = {p.letter: parse_betza(p.betza) for p in v.pieces}
        self.promotes = {p.letter: p.promotes_to for p in v.pieces}
        self.royal = {p.letter for p in v.pieces if p.royal}
        self.demote = {p.promotes_to: p.letter for p in v.pieces if p.promotes_to}

    # geometry from a colour's view: forward for sente is toward rank 0, right is toward file 0
    def _delta(self, color: int, dx: int, dy: int) -> tuple[int, int]:
        return (-dx, -dy) if color == 0 else (dx, dy)

    def _on(self, f: int, r: int) -> bool:
        return 0 <= f < self.nf and 0 <= r < self.nr

    def targets(self, f: int, r: int) -> list[tuple[int, int]]:
        letter, color = self.cells[(f, r)]
        leaps, slides = self.moves[letter]
        out = []
        for dx, dy in leaps:
            df, dr = self._delta(color, dx, dy)
            if self._on(f + df, r + dr):
                t = self.cells.get((f + df, r + dr))
                if t is None or t[1] != color:
                    out.append((f + df, r + dr))
        for (dx, dy), reach in slides.items():
            df, dr = self._delta(color, dx, dy)
            x, y, n = f + df, r + dr, 1
            while self._on(x, y) and n <= reach:
                t = self.cells.get((x, y))
                if t is not None and t[1] == color:
                    break
                out.append((x, y))
                if t is not None:
                    break
                x, y, n = x + df, y + dr, n + 1
        return out

    def can_ever_move(self, letter: str, color: int, f: int, r: int) -> bool:
        leaps, slides = self.moves[letter]
        return any(self._on(f + a, r + b) for a, b in
                   [self._delta(color, dx, dy) for dx, dy in list(leaps) + list(slides)])

    def in_zone(self, color: int, r: int) -> bool:
        z = self.variant.promotion_ranks
        return r < z if color == 0 else r >= self.nr - z

    def king_attacked(self, color: int) -> bool:
        king = [sq for sq, (l, c) in self.cells.items() if c == color and l in self.royal]
        if not king:
            return False
        return any(king[0] in self.targets(*sq) for sq, (_, c) in list(self.cells.items()) if c != color)

    def name(self, f: int, r: int) -> str:
        return f"{f + 1}{RANK_LETTERS[r]}"

    def pseudo_moves(self):
        """(usi, apply-function) pairs."""
        color = self.turn
        for (f, r), (letter, c) in list(self.cells.items()):
            if c != color:
                continue
            for (x, y) in self.targets(f, r):
                promo = self.promotes[letter]
                can_promote = promo and (self.in_zone(color, r) or self.in_zone(color, y))
                if can_promote:
                    yield f"{self.name(f, r)}{self.name(x, y)}+", ((f, r), (x, y), promo, None)
                if not can_promote or self.can_ever_move(letter, color, x, y):
                    yield f"{self.name(f, r)}{self.name(x, y)}", ((f, r), (x, y), letter, None)
        if not self.variant.drops:
            return
        for letter, n in self.hands[color].items():
            if n == 0:
                continue
            for f in range(self.nf):
                if letter == self.variant.pawn and self.variant.nifu and any(
                        self.cells.get((f, y)) == (letter, color) for y in range(self.nr)):
                    continue
                for r in range(self.nr):
                    if (f, r) not in self.cells and self.can_ever_move(letter, color, f, r):
                        yield f"{letter}*{self.name(f, r)}", (None, (f, r), letter, letter)

    def play(self, action) -> "RefBoard":
        frm, to, letter, dropped = action
        nb = RefBoard.__new__(RefBoard)
        nb.__dict__.update(self.__dict__)
        nb.cells = dict(self.cells)
        nb.hands = [dict(self.hands[0]), dict(self.hands[1])]
        color = self.turn
        if dropped:
            nb.hands[color][dropped] -= 1
        else:
            del nb.cells[frm]
            cap = self.cells.get(to)
            if cap:
                base = self.demote.get(cap[0], cap[0])
                if base not in self.royal:
                    nb.hands[color][base] = nb.hands[color].get(base, 0) + 1
        nb.cells[to] = (letter, color)
        nb.turn = 1 - color
        return nb

    def legal(self, check_uchifuzume: bool = True) -> set[str]:
        out = set()
        for usi, action in self.pseudo_moves():
            nb = self.play(action)
            if nb.king_attacked(self.turn):
                continue
            if (check_uchifuzume and action[3] == self.variant.pawn and self.variant.uchifuzume
                    and nb.king_attacked(nb.turn) and not nb.legal(check_uchifuzume=False)):
                continue
            out.add(usi)
        return out


def reference_legal_moves(pos: Position) -> set[str]:
    """Legal moves of ``pos`` in USI notation, computed the slow way."""
    return RefBoard(pos).legal()


class RefBoardLastRoyal(RefBoard):
    """The reference for last-royal variants (dai shogi): special movers, the exchange piece, last-royal legality."""

    def __init__(self, pos: Position) -> None:
        super().__init__(pos)
        self.special = {p.letter: p.special for p in self.variant.pieces}
        self.exchange = self.variant.exchange_piece

    def _step_squares(self, f: int, r: int):
        from engine.geometry import DIRECTIONS
        for df, dr in DIRECTIONS:
            if self._on(f + df, r + dr):
                yield (f + df, r + dr), (df, dr)

    def _with_promotions(self, letter, color, frm, to, usi, action_for):
        """Yield (usi, action) for the plain and promoted versions, as the zone rules allow."""
        promo = self.promotes[letter]
        target = self.cells.get(to)
        exchange_capture = target is not None and target[0] == self.exchange and target[1] != color
        can_promote = promo and (self.in_zone(color, frm[1]) or self.in_zone(color, to[1])) and not exchange_capture
        if can_promote:
            yield usi + "+", action_for(promo)
        if not can_promote or self.can_ever_move(letter, color, *to):
            yield usi, action_for(letter)

    def pseudo_moves(self):
        color = self.turn
        for (f, r), (letter, c) in list(self.cells.items()):
            if c != color:
                continue
            here = self.name(f, r)
            for to in self.targets(f, r):
                yield from self._with_promotions(letter, color, (f, r), to, here + self.name(*to),
                                                 lambda l, to=to: ((f, r), None, to, l))
            yield from self._two_step_moves(f, r)

    def _two_step_moves(self, f: int, r: int):
        """The moves of the piece on ``(f, r)`` that go through a middle square (the only ones capturing twice)."""
        letter, color = self.cells[(f, r)]
        here = self.name(f, r)
        kind = self.special[letter]
        if kind in ("pass-orthogonal", "pass-diagonal"):
            for (s1, (df, dr)) in self._step_squares(f, r):
                if (df == 0 or dr == 0) != (kind == "pass-orthogonal"):
                    continue
                p1 = self.cells.get(s1)
                s2 = (f + 2 * df, r + 2 * dr)
                if p1 is None or p1[1] == color or not self._on(*s2):
                    continue
                p2 = self.cells.get(s2)
                if p2 is not None and p2[1] == color:
                    continue
                usi = f"{here}{self.name(*s1)},{self.name(*s1)}{self.name(*s2)}"
                yield from self._with_promotions(letter, color, (f, r), s2, usi,
                                                 lambda l, s1=s1, s2=s2: ((f, r), s1, s2, l))
        elif kind == "lion":
            empties = [s for s, _ in self._step_squares(f, r) if s not in self.cells]
            for mid, _ in self._step_squares(f, r):
                pm = self.cells.get(mid)
                if pm is None or pm[1] == color:
                    continue
                for to, _ in self._step_squares(*mid):
                    pt = self.cells.get(to)
                    if to != (f, r) and pt is not None and pt[1] == color:
                        continue
                    usi = f"{here}{self.name(*mid)},{self.name(*mid)}{self.name(*to)}"
                    yield usi, ((f, r), mid, to, letter)
            if empties:
                mid = empties[0]
                yield f"{here}{self.name(*mid)},{self.name(*mid)}{here}", ((f, r), mid, (f, r), letter)

    def play(self, action) -> "RefBoardLastRoyal":
        frm, mid, to, letter = action
        nb = RefBoardLastRoyal.__new__(RefBoardLastRoyal)
        nb.__dict__.update(self.__dict__)
        nb.cells = dict(self.cells)
        color = self.turn
        del nb.cells[frm]
        if mid is not None and mid in nb.cells:
            captured = nb.cells.pop(mid)
            if captured[0] == self.exchange:
                nb.cells[mid] = (captured[0], color)  # converted in place, the mover goes on
        target = nb.cells.get(to)
        if target is not None and target[0] == self.exchange and target[1] != color:
            nb.cells[to] = (target[0], color)  # the captor is removed instead
        else:
            nb.cells[to] = (letter, color)
        nb.turn = 1 - color
        return nb

    def royals(self, color: int):
        return [sq for sq, (l, c) in self.cells.items() if c == color and l in self.royal]

    def legal(self, check_uchifuzume: bool = True) -> set[str]:
        out = set()
        for usi, action in self.pseudo_moves():
            nb = self.play(action)
            mine = nb.royals(self.turn)
            if not mine:
                continue
            if len(mine) == 1 and any(mine[0] in nb.targets(*sq) for sq, (_, c) in nb.cells.items()
                                      if c != self.turn):
                continue
            if len(mine) == 2 and nb.can_take_all_royals(self.turn):
                continue
            out.add(usi)
        return out

    def can_take_all_royals(self, color: int) -> bool:
        """Whether the side to move has a move that leaves ``color`` without royals, by trying every move that goes
        through a middle square (only those capture two pieces)."""
        return any(not self.play(action).royals(color)
                   for (f, r), (_, c) in list(self.cells.items()) if c == self.turn
                   for _, action in self._two_step_moves(f, r))


def reference_legal_moves_last_royal(pos: Position) -> set[str]:
    return RefBoardLastRoyal(pos).legal()
