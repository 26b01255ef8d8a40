"""Search for turncoat shogi (寝返り将棋): plan choice, a belief over the enemy's plan, determinized search.

The engine sees one side's view (:class:`engine.variants.turncoat.TurncoatGame` replayed from the tokens the referee
sends: its own plan as ``plan=<squares>``, the enemy's as ``plan=?``). The hidden information is handled here, one
level above the search; every position is searched by the shared shogi searcher (:class:`search.Searcher`: the
kernel with its full selectivity, learned evaluation, transposition table and time control). Its parts:

- **Plan choice** (``plan:<squares>``): each enemy piece has a static worth = chance it is still on the board in the
  enemy's hands at the trigger x twice its value (the swing of a defection) + a bonus for pieces that stand next to
  the enemy king (gold, silver) or in its corner (lance, knight); a plan's worth is the sum; the engine samples among
  the best plans (softmax, seeded) so that it is not predictable.
- **Belief** over the enemy's 332 plans: uniform by package, then uniform within. Before the enemy declares nothing is
  observed that rules a plan out, so the only updates are (a) the revelation (``defect=<squares>``: the belief becomes
  that plan and the engine switches to ordinary search) and (b) soft evidence: each time the enemy could declare and
  did not, every plan is weighted by ``max(floor, exp(-gain / tau))`` where ``gain`` is the material swing that plan
  would have had (a plan that would have won a rook outright is less likely to be held by an enemy who did not use it).
- **Move choice**: the shared searcher searches the position as shogi (``candidates`` principal variations when the
  enemy may declare next, one otherwise). While a plan is live each legal move gets a static sleeper term: each of
  our pieces discounted by its chance of being a sleeper (from the belief), each enemy piece named by our plan
  counted partly as ours; when the searched lines are all riskier than the safest moves, those are searched on their
  own too. Once the enemy can declare on its next turn, the candidates are re-scored by perfect-information Monte
  Carlo: for each sampled enemy plan, the value after our move is the minimum
  of "the enemy does not declare" and "the enemy declares, then searches", averaged over the samples (identical
  flipped sets are searched once).
- **Own declaration**: when allowed, the position after declaring is searched too; the engine declares
  (``defect,<move>``, or ``defect`` alone when it wins at once) when that beats the best move by ``declare_margin``.

**Time**: one decision gets one :class:`search.Limits` (the USI layer's time manager makes it, as for shogi). The
main search takes all of it when nothing else is to be searched, :data:`MAIN_SHARE` of it when the declaration
search or the PIMC samples follow; those share the rest. A depth limit is the main search's depth (the others search
one ply less); a node limit is shared like the time.
"""
from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from engine.kernels.movegen import is_attacked
from engine.variants.shogi import SHOGI
from engine.variants.turncoat import TurncoatGame
from engine.variants.turncoat import plans as PL
from engine.variants.turncoat.state import DECLARE_FROM_MOVE, _build_position
from eval.params import PIECE_VALUES as VALUES

from .alphabeta import MATE, Searcher
from .interface import Info, Limits, Result

KING_CAPTURE_GAIN = 5000
KING_RISK = 3000  # cost of a possible sleeper that would attack our king once turned (weighted by its probability)
#: the main search's share of a decision's time and nodes when the declaration search or PIMC samples follow
MAIN_SHARE = 0.6
#: moves whose plan terms are within this of the safest move's are "safe"; when the main search's lines are all
#: unsafe, the safe moves are searched alone, in this share of the main search's time beyond it
SAFE_BAND = 60
SAFE_SHARE = 0.3


def result_value(r: Result | Info) -> int:
    """A search's score as one number (centipawns; a mate in n plies as ``±(MATE - n)``), side-to-move view."""
    if r.mate is not None:
        return (MATE - abs(r.mate)) * (1 if r.mate > 0 else -1)
    return int(r.score_cp or 0)


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
    depth: int = 2  # the depth of a decision asked without limits (``choose(game)``)
    use_plan: bool = True  # may declare its own defection
    reason_enemy: bool = True  # keeps a belief over the enemy's plan and searches with it
    samples: int = 6  # enemy plans sampled per decision (PIMC)
    candidates: int = 3  # principal variations (MultiPV) re-scored by PIMC when the enemy may declare next
    declare_margin: int = 120
    sleeper_weight: float = 0.5  # weight of the sleeper terms when the trigger is far
    evidence_tau: float = 600.0
    evidence_floor: float = 0.1


