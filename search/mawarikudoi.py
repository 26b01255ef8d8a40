"""Mawarikudoi shogi search: exact single-runner race tables, win probability, expectimax over throws.

**Race tables** (:class:`RaceTables`). For one side alone (gold throws only, no stomps: the *solitaire* race), every
runner state s gets the expected number of turns to finish, ``E[s] = 1 + sum_N p(N) min_{e in R_N(s)} E[e]``, where
``R_N(s)`` are the end states of an N-action turn (the win, once reachable, stays reachable for every larger N). The
policy "minimise the expected remaining turns" is solved exactly by value iteration, runner by runner from the king
down (relays only go forward, so each runner's block only needs the blocks after it). ``min_{R_N}`` is computed for
every N at once by a backward min-plus recursion ``V_k(s) = min_j V_{k-1}(succ_j(s))``. Under that policy the
distribution of the number of turns to finish, ``P(T_s <= t)``, follows by a forward recursion over t.

**Win probability.** As in backgammon bear-off databases, two independent races are combined: with A to move,
``P(A wins) = sum_t P(T_A = t) P(T_B >= t)``. After A's turn ends in e, ``P(A wins) = P(T_e < T_B)``.

**Search.** At the throw decision each allowed throw is valued by expectimax over its exact distribution: for every
N, the best end state of the N-action turn (found by the turn DP in :mod:`engine.variants.mawarikudoi.kernels`),
scored by the win probability above. The stomp and the mixed throw are seen in the turn being searched; the tables
behind the leaves assume gold throws and no stomps for the future turns of both sides, except that the leaves weigh
the chance that a lower opponent stomps the end square on its next turn (``Engine._with_stomp_risk``), and the
mixed-throw rights: a side that still holds its right races with the "right in use" table (mixed throws until one
scores >= 10, then gold; ``RaceTables.cdf_right``).

**Decisions by simulated games** (``Engine(rollouts=1500)``, the default). The leaves cannot see when it pays to
stay the lower runner (the stomp and the mixed throw belong to the lower side), so the leaf search only proposes
candidates (its best few end states, the best of each runner rank, the end state nearest the goal; or both throws),
and each candidate is valued by ``rollouts`` simulated games in a numba kernel (``_rollout_game``: both sides on
the base policy, the table's solitaire end state for each throw, the mixed throw when allowed, the stomp when in
reach), all candidates of one decision on the same dice. It is a one-step policy improvement over that base
policy (Bertsekas' rollout algorithm), a few microseconds a game.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from engine.kernels import inner_kernel, kernel, safecache
from engine.variants.mawarikudoi import board as B
from engine.variants.mawarikudoi import kernels as K
from engine.variants.mawarikudoi import throws as T
from engine.variants.mawarikudoi.state import MawarikudoiState, _generator

UNREACHABLE = 10 ** 9


@kernel
def _matvec(rows, vec, out):
    """``out = rows @ vec`` without BLAS threads (the machine is shared; calls are small)."""
    for i in range(rows.shape[0]):
        acc = 0.0
        for j in range(rows.shape[1]):
            acc += rows[i, j] * vec[j]
        out[i] = acc


@dataclass
class Choice:
    """The engine's answer (``search.games.MawarikudoiGameSearcher`` turns it into a ``search.Result``)."""

    action: str  # a token for the state's current decision
    winprob: float  # for the side to move


@kernel
def _leaf_kernel(rows_g, rows_m3, rows_m4, surv_g, surv_m3, surv_m4, rb, opp_right, my_right, out):
    """Win probability after my turn for every end state e (opponent, rank ``rb``, throws next).

    The next throw of each side is mixed when that side keeps its right and its runner is lower than the other's
    (with 3 silvers if a runner is a silver, else 4); every later throw is gold."""
    n_s = rows_g.shape[0] - 1
    per_runner = n_s // 7
    for e in range(n_s + 1):
        re = e // per_runner if e < n_s else 7
        n_silver = 4 - (1 if re == 3 else 0) - (1 if rb == 3 else 0)
        surv = surv_g
        if opp_right and rb < re:
            surv = surv_m3 if n_silver == 3 else surv_m4
        rows = rows_g
        if my_right and re < rb:
            rows = rows_m3 if n_silver == 3 else rows_m4
        acc = 0.0
        for t in range(rows.shape[1]):
            acc += rows[e, t] * surv[t]
        out[e] = acc


