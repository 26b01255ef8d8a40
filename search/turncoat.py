"""Search for turncoat shogi (寝返り将棋): plan choice, a belief over the enemy's plan, determinized search.

The engine sees one side's view (:class:`engine.variants.turncoat.TurncoatGame` replayed from the tokens the referee
sends: its own plan as ``plan=<squares>``, the enemy's as ``plan=?``). Its parts:

- **Plan choice** (``plan:<squares>``): each enemy piece has a static worth = chance it is still on the board in the
  enemy's hands at the trigger x twice its value (the swing of a defection) + a bonus for pieces that stand next to
  the enemy king (gold, silver) or in its corner (lance, knight); a plan's worth is the sum; the engine samples among
  the best plans (softmax, seeded) so that it is not predictable.
- **Belief** over the enemy's 332 plans: uniform by package, then uniform within. Before the enemy declares nothing is
  observed that rules a plan out, so the only updates are (a) the revelation (``defect=<squares>``: the belief becomes
  that plan and the engine switches to ordinary search) and (b) soft evidence: each time the enemy could declare and
  did not, every plan is weighted by ``max(floor, exp(-gain / tau))`` where ``gain`` is the material swing that plan
  would have had (a plan that would have won a rook outright is less likely to be held by an enemy who did not use it).
- **Move choice**: a shallow alpha-beta (own numba kernel over the standard-shogi position: full width to ``depth``,
  then captures-only quiescence; :class:`search.Searcher` crashed when this was written, and PIMC needs a score for
  every root move, not only the best) scores every legal move. While the enemy's trigger is far, each of our pieces is discounted by its chance of being a sleeper (from the
  belief) and each enemy piece named by our plan is counted partly as ours. Once the enemy can declare on its next
  turn, the best few moves are re-scored by perfect-information Monte Carlo: for each sampled enemy plan, the value
  after our move is the minimum of "the enemy does not declare" and "the enemy declares, then searches", averaged
  over the samples (identical flipped sets are searched once).
- **Own declaration**: when allowed, compare the best searched value after declaring with the best without; declare
  (``defect,<move>``, or ``defect`` alone when it wins at once) when the gain exceeds ``declare_margin``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine.kernels import kernel
from engine.kernels.movegen import (DROP, GEN_CAPTURES, GEN_SEARCH, MAX_MOVES, PROMOTE, do_move, generate, in_check,
                                    is_attacked, undo_move)
from engine.variants.shogi import SHOGI
from engine.variants.turncoat import TurncoatGame
from engine.variants.turncoat import plans as PL
from engine.variants.turncoat.state import DECLARE_FROM_MOVE, _build_position
from eval import build_eval_tables, threat_scratch, threat_scratch_shape
from eval.kernels import evaluate_k

MATE = 30000
INF = 32000
MAX_PLY = 32
Q_DEPTH = 8
KING_CAPTURE_GAIN = 5000
KING_RISK = 3000  # cost of a possible sleeper that would attack our king once turned (weighted by its probability)
ROOT_WINDOW = 400  # root moves are searched with alpha = best - ROOT_WINDOW (fail-soft bounds below that)
VALUES = {"P": 90, "L": 315, "N": 405, "S": 495, "G": 540, "B": 855, "R": 990, "K": 0,
          "+P": 530, "+L": 530, "+N": 530, "+S": 530, "+B": 945, "+R": 1395}


# ------------------------------------------------------------------------ kernels
@kernel
def _score_moves(P, E, moves, scores, n):
    for i in range(n):
        m = moves[i]
        s = 0
        if (m & DROP) == 0:
            cap = P.board[m & 0xFF]
            if cap != 0:
                s = 10000 + 10 * E.value[cap] - E.value[P.board[(m >> 8) & 0xFF]] // 10
        if m & PROMOTE:
            s += 600
        scores[i] = s


@kernel
def _pick(moves, scores, i, n):
    best = i
    for j in range(i + 1, n):
        if scores[j] > scores[best]:
            best = j
    m = moves[i]
    moves[i] = moves[best]
    moves[best] = m
    s = scores[i]
    scores[i] = scores[best]
    scores[best] = s


# Numba's disk cache mishandles recursive functions (loading them back crashed here), so the search is one loop
# over an explicit stack: ST[ply] holds depth, quiescence depth left, alpha, beta, best, move count, move index.
S_DEPTH, S_QD, S_ALPHA, S_BETA, S_BEST, S_N, S_I = range(7)


@kernel
def _search(P, T, E, MV, SC, ST, depth0, alpha0, beta0, ctl, att):
    """Negamax alpha-beta to ``depth0`` then captures-only quiescence (check evasions searched in full)."""
    ply = 0
    ST[0, S_DEPTH] = depth0
    ST[0, S_QD] = Q_DEPTH
    ST[0, S_ALPHA] = alpha0
    ST[0, S_BETA] = beta0
    entering = True
    value = 0
    while True:
        ret = False
        if entering:
            ctl[0] += 1
            depth = ST[ply, S_DEPTH]
            n = 0
            if ply >= MAX_PLY - 1:
                value = evaluate_k(P, T, E, att)
                ret = True
            elif depth > 0 or in_check(P, T):
                n = generate(P, T, GEN_SEARCH, MV[ply])
                if n == 0:
                    value = -MATE + ply
                    ret = True
                else:
                    ST[ply, S_BEST] = -INF if depth > 0 else -MATE + ply
            else:
                stand = evaluate_k(P, T, E, att)
                if stand >= ST[ply, S_BETA] or ST[ply, S_QD] <= 0:
                    value = stand
                    ret = True
                else:
                    if stand > ST[ply, S_ALPHA]:
                        ST[ply, S_ALPHA] = stand
                    ST[ply, S_BEST] = stand
                    n = generate(P, T, GEN_CAPTURES, MV[ply])
            if not ret:
                ST[ply, S_N] = n
                ST[ply, S_I] = 0
                _score_moves(P, E, MV[ply], SC[ply], n)
        else:  # back from a child that returned ``value``
            ply -= 1
            undo_move(P, T)
            v = -value
            if v > ST[ply, S_BEST]:
                ST[ply, S_BEST] = v
                if v > ST[ply, S_ALPHA]:
                    ST[ply, S_ALPHA] = v
                    if v >= ST[ply, S_BETA]:
                        value = v
                        ret = True
            ST[ply, S_I] += 1
        if not ret:
            i = ST[ply, S_I]
            n = ST[ply, S_N]
            if i >= n:
                value = ST[ply, S_BEST]
                ret = True
            else:
                _pick(MV[ply], SC[ply], i, n)
                do_move(P, T, MV[ply, i])
                d = ST[ply, S_DEPTH]
                ST[ply + 1, S_DEPTH] = d - 1 if d > 0 else 0
                ST[ply + 1, S_QD] = Q_DEPTH if d > 0 else ST[ply, S_QD] - 1
                ST[ply + 1, S_ALPHA] = -ST[ply, S_BETA]
                ST[ply + 1, S_BETA] = -ST[ply, S_ALPHA]
                ply += 1
                entering = True
                continue
        if ply == 0:
            return value
        entering = False


@kernel
def _root_scores(P, T, E, MV, SC, ST, roots, n, depth, out, ctl, att):
    """Score each root move (side-to-move view); moves far below the best get fail-soft upper bounds."""
    best = -INF
    for i in range(n):
        do_move(P, T, roots[i])
        lo = best - ROOT_WINDOW if best > -INF + ROOT_WINDOW else -INF
        v = -_search(P, T, E, MV, SC, ST, depth - 1, -INF, -lo, ctl, att)
        undo_move(P, T)
        out[i] = v
        if v > best:
            best = v
    return best


class Scorer:
    """Root move scores of a shogi :class:`engine.Position` by the kernels above (buffers owned here)."""

    def __init__(self) -> None:
        self.MV = np.zeros((MAX_PLY + 1, MAX_MOVES), np.int32)
        self.SC = np.zeros((MAX_PLY + 1, MAX_MOVES), np.int32)
        self.ST = np.zeros((MAX_PLY + 1, 8), np.int64)
        self.ctl = np.zeros(4, np.int64)
        self.att = np.zeros((2, 1), np.int32)  # the evaluation's scratch, sized to the board in scores()
        self.nodes = 0

    def scores(self, pos, codes, depth: int) -> np.ndarray:
        """Scores (centipawns, side to move) of ``codes`` played in ``pos`` (left unchanged)."""
        codes = np.asarray(codes, np.int32)
        out = np.zeros(len(codes), np.int64)
        if len(codes) == 0:
            return out
        p = pos.copy()
        p._ensure_depth(MAX_PLY + 8)
        E = build_eval_tables(p.variant)
        if self.att.shape != threat_scratch_shape(p.variant):
            self.att = threat_scratch(p.variant)
        # Captures and promotions first, so the window tightens early.
        order = np.argsort([-(int(p.state.board[c & 0xFF]) != 0 and not c & DROP) * 2 - bool(c & PROMOTE)
                            for c in codes], kind="stable")
        roots = codes[order].copy()
        tmp = np.zeros(len(codes), np.int64)
        self.ctl[0] = 0
        _root_scores(p.state, p.tables, E, self.MV, self.SC, self.ST, roots, len(roots), depth, tmp, self.ctl, self.att)
        self.nodes += int(self.ctl[0])
        out[order] = tmp
        return out

    def best(self, pos, depth: int) -> int:
        codes = pos.legal_codes("search")
        if len(codes) == 0:
            return -MATE
        return int(self.scores(pos, codes, depth).max())


# ------------------------------------------------------------------------ plans
# Chance that the piece is still on the board, in the enemy's hands, when the trigger comes (move 31/32), and a bonus
# for where it then stands (golds and silvers beside the enemy king; lances and knights in its corner).
SURVIVE = {"R": 0.85, "B": 0.75, "G": 0.9, "S": 0.8, "N": 0.45, "L": 0.7, "P": 0.55}
BONUS = {"G": 600, "S": 150, "L": 60, "N": 60, "P": 0, "R": 0, "B": 0}


def piece_worth(pid: int) -> float:
    """Static worth of naming the enemy piece that starts on ``pid`` (see the module doc)."""
    k = PL.kind_of(pid)
    return SURVIVE[k] * (2 * VALUES[k] + BONUS[k])


def plan_prior(side: int) -> np.ndarray:
    """The default belief over ``side``'s 332 plans: uniform by package, then within (sums to 1)."""
    plans = PL.all_plans(side)
    counts = {k: sum(1 for p in plans if PL.package_of(p) == k) for k in (1, 2, 3, 4)}
    w = np.array([0.25 / counts[PL.package_of(p)] for p in plans])
    return w / w.sum()