@dataclass
class Decision:
    """What :meth:`TurncoatEngine.choose` decided: the token, its value (cp, side to move, the plan terms and PIMC
    included), its score as the search found it (what an ``info`` line shows), the main search's depth and the
    nodes of every search of the decision."""
    token: str
    value: float = 0.0
    score: int = 0
    depth: int = 0
    nodes: int = 0


class _Budget:
    """One decision's :class:`Limits`, shared out over its searches (see the module doc). Time is counted from the
    decision's start; :meth:`TurncoatEngine.update_limits` (``ponderhit``) may give a clock to a decision that began
    without one."""

    def __init__(self, limits: Limits) -> None:
        self.t0 = time.perf_counter()
        self.limits = limits
        self.nodes = 0  # spent by the decision's finished searches

    def elapsed_ms(self) -> int:
        return int((time.perf_counter() - self.t0) * 1000)

    def part(self, end: float, of_rest: float = 1.0, depth_less: int = 0) -> Limits:
        """The limits of a search that may use ``of_rest`` of what is left until ``end`` (a share of the decision's
        time and nodes, counted from its start; past 1, of the soft limit only): ``depth_less`` plies less than the
        decision's depth limit."""
        L = self.limits

        def left(total: int | None, spent: int, until: float) -> int | None:
            return None if total is None else max(1, int((total * until - spent) * of_rest))

        spent_ms = self.elapsed_ms()
        return Limits(depth=None if L.depth is None else max(1, L.depth - depth_less),
                      nodes=left(L.nodes, self.nodes, min(end, 1.0)), soft_ms=left(L.soft_ms, spent_ms, end),
                      hard_ms=left(L.hard_ms, spent_ms, min(end, 1.0)), infinite=L.infinite)