@kernel
def _landing_steps(start, kmax, targets, n_targets, land, mark, cur, nxt):
    """``land[sq]`` = fewest actions for the runner of ``start`` (no relay on the way) to end a move on ``sq``
    (kmax + 1 if more). A breadth-first search visiting each turn-state once: a move may land at any action of the
    turn, so only the shortest way to each state matters. Scratch ``mark``/``cur``/``nxt`` as for the turn kernels."""
    for i in range(land.shape[0]):
        land[i] = kmax + 1
    for i in range(mark.shape[0]):
        mark[i] = -1
    runner = start // 1620
    cur[0] = start * 2
    mark[start * 2] = 0
    n_cur = 1
    for k in range(1, kmax + 1):
        n_nxt = 0
        for i in range(n_cur):
            s2 = cur[i]
            s = s2 >> 1
            f = (s // 5) % 4
            sq = (s // 20) % 81
            nt = n_targets[runner, sq, f]
            for a in range(nt + 3):
                if a < nt:
                    t_sq = targets[runner, sq, f, a]
                    if land[t_sq] > k:
                        land[t_sq] = k
                t = K.step(s2, a, targets, n_targets, -1, -1)
                if t < 0 or t >= 2 * 11340 or (t >> 1) // 1620 != runner:
                    continue  # relayed or won: its landings no longer threaten
                if mark[t] < 0:
                    mark[t] = k
                    nxt[n_nxt] = t
                    n_nxt += 1
        if n_nxt == 0:
            break
        for i in range(n_nxt):
            cur[i] = nxt[i]
        n_cur = n_nxt


@kernel
def _rights_leaf_kernel(rows_g, rows_r3, rows_r4, surv_g, surv_r3, surv_r4, rb, opp_right, my_right, lam_me,
                        lam_opp, out):
    """Win probability after my turn for every end state e (opponent of rank ``rb`` throws next), the mixed-throw
    rights valued.

    A side with its right that will be allowed the mixed throw at its next turn (strictly lower runner) races with
    the "right in use" table (mixed throws until one scores >= 10, then gold). A side that keeps its right but is
    not allowed next turn races with the mixture ``lam * right + (1 - lam) * gold`` (``lam``: the chance it gets to
    use the right later; ``lam_me`` for me, ``lam_opp`` for the opponent). A side without the right races gold."""
    n_s = rows_g.shape[0] - 1
    per_runner = n_s // 7
    n_t = rows_g.shape[1]
    for e in range(n_s + 1):
        if e == n_s:
            out[e] = 1.0
            continue
        re = e // per_runner
        n_silver = 4 - (1 if re == 3 else 0) - (1 if rb == 3 else 0)
        # opponent: weight of its "right" race
        c = 0.0
        if opp_right:
            c = 1.0 if rb < re else lam_opp
        a = 0.0
        if my_right:
            a = 1.0 if re < rb else lam_me
        gg = 0.0
        gr = 0.0
        rg = 0.0
        rr = 0.0
        for t in range(n_t):
            x = rows_g[e, t]
            sg = surv_g[t]
            gg += x * sg
            if n_silver == 3:
                sr = surv_r3[t]
                y = rows_r3[e, t]
            else:
                sr = surv_r4[t]
                y = rows_r4[e, t]
            gr += x * sr
            rg += y * sg
            rr += y * sr
        out[e] = (1 - a) * ((1 - c) * gg + c * gr) + a * ((1 - c) * rg + c * rr)


@kernel
def _land_table_kernel(targets, n_targets, kmax, table, land, mark, cur, nxt):
    """``table[s, sq]`` = ``_landing_steps`` of every runner state s (kmax + 1 where more than kmax actions)."""
    for s in range(table.shape[0]):
        _landing_steps(s, kmax, targets, n_targets, land, mark, cur, nxt)
        for sq in range(table.shape[1]):
            table[s, sq] = land[sq]


@inner_kernel
def _draw(cum, u):
    """Inverse CDF: the least N with ``cum[N] > u`` (``cum`` normalised to end at 1; clipped to the support)."""
    lo = 0
    hi = cum.shape[0] - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if cum[mid] > u:
            hi = mid
        else:
            lo = mid + 1
    return lo


@inner_kernel
def _rollout_game(me, opp, right_me, right_opp, opp_first, first_gold, policy, dist, expected, land, cum_gold,
                  cum_m3, cum_m4, u, j):
    """One simulated game from (me, opp) in their own frames, both sides playing the base policy: the mixed throw
    whenever allowed (``first_gold`` forces gold on my first throw), the solitaire end state of least expected turns
    ``policy[N, s]``, and a stomp when the lower runner can land on the higher one within its throw and the relay
    (with the rest of the actions carried over) is better. Throw k of side x uses the uniform ``u[j, x, k]``, so
    the candidates of one decision share their dice (common random numbers). Returns 1 if I win, else 0."""
    n_s = land.shape[0]
    per_runner = n_s // 7
    st0 = me
    st1 = opp
    r0 = right_me
    r1 = right_opp
    k0 = 0
    k1 = 0
    x = 1 if opp_first else 0
    n_t = u.shape[2]
    first = True
    for _ in range(4 * n_t):
        s = st0 if x == 0 else st1
        o = st1 if x == 0 else st0
        right = r0 if x == 0 else r1
        r = s // per_runner
        ro = o // per_runner
        if x == 0:
            uu = u[j, 0, k0 % n_t]
            k0 += 1
        else:
            uu = u[j, 1, k1 % n_t]
            k1 += 1
        allowed = right and r < ro
        if first and x == 0 and first_gold:
            allowed = False
        first = False
        if allowed:
            n_silver = 4 - (1 if r == 3 else 0) - (1 if ro == 3 else 0)
            n = _draw(cum_m3 if n_silver == 3 else cum_m4, uu)
            if n >= 10:
                right = False
        else:
            n = _draw(cum_gold, uu)
        if n >= dist[s]:
            new = n_s
        else:
            new = policy[n, s]
        if r < ro:
            esq = 80 - (o // 20) % 81
            steps = land[s, esq]
            if steps <= n:
                ns = (((r + 1) * 81 + 8) * 4) * 5
                rest = n - steps
                cand = n_s if rest >= dist[ns] else policy[rest, ns]
                if expected[cand] < expected[new]:
                    new = cand
        if x == 0:
            st0 = new
            r0 = right
        else:
            st1 = new
            r1 = right
        if new == n_s:
            return 1 if x == 0 else 0
        x = 1 - x
    return 1 if expected[st0] < expected[st1] else 0  # never reached in practice (games last ~25 turns a side)


@kernel
def _rollout_values(cands, opp, right_me, right_opp, opp_first, first_gold, policy, dist, expected, land, cum_gold,
                    cum_m3, cum_m4, u, out):
    """``out[c]`` = my win rate over the ``u.shape[0]`` simulated games from each candidate state ``cands[c]``."""
    for c in range(cands.shape[0]):
        wins = 0
        for j in range(u.shape[0]):
            wins += _rollout_game(cands[c], opp, right_me, right_opp, opp_first, first_gold, policy, dist, expected,
                                  land, cum_gold, cum_m3, cum_m4, u, j)
        out[c] = wins / u.shape[0]


class RaceTables:
    """Exact solitaire race tables for one set of face probabilities (see the module docstring).

    Attributes (index = runner state in sente's frame, ``board.WIN`` last):
    ``expected[s]`` expected turns to finish; ``cdf[t, s]`` = P(T_s <= t); ``pmf_rows[s, t]`` = P(T_s = t);
    ``distance[s]`` fewest actions to finish; ``valid[s]`` False for states that can never finish (a bishop off the
    corners' colour, never reached in play).
    """

    def __init__(self, probs: T.ThrowProbabilities = T.DEFAULT_PROBABILITIES, tol: float = 1e-12,
                 max_turns: int = 400) -> None:
        t0 = time.perf_counter()
        S = B.N_STATES
        self.probs = probs
        succ = np.full((S, B.MAX_ACTIONS), -1, dtype=np.int32)
        deg = np.zeros(S, dtype=np.int32)
        K.solitaire_successors(B.TARGETS, B.N_TARGETS, succ, deg)
        dist = np.zeros(S + 1, dtype=np.int64)
        K.distance_to_win(succ, deg, dist)
        self.distance = dist
        self.valid = dist < UNREACHABLE
        kmax = int(dist[self.valid].max())
        self.kmax = kmax
        d = T.gold_distribution(probs)
        steps = np.nonzero(d[:kmax + 1])[0].astype(np.int64)
        p = d[steps].copy()
        tail = float(d[kmax + 1:].sum())  # those throws finish from anywhere
        e = np.where(self.valid, 0.0, 1e300)
        e[S] = 0.0
        vk = np.full((kmax + 1, S + 1), 1e300)
        arg = np.full((kmax + 1, S + 1), S, dtype=np.int32)
        iters = []
        for r in range(B.N_RUNNERS - 1, -1, -1):
            lo, hi = r * S // B.N_RUNNERS, (r + 1) * S // B.N_RUNNERS
            iters.append(K.expected_turns_block(succ, deg, lo, hi, steps, p, tail, e, vk, arg, kmax, tol, 100000))
        self.iterations = iters[::-1]
        self.expected = e
        self.policy_arg = arg  # arg[k, s]: the end state of least E among those k actions away (solitaire)
        policy = np.ascontiguousarray(arg[steps, :])
        cdf = np.zeros((max_turns + 1, S + 1))
        K.turn_cdf(policy, p, tail, self.valid, cdf)
        worst = 1.0 - cdf[:, :S][:, self.valid[:S]].min(axis=1)
        n_t = int(np.searchsorted(-worst, -1e-13)) + 1  # first t with every valid state done to 1e-13
        self.cdf = np.ascontiguousarray(cdf[:min(n_t + 1, max_turns + 1)])
        self.tail_mass = float(worst[self.cdf.shape[0] - 1])
        self.pmf_rows = self._pmf_rows(self.cdf)
        # "Next throw mixed, then gold": the same policy (argmin E over R_N) for the mixed throw's N.
        self.cdf_mixed_next = {}
        self.pmf_rows_mixed_next = {}
        for n_silvers in (3, 4):
            dm = T.mixed_distribution(n_silvers, probs)
            ms = np.nonzero(dm)[0]
            cm = np.zeros_like(self.cdf)
            cm[:, S] = 1.0
            for n, pn in zip(ms, dm[ms]):
                cm[1:] += pn * self.cdf[:-1, arg[n]]
            self.cdf_mixed_next[n_silvers] = self._closed(cm)
            self.pmf_rows_mixed_next[n_silvers] = self._pmf_rows(cm)
        # "Right in use": the mixed throw every turn until one scores >= 10 (the right is then lost), then gold;
        # the same solitaire policy. This is the race of a side that stays behind with its right.
        self.cdf_right = {}
        self.pmf_rows_right = {}
        for n_silvers in (3, 4):
            dm = T.mixed_distribution(n_silvers, probs)
            ms = np.nonzero(dm)[0]
            cr = np.zeros_like(self.cdf)
            cr[0, S] = 1.0
            for t in range(1, cr.shape[0]):
                row = np.zeros(S + 1)
                for n, pn in zip(ms, dm[ms]):
                    src = cr if n < T.MIXED_LOSS_THRESHOLD else self.cdf
                    row += pn * src[t - 1, arg[n]]
                cr[t] = row
            self.cdf_right[n_silvers] = self._closed(cr)
            self.pmf_rows_right[n_silvers] = self._pmf_rows(cr)
        self.seconds = time.perf_counter() - t0

    def _closed(self, cdf: np.ndarray) -> np.ndarray:
        """``cdf`` with the finished column S at 1 and invalid states at 0 (in place; returned for chaining)."""
        cdf[:, cdf.shape[1] - 1] = 1.0
        cdf[:, ~self.valid] = 0.0
        return cdf

    @staticmethod
    def _pmf_rows(cdf: np.ndarray) -> np.ndarray:
        """``P(T_s = t)`` as contiguous rows [s, t] from a CDF indexed [t, s]."""
        return np.ascontiguousarray(np.diff(cdf, axis=0, prepend=0.0).T)

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The arrays :meth:`from_arrays` rebuilds these tables from (the pmf rows are the CDFs' differences)."""
        out = {"distance": self.distance, "expected": self.expected, "policy_arg": self.policy_arg, "cdf": self.cdf,
               "iterations": np.asarray(self.iterations, dtype=np.int64),
               "scalars": np.array([self.kmax, self.tail_mass, self.seconds], dtype=np.float64)}
        for n in (3, 4):
            out[f"cdf_mixed_next{n}"] = self.cdf_mixed_next[n]
            out[f"cdf_right{n}"] = self.cdf_right[n]
        return out

    @classmethod
    def from_arrays(cls, probs: T.ThrowProbabilities, arrays: dict[str, np.ndarray]) -> "RaceTables":
        """The tables of ``probs`` from :meth:`to_arrays`' arrays, without the value iteration."""
        self = cls.__new__(cls)
        self.probs = probs
        self.distance = arrays["distance"]
        self.valid = self.distance < UNREACHABLE
        self.expected, self.policy_arg = arrays["expected"], arrays["policy_arg"]
        self.iterations = [int(x) for x in arrays["iterations"]]
        kmax, tail_mass, seconds = arrays["scalars"]
        self.kmax, self.tail_mass, self.seconds = int(kmax), float(tail_mass), float(seconds)
        self.cdf = arrays["cdf"]
        self.pmf_rows = cls._pmf_rows(self.cdf)
        self.cdf_mixed_next = {n: arrays[f"cdf_mixed_next{n}"] for n in (3, 4)}
        self.pmf_rows_mixed_next = {n: cls._pmf_rows(c) for n, c in self.cdf_mixed_next.items()}
        self.cdf_right = {n: arrays[f"cdf_right{n}"] for n in (3, 4)}
        self.pmf_rows_right = {n: cls._pmf_rows(c) for n, c in self.cdf_right.items()}
        return self

    @property
    def max_turns(self) -> int:
        return self.cdf.shape[0] - 1

    def survival(self, s: int, mixed_silvers: int = 0) -> np.ndarray:
        """``P(T_s > t)`` for t = 0..max_turns (next throw mixed with that many silvers if ``mixed_silvers``)."""
        cdf = self.cdf_mixed_next[mixed_silvers] if mixed_silvers else self.cdf
        return 1.0 - cdf[:, s]

    def rows(self, mixed_silvers: int = 0) -> np.ndarray:
        """``P(T_s = t)`` as rows [s, t] (next throw mixed with that many silvers if ``mixed_silvers``)."""
        return self.pmf_rows_mixed_next[mixed_silvers] if mixed_silvers else self.pmf_rows

    def win_after_move(self, opponent: int) -> np.ndarray:
        """For every state e of the side that just moved: P(it finishes before ``opponent``, who moves next)."""
        out = np.empty(self.pmf_rows.shape[0])
        _matvec(self.pmf_rows, np.ascontiguousarray(self.survival(opponent)), out)
        return out

    def leaf_values(self, opponent: int, opp_rank: int, opp_right: bool, my_right: bool,
                    out: np.ndarray | None = None) -> np.ndarray:
        """For every end state e of the side that just moved: P(it wins), the opponent throwing next, each side's
        next throw mixed where allowed (see ``_leaf_kernel``)."""
        if out is None:
            out = np.empty(self.pmf_rows.shape[0])
        if opponent == B.WIN:
            out[:] = 0.0
            out[B.WIN] = 1.0
            return out
        _leaf_kernel(self.pmf_rows, self.pmf_rows_mixed_next[3], self.pmf_rows_mixed_next[4],
                     np.ascontiguousarray(self.survival(opponent)), np.ascontiguousarray(self.survival(opponent, 3)),
                     np.ascontiguousarray(self.survival(opponent, 4)), opp_rank, opp_right, my_right, out)
        return out

    def rights_leaf_values(self, opponent: int, opp_rank: int, opp_right: bool, my_right: bool, lam_me: float,
                           lam_opp: float, out: np.ndarray | None = None, me_first: bool = False) -> np.ndarray:
        """For every end state e of a side: P(it wins), the opponent throwing next (``me_first``: e throws next),
        the mixed-throw rights of both sides valued (see ``_rights_leaf_kernel``)."""
        if out is None:
            out = np.empty(self.pmf_rows.shape[0])
        if opponent == B.WIN:
            out[:] = 0.0
            out[B.WIN] = 1.0
            return out
        survs = [1.0 - self.cdf[:, opponent], 1.0 - self.cdf_right[3][:, opponent],
                 1.0 - self.cdf_right[4][:, opponent]]
        if me_first:  # P(T_b >= t) instead of P(T_b > t)
            survs = [np.concatenate(([1.0], x[:-1])) for x in survs]
        _rights_leaf_kernel(self.pmf_rows, self.pmf_rows_right[3], self.pmf_rows_right[4],
                            *(np.ascontiguousarray(x) for x in survs),
                            opp_rank, opp_right, my_right, lam_me, lam_opp, out)
        return out

    def win_to_move(self, me: int, opponent: int) -> float:
        """P(the side to move, before its throw, in state ``me`` wins against ``opponent``)."""
        if me == B.WIN:
            return 1.0
        if opponent == B.WIN:
            return 0.0
        surv_b = np.concatenate(([1.0], self.survival(opponent)[:-1]))  # P(T_b >= t)
        return float(self.pmf_rows[me] @ surv_b)


@lru_cache(maxsize=8)
def race_tables(probs: T.ThrowProbabilities = T.DEFAULT_PROBABILITIES) -> RaceTables:
    """The tables for a set of face probabilities, built once per process. Those of the default probabilities are
    also kept on disk (31 MB next to the kernels' cache): building them was 2.3 s of a 4.4 s warm ``isready`` on an
    idle core; other probabilities are built in each process (2-3 s), so that trying many fills no disk."""
    if probs != T.DEFAULT_PROBABILITIES:
        return RaceTables(probs)
    path = safecache.cache_file(__file__, "mawarikudoi-race", TABLE_SOURCES)
    return RaceTables.from_arrays(probs, safecache.array_cache(path, lambda: RaceTables(probs).to_arrays()))


@dataclass(frozen=True)
class RolloutTables:
    """What the simulated games need besides the race tables: ``land[s, sq]`` (fewest actions for runner state s
    to end a move on sq without relaying first, 51 if more than 50) and the normalised throw CDFs."""

    land: np.ndarray
    cum_gold: np.ndarray
    cum_mixed3: np.ndarray
    cum_mixed4: np.ndarray


#: What the race and landing tables are computed from: a change to any of these builds them again instead of
#: reading their files.
TABLE_SOURCES = (__file__, K.__file__, B.__file__, T.__file__)


def _build_land_table() -> dict[str, np.ndarray]:
    land = np.empty((B.N_STATES, B.N_SQUARES), dtype=np.int16)
    gen = _generator()
    _land_table_kernel(B.TARGETS, B.N_TARGETS, T.MIXED_CAP, land, np.empty(B.N_SQUARES, dtype=np.int64), gen.mark,
                       gen.cur, gen.nxt)
    return {"land": land}


@lru_cache(maxsize=8)
def rollout_tables(probs: T.ThrowProbabilities = T.DEFAULT_PROBABILITIES) -> RolloutTables:
    """Built once per process. The landing table (1.8 MB, 1.7 s to build on an idle core, the same for every set
    of probabilities) is kept on disk next to the kernels' cache, so a warm ``isready`` reads it (20 ms)."""
    land = safecache.array_cache(safecache.cache_file(__file__, "mawarikudoi-land", TABLE_SOURCES),
                                 _build_land_table)["land"]

    def cum(d: np.ndarray) -> np.ndarray:
        c = np.cumsum(d)
        return np.ascontiguousarray(c / c[-1])

    return RolloutTables(land, cum(T.gold_distribution(probs)), cum(T.mixed_distribution(3, probs)),
                         cum(T.mixed_distribution(4, probs)))


# ------------------------------------------------------------------ players
class Engine:
    """Expectimax over throws with race-table leaves; ``search`` answers any decision of a state.

    By default the leaves value both sides' mixed-throw rights (:meth:`RaceTables.rights_leaf_values`: a side
    holding its right races with the right-in-use table, ``lam_me``/``lam_opp`` weigh it when the side is not allowed
    the mixed throw at its next turn). ``rights_aware=False`` gives the plain gold-only race
    (:meth:`RaceTables.win_after_move`); with it, ``mixed_aware=True`` lets them see
    each side's next throw as mixed where it will be allowed (:meth:`RaceTables.leaf_values`); measured weaker
    (85/200 against greedy, against 83/150 without), because it rewards staying behind for a mixed throw that the
    opponent's next turn often takes away. Kept as an option for further work.

    ``rollouts`` > 0 (default 1500) decides among the leaf search's candidates by that many simulated games each
    (see the module docstring); ``rollouts=0`` is the leaf search alone. ``seed`` seeds the simulated dice.
    """

    name = "engine"

    def __init__(self, probs: T.ThrowProbabilities = T.DEFAULT_PROBABILITIES, mixed_aware: bool = False,
                 stomp_aware: bool = True, rights_aware: bool = True, lam_me: float = 1.0,
                 lam_opp: float = 1.0, rollouts: int = 1500, rollout_candidates: int = 4, seed: int = 0,
                 throw_rollouts: int | None = None) -> None:
        self.tables = race_tables(probs)
        self.rollouts = rollouts
        self.throw_rollouts = rollouts if throw_rollouts is None else throw_rollouts
        self.rollout_candidates = rollout_candidates
        self._rng = np.random.default_rng(seed)
        self._rollout_tables = rollout_tables(probs) if rollouts else None
        self.probs = probs
        self.mixed_aware = mixed_aware
        self.rights_aware = rights_aware
        self.lam_me = lam_me
        self.lam_opp = lam_opp
        self.stomp_aware = stomp_aware
        self._land = np.empty(B.N_SQUARES, dtype=np.int64)
        sf = {0: T.gold_distribution(probs)[::-1].cumsum()[::-1]}
        for n_silvers in (3, 4):
            sf[n_silvers] = T.mixed_distribution(n_silvers, probs)[::-1].cumsum()[::-1]
        self._at_least = {k: np.concatenate((v, [0.0] * (T.GOLD_MAX + 2 - len(v)))) for k, v in sf.items()}
        self._rank = np.minimum(np.arange(B.N_STATES + 1) // (B.N_STATES // B.N_RUNNERS), B.N_RUNNERS)
        self._sq = (np.arange(B.N_STATES + 1) // (B.N_FACINGS * B.N_CORNER_CODES)) % B.N_SQUARES
        self._best = np.empty((2, T.GOLD_MAX + 1))
        self._value2 = np.empty((2, B.N_STATES2 + 1))

    def leaf_values(self, state: MawarikudoiState, my_right: bool) -> np.ndarray:
        """Win probability of the side to move for each end state of its turn (sente's frame)."""
        opp = state.sides[1 - state.side]
        b = state.frame_state(1 - state.side)
        if self.rights_aware:
            w = self.tables.rights_leaf_values(b, opp.runner, opp.mixed_right, my_right, self.lam_me, self.lam_opp)
        elif not self.mixed_aware:
            w = self.tables.win_after_move(b)
        else:
            w = self.tables.leaf_values(b, opp.runner, opp.mixed_right, my_right)
        if self.stomp_aware and b != B.WIN and opp.runner < B.KING:
            w = self._with_stomp_risk(state, w, b, opp, my_right)
        return w

    def _with_stomp_risk(self, state: MawarikudoiState, w: np.ndarray, b: int, opp, my_right: bool = False
                         ) -> np.ndarray:
        """Blend in the chance that the opponent, lower in the order, stomps my runner on its next turn.

        ``q(e)`` = P(the opponent's throw reaches a move onto e's square before any relay), the throw being mixed
        when the opponent keeps the right; a stomp is taken as relaying it to its next runner's start, with me to
        move: ``w'(e) = (1 - q) w(e) + q P(e wins, moving first, against that start)``."""
        gen = _generator()
        _landing_steps(b, 50, B.TARGETS, B.N_TARGETS, self._land, gen.mark, gen.cur, gen.nxt)
        rank = self._rank
        threatened = (rank > opp.runner) & (rank < B.N_RUNNERS)
        if not threatened.any():
            return w
        land = self._land[B.N_SQUARES - 1 - self._sq]  # my frame -> the opponent's frame
        n_silver = 4 - (rank == B.SILVER) - (opp.runner == B.SILVER)
        if opp.mixed_right:
            q = np.where(n_silver == 3, self._at_least[3][land], self._at_least[4][land])
        else:
            q = self._at_least[0][land]
        q = np.where(threatened, q, 0.0)
        # The stomp relays the opponent to its next runner's start and uses its turn; the rest of its throw is left
        # out (measured: adding the expected rest, r = E[N - L | N >= L] actions of the next runner, played 460/1000
        # against greedy, this simpler form 506/1000).
        b_next = B.pack(opp.runner + 1, B.START_SQ, B.START_FACING, 0)
        if self.rights_aware:
            first = self.tables.rights_leaf_values(b_next, opp.runner + 1, opp.mixed_right, my_right, self.lam_me,
                                                   self.lam_opp, me_first=True)
        else:
            surv = self.tables.survival(b_next)
            ge = np.ascontiguousarray(np.concatenate(([1.0], surv[:-1])))  # P(T_b' >= t)
            first = np.empty_like(w)
            _matvec(self.tables.pmf_rows, ge, first)
        return (1.0 - q) * w + q * first

    def throw_values(self, state: MawarikudoiState, kinds: list[str] | None = None) -> dict[str, float]:
        """Expected win probability of each throw (the side to move, before throwing; default: the allowed ones)."""
        if kinds is None:
            kinds = ["gold", "mixed"] if state.mixed_allowed(state.side) else ["gold"]
        right = state.sides[state.side].mixed_right
        vectors = [right] + ([False] if "mixed" in kinds and right else [])
        for m, r in enumerate(vectors):
            w = self.leaf_values(state, r)
            self._value2[m, :-1] = np.repeat(w[:-1], 2)
            self._value2[m, -1] = 1.0
        gen = _generator()
        esq, erank = state.enemy_in_frame(state.side)
        start2 = state.frame_state(state.side) * 2
        dists = {kind: state.throw_distribution(kind) for kind in kinds}
        nmax = max(int(np.nonzero(d)[0].max()) for d in dists.values())
        # One DP serves both throws: best[N] depends only on the start, the enemy, N and the leaf vector. It runs to
        # the mixed cap (50) at most: a gold throw has no N in 41..99, and its N >= 100 (p = 0.008) are valued by
        # the solitaire policy's end state N actions away (a reachable state, so a lower bound), which would
        # otherwise double the DP.
        n_dp = min(nmax, T.MIXED_CAP)
        kwin = K.best_by_steps(start2, n_dp, esq, erank, B.TARGETS, B.N_TARGETS, self._value2[:len(vectors)],
                               self._best, gen.mark, gen.cur, gen.nxt)
        if nmax > n_dp:
            start = start2 // 2
            for n in range(n_dp + 1, nmax + 1):
                if kwin <= n_dp or n >= self.tables.distance[start]:
                    self._best[:len(vectors), n] = self._value2[:len(vectors), -1]
                else:
                    self._best[:len(vectors), n] = self._value2[:len(vectors), 2 * self.tables.policy_arg[n, start]]
        out = {}
        for kind, d in dists.items():
            best = self._best[0, :len(d)]
            if kind == "mixed" and len(vectors) == 2:  # a mixed throw of 10 or more ends the right
                best = np.where(np.arange(len(d)) >= T.MIXED_LOSS_THRESHOLD, self._best[1, :len(d)], best)
            out[kind] = float(d @ best)
        return out

    def choose_throw(self, state: MawarikudoiState) -> tuple[str, float]:
        if self.rollouts and state.mixed_allowed(state.side):
            me, opp = state.sides[state.side], state.sides[1 - state.side]
            values = {}
            u = self._uniforms(self.throw_rollouts)
            for kind in ("mixed", "gold"):
                values[kind] = float(self._simulate(np.array([state.frame_state(state.side)], dtype=np.int32),
                                                    state.frame_state(1 - state.side), me.mixed_right,
                                                    opp.mixed_right, False, kind == "gold", u)[0])
        else:
            values = self.throw_values(state)
        kind = max(values, key=lambda k: (values[k], k == "gold"))
        return kind, values[kind]

    def choose_end(self, state: MawarikudoiState) -> tuple[int, float]:
        ends = state.end_states()
        if ends[-1] == B.WIN:
            return B.WIN, 1.0
        w = self.leaf_values(state, state.sides[state.side].mixed_right)[ends]
        e = self.tables.expected[ends]
        order = np.lexsort((e, -w))
        i = int(order[0])
        if self.rollouts:
            cands = self._end_candidates(ends, order)
            if len(cands) > 1:
                me, opp = state.sides[state.side], state.sides[1 - state.side]
                v = self._simulate(np.ascontiguousarray(ends[cands], dtype=np.int32),
                                   state.frame_state(1 - state.side), me.mixed_right, opp.mixed_right, True, False,
                                   self._uniforms())
                k = int(np.argmax(v))
                return int(ends[cands[k]]), float(v[k])
        return int(ends[i]), float(w[i])

    def _end_candidates(self, ends: np.ndarray, order: np.ndarray) -> np.ndarray:
        """Indices into ``ends`` worth simulating: the best few by the leaf value, the best of each runner rank
        (relaying or not is the decision the leaves judge worst) and the one closest to the goal (greedy's)."""
        picked = list(order[:self.rollout_candidates])
        rank = self._rank[ends[order]]
        for r in np.unique(rank):
            picked.append(order[int(np.argmax(rank == r))])
        picked.append(int(np.argmin(self.tables.distance[ends])))
        return np.array(sorted(set(int(x) for x in picked)), dtype=np.int64)

    def _uniforms(self, n: int | None = None) -> np.ndarray:
        return self._rng.random((self.rollouts if n is None else n, 2, 96))

    def _simulate(self, mine: np.ndarray, opp: int, right_me: bool, right_opp: bool, opp_first: bool,
                  first_gold: bool, u: np.ndarray) -> np.ndarray:
        """My win rate in ``self.rollouts`` simulated games from each of my states ``mine`` (see ``_rollout_game``)."""
        rt, tb = self._rollout_tables, self.tables
        out = np.empty(len(mine))
        _rollout_values(mine, opp, right_me, right_opp, opp_first, first_gold, tb.policy_arg, tb.distance,
                        tb.expected, rt.land, rt.cum_gold, rt.cum_mixed3, rt.cum_mixed4, u, out)
        return out

    def winprob(self, state: MawarikudoiState) -> float:
        """Win probability of the side to move at any node (terminal: 1 or 0 for it)."""
        if state.phase == "end":
            return 1.0 if state.winner == state.side else 0.0
        if state.phase == "turn":
            return self.choose_end(state)[1]
        if state.phase == "choose":
            return self.choose_throw(state)[1]
        return self.throw_values(state, [state.phase])[state.phase]

    def search(self, state: MawarikudoiState) -> Choice:
        """The action token to play at the current decision node, and the win probability of the side to move."""
        if state.phase == "choose":
            kind, v = self.choose_throw(state)
            return Choice("throw:" + kind, v)
        if state.phase == "turn":
            end, v = self.choose_end(state)
            return Choice(state.turn_token(end), v)
        raise ValueError(f"no decision to make at the {state.phase!r} node")