def choose_plan(side: int, rng: np.random.Generator, temperature: float = 120.0, top: int = 24) -> str:
    """``plan:<squares>`` for ``side``: a softmax draw among the ``top`` plans by static worth."""
    plans = PL.all_plans(side)
    worth = np.array([sum(piece_worth(sq) for sq in p) for p in plans])
    idx = np.argsort(-worth)[:top]
    z = np.exp((worth[idx] - worth[idx[0]]) / temperature)
    pick = int(rng.choice(idx, p=z / z.sum()))
    return "plan:" + PL.plan_text(plans[pick])


# ------------------------------------------------------------------------ engine
@dataclass
class Settings:
    depth: int = 2
    use_plan: bool = True  # may declare its own defection
    reason_enemy: bool = True  # keeps a belief over the enemy's plan and searches with it
    samples: int = 6  # enemy plans sampled per decision (PIMC)
    candidates: int = 5  # best moves re-scored by PIMC
    declare_margin: int = 120
    sleeper_weight: float = 0.5  # weight of the sleeper terms when the trigger is far
    evidence_tau: float = 600.0
    evidence_floor: float = 0.1


class TurncoatEngine:
    """Chooses the token for the side to move of a view (:meth:`choose`)."""

    def __init__(self, settings: Settings | None = None, seed: int | None = 0) -> None:
        """``seed``: the source of every random choice (the plan, the enemy plans sampled); ``None`` draws it from
        OS entropy, so that a player cannot learn the plan from earlier games."""
        self.s = settings or Settings()
        self.rng = np.random.default_rng(seed)
        self.scorer = Scorer()
        self._reset()

    def _reset(self) -> None:
        self._shadow: TurncoatGame | None = None
        self._start: str | None = None  # the start SFEN of the game observed (None: the standard start)
        self._seen: list[str] = []
        self.belief: np.ndarray | None = None
        self.enemy = None

    # ----------------------------------------------------------- belief
    def _observe(self, game: TurncoatGame, me: int) -> None:
        """Bring the belief up to date with the tokens of ``game.record`` not seen yet, replayed from the game's
        own start (``game.start_sfen``: a ``position sfen`` start, else the standard one)."""
        rec = game.record
        if (self._shadow is None or self._start != game.start_sfen or self.enemy != 1 - me
                or rec[:len(self._seen)] != self._seen):
            self._reset()
            self._start = game.start_sfen
            self._shadow = TurncoatGame() if game.start_sfen is None else TurncoatGame.from_sfen(game.start_sfen)
            self.enemy = 1 - me
            self.belief = plan_prior(self.enemy)
        sh, enemy = self._shadow, self.enemy
        for tok in rec[len(self._seen):]:
            if (sh.plan_node_side() is None and sh.turn == enemy and not sh.declared[enemy]
                    and sh.move_number >= DECLARE_FROM_MOVE and not tok.startswith("defect")):
                self._non_declaration(sh, enemy)
            sh.apply(tok)
            self._seen.append(tok)
        if isinstance(sh.plans[enemy], tuple):
            plans = PL.all_plans(enemy)
            self.belief = np.array([1.0 if p == sh.plans[enemy] else 0.0 for p in plans])

    def _gains(self, game: TurncoatGame, side: int) -> np.ndarray:
        """Swing (cp) of each of ``side``'s plans if it declared now: twice the value of each flipped piece, and
        ``KING_CAPTURE_GAIN`` when a flipped piece would attack the other king (a win at once)."""
        board = game.pos.state.board
        per = np.zeros(81)
        king = game.pos.king_square(1 - side)
        for sq in np.nonzero(board)[0]:
            code = int(board[sq])
            if code >> 5 == 1 - side and game.ids[sq] >= 0 and code & 31 != 8:
                per[int(game.ids[sq])] = 2 * VALUES[PL_letter(code)]
                if king is not None:
                    b = board.copy()
                    b[sq] ^= 32
                    pos = _build_position(b, game.pos.state.hands.copy(), side, 1)
                    if is_attacked(pos.state, pos.tables, king, side):
                        per[int(game.ids[sq])] += KING_CAPTURE_GAIN
        return np.array([sum(per[q] for q in p) for p in PL.all_plans(side)])

    def _non_declaration(self, game: TurncoatGame, enemy: int) -> None:
        g = self._gains(game, enemy)
        self.belief = self.belief * np.maximum(self.s.evidence_floor, np.exp(-g / self.s.evidence_tau))
        self.belief /= self.belief.sum()

    def sleeper_probability(self, game: TurncoatGame) -> np.ndarray:
        """``p[pid]``: probability that the physical piece ``pid`` is named by the enemy's plan."""
        p = np.zeros(81)
        if self.belief is None:
            return p
        for w, plan in zip(self.belief, PL.all_plans(self.enemy)):
            if w > 0:
                for q in plan:
                    p[q] += w
        return p

    # ----------------------------------------------------------- decisions
    def choose(self, game: TurncoatGame) -> str:
        """The action token for the side to move of ``game`` (a view; not modified)."""
        me = game.side_to_move()
        if game.plan_node_side() is not None:
            return choose_plan(me, self.rng)
        if self.s.reason_enemy:
            self._observe(game, me)
        move, value = self._best_move(game, me)
        if self.s.use_plan and game.can_declare():
            g2 = game.copy()
            g2.declare()
            if g2.over is not None:
                return "defect"
            move2, value2 = self._best_move(g2, me)
            if move2 is not None and (move is None or value2 > value + self.s.declare_margin):
                return "defect," + game.pos.move_usi(move2)
        if move is None:
            codes = game.legal_codes()
            return game.pos.move_usi(codes[0]) if codes else "defect"
        return game.pos.move_usi(move)

    def _best_move(self, game: TurncoatGame, me: int) -> tuple[int | None, float]:
        codes = game.legal_codes()
        if not codes:
            return None, -MATE
        base = self.scorer.scores(game.pos, codes, self.s.depth).astype(float)
        enemy = 1 - me
        enemy_live = self.s.reason_enemy and not game.declared[enemy]
        mine_live = self.s.use_plan and not game.declared[me] and isinstance(game.plans[me], tuple)
        enemy_next = game.move_number + 1  # the enemy's next turn
        enemy_now = enemy_live and enemy_next >= DECLARE_FROM_MOVE
        if enemy_live or mine_live:
            p_sleep = self.sleeper_probability(game) if enemy_live and not enemy_now else None
            w_enemy = self._far_weight(enemy_next)
            w_mine = self._far_weight(game.move_number + 2) if mine_live else 0.0
            base += np.array([self._sleeper_term(game, c, me, p_sleep, w_enemy, w_mine) for c in codes])
        if enemy_now and self.belief is not None:
            top = np.argsort(-base)[:self.s.candidates]
            rescored = self._pimc(game, codes, base, me, top)
            i = int(top[int(np.argmax(rescored))])
            return codes[i], float(rescored.max())
        i = int(np.argmax(base))
        return codes[i], float(base[i])

    def _far_weight(self, first_chance_move: int) -> float:
        dist = max(0, DECLARE_FROM_MOVE - first_chance_move)
        return self.s.sleeper_weight * 0.9 ** (dist / 2)

    def _sleeper_term(self, game, code, me, p_sleep, w_enemy, w_mine) -> float:
        """Static sleeper terms after ``code``: our possible sleepers discounted (value, and ``KING_RISK`` when the
        piece would attack our king once turned), enemy pieces named by our plan partly counted as ours."""
        game.push(code)
        board, ids, T = game.pos.state.board, game.ids, game.pos.tables
        ksq = game.pos.king_square(me)
        t = 0.0
        my_plan = game.plans[me] if w_mine else ()
        for sq in np.nonzero(board)[0]:
            c = int(board[sq])
            pid = int(ids[sq])
            if p_sleep is not None and c >> 5 == me and p_sleep[pid] > 0:
                risk = 2 * VALUES[PL_letter(c)]
                if ksq is not None and _attacks(board, T, c ^ 32, int(sq), ksq):
                    risk += KING_RISK
                t -= w_enemy * p_sleep[pid] * risk
            elif c >> 5 != me and pid in my_plan:
                t += w_mine * VALUES[PL_letter(c)]
        game.pop()
        return t

    def _pimc(self, game: TurncoatGame, codes, base: np.ndarray, me: int, top: np.ndarray) -> np.ndarray:
        """PIMC values of the moves ``codes[top]`` (the others are not candidates)."""
        enemy = 1 - me
        plans = PL.all_plans(enemy)
        w = self.belief / self.belief.sum()
        picks = self.rng.choice(len(plans), size=self.s.samples, p=w)
        out = np.zeros(len(top))
        for j, i in enumerate(top):
            g = game.copy()
            g.push(codes[i])
            cache: dict[tuple, float] = {}
            vals = []
            for k in picks:
                board, flipped, _ = g.defected_board(enemy, plans[k])
                key = tuple(flipped)
                if key not in cache:
                    cache[key] = self._after_enemy_declares(g, board, enemy) if flipped else math.inf
                vals.append(min(base[i], cache[key]))
            out[j] = float(np.mean(vals))
        return out

    def _after_enemy_declares(self, g: TurncoatGame, board: np.ndarray, enemy: int) -> float:
        """Our value (cp) if the enemy, to move in ``g``, declares and flips to ``board``."""
        pos = _build_position(board, g.pos.state.hands.copy(), enemy, g.move_number)
        my_king = pos.king_square(1 - enemy)
        if my_king is not None and is_attacked(pos.state, pos.tables, my_king, enemy):
            return -MATE
        return -self.scorer.best(pos, max(1, self.s.depth - 1))


def _attacks(board: np.ndarray, T, code: int, sq: int, target: int) -> bool:
    """Whether a piece ``code`` on ``sq`` attacks ``target`` (leaps, and slides blocked by ``board``)."""
    for k in T.leap_list[code]:
        if k < 0:
            break
        if T.leap_dest[sq, k] == target:
            return True
    for d in T.slide_list[code]:
        if d < 0:
            break
        reach = int(T.slide_range[code, d])
        for i, t in enumerate(T.rays[sq, d]):
            if t < 0 or i >= reach:
                break
            if t == target:
                return True
            if board[t]:
                break
    return False


def PL_letter(code: int) -> str:
    return SHOGI.piece(code & 31).letter
