"""Search for Ousho Fantasista: expectimax over whole turns with Star1 pruning at the d20 chance nodes.

* Decision nodes are whole turns (a multi-part turn is one action; its parts were expanded by the generator), in
  negamax form: a value is always from the point of view of the side whose turn it is on the board.
* Chance nodes come right after plies 15k and 15k+1 (:func:`engine.variants.fantasista.magic_after`). The 20 faces
  are merged into the distinct table rows ("1", "2", "3", "4-8", "nothing" after the ``reserved`` mapping), so at
  most five children with their probabilities. After ayumi 3 / yokaku 3 the roller also picks the target: a min
  (from the point of view of the side to move) over the eligible pieces.
* Star1: every value lies in [-MATE, MATE] (the evaluation is clamped to +-EVAL_BOUND), so after some outcomes have
  been searched the remaining ones can only move the expectation within known bounds; each child gets the window
  that would make the whole chance node fail low/high, and the node is cut as soon as it does.
* The transposition table key is the whole position *and* whether a roll is pending and how far the next magics are
  (the move number modulo 15), so the same board before and after a roll is never confused.
* ``chance_aware=False`` gives the roll-ignoring engine used as a baseline: no chance nodes (every roll treated as
  nothing) and no expected value of coming magics in the evaluation.

This is plain Python over the Python turn generator: fine for tiny depths and matches at 1-2 plies; the numba port
of the generator is what will make deeper search possible.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from functools import lru_cache

from engine.variants.fantasista import pieces as PC
from engine.variants.fantasista.board import RIGHT_AWAKEN, RIGHT_CURTAIN, RIGHT_WAVE, Board, legal_turns
from engine.variants.fantasista.state import FAIRIES, FantasistaState, magic_after, roll_effect

MATE = 30000
EVAL_BOUND = 20000
EXACT, LOWER, UPPER = 0, 1, 2

VALUE = [0, 90, 315, 405, 495, 540, 855, 990, 0, 540, 540, 540, 540, 945, 1395,
         1600, 1500, 450, 1300, 1250, 800]
HAND_BONUS = 1.1
RIGHT_VALUE = (450, 350, 350)  # awakening, curtain, wave
EMBLEM_VALUE = 400
INVINCIBLE_VALUE = 250
CARRIER_VALUE = 300
RIDER_BONUS = 150

# Value of receiving each row of each fairy's table (the immediate material or right it brings).
ROW_VALUE = {
    "hiko": {"1": VALUE[PC.D], "2": VALUE[PC.O], "3": RIGHT_VALUE[0], "4-8": VALUE[PC.R], "nothing": 0},
    "ayumi": {"1": EMBLEM_VALUE, "2": 2 * VALUE[PC.Y], "3": INVINCIBLE_VALUE,
              "4-8": 2 * VALUE[PC.P] + VALUE[PC.G], "nothing": 0},
    "yokaku": {"1": VALUE[PC.T], "2": VALUE[PC.H], "3": CARRIER_VALUE, "4-8": VALUE[PC.B], "nothing": 0},
    "ginsara": {"1": RIGHT_VALUE[1], "2": VALUE[PC.W], "3": RIGHT_VALUE[2], "4-8": 2 * VALUE[PC.S], "nothing": 0},
}


def roll_rows(reserved: str) -> list[tuple[str, float]]:
    """The distinct table rows of a d20 roll with their probabilities (identical outcomes merged)."""
    rows: dict[str, float] = {}
    for n in range(1, 21):
        r = roll_effect(n, reserved)
        rows[r] = rows.get(r, 0.0) + 0.05
    return sorted(rows.items())


@lru_cache(maxsize=None)
def magic_expectation(fairy: str, reserved: str) -> float:
    return sum(p * ROW_VALUE[fairy][row] for row, p in roll_rows(reserved))


def plies_to_next_magic(move_number: int, side: int) -> int:
    """Plies from now (``move_number`` = the next ply) until ``side`` next receives a magic."""
    p = move_number
    while not (magic_after(p) and (p - 1) % 2 == side):
        p += 1
    return p - move_number + 1


@dataclass
class FantasistaResult:
    best: str | None
    score: float
    depth: int
    nodes: int
    pv: list[str]


class FantasistaSearcher:
    """Depth-limited expectimax (negamax + Star1) over whole turns.

    >>> from engine.variants.fantasista import new_game
    >>> r = FantasistaSearcher().search(new_game(("hiko", "ginsara")), depth=1)
    >>> r.best is not None and r.nodes > 0
    True
    """

    def __init__(self, chance_aware: bool = True, reserved: str = "4-8") -> None:
        self.chance_aware = chance_aware
        self.reserved = reserved
        self.tt: dict[tuple, tuple[int, float, int, str | None]] = {}
        self.nodes = 0
        self._turn_cache: dict[tuple, dict[str, Board]] = {}

    # ---------------------------------------------------------- evaluation
    def evaluate(self, bd: Board, move_number: int, fairy: list[int]) -> float:
        """Static value for ``bd.stm``: material (tokens and specials included), hands, rights, emblem,
        invincible pieces, carriers and riders, and (chance-aware) the expected value of each side's next magic,
        discounted by how far away it is."""
        score = [0.0, 0.0]
        for s in range(81):
            for code, mk in ((bd.b[s], bd.m[s]), (bd.r[s], bd.rm[s])):
                if not code:
                    continue
                c = code >> 5
                v = VALUE[code & 31]
                if mk & PC.INVINCIBLE:
                    v += INVINCIBLE_VALUE
                if mk & PC.CARRIER:
                    v += CARRIER_VALUE + (RIDER_BONUS if bd.r[s] else 0)
                score[c] += v
        for c in (0, 1):
            for pt in range(1, 21):
                score[c] += HAND_BONUS * VALUE[pt] * (bd.hand[c][pt] + bd.th[c][pt])
            score[c] += sum(n * v for n, v in zip(bd.rights[c], RIGHT_VALUE))
            if bd.emblem[c]:
                score[c] += EMBLEM_VALUE + 60 * (bd.hand[c][PC.P] + bd.th[c][PC.P])
            if self.chance_aware:
                e = magic_expectation(FAIRIES[fairy[c]], self.reserved)
                score[c] += e * max(0.0, 1.0 - plies_to_next_magic(move_number, c) / 30.0)
        v = score[bd.stm] - score[1 - bd.stm]
        return max(-EVAL_BOUND, min(EVAL_BOUND, v))

    # -------------------------------------------------------------- search
    def search(self, game: FantasistaState, depth: int = 2, time_limit: float | None = None) -> FantasistaResult:
        """Best turn for the side to move of ``game`` (at a decision node of phase "move"), iterative deepening."""
        if game.phase == "target":
            return self._best_target(game)
        self.nodes = 0
        self.fairy = list(game.fairy)
        deadline = None if time_limit is None else time.time() + time_limit
        best, score, done = None, 0.0, 0
        for d in range(1, depth + 1):
            s, b = self._decision(game.bd, game.move_number, d, -MATE - 1, MATE + 1, root=True)
            best, score, done = b, s, d
            if deadline is not None and time.time() > deadline:
                break
        return FantasistaResult(best, score, done, self.nodes, [best] if best else [])

    def _turns(self, bd: Board) -> dict[str, Board]:
        k = bd.key()
        t = self._turn_cache.get(k)
        if t is None:
            if len(self._turn_cache) > 20000:
                self._turn_cache.clear()
            t = self._turn_cache[k] = legal_turns(bd)[0]
        return t

    def _order(self, bd: Board, turns: dict[str, Board], hint: str | None):
        c = bd.stm
        own_before = sum(self._count(bd, 1 - c))

        def key(item):
            text, nb = item
            gain = own_before - sum(self._count(nb, 1 - c))
            return (text != hint, -gain)
        return sorted(turns.items(), key=key)

    @staticmethod
    def _count(bd: Board, c: int):
        lo, hi = 32 * c, 32 * c + 32
        return (1 for s in range(81) if lo <= bd.b[s] < hi)

    def _decision(self, bd: Board, mnum: int, depth: int, alpha: float, beta: float, root: bool = False):
        self.nodes += 1
        key = (bd.key(), mnum % 30, self.chance_aware)
        hint = None
        ent = self.tt.get(key)
        if ent is not None:
            d, v, flag, hint = ent
            if not root and d >= depth and (flag == EXACT or (flag == LOWER and v >= beta)
                                            or (flag == UPPER and v <= alpha)):
                return v, hint
        if depth <= 0:  # horizon: static value (mates are found one ply earlier, where turns are generated)
            return self.evaluate(bd, mnum, self.fairy), None
        turns = self._turns(bd)
        if not turns:
            return -MATE, None
        a0 = alpha
        best_v, best_t = -MATE - 1, None
        for text, nb in self._order(bd, turns, hint):
            v = -self._after_turn(nb, mnum, depth - 1, -beta, -alpha)
            if v > best_v:
                best_v, best_t = v, text
            alpha = max(alpha, v)
            if alpha >= beta:
                break
        flag = EXACT if a0 < best_v < beta else (LOWER if best_v >= beta else UPPER)
        self.tt[key] = (depth, best_v, flag, best_t)
        return best_v, best_t

    def _after_turn(self, nb: Board, played: int, depth: int, alpha: float, beta: float) -> float:
        """Value for ``nb.stm`` after ply ``played`` was made: through the roll if one is due."""
        if self.chance_aware and magic_after(played):
            return self._chance(nb, played + 1, depth, alpha, beta)
        return self._decision(nb, played + 1, depth, alpha, beta)[0]

    def _chance(self, nb: Board, mnum: int, depth: int, alpha: float, beta: float) -> float:
        """Star1 over the merged roll outcomes; the roller is ``1 - nb.stm``."""
        self.nodes += 1
        lo, hi = -MATE, MATE
        outcomes = []
        for row, p in roll_rows(self.reserved):
            outcomes.append((p, self._receive(nb, row)))
        done_p, acc = 0.0, 0.0
        for p, children in outcomes:
            rest = 1.0 - done_p - p
            ca = max(lo, (alpha - acc - hi * rest) / p)
            cb = min(hi, (beta - acc - lo * rest) / p)
            v = None
            for child in children:  # the roller picks the target: the worst for the side to move
                cv, _ = self._decision(child, mnum, depth, ca, cb if v is None else min(cb, v))
                v = cv if v is None else min(v, cv)
            if v <= ca:
                return acc + p * v + hi * rest  # cannot reach alpha: fail low
            if v >= cb:
                return acc + p * v + lo * rest  # exceeds beta whatever the rest: fail high
            acc += p * v
            done_p += p
        return acc

    def _receive(self, nb: Board, row: str) -> list[Board]:
        """Boards after the roller receives ``row`` (several when a target is chosen)."""
        c = 1 - nb.stm
        fairy = FAIRIES[self.fairy[c]]
        bd = nb.copy()
        if row == "nothing":
            return [bd]
        add = {("hiko", "1"): ("th", PC.D, 1), ("hiko", "2"): ("th", PC.O, 1), ("hiko", "4-8"): ("th", PC.R, 1),
               ("ayumi", "2"): ("th", PC.Y, 2), ("yokaku", "1"): ("th", PC.T, 1), ("yokaku", "2"): ("th", PC.H, 1),
               ("yokaku", "4-8"): ("th", PC.B, 1), ("ginsara", "2"): ("th", PC.W, 1),
               ("ginsara", "4-8"): ("th", PC.S, 2)}.get((fairy, row))
        if add:
            bd.th[c][add[1]] += add[2]
        elif (fairy, row) == ("ayumi", "4-8"):
            bd.th[c][PC.P] += 2
            bd.th[c][PC.G] += 1
        elif (fairy, row) == ("ayumi", "1"):
            bd.emblem[c] = True
        elif (fairy, row) == ("hiko", "3"):
            bd.rights[c][RIGHT_AWAKEN] += 1
        elif (fairy, row) == ("ginsara", "1"):
            bd.rights[c][RIGHT_CURTAIN] += 1
        elif (fairy, row) == ("ginsara", "3"):
            bd.rights[c][RIGHT_WAVE] += 1
        elif row == "3":
            out = []
            for s in range(81):
                if fairy == "ayumi":
                    for layer, (code, mk) in enumerate(((bd.b[s], bd.m[s]), (bd.r[s], bd.rm[s]))):
                        if code and code >> 5 == c and code & 31 in (PC.P, PC.PP) and not mk & PC.INVINCIBLE:
                            x = bd.copy()
                            if layer:
                                x.rm[s] |= PC.INVINCIBLE
                            else:
                                x.m[s] |= PC.INVINCIBLE
                            out.append(x)
                else:
                    code = bd.b[s]
                    if code and code >> 5 == c and code & 31 in (PC.B, PC.PB) and not bd.m[s] & PC.CARRIER:
                        x = bd.copy()
                        x.m[s] |= PC.CARRIER
                        out.append(x)
            return out or [bd]
        return [bd]

    def _best_target(self, game: FantasistaState) -> FantasistaResult:
        """Magic target (a decision of the roller that costs no move): the one leaving the opponent worst off."""
        self.fairy = list(game.fairy)
        best, best_v = None, None
        for act in game.legal_actions():
            g = game.copy()
            g.apply(act)
            v = -self.evaluate(g.bd, g.move_number, self.fairy)  # bd.stm is the opponent
            if best_v is None or v > best_v:
                best, best_v = act, v
        return FantasistaResult(best, best_v or 0.0, 0, 0, [best] if best else [])


def greedy_turn(game: FantasistaState) -> str:
    """The one-ply greedy player: the turn with the best static material after it (no look-ahead)."""
    s = FantasistaSearcher(chance_aware=False)
    if game.phase == "target":
        return s._best_target(game).best
    s.fairy = list(game.fairy)
    turns = game.turns()[0]
    return max(turns, key=lambda t: -s.evaluate(turns[t], game.move_number + 1, s.fairy))