class TurncoatEngine:
    """Chooses the token for the side to move of a view (:meth:`choose`). :meth:`stop` and :meth:`update_limits`
    may be called from another thread while it chooses."""

    def __init__(self, settings: Settings | None = None, seed: int | None = 0,
                 searcher: Searcher | None = None) -> None:
        """``seed``: the source of every random choice (the plan, the enemy plans sampled); ``None`` draws it from
        OS entropy, so that a player cannot learn the plan from earlier games. ``searcher``: the shared searcher to
        use (default: a new one with a 16 MiB table)."""
        self.s = settings or Settings()
        self.rng = np.random.default_rng(seed)
        self.searcher = searcher or Searcher()
        self.last: Decision | None = None
        self._lock = threading.Lock()
        self._stopped = False
        self._budget: _Budget | None = None
        self._running: tuple[float, float] | None = None  # (start, end share) of the search running, for update_limits
        self._reset()

    def _reset(self) -> None:
        self._shadow: TurncoatGame | None = None
        self._start: str | None = None  # the start SFEN of the game observed (None: the standard start)
        self._seen: list[str] = []
        self.belief: np.ndarray | None = None
        self.enemy = None

    def clear(self) -> None:
        """A new game: forget the belief and the searcher's tables."""
        self._reset()
        self.searcher.clear()

    # ----------------------------------------------------------- control (any thread)
    def stop(self) -> None:
        """End the running decision soon: the search running answers at once, the searches still to come are
        skipped (the main search's answer stands)."""
        with self._lock:
            self._stopped = True
        self.searcher.stop()

    def update_limits(self, soft_ms: int | None, hard_ms: int | None) -> None:
        """New time limits, counted from the start of the running decision (``ponderhit``); ends infinite mode."""
        with self._lock:
            budget = self._budget
            if budget is None:
                return
            budget.limits = replace(budget.limits, soft_ms=soft_ms, hard_ms=hard_ms, infinite=False)
            if self._running is not None:
                started, end = self._running
                since = int((started - budget.t0) * 1000)
                self.searcher.update_limits(None if soft_ms is None else max(1, int(soft_ms * end) - since),
                                            None if hard_ms is None else max(1, int(hard_ms * min(end, 1.0)) - since))

    def progress(self) -> int:
        """Nodes of the running decision so far (read from another thread)."""
        budget = self._budget
        return (budget.nodes if budget is not None else 0) + self.searcher.progress()[2]

    def _search(self, pos, limits: Limits, end: float, on_info=None) -> Result | None:
        """One search by the shared searcher, or ``None`` when the decision was stopped before it began."""
        with self._lock:
            if self._stopped:
                return None
            self._running = (time.perf_counter(), end)

        def started() -> None:  # a stop that came while the searcher reset its flag still counts
            if self._stopped:
                self.searcher.stop()

        try:
            r = self.searcher.search(pos, limits, on_info, on_start=started)
        finally:
            with self._lock:
                self._running = None
        self._budget.nodes += r.nodes
        return r

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
    def choose(self, game: TurncoatGame, limits: Limits | None = None,
               on_info: Callable[[Info], None] | None = None,
               on_start: Callable[[], None] | None = None) -> str:
        """The action token for the side to move of ``game`` (a view; not modified) within ``limits`` (default:
        ``Settings.depth``). ``on_info`` gets the main search's info (its PV is of ``game.pos``); the decision is
        then in :attr:`last`. ``on_start()`` is called once the decision has reset its stop flag: from then on
        :meth:`stop` acts on it, and a caller that got a stop earlier applies it there."""
        limits = limits if limits is not None else Limits(depth=self.s.depth)
        with self._lock:
            self._stopped = False
            self._budget = budget = _Budget(limits)
        if on_start is not None:
            on_start()
        try:
            self.last = self._choose(game, budget, on_info)
        finally:
            with self._lock:
                self._budget = None
        self.last.nodes = budget.nodes
        return self.last.token

    def _choose(self, game: TurncoatGame, budget: _Budget, on_info) -> Decision:
        me = game.side_to_move()
        if game.plan_node_side() is not None:
            return Decision(choose_plan(me, self.rng))
        if self.s.reason_enemy:
            self._observe(game, me)
        declare = self.s.use_plan and game.can_declare()
        if declare:
            g2 = game.copy()
            g2.declare()
            if g2.over is not None:
                return Decision("defect", MATE, MATE)
        pimc = (self.s.reason_enemy and not game.declared[1 - me] and game.move_number + 1 >= DECLARE_FROM_MOVE
                and self.belief is not None)
        others = int(declare) + int(pimc)
        main_end = MAIN_SHARE if others else 1.0
        pimc_end = main_end + (1.0 - main_end) / others if pimc else None
        move, value, score, depth = self._best_move(game, me, budget, main_end, pimc_end, on_info)
        if declare:
            r = self._search(g2.pos, budget.part(1.0, depth_less=1), 1.0, None)
            codes2 = set(g2.legal_codes())
            if r is not None and r.best in codes2 and (move is None or result_value(r) > value + self.s.declare_margin):
                v = result_value(r)
                return Decision("defect," + game.pos.move_usi(r.best), v, v, depth)
        if move is None:
            codes = game.legal_codes()
            return Decision(game.pos.move_usi(codes[0]) if codes else "defect", value, score, depth)
        return Decision(game.pos.move_usi(move), value, score, depth)

    def _best_move(self, game: TurncoatGame, me: int, budget: _Budget, main_end: float, pimc_end: float | None,
                   on_info) -> tuple[int | None, float, int, int]:
        """The best move of ``game`` with its value, its searched score and the main search's depth: the shared
        search's candidates, re-scored by the sleeper terms and (``pimc_end``: the enemy can declare next) by
        PIMC."""
        codes = game.legal_codes()
        if not codes:
            return None, -MATE, -MATE, 0
        enemy = 1 - me
        enemy_live = self.s.reason_enemy and not game.declared[enemy]
        mine_live = self.s.use_plan and not game.declared[me] and isinstance(game.plans[me], tuple)
        terms = None
        if enemy_live or mine_live:  # the static plan terms of every legal move
            p_sleep = self.sleeper_probability(game) if enemy_live else None
            w_enemy = self._far_weight(game.move_number + 1)  # the enemy's next turn
            w_mine = self._far_weight(game.move_number + 2) if mine_live else 0.0
            terms = {c: self._sleeper_term(game, c, me, p_sleep, w_enemy, w_mine) for c in codes}
        safe: list[int] = []
        if terms is not None:
            safest = max(terms.values())
            safe = [c for c in codes if terms[c] >= safest - SAFE_BAND]
            if len(safe) == len(codes):
                safe = []  # every move as safe as the best: the main search covers them
        # several lines only for PIMC to re-score: elsewhere the safe search gives the alternative, at less depth cost
        lines, depth = self._main(game.pos, codes, budget.part(main_end),
                                  self.s.candidates if pimc_end is not None else 1, main_end, on_info)
        if safe and not {m for m, _ in lines} & set(safe):
            # the main search's lines are all riskier: the safest moves searched on their own (skipped after a stop),
            # past the main search's soft limit (the hard limit holds)
            safe_end = main_end * (1 + SAFE_SHARE)
            lines += self._main(game.pos, safe, budget.part(safe_end), 1, safe_end, None, anyway=False)[0]
        if not lines:
            return codes[0], 0.0, 0, depth
        cand = [m for m, _ in lines]
        base = np.array([v for _, v in lines], float)
        if terms is not None:
            base += np.array([terms[c] for c in cand])
        if pimc_end is not None:
            base = self._pimc(game, cand, base, me, budget, pimc_end)
        i = int(np.argmax(base))
        return cand[i], float(base[i]), lines[i][1], depth

    def _main(self, pos, codes: list[int], limits: Limits, multipv: int, end: float,
              on_info, anyway: bool = True) -> tuple[list[tuple[int, int]], int]:
        """A search's lines ``[(move, value)]``, best first, from its deepest completed iteration (MultiPV
        ``multipv``; moves ``codes`` only), and that depth. After a stop: a depth-1 search (``anyway``), else
        none."""
        by_depth: dict[int, dict[int, tuple[int, int]]] = {}

        def collect(info: Info) -> None:
            if info.bound is None and info.pv:
                by_depth.setdefault(info.depth, {})[info.multipv] = (int(info.pv[0]), result_value(info))
            if on_info is not None:
                on_info(info)

        r = self._search(pos, replace(limits, multipv=multipv, searchmoves=list(codes)), end, collect)
        if r is None:
            if not anyway:
                return [], 0
            r = self._search_anyway(pos, codes)
        legal = set(codes)
        if by_depth:
            depth = max(by_depth)
            lines = [line for _, line in sorted(by_depth[depth].items()) if line[0] in legal]
            if lines:
                return sorted(lines, key=lambda line: -line[1]), depth
        if r.best in legal:
            return [(int(r.best), result_value(r))], r.depth
        return [], r.depth

    def _search_anyway(self, pos, codes: list[int]) -> Result:
        """Depth 1: the answer of a decision stopped before its main search began."""
        r = self.searcher.search(pos, Limits(depth=1, searchmoves=list(codes)))
        self._budget.nodes += r.nodes
        return r

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

    def _pimc(self, game: TurncoatGame, cand: list[int], base: np.ndarray, me: int, budget: _Budget,
              end: float) -> np.ndarray:
        """PIMC values of the candidate moves: per sampled enemy plan, the lower of the value without a declaration
        and the value after it; each distinct flipped set searched once per move, the searches sharing the time
        until ``end``."""
        enemy = 1 - me
        plans = PL.all_plans(enemy)
        w = self.belief / self.belief.sum()
        picks = self.rng.choice(len(plans), size=self.s.samples, p=w)
        jobs = []  # (candidate index, the samples' flipped sets, the board after each distinct one)
        for j, code in enumerate(cand):
            g = game.copy()
            g.push(code)
            boards: dict[tuple, np.ndarray | None] = {}
            keys = []
            for k in picks:
                board, flipped, _ = g.defected_board(enemy, plans[k])
                key = tuple(flipped)
                keys.append(key)
                if key not in boards:
                    boards[key] = board if flipped else None
            jobs.append((j, g, keys, boards))
        todo = sum(1 for _, _, _, boards in jobs for b in boards.values() if b is not None)
        out = base.copy()
        for j, g, keys, boards in jobs:
            values: dict[tuple, float] = {}
            for key, board in boards.items():
                if board is None:
                    values[key] = math.inf
                    continue
                values[key] = self._after_enemy_declares(g, board, enemy, budget.part(end, 1 / max(todo, 1), 1), end)
                todo -= 1
            out[j] = float(np.mean([min(base[j], values[key]) for key in keys]))
        return out

    def _after_enemy_declares(self, g: TurncoatGame, board: np.ndarray, enemy: int, limits: Limits,
                              end: float) -> float:
        """Our value (cp) if the enemy, to move in ``g``, declares and flips to ``board``."""
        pos = _build_position(board, g.pos.state.hands.copy(), enemy, g.move_number)
        my_king = pos.king_square(1 - enemy)
        if my_king is not None and is_attacked(pos.state, pos.tables, my_king, enemy):
            return -MATE
        r = self._search(pos, limits, end)
        if r is None or r.best is None:  # stopped: no evidence either way
            return math.inf if r is None else MATE
        return -result_value(r)


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
