"""Search kernels: principal-variation search, quiescence, transposition table, repetition.

Every buffer lives in :class:`SearchTables` (allocated in Python by :class:`search.Searcher`); kernels never allocate
(NRT is off, see :mod:`engine.kernels`). The node loop is one negamax, :func:`search`, written as numbered steps. Its
child call goes through a *side-change test* (``sgn``): the value of a child is negated and its window mirrored only
when the side to move changed, so a multi-part turn (the same side moving twice) needs no change here. A node where a
chance event is due (fantasista's rolls, through the rule hooks of :mod:`engine.kernels.hooks`) is an expectation
over its outcomes, pruned by Star1 (``docs/search.md``, "Chance nodes").

Scores are centipawns from the side to move's point of view; ``MATE - ply`` means "mate delivered ``ply`` plies
from the root" (``ply`` counts from the root of this search), and those scores are made relative to the node when
they go into the transposition table and back to root-relative when they come out.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from engine.kernels import hash_slot, inner_kernel, kernel
from engine.kernels.hooks import (chance_count, chance_horizon, chance_rows, chance_weight, end_preview,
                                  null_move_allowed, play_chance, preview_chance, search_key,
                                  unplay_chance)
from engine.kernels.movegen import (DROP, GEN_CAPTURES, GEN_SEARCH, HAS_MID, MAX_MOVES, PROMOTE, ST_KSQ, ST_PLY,
                                    ST_ROYALS, ST_STM, do_move, generate, in_check, is_attacked, royal_square,
                                    undo_move)
from engine.variant import P_LAST_ROYAL, P_N_RANKS, P_TRY, Tables
from eval.kernels import evaluate_cached, evaluate_k

from .movepick import (CONT_KINDS, HISTORY_MAX, MP_CONT, MP_COUNTER, MP_SCORE, ORD_CAPTURE, cont_index, mp_init,
                       mp_next, moving_code, pick, score_moves, sort_rest)
from .see import capture_value, see_ge

MAX_PLY = 128            # plies from the root (search + quiescence)
MAX_DEPTH = 64           # iterative-deepening depth limit
QS_MAX_PLIES = 16        # quiescence plies below the horizon before the static evaluation is taken
INF = 32001
MATE = 32000
MATE_BOUND = MATE - MAX_PLY  # |score| > MATE_BOUND: a mate score
PERPETUAL = 20000        # score of the side that is perpetually checked into a repetition (the checker loses)
REP_SCAN = 64            # how many plies back (game history included) a repetition is looked for
MAX_QUIETS = MAX_MOVES   # quiet moves remembered per node for the history malus (all of them)

BOUND_NONE, BOUND_UPPER, BOUND_LOWER, BOUND_EXACT = 0, 1, 2, 3
# Chance nodes: an outcome's value counts within +-CHANCE_BOUND (a mate below a chance node counts as the bound), so
# that Star1 knows how far the outcomes not yet searched can move the expectation.
CHANCE_BOUND = 20000
# How a chance node is searched (S.ctl[CTL_CHANCE]): the expectation, each outcome first tested in a null window at
# the value its static evaluation predicts, then Star1's cutoffs with the bounds found; every outcome expanded in the
# full window (the exact expectation, the tests' reference); the chance event ignored (a roll-blind search); "main":
# the most probable outcome searched, the others valued by their static difference from it (a shift).
CHANCE_STAR1, CHANCE_EXPAND, CHANCE_BLIND, CHANCE_MAIN = 0, 1, 2, 3
MAX_CHANCE_ROWS = 8  # the most outcomes a chance event may have (S.chance)
# The rows of S.chance[ply]: each outcome's weight, lower bound, upper bound and static value
CH_W, CH_LO, CH_HI, CH_SV = range(4)
CHANCE_COLS = 4

# Control vector (int64) shared with Python: stop flag and counters.
# CTL_CURRMOVE: the root move being searched (read by the USI engine's monitor thread for ``info currmove``).
(CTL_STOP, CTL_NODES, CTL_NODE_LIMIT, CTL_SELDEPTH, CTL_BEST_MOVE, CTL_BEST_SCORE, CTL_GEN, CTL_ROOT_N,
 CTL_HORIZON, CTL_CURRMOVE) = range(10)
CTL_FEATURES = 12  # bit set of FEAT_*: the selectivity features switched on for this search (Searcher.features)
CTL_CHANCE = 13  # CHANCE_*: how chance nodes are searched
# The chance events a search anticipates at its leaves: numbers [FROM, TO) of the game's events (set at the root),
# and each one's expected static gain (sente's view) at CTL_CHANCE_GAIN + (number - FROM)
CTL_CHANCE_FROM, CTL_CHANCE_TO, CTL_CHANCE_GAIN = 14, 15, 16
MAX_ANTICIPATED = 2
CHANCE_KEY_MIX = np.uint64(0x9E3779B97F4A7C15)  # an odd constant: CTL_CHANCE_TO's share of the TT key
CTL_SIZE = CTL_CHANCE_GAIN + MAX_ANTICIPATED

# Search features that are kept off until an SPRT accepts them (docs/search.md, bench/strength/shogi-sprt.tsv).
FEAT_SEE = 1     # SEE in quiescence and move-loop pruning, losing captures ordered last
FEAT_STAGED = 2  # TT move tried before generation, counter-move ordering
FEAT_QS_TT = 4   # TT probes (cutoffs) in the quiescence search, null-window nodes
FEAT_PV_CHECK_EXT = 8  # the check extension only at PV nodes (shogi's drop checks make long check sequences)
FEAT_HIST_LMR = 16     # late-move reductions follow the quiet move's history (less when good, more when bad)
FEAT_IIR = 32          # internal iterative reduction: a node without a TT move is searched one ply shallower
IIR_DEPTH = 4          # ... from this depth on
FEAT_WIDE_FUTILITY = 64  # reverse futility up to depth 7 (margin 100 a ply), move-loop futility up to depth 5
# Without the feature, reverse futility (static eval - margin * depth >= beta) and move-loop futility
# (eval + margin * depth <= alpha) take their depth and margin from S.tune (search/params.py); with it:
WIDE_RFP_DEPTH, WIDE_RFP_MARGIN = 7, 100
WIDE_FUT_DEPTH, WIDE_FUT_BASE, WIDE_FUT_MARGIN = 5, 100, 100
FEAT_WIDE_LMR = 128  # late-move reductions from depth 2, also of checks, evasions and losing captures; +1 off the PV
# "Improving": the static evaluation is above the one the same side had two plies (a move of each side) earlier.
# Improving, a node is likelier to fail high: reverse futility needs one ply's margin less (margin * (depth - 1)).
# Not improving, it is likelier to fail low: late-move pruning keeps half the moves, and a late move the LMR table
# reduces is reduced one ply more.
FEAT_IMPROVING = 256
# Continuation history (a counter-move history): how often a quiet move (its piece kind and target) refuted the
# opponent's previous move (its kind and target), S.cont, added to the butterfly history when quiet moves are
# ordered; updated with the same bonus and malus on a quiet cutoff. The piece kind is a code's low five bits.
FEAT_CONT_HIST = 512
# Checks pruned like other moves (Stockfish's rule): late-move pruning also skips quiet moves that give check, and
# SEE pruning also tests moves that may give check (at the capture margin): in shogi, with pieces in hand, checking
# drops are many and most of them lose the dropped piece.
FEAT_CHECK_PRUNE = 1024
# Quiescence checks (Stockfish 11's depth-0 quiescence checks): at the first quiescence ply, when the captures found
# no cutoff, the quiet moves that give check and do not lose the piece (SEE >= 0) are searched too, so that a mate
# just past the horizon (a drop mate, in shogi) is seen. Those nodes' TT entries get depth 0, deeper quiescence -1.
FEAT_QS_CHECKS = 2048
# Quiescence evasion pruning (Stockfish 11's): in check in the quiescence search, once an evasion has shown the
# node is not lost, the quiet evasions (king steps, interpositions: in shogi mostly drops) that lose material by
# SEE are skipped; a quiescence node in check otherwise searches every legal reply.
FEAT_QS_EVASION_PRUNE = 4096
# Cut-node reductions (Stockfish's): a null-window node whose parent expects it to fail high (the child of a
# reduced late move, and so on alternately down the tree) reduces its late moves CUT_NODE_RED plies more: a cut
# node needs one good move, and its later moves are likely to fail low anyway.
FEAT_CUT_NODE = 8192
CUT_NODE_RED = 2
# Late-move reductions of quiet checks (Stockfish reduces checks like other moves): without it a quiet move that
# gives check is never reduced, and with pieces in hand a shogi node has many checking drops.
FEAT_LMR_CHECKS = 16384
# Mate in one (YaneuraOu's 1-ply mate test): at a main-search node not in check, a move that leaves the opponent
# no legal reply returns the mate score before any evaluation or pruning; in shogi a drop mate is often one ply
# past a reduced or pruned horizon. Contact and knight-distance moves only, each made and tested.
FEAT_MATE1 = 32768
# ... at nodes of this depth or more: at depth-1 nodes too (the most numerous) nodes/s fell by 42 % on the six bench
# positions (by 15 % from depth 2; bench.search_nodes)
MATE1_DEPTH = 2
# Late-move reductions at the root (Stockfish's): a quiet root move after the first ROOT_LMR_AFTER is reduced like
# one at an inner PV node. Without it every root move gets the full depth, and with pieces in hand a shogi root has
# 100-200 moves (bench position 4 needed 3.8 times the nodes to depth 7 without it, with the n4 tables).
FEAT_ROOT_LMR = 65536
ROOT_LMR_AFTER = 3
# Razoring (Stockfish's): a non-PV depth-1 node not in check whose static evaluation is more than the razor margin
# (S.tune[TUNE_RAZOR_MARGIN]) below alpha returns the quiescence search's value: only a capture can save it.
FEAT_RAZOR = 131072
# Futility pruning by the reduced depth (Stockfish's lmrDepth): at a non-PV node not in check, a quiet move that does
# not give check is pruned when eval + FutilityMargin * (lmr_depth + 1) <= alpha, lmr_depth being the depth its late-
# move reduction would leave (the LMR table only), below LMR_FUTILITY_DEPTH; without it futility pruning stops at
# FutilityDepth (2) and looks at the node's depth.
FEAT_LMR_FUTILITY = 262144
LMR_FUTILITY_DEPTH = 6
# Singular extensions (Stockfish's): at a node of depth >= SingularDepth (S.tune) whose TT entry is a lower or exact
# bound of at least depth - SINGULAR_TT_DEPTH plies with a move, the node is first searched without that move at half
# depth against tt_score - SingularMargin * depth. If every other move falls below it, the TT move is singular (the
# only good move) and is searched one ply deeper; if that bound is itself >= beta, several moves beat beta and the
# node returns it (multi-cut); otherwise, if the TT score beats beta or the node is a cut node, the TT move is
# searched one ply shallower (Stockfish's negative extension: it is not the only good move, and it should cut).
# Not at a node in check: it has gained the check extension already, and its few replies make one of them singular
# by construction, so the two would stack and a check sequence would lose no depth.
# The search without the move runs before move generation: the move lists, the picker state and the quiet-move buffer
# of a ply are shared buffers (S.moves[ply], S.mp[ply], ...), not locals.
FEAT_SINGULAR = 524288
SINGULAR_TT_DEPTH = 3
# ProbCut (Stockfish's): at a non-PV node of depth >= ProbCutDepth (S.tune), not in check, a capture (or promotion)
# whose exchange gains at least r_beta - eval, r_beta = beta + ProbCutMargin, is tried: a quiescence search first,
# then, if that holds, a search of the child to depth - PROBCUT_REDUCTION against r_beta; one that holds returns its
# value (a shallow search well above beta predicts the full one above beta). At most PROBCUT_MOVES captures, twice as
# many at a cut node. Like the singular search, it runs before move generation (the ply's move list is a shared
# buffer).
FEAT_PROBCUT = 1048576
PROBCUT_REDUCTION = 4
PROBCUT_MOVES = 2
# The TT score as a better evaluation (Stockfish's): when the node's TT entry bounds its score on the side that
# corrects the static evaluation (a lower bound above it, an upper bound below it), the pruning steps (razoring,
# reverse futility, null move, ProbCut, futility) use the TT score instead; the "improving" test keeps the static one.
FEAT_TT_EVAL = 2097152
# Promotions that capture nothing are late-move pruned, SEE pruned and reduced like quiet moves (fairy-stockfish
# counts shogi's promotions as quiet); without it they are never pruned or reduced. They keep their place in the
# capture band of the move order and stay out of the killers and the history.
FEAT_QUIET_PROMOTIONS = 4194304
# The history malus on a quiet cutoff only for the quiet moves that were searched (Stockfish's); without it every
# quiet move tried before the cutoff gets it, those that futility, late-move or SEE pruning skipped too.
FEAT_MALUS_SEARCHED = 8388608
# Late-move reductions at a node in check (Stockfish reduces there too): a quiet evasion after the first ones (king
# steps, interpositions, drops between) is reduced by the LMR table like any late quiet move; without it every
# evasion keeps the full depth, and a checking drop costs its side no depth at all.
FEAT_LMR_EVASIONS = 16777216
NULL_EVAL_MAX = 3  # at most this many plies of null-move reduction come from the margin above beta
# Entries of the evaluation hash (per search thread; 12 bytes each): it only has to catch the re-evaluations of a
# node's recent subtree (re-searches, razoring's and ProbCut's quiescence searches), not a whole iteration.
EVAL_HASH_ENTRIES = 1 << 16
NO_EVAL = -INF - 1  # S.sev: no static evaluation at that ply (in check, or a quiescence node)

# Move ordering: bands and the staged picker are in search/movepick.py.

# Margins, depths and reductions of the pruning steps are run-time parameters, S.tune[TUNE_*]: their defaults,
# ranges and names are in search/params.py (the USI option SearchParams). The indices are compile-time constants
# of this kernel, so they live here (a change wipes the cache, usi/kernel_cache.py); append, never renumber.
(TUNE_RFP_DEPTH, TUNE_RFP_MARGIN, TUNE_FUT_DEPTH, TUNE_FUT_MARGIN, TUNE_LMP_DEPTH, TUNE_LMP_BASE, TUNE_LMP_SCALE,
 TUNE_NULL_BASE, TUNE_NULL_DEPTH_DIV, TUNE_SEE_DEPTH, TUNE_SEE_CAPTURE, TUNE_SEE_QUIET, TUNE_HIST_LMR_DIV,
 TUNE_DELTA_MARGIN, TUNE_LMR_BASE, TUNE_LMR_DIV, TUNE_NULL_EVAL_DIV, TUNE_RAZOR_MARGIN, TUNE_SINGULAR_DEPTH,
 TUNE_SINGULAR_MARGIN, TUNE_PROBCUT_DEPTH, TUNE_PROBCUT_MARGIN, TUNE_CHANCE_REDUCTION,
 TUNE_CHANCE_MAIN_REDUCTION) = range(24)
TUNE_SIZE = TUNE_CHANCE_MAIN_REDUCTION + 1

SearchTables = namedtuple("SearchTables", [
    "ctl",        # int64[CTL_SIZE]: see CTL_*
    "moves",      # int32[MAX_PLY + 1, MAX_MOVES]: move list per ply
    "mscore",     # int32[MAX_PLY + 1, MAX_MOVES]: ordering score of each move
    "pv",         # int32[MAX_PLY + 1, MAX_PLY + 1]: triangular PV table
    "pv_len",     # int32[MAX_PLY + 1]: pv[ply, ply:pv_len[ply]] is the PV from ply
    "killers",    # int32[MAX_PLY + 1, 2]
    "history",    # int32[64, n_sq]: quiet-move history by moving piece code and target square
    "checks",     # int8[capacity]: side to move at absolute ply i was in check (game history + search path)
    "root_moves",  # int32[MAX_MOVES]: root moves to search (CTL_ROOT_N of them), best first
    "root_scores",  # int32[MAX_MOVES]
    "lmr",        # int8[64, 64]: late-move reduction by depth and move number
    "tt_key",     # uint64[N] (N a power of two)
    "tt_move",    # int32[N]
    "tt_score",   # int32[N]
    "tt_depth",   # int16[N]
    "tt_bound",   # int8[N]
    "tt_gen",     # uint8[N]
    "see_buf",    # int32[3, SEE_BUF]: scratch of the static exchange evaluation (search/see.py)
    "mp",         # int32[MAX_PLY + 1, MP_COLS]: staged move picker state per ply (search/movepick.py)
    "counter",    # int32[64, n_sq]: counter-move: the quiet move that refuted (piece code, to) of the last move
    "quiets",     # int32[MAX_PLY + 1, MAX_QUIETS]: quiet moves searched at a ply (history malus on a cutoff)
    "tune",       # int32[TUNE_SIZE]: the tunable parameters by TUNE_* index (search/params.py); read only
    "sev",        # int32[MAX_PLY + 1, 2]: [ply, 0] the static evaluation at ply (NO_EVAL: none), [ply, 1] its side
    "cont",       # int16[CONT_KINDS * n_sq, CONT_KINDS * n_sq]: continuation history (FEAT_CONT_HIST; else [1, 1])
    "excluded",   # int32[MAX_PLY + 1]: the move a singular-extension search leaves out at that ply (0: none)
    "kp_key",     # uint64[MAX_PLY + 1]: the position whose KP sum kp_val holds, by ply (eval.kernels.kp_sum_cached)
    "kp_val",     # int64[MAX_PLY + 1]: that KP sum; both zeroed at the start of every search
    "att",        # int32[ATT_ROWS, n_sq * n_sq]: scratch of the evaluation's piece walk (eval.threat_scratch)
    "ev_key",     # uint64[EVAL_HASH_ENTRIES]: the evaluation hash (eval.kernels.evaluate_cached): position keys
    "ev_val",     # int32[EVAL_HASH_ENTRIES]: their static evaluations; both cleared at the start of every search
    "chance",     # int64[MAX_PLY + 1, CHANCE_COLS, MAX_CHANCE_ROWS]: a chance node's outcomes (CH_*), by ply
])


# ---------------------------------------------------------------- helpers
@inner_kernel
def chance_value(acc, total):
    """A chance node's value: the expectation ``acc / total`` rounded to the nearest (halves up)."""
    return (2 * acc + total) // (2 * total)


@inner_kernel
def chance_window(sum_lo, sum_hi, w, lo_r, hi_r, alpha, beta, total):
    """Star1's window for a result of weight ``w`` known within [``lo_r``, ``hi_r``], when the chance node is searched
    in (``alpha``, ``beta``) and ``sum_lo`` / ``sum_hi`` = the sums of weight x lower / upper bound over all its
    results (this one's included): at or below ``lo`` the expectation is <= alpha whatever the others are, at or
    above ``hi`` it is >= beta; in between the value counts as it is."""
    lo = max((total * alpha - (sum_hi - w * hi_r)) // w, lo_r - 1)
    hi = min(-(((sum_lo - w * lo_r) - total * beta) // w), hi_r + 1)  # the ceiling of (total beta - rest) / w
    return lo, hi


@inner_kernel
def chance_cut(sum_lo, sum_hi, alpha, beta, total):
    """+1 and a lower bound when the expectation is >= beta whatever the results' values within their bounds (the
    sums of weight x bound, as in :func:`chance_window`); -1 and an upper bound when it is <= alpha; else 0. The
    bounds are rounded as the value is (:func:`chance_value`), so that they hold for it."""
    if sum_lo >= total * beta:
        return 1, chance_value(sum_lo, total)
    if sum_hi <= total * alpha:
        return -1, chance_value(sum_hi, total)
    return 0, 0


@inner_kernel
def probe_threshold(sum_lo, sum_hi, rest_w, rest_sv, sv_r, aim, alpha, beta, total):
    """The null-window test of the next result (static value ``sv_r``): the results not yet tested (weight
    ``rest_w``, weighted static sum ``rest_sv``) share what is still needed in proportion to their static values.
    ``aim`` >= 0: the lower bounds found must reach total beta (a fail high); < 0: the upper bounds must stay at total
    alpha (a fail low). The result passes when its value is >= the threshold."""
    if aim >= 0:
        need = total * beta - (sum_lo + CHANCE_BOUND * rest_w)  # sum_lo counts the untested at -CHANCE_BOUND
        t = -((rest_sv - need) // rest_w) + sv_r  # the ceiling of (need - rest_sv) / rest_w, plus sv_r
    else:
        need = total * alpha - (sum_hi - CHANCE_BOUND * rest_w)
        t = (need - rest_sv) // rest_w + sv_r + 1
    return min(max(t, -CHANCE_BOUND + 1), CHANCE_BOUND)


@inner_kernel
def _chance_statics(P, T, E, S, ply, us, n_rows):
    """Fill this chance node's rows of ``S.chance``: each result's weight (``CH_W``) and static value from ``us``'s
    view (``CH_SV``; the roller of a magic target moves next, so the sign follows the side to move); return the
    total weight."""
    total = 0
    for r in range(n_rows):
        S.chance[ply, CH_W, r] = chance_weight(P, T, r)
        total += S.chance[ply, CH_W, r]
        play_chance(P, T, r)
        sv = static_value(P, T, E, S, ply + 1)
        S.chance[ply, CH_SV, r] = sv if P.st[ST_STM] == us else -sv
        unplay_chance(P, T)
    return total


@inner_kernel
def _narrow(c_w, c_lo, c_hi, r, new_lo, new_hi, sum_lo, sum_hi):
    """Result ``r`` now known within [``new_lo``, ``new_hi``]: its bounds set, and the sums of weight x bound over
    the results (Star1's) returned updated."""
    sum_lo += c_w[r] * (new_lo - c_lo[r])
    sum_hi += c_w[r] * (new_hi - c_hi[r])
    c_lo[r] = new_lo
    c_hi[r] = new_hi
    return sum_lo, sum_hi


@inner_kernel
def anticipate_chance(P, T, E, S):
    """At the root: which chance events the leaves anticipate (the coming ones, none in a roll-blind search) and
    each one's expected static gain, the weighted mean of its outcomes' evaluations less the evaluation without it.
    A leaf before an event the search did not reach then counts its expectation, as one after it counts the
    outcome played: lines that end on either side of a roll compare fairly (a reduced or null-move line that stops
    short of it does not miss the gain the full-depth lines see)."""
    c0 = chance_count(P, T)
    c1 = chance_horizon(P, T) if S.ctl[CTL_CHANCE] != CHANCE_BLIND else c0
    c1 = min(c1, c0 + MAX_ANTICIPATED)
    S.ctl[CTL_CHANCE_FROM] = c0
    S.ctl[CTL_CHANCE_TO] = c1
    for j in range(c0, c1):
        S.ctl[CTL_CHANCE_GAIN + j - c0] = chance_gain(P, T, E, S.att, j)


@inner_kernel
def chance_gain(P, T, E, att, j):
    """The expected static gain of chance event number ``j`` at this node, sente's view: the weighted mean of its
    outcomes' evaluations less the evaluation without it (0 for an event with no outcomes)."""
    saved = preview_chance(P, T, j)
    n = chance_rows(P, T)
    gain = 0
    if n > 0:
        base = evaluate_k(P, T, E, att)
        if P.st[ST_STM] != 0:
            base = -base
        total = 0
        acc = 0
        for r in range(n):
            w = chance_weight(P, T, r)
            total += w
            play_chance(P, T, r)
            v = evaluate_k(P, T, E, att)
            acc += w * ((v if P.st[ST_STM] == 0 else -v) - base)
            unplay_chance(P, T)
        gain = acc // total
    end_preview(P, T, saved)
    return gain


@kernel
def chance_gain_k(P, T, E, att, j):
    """:func:`chance_gain` for Python (fantasista's pre-game choice: the worth of a side's magic)."""
    return chance_gain(P, T, E, att, j)


@inner_kernel
def node_key(P, T, S, aply):
    """The transposition-table key of the node at absolute ply ``aply``: the rule's key (:func:`search_key`) and the
    chance events the search anticipates, whose expected gains its static values hold (a search after a roll pair
    must not read the values of one before it). Without chance events, the rule's key itself."""
    return search_key(P, T, aply) ^ (np.uint64(S.ctl[CTL_CHANCE_TO]) * CHANCE_KEY_MIX)


@inner_kernel
def static_value(P, T, E, S, ply):
    """The search's static evaluation (side to move's view): the evaluation, plus the expected gains of the
    anticipated chance events this node has not had (:func:`anticipate_chance`)."""
    v = evaluate_cached(P, T, E, ply, S.kp_key, S.kp_val, S.att, S.ev_key, S.ev_val)
    c0 = S.ctl[CTL_CHANCE_FROM]
    gain = 0
    for j in range(max(chance_count(P, T), c0), S.ctl[CTL_CHANCE_TO]):
        gain += S.ctl[CTL_CHANCE_GAIN + j - c0]
    return v + gain if P.st[ST_STM] == 0 else v - gain


@inner_kernel
def _score_to_tt(v, ply):
    if v > MATE_BOUND:
        return v + ply
    if v < -MATE_BOUND:
        return v - ply
    return v


@inner_kernel
def _score_from_tt(v, ply):
    if v > MATE_BOUND:
        return v - ply
    if v < -MATE_BOUND:
        return v + ply
    return v


@kernel
def _bound(best, orig_alpha, beta):
    """The TT bound of a node's result ``best`` searched in the window (``orig_alpha``, ``beta``)."""
    if best >= beta:
        return BOUND_LOWER
    if best > orig_alpha:
        return BOUND_EXACT
    return BOUND_UPPER


@inner_kernel
def _settles(bound, v, alpha, beta):
    """Does a TT entry with ``bound`` and score ``v`` settle the window (``alpha``, ``beta``)?"""
    return (bound == BOUND_EXACT or (bound == BOUND_LOWER and v >= beta)
            or (bound == BOUND_UPPER and v <= alpha))


@inner_kernel
def _tt_store(S, key, depth, ply, v, bound, mv):
    mask = S.tt_key.shape[0] - 1
    i = np.int64(key & np.uint64(mask))
    gen = S.ctl[CTL_GEN] & 255
    same = S.tt_key[i] == key
    if same or S.tt_gen[i] != gen or depth + 2 >= S.tt_depth[i] or bound == BOUND_EXACT:
        if mv != 0 or not same:
            S.tt_move[i] = mv
        S.tt_key[i] = key
        S.tt_score[i] = _score_to_tt(v, ply)
        S.tt_depth[i] = depth
        S.tt_bound[i] = bound
        S.tt_gen[i] = gen


@inner_kernel
def _repetition(P, S, aply):
    """0: none; 1: draw; 2: the side to move was checked on every move of the cycle (it wins); 3: it gave check on
    every move of the cycle (it loses). Looks back through the search path and the game history, not across a null
    move."""
    key = P.keys[aply]
    lim = max(0, aply - REP_SCAN)
    j = aply - 1
    while j >= lim:
        if P.moves[j] == 0:
            return 0
        d = aply - j
        if d >= 4 and (d & 1) == 0 and P.keys[j] == key:
            we_checked_all = True
            they_checked_all = True
            i = j + 1
            while i <= aply:
                if ((aply - i) & 1) == 0:
                    if S.checks[i] == 0:
                        they_checked_all = False
                else:
                    if S.checks[i] == 0:
                        we_checked_all = False
                i += 1
            if they_checked_all:
                return 2
            if we_checked_all:
                return 3
            return 1
        j -= 1
    return 0


@inner_kernel
def _try_lost(P, T, moves, n):
    """Try rule: an enemy royal stands on its far rank and none of the side to move's ``n`` moves (which include
    every capture) takes it, so the enemy has won."""
    them = 1 - P.st[ST_STM]
    for i in range(P.st[ST_ROYALS + them]):
        sq = royal_square(P, T, them, i)
        if T.far_rank[them, sq]:
            taken = False
            for j in range(n):
                mv = moves[j]
                if (mv & 0xFF) == sq or ((mv & HAS_MID) != 0 and ((mv >> 18) & 0xFF) == sq):
                    taken = True
                    break
            if not taken:
                return True
    return False


@inner_kernel
def _do_null(P, T):
    st = P.st
    ply = st[ST_PLY]
    P.moves[ply] = 0
    P.undo[ply] = 0
    st[ST_STM] = 1 - st[ST_STM]
    st[ST_PLY] = ply + 1
    P.keys[ply + 1] = P.keys[ply] ^ T.zob_side[0]


@inner_kernel
def _undo_null(P):
    P.st[ST_STM] = 1 - P.st[ST_STM]
    P.st[ST_PLY] -= 1


@inner_kernel
def _may_check(P, T, mv, eksq):
    """Cheap pre-test: False when ``mv`` certainly gives no check (the target is neither near nor in line with the
    enemy king, and the origin is not in line with it, which rules out discovered checks)."""
    if eksq < 0:
        return False
    to = mv & 0xFF
    if T.line_dir[eksq, to] >= 0:
        return True
    n_ranks = T.params[P_N_RANKS]
    df = abs(to // n_ranks - eksq // n_ranks)
    dr = abs(to % n_ranks - eksq % n_ranks)
    if df <= 2 and dr <= 2:
        return True
    if (mv & DROP) == 0 and T.line_dir[eksq, (mv >> 8) & 0xFF] >= 0:
        return True
    return False


@inner_kernel
def _mate_in_one(P, T, S, ply):
    """Has the side to move a move after which the opponent has no legal move while in check (checkmate)?
    ``S.moves[ply + 1]`` and ``[ply + 2]`` are scratch (this node's children overwrite them anyway). A side with
    several royals is never mated by one check, and a move that keeps the turn (a multi-part turn) is no mate."""
    us = P.st[ST_STM]
    them = 1 - us
    if T.params[P_LAST_ROYAL] != 0 and P.st[ST_ROYALS + them] >= 2:
        return False
    eksq = P.st[ST_KSQ + them]
    if eksq < 0:
        return False
    n_ranks = T.params[P_N_RANKS]
    n = generate(P, T, GEN_SEARCH, S.moves[ply + 1])
    for i in range(n):
        mv = S.moves[ply + 1, i]
        to = mv & 0xFF
        # contact and knight-distance checks only: they are most mates in one, and testing every distant or
        # discovered check costs an evasion generation each (nodes/s fell to a quarter on the sharp bench positions)
        if abs(to // n_ranks - eksq // n_ranks) > 1 or abs(to % n_ranks - eksq % n_ranks) > 2:
            continue
        do_move(P, T, mv)
        mated = P.st[ST_STM] == them and in_check(P, T) and generate(P, T, GEN_SEARCH, S.moves[ply + 2]) == 0
        undo_move(P, T)
        if mated:
            return True
    return False


@inner_kernel
def _is_quiet(P, mv):
    return (mv & PROMOTE) == 0 and ((mv & DROP) != 0 or P.board[mv & 0xFF] == 0)


@inner_kernel
def _is_quiet_promotion(P, mv):
    """A promotion that captures nothing (FEAT_QUIET_PROMOTIONS prunes and reduces it like a quiet move)."""
    return (mv & (PROMOTE | DROP)) == PROMOTE and P.board[mv & 0xFF] == 0


@inner_kernel
def _qs_futile_capture(P, T, E, S, ply, i, mv, stand, alpha, use_see):
    """Is the quiescence capture (or promotion) ``mv``, ``S.moves[ply, i]``, not worth searching? Delta pruning
    (even its full gain cannot lift alpha), then SEE < 0 (with ``use_see``; found by score_moves) or else the cheap
    stand-in: a more valuable captor on a defended square."""
    code = P.board[(mv >> 8) & 0xFF]
    victim = P.board[mv & 0xFF]
    gain = capture_value(T, E, victim) if use_see else E.value[victim]
    if mv & PROMOTE:
        gain += E.value[T.promote_code[code]] - E.value[code]
    if stand + gain + S.tune[TUNE_DELTA_MARGIN] <= alpha:
        return True
    if use_see:
        return S.mscore[ply, i] < ORD_CAPTURE
    return E.value[code] > E.value[victim] + 60 and is_attacked(P, T, mv & 0xFF, 1 - P.st[ST_STM])


@inner_kernel
def _history_add(S, code, to, bonus):
    h = S.history[code, to]
    S.history[code, to] = h + bonus - h * abs(bonus) // HISTORY_MAX


@inner_kernel
def _cont_add(S, row, code, to, bonus):
    """Continuation history of the move (``code``, ``to``) after the previous move's ``row``, with the gravity of
    :func:`_history_add` (it stays below HISTORY_MAX, inside int16)."""
    col = cont_index(code, to, S.cont.shape[1] // CONT_KINDS)
    h = np.int32(S.cont[row, col])
    S.cont[row, col] = h + bonus - h * abs(bonus) // HISTORY_MAX


@inner_kernel
def _improving(S, ply, us, ev):
    """Is ``ev`` above the static evaluation of the same side's last node with one (two plies back, else four plies
    back when that node was in check)? True when neither has one. The side is checked, not assumed: a multi-part
    turn moves the same side twice."""
    for back in (2, 4):
        p = ply - back
        if p < 0 or S.sev[p, 1] != us:
            return True
        if S.sev[p, 0] != NO_EVAL:
            return ev > S.sev[p, 0]
    return True


@inner_kernel
def _update_pv(S, ply, mv):
    S.pv[ply, ply] = mv
    end = S.pv_len[ply + 1]
    for k in range(ply + 1, end):
        S.pv[ply, k] = S.pv[ply + 1, k]
    S.pv_len[ply] = max(end, ply + 1)


@kernel
def _tick(S, ply):
    """Count a node; raise the stop flag at the node limit. Returns whether the search must unwind."""
    c = S.ctl
    c[CTL_NODES] += 1
    if c[CTL_NODES] >= c[CTL_NODE_LIMIT]:
        c[CTL_STOP] = 1
    if ply > c[CTL_SELDEPTH]:
        c[CTL_SELDEPTH] = ply
    return c[CTL_STOP] != 0


@inner_kernel
def _root_to_front(S, mv):
    """Move ``mv`` to the front of the root move list; the others keep their order."""
    n = S.ctl[CTL_ROOT_N]
    k = 0
    while k < n and S.root_moves[k] != mv:
        k += 1
    while k > 0:
        S.root_moves[k] = S.root_moves[k - 1]
        k -= 1
    S.root_moves[0] = mv


def chance_game(T) -> bool | None:
    """:func:`search`'s ``rolls`` for tables ``T``: None for the plain tables (shogi, dai shogi, turncoat: no chance
    events), else True."""
    return None if type(T) is Tables else True


def clear_chance(ctl: np.ndarray) -> None:
    """No anticipated chance events in control vector ``ctl`` (a search with ``rolls`` None sets none itself)."""
    ctl[CTL_CHANCE_FROM] = ctl[CTL_CHANCE_TO] = 0


# ----------------------------------------------------------------- search
@kernel
def search(P, T, E, S, alpha, beta, depth, ply, can_null, cut_node, rolls):
    """Negamax principal-variation search of the current position to ``depth`` plies; ``ply`` counts from the root.

    One self-recursive kernel holds the three node types, because numba's disk cache cannot link a cached kernel
    that calls *another* recursive kernel:

    * ``ply == 0``: the root. It searches ``S.root_moves[:ctl[CTL_ROOT_N]]`` in the given order; a move that raises
      alpha goes to the front of that list and is recorded in CTL_BEST_MOVE / CTL_BEST_SCORE with its PV in
      ``S.pv[0]``. A move interrupted by the stop flag is ignored.
    * ``depth <= 0``: quiescence (captures and promotions, all evasions when in check; stand pat otherwise).
    * otherwise an inner PVS node.

    ``cut_node``: a null-window node expected to fail high (FEAT_CUT_NODE reduces its late moves more); false at
    the root and at PV nodes.

    ``rolls``: ``None`` for a game without chance events (:func:`chance_game`), else True. numba drops the branches
    under ``rolls is not None`` before typing when it is None, so the chance node is not compiled for shogi.
    """
    S.pv_len[ply] = ply
    if _tick(S, ply):
        return 0
    # Recursive calls pass these runtime values, never literals: numba would compile one variant per literal
    # argument type (a literal True, a literal 0, ...) and its disk cache cannot link such variants to each other.
    yes = ply >= 0
    no = ply < 0
    zero = ply * 0
    us = P.st[ST_STM]
    aply = P.st[ST_PLY]
    incheck = in_check(P, T)
    S.checks[aply] = 1 if incheck else 0
    if ply >= MAX_PLY - 1:
        return static_value(P, T, E, S, ply)

    # 0. Quiescence.
    if depth <= 0 and ply > 0:
        if depth <= -QS_MAX_PLIES:
            # long capture chains (13x13 boards, exchange captures): stop here
            return static_value(P, T, E, S, ply)
        if incheck and T.params[P_LAST_ROYAL] != 0 and P.st[ST_ROYALS + us] >= 2:
            incheck = False  # a royal of several may stand attacked: no forced evasion, so no full-width node
        qs_tt = (S.ctl[CTL_FEATURES] & FEAT_QS_TT) != 0
        qs_checks_on = (S.ctl[CTL_FEATURES] & FEAT_QS_CHECKS) != 0
        evasion_prune = incheck and (S.ctl[CTL_FEATURES] & FEAT_QS_EVASION_PRUNE) != 0
        q_checks = qs_checks_on and depth == 0 and not incheck
        # with FEAT_QS_CHECKS a node that tried checks (depth 0) is worth more than one that did not (-1)
        q_depth = zero - 1 if qs_checks_on and depth < 0 else zero
        qk = node_key(P, T, S, aply)
        q_move = 0
        q_alpha = alpha
        if qs_tt:
            # TT probe: any entry (a quiescence one, depth 0, or the main search's, deeper) may settle a null
            # window; its move is tried first
            qi = hash_slot(qk, S.tt_key.shape[0])
            if S.tt_key[qi] == qk:
                q_move = S.tt_move[qi]
                if beta - alpha == 1 and S.tt_depth[qi] >= q_depth:
                    tts = _score_from_tt(S.tt_score[qi], ply)
                    if _settles(S.tt_bound[qi], tts, alpha, beta):
                        return tts
        if incheck:
            n = generate(P, T, GEN_SEARCH, S.moves[ply])
            if n == 0:
                return -MATE + ply
            best = -INF
            stand = -INF
        else:
            stand = static_value(P, T, E, S, ply)
            if stand >= beta:
                if qs_tt:
                    _tt_store(S, qk, q_depth, ply, stand, BOUND_LOWER, zero)
                return stand
            if stand > alpha:
                alpha = stand
            best = stand
            n = generate(P, T, GEN_CAPTURES, S.moves[ply])
        if T.params[P_TRY] != 0 and _try_lost(P, T, S.moves[ply], n):
            return -MATE + ply
        S.mp[ply, MP_COUNTER] = 0
        S.mp[ply, MP_CONT] = -1
        use_see = (S.ctl[CTL_FEATURES] & FEAT_SEE) != 0
        score_moves(P, T, E, S, ply, n, q_move, use_see)
        # Phase 0: captures and promotions (evasions in check); phase 1 (FEAT_QS_CHECKS): quiet checks
        phases = 2 if q_checks else 1
        eksq = P.st[ST_KSQ + 1 - us]
        cut = False
        for phase in range(phases):
            if phase == 1:
                if cut:
                    break
                n = generate(P, T, GEN_SEARCH, S.moves[ply])
            for i in range(n):
                if phase == 0:
                    mv = pick(S, ply, i, n)
                    if not incheck and _qs_futile_capture(P, T, E, S, ply, i, mv, stand, alpha, use_see):
                        continue
                    if (evasion_prune and best > -MATE_BOUND and _is_quiet(P, mv)
                            and not see_ge(P, T, E, mv, zero, S.see_buf)):
                        continue
                else:
                    mv = S.moves[ply, i]
                    if not _is_quiet(P, mv) or not _may_check(P, T, mv, eksq):
                        continue
                    if use_see and not see_ge(P, T, E, mv, zero, S.see_buf):
                        continue
                do_move(P, T, mv)
                if phase == 1 and not in_check(P, T):
                    undo_move(P, T)
                    continue
                if P.st[ST_STM] == us:
                    v = search(P, T, E, S, alpha, beta, min(depth, zero) - 1, ply + 1, no, no, rolls)
                else:
                    v = -search(P, T, E, S, -beta, -alpha, min(depth, zero) - 1, ply + 1, no, no, rolls)
                undo_move(P, T)
                if S.ctl[CTL_STOP] != 0:
                    return 0
                if v > best:
                    best = v
                    if v > alpha:
                        alpha = v
                        q_move = mv
                        _update_pv(S, ply, mv)
                        if v >= beta:
                            cut = True
                            break
        if qs_tt:
            _tt_store(S, qk, q_depth, ply, best, _bound(best, q_alpha, beta), q_move if best > q_alpha else zero)
        return best

    # Chance node: the expectation over the outcomes (no depth spent), most probable first, each outcome's value
    # bounded by +-CHANCE_BOUND (CHANCE_STAR1 below; CHANCE_MAIN first). In the quiescence search (above) the event
    # is ignored, its expected gain counted by static_value. Not compiled for a game without chance events
    # (rolls is None).
    if rolls is not None:
        n_rows = chance_rows(P, T)
        chance_mode = S.ctl[CTL_CHANCE]
        if n_rows > 0 and chance_mode != CHANCE_BLIND:
            ck = node_key(P, T, S, aply)
            ci = hash_slot(ck, S.tt_key.shape[0])
            if S.tt_key[ci] == ck and S.tt_depth[ci] >= depth and chance_mode != CHANCE_EXPAND:
                tts = _score_from_tt(S.tt_score[ci], ply)
                if _settles(S.tt_bound[ci], tts, alpha, beta):
                    return tts
            ch = S.chance[ply]
            c_w, c_lo, c_hi, c_sv = ch[CH_W], ch[CH_LO], ch[CH_HI], ch[CH_SV]
            if chance_mode == CHANCE_MAIN:
                # Each result's static value (side to move's view) against the most probable one's: their weighted mean
                # difference is the shift; the most probable result is searched in the window moved by it (one subtree
                # a roll, and the window stays narrow), TUNE_CHANCE_MAIN_REDUCTION plies shallower. A mate keeps its
                # value.
                total = _chance_statics(P, T, E, S, ply, us, n_rows)
                diff = zero
                for r in range(1, n_rows):
                    diff += c_w[r] * (c_sv[r] - c_sv[0])
                shift = (2 * diff + total) // (2 * total)
                m_depth = max(depth - S.tune[TUNE_CHANCE_MAIN_REDUCTION], zero)
                play_chance(P, T, zero)
                if P.st[ST_STM] == us:
                    v = search(P, T, E, S, alpha - shift, beta - shift, m_depth, ply + 1, yes, no, rolls)
                else:
                    v = -search(P, T, E, S, shift - beta, shift - alpha, m_depth, ply + 1, yes, no, rolls)
                unplay_chance(P, T)
                if S.ctl[CTL_STOP] != 0:
                    return 0
                if abs(v) < MATE_BOUND:
                    v += shift
                _tt_store(S, ck, depth, ply, v, _bound(v, alpha, beta), zero)
                return v
            if alpha >= CHANCE_BOUND:
                return CHANCE_BOUND
            if beta <= -CHANCE_BOUND:
                return -CHANCE_BOUND
            # Star1 with probing. Each result's value is known within [c_lo, c_hi] (at first +-CHANCE_BOUND): the
            # expectation fails high once sum(w c_lo) >= total beta, low once sum(w c_hi) <= total alpha (chance_cut).
            # In a null window each result is first tested at the threshold its static value predicts (probe_threshold:
            # its share of the target); when the tests agree, they decide the node. Otherwise (or in a wider window)
            # Star1 with those bounds: each result searched in the window that can still move the expectation across
            # (alpha, beta) (chance_window). CHANCE_EXPAND: every result in the full window, no probe (the tests'
            # reference).
            expand = chance_mode == CHANCE_EXPAND
            lo_c, hi_c = alpha, beta
            if expand:
                lo_c, hi_c = -CHANCE_BOUND - 1, CHANCE_BOUND + 1
            probe = beta - alpha == 1 and not expand
            total = zero
            if probe:
                total = _chance_statics(P, T, E, S, ply, us, n_rows)
            for r in range(n_rows):
                if not probe:
                    c_w[r] = chance_weight(P, T, r)
                    total += c_w[r]
                c_lo[r] = -CHANCE_BOUND
                c_hi[r] = CHANCE_BOUND
            sum_lo = -CHANCE_BOUND * total
            sum_hi = CHANCE_BOUND * total
            decided = 0  # +1: fails high (bound_v a lower bound), -1: fails low (an upper bound)
            bound_v = zero
            if probe:
                aim = 0  # which way the tests so far went: +1 above their thresholds, -1 below
                for r in range(n_rows):
                    rest_w = zero
                    rest_sv = zero
                    for k in range(r, n_rows):
                        rest_w += c_w[k]
                        rest_sv += c_w[k] * c_sv[k]
                    t = probe_threshold(sum_lo, sum_hi, rest_w, rest_sv, c_sv[r], aim, alpha, beta, total)
                    r_depth = depth if r == 0 else max(depth - S.tune[TUNE_CHANCE_REDUCTION], zero)
                    play_chance(P, T, r)
                    if P.st[ST_STM] == us:
                        v = search(P, T, E, S, t - 1, t, r_depth, ply + 1, yes, no, rolls)
                    else:  # the roller chooses a magic target
                        v = -search(P, T, E, S, -t, 1 - t, r_depth, ply + 1, yes, no, rolls)
                    unplay_chance(P, T)
                    if S.ctl[CTL_STOP] != 0:
                        return 0
                    v = min(max(v, -CHANCE_BOUND), CHANCE_BOUND)
                    went = 1 if v >= t else -1
                    if went > 0:
                        sum_lo, sum_hi = _narrow(c_w, c_lo, c_hi, r, v, c_hi[r], sum_lo, sum_hi)
                    else:
                        sum_lo, sum_hi = _narrow(c_w, c_lo, c_hi, r, c_lo[r], v, sum_lo, sum_hi)
                    decided, bound_v = chance_cut(sum_lo, sum_hi, alpha, beta, total)
                    if decided != 0:
                        break
                    if aim == 0:
                        aim = went
                    elif went != aim:  # the tests disagree: Star1 settles it
                        break
            if decided == 0:
                for r in range(n_rows):
                    if c_lo[r] >= c_hi[r]:
                        continue
                    w = c_w[r]
                    lo, hi = chance_window(sum_lo, sum_hi, w, c_lo[r], c_hi[r], lo_c, hi_c, total)
                    r_depth = depth
                    if r > 0 and not expand:
                        r_depth = max(depth - S.tune[TUNE_CHANCE_REDUCTION], zero)
                    play_chance(P, T, r)
                    if P.st[ST_STM] == us:
                        v = search(P, T, E, S, lo, hi, r_depth, ply + 1, yes, no, rolls)
                    else:
                        v = -search(P, T, E, S, -hi, -lo, r_depth, ply + 1, yes, no, rolls)
                    unplay_chance(P, T)
                    if S.ctl[CTL_STOP] != 0:
                        return 0
                    v = min(max(v, -CHANCE_BOUND), CHANCE_BOUND)
                    new_lo, new_hi = c_lo[r], c_hi[r]
                    if v <= lo:
                        new_hi = v
                    elif v >= hi:
                        new_lo = v
                    else:
                        new_lo = new_hi = v
                    if new_lo > new_hi:  # the search contradicted an earlier bound (a table entry changed): trust it
                        new_lo = new_hi = v
                    sum_lo, sum_hi = _narrow(c_w, c_lo, c_hi, r, new_lo, new_hi, sum_lo, sum_hi)
                    decided, bound_v = chance_cut(sum_lo, sum_hi, lo_c, hi_c, total)
                    if decided != 0:
                        break
            if decided != 0:
                _tt_store(S, ck, depth, ply, bound_v, BOUND_LOWER if decided > 0 else BOUND_UPPER, zero)
                return bound_v
            v = chance_value(sum_lo, total)  # every result exact
            _tt_store(S, ck, depth, ply, v, _bound(v, alpha, beta), zero)
            return v

    root = ply == 0
    if rolls is not None:
        if root:
            anticipate_chance(P, T, E, S)
    pv_node = beta - alpha > 1
    key = node_key(P, T, S, aply)
    tt_move = 0
    tt_hit_depth = -1  # the TT entry's depth, bound and score (singular extensions)
    tt_hit_bound = BOUND_NONE
    tt_hit_score = 0
    excluded = S.excluded[ply]  # != 0: this is a singular-extension search of the node without that move
    ev = -INF
    S.sev[ply, 0] = NO_EVAL
    S.sev[ply, 1] = us
    improving = False
    if root and not incheck:
        # the root's evaluation, for the "improving" test two plies down
        S.sev[0, 0] = static_value(P, T, E, S, ply)
    if not root:
        # 1. Repetition (draw; perpetual check loses for the checker).
        rep = _repetition(P, S, aply)
        if rep != 0:
            if rep == 1:
                return 0
            return PERPETUAL if rep == 2 else -PERPETUAL

        # 2. Mate-distance pruning.
        if alpha < -MATE + ply:
            alpha = -MATE + ply
        if beta > MATE - ply - 1:
            beta = MATE - ply - 1
        if alpha >= beta:
            return alpha

        # 3. Transposition table.
        # The singular-extension search of this node without a move neither reads nor writes the entry: it holds
        # the node's full result.
        ti = hash_slot(key, S.tt_key.shape[0])
        if S.tt_key[ti] == key and excluded == 0:
            tt_move = S.tt_move[ti]
            tt_hit_depth, tt_hit_bound = np.int64(S.tt_depth[ti]), S.tt_bound[ti]
            tt_hit_score = _score_from_tt(S.tt_score[ti], ply)
            if not pv_node and S.tt_depth[ti] >= depth:
                if _settles(S.tt_bound[ti], tt_hit_score, alpha, beta):
                    return tt_hit_score

        # 3b. Internal iterative reduction: no TT move means this node was never searched (or failed low): a
        # shallower search here is cheap and fills the table for the next iteration.
        # Not at an expected all-node: it stores no move when it fails low, so it would lose the ply on every visit.
        if ((S.ctl[CTL_FEATURES] & FEAT_IIR) != 0 and tt_move == 0 and depth >= IIR_DEPTH and excluded == 0
                and (pv_node or cut_node)):
            depth -= 1

        # 3c. Mate in one.
        if ((S.ctl[CTL_FEATURES] & FEAT_MATE1) != 0 and not incheck and depth >= MATE1_DEPTH
                and _mate_in_one(P, T, S, ply)):
            return MATE - ply - 1

        # 4. Static evaluation, reverse futility and null move (not in check); check extension.
        if incheck:
            if pv_node or (S.ctl[CTL_FEATURES] & FEAT_PV_CHECK_EXT) == 0:
                depth += 1
        else:
            ev = static_value(P, T, E, S, ply)
            S.sev[ply, 0] = ev
            if (S.ctl[CTL_FEATURES] & FEAT_IMPROVING) != 0:
                improving = _improving(S, ply, us, ev)
            if ((S.ctl[CTL_FEATURES] & FEAT_TT_EVAL) != 0 and abs(tt_hit_score) < MATE_BOUND
                    and (tt_hit_bound & (BOUND_LOWER if tt_hit_score > ev else BOUND_UPPER)) != 0):
                ev = tt_hit_score
            rfp_depth, rfp_margin = S.tune[TUNE_RFP_DEPTH], S.tune[TUNE_RFP_MARGIN]
            if (S.ctl[CTL_FEATURES] & FEAT_WIDE_FUTILITY) != 0:
                rfp_depth, rfp_margin = WIDE_RFP_DEPTH, WIDE_RFP_MARGIN
            if ((S.ctl[CTL_FEATURES] & FEAT_RAZOR) != 0 and not pv_node and depth == 1 and excluded == 0
                    and ev + S.tune[TUNE_RAZOR_MARGIN] <= alpha):
                return search(P, T, E, S, alpha, beta, zero, ply, no, no, rolls)  # this node's quiescence search
            rfp_plies = depth - 1 if improving else depth
            if (not pv_node and depth <= rfp_depth and ev - rfp_margin * rfp_plies >= beta
                    and abs(beta) < MATE_BOUND):
                return ev
            if (can_null and not pv_node and depth >= 3 and ev >= beta and abs(beta) < MATE_BOUND
                    and excluded == 0 and null_move_allowed(P, T)):
                r = S.tune[TUNE_NULL_BASE] + depth // S.tune[TUNE_NULL_DEPTH_DIV]
                if S.tune[TUNE_NULL_EVAL_DIV] > 0:  # the further above beta, the safer a deeper cut
                    r += min((ev - beta) // S.tune[TUNE_NULL_EVAL_DIV], NULL_EVAL_MAX)
                _do_null(P, T)
                v = -search(P, T, E, S, -beta, -beta + 1, depth - 1 - r, ply + 1, no, not cut_node, rolls)
                _undo_null(P)
                if S.ctl[CTL_STOP] != 0:
                    return 0
                if v >= beta:
                    return beta if v >= MATE_BOUND else v
            # 4a. ProbCut (FEAT_PROBCUT; see its constants). Not with the try rule: a completed try is only seen
            # by step 5's test over every move.
            if ((S.ctl[CTL_FEATURES] & FEAT_PROBCUT) != 0 and not pv_node and excluded == 0
                    and depth >= S.tune[TUNE_PROBCUT_DEPTH] and abs(beta) < MATE_BOUND and T.params[P_TRY] == 0):
                r_beta = min(beta + S.tune[TUNE_PROBCUT_MARGIN], MATE_BOUND - 1)
                n = generate(P, T, GEN_CAPTURES, S.moves[ply])
                S.mp[ply, MP_COUNTER] = 0  # no counter-move or continuation row: score_moves reads them
                S.mp[ply, MP_CONT] = -1
                score_moves(P, T, E, S, ply, n, tt_move, yes)
                tries = PROBCUT_MOVES * (2 if cut_node else 1)
                for i in range(n):
                    if tries == 0:
                        break
                    mv = pick(S, ply, i, n)
                    if not see_ge(P, T, E, mv, r_beta - ev, S.see_buf):
                        continue
                    tries -= 1
                    do_move(P, T, mv)
                    sgn = 1 if P.st[ST_STM] == us else -1
                    lo, hi = (r_beta - 1, r_beta) if sgn == 1 else (-r_beta, -r_beta + 1)
                    v = sgn * search(P, T, E, S, lo, hi, zero, ply + 1, no, no, rolls)  # the quiescence search first
                    if v >= r_beta:
                        v = sgn * search(P, T, E, S, lo, hi, depth - PROBCUT_REDUCTION, ply + 1, yes,
                                         cut_node if sgn == 1 else not cut_node, rolls)
                    undo_move(P, T)
                    if S.ctl[CTL_STOP] != 0:
                        return 0
                    if v >= r_beta:
                        return v

    # 4b. Singular extension: is the TT move the only good one? (FEAT_SINGULAR; see its constants)
    tt_move_ext = 0  # plies added to (or taken from) the TT move's search
    if ((S.ctl[CTL_FEATURES] & FEAT_SINGULAR) != 0 and not root and not incheck and excluded == 0 and tt_move != 0
            and depth >= S.tune[TUNE_SINGULAR_DEPTH] and tt_hit_depth >= depth - SINGULAR_TT_DEPTH
            and (tt_hit_bound == BOUND_LOWER or tt_hit_bound == BOUND_EXACT) and abs(tt_hit_score) < MATE_BOUND):
        s_beta = tt_hit_score - S.tune[TUNE_SINGULAR_MARGIN] * depth
        S.excluded[ply] = tt_move
        # at least depth 1: a quiescence search at this ply would neither leave the move out nor spare the TT entry
        v = search(P, T, E, S, s_beta - 1, s_beta, max((depth - 1) // 2, 1), ply, no, cut_node, rolls)
        S.excluded[ply] = 0
        S.pv_len[ply] = ply  # the PV that search left at this ply is not this node's
        if S.ctl[CTL_STOP] != 0:
            return 0
        if v < s_beta:
            tt_move_ext = 1
        elif s_beta >= beta:
            return s_beta  # multi-cut: another move beats beta too
        elif tt_hit_score >= beta or cut_node:
            tt_move_ext = -1  # not the only good move, and expected to cut anyway: search it shallower

    # 5. Moves: the staged picker (search/movepick.py: TT move before generation, good captures, killers,
    # counter-move, quiet moves by history, losing captures); root: the given order.
    if root:
        n = S.ctl[CTL_ROOT_N]
        for i in range(n):
            S.moves[0, i] = S.root_moves[i]
            S.mscore[0, i] = n - i
    pm = P.moves[aply - 1] if aply > 0 else 0  # the opponent's last move (0: none or a null move)
    # its continuation-history row (-1: none; the kind of the piece that now stands on its target)
    cont_row = -1
    if (S.ctl[CTL_FEATURES] & FEAT_CONT_HIST) != 0 and pm != 0 and not root:
        cont_row = cont_index(P.board[pm & 0xFF], pm & 0xFF, P.board.shape[0])
    use_see = (S.ctl[CTL_FEATURES] & FEAT_SEE) != 0
    staged = (S.ctl[CTL_FEATURES] & FEAT_STAGED) != 0
    if not root:
        n = 0
        counter_move = 0
        if pm != 0 and staged:
            counter_move = S.counter[P.board[pm & 0xFF], pm & 0xFF]
        if T.params[P_TRY] != 0 or not staged:
            # everything generated first (the try test needs every move; without FEAT_STAGED, as before)
            n = mp_init(P, T, E, S, ply, tt_move, counter_move, cont_row, yes, use_see)
            if n == 0:
                return -MATE + ply
            if T.params[P_TRY] != 0 and _try_lost(P, T, S.moves[ply], n):
                return -MATE + ply  # the enemy royal reached the far rank out of reach: a completed try
        else:
            mp_init(P, T, E, S, ply, tt_move, counter_move, cont_row, no, use_see)

    # 6. The move loop.
    best = -INF
    best_move = 0
    orig_alpha = alpha
    searched = 0
    eksq = P.st[ST_KSQ + 1 - us]
    fut_depth, fut_base, fut_margin = S.tune[TUNE_FUT_DEPTH], 0, S.tune[TUNE_FUT_MARGIN]
    if (S.ctl[CTL_FEATURES] & FEAT_WIDE_FUTILITY) != 0:
        fut_depth, fut_base, fut_margin = WIDE_FUT_DEPTH, WIDE_FUT_BASE, WIDE_FUT_MARGIN
    futile = (not pv_node and not incheck and depth <= fut_depth and ev + fut_base + fut_margin * depth <= alpha)
    lmr_futility = (S.ctl[CTL_FEATURES] & FEAT_LMR_FUTILITY) != 0
    lmp_limit = S.tune[TUNE_LMP_BASE] + S.tune[TUNE_LMP_SCALE] * depth * depth // 10
    not_improving = (S.ctl[CTL_FEATURES] & FEAT_IMPROVING) != 0 and not (improving or incheck or root)
    if not_improving:
        lmp_limit //= 2
    lmp_depth = S.tune[TUNE_LMP_DEPTH]
    check_prune = (S.ctl[CTL_FEATURES] & FEAT_CHECK_PRUNE) != 0
    quiet_promotions = (S.ctl[CTL_FEATURES] & FEAT_QUIET_PROMOTIONS) != 0
    malus_searched = (S.ctl[CTL_FEATURES] & FEAT_MALUS_SEARCHED) != 0
    n_quiets = 0
    i = -1
    while True:
        i += 1
        if root:
            if i >= n:
                break
            if i < 4:
                mv = pick(S, ply, i, n)
            else:
                if i == 4:
                    sort_rest(S, ply, i, n)
                mv = S.moves[ply, i]
            mscore = S.mscore[ply, i]
        else:
            mv = mp_next(P, T, E, S, ply)
            if mv == 0:
                break  # i moves were yielded
            if mv == excluded:
                continue
            mscore = S.mp[ply, MP_SCORE]
        quiet = _is_quiet(P, mv)
        # pruned and reduced like a quiet move (FEAT_QUIET_PROMOTIONS adds the promotions that capture nothing)
        late_kind = quiet or (quiet_promotions and _is_quiet_promotion(P, mv))
        code = moving_code(P, mv)
        if quiet and not malus_searched and n_quiets < MAX_QUIETS:  # the tried quiet moves get the malus on a cutoff
            S.quiets[ply, n_quiets] = mv
            n_quiets += 1
        # Futility and late-move pruning of quiet moves that do not give check (FEAT_CHECK_PRUNE: late-move
        # pruning of checks too).
        prunable = (not root and searched > 0 and late_kind and not incheck and not pv_node and best > -MATE_BOUND)
        late = prunable and depth <= lmp_depth and searched >= lmp_limit
        if late and check_prune:
            continue
        prune = late or (prunable and futile)
        if prunable and not prune and lmr_futility:
            lmr_depth = max(depth - 1 - S.lmr[min(depth, 63), min(searched, 63)], 0)
            prune = lmr_depth < LMR_FUTILITY_DEPTH and ev + fut_margin * (lmr_depth + 1) <= alpha
        see_prune = (use_see and not root and searched > 0 and not incheck and best > -MATE_BOUND
                     and depth <= S.tune[TUNE_SEE_DEPTH])
        may_check = (prune or see_prune) and _may_check(P, T, mv, eksq)  # the geometric test only when needed
        if prune and not may_check:
            continue
        # SEE pruning at low depth: captures losing more than the capture margin * depth, quiet moves (drops
        # included) that lose more than the quiet margin * depth^2 in the exchange on their square; with
        # FEAT_CHECK_PRUNE also the moves that may give check, at the capture margin.
        if see_prune:
            if may_check:
                if check_prune and not see_ge(P, T, E, mv, -S.tune[TUNE_SEE_CAPTURE] * depth, S.see_buf):
                    continue
            elif late_kind:
                if not see_ge(P, T, E, mv, -S.tune[TUNE_SEE_QUIET] * depth * depth, S.see_buf):
                    continue
            elif mscore < ORD_CAPTURE and not see_ge(P, T, E, mv, -S.tune[TUNE_SEE_CAPTURE] * depth,
                                                                S.see_buf):
                continue
        if root:
            S.ctl[CTL_CURRMOVE] = mv
        do_move(P, T, mv)
        gives_check = in_check(P, T)
        if prune and not gives_check:
            undo_move(P, T)
            continue
        if quiet and malus_searched and n_quiets < MAX_QUIETS:  # only the searched quiet moves get the malus
            S.quiets[ply, n_quiets] = mv
            n_quiets += 1
        new_depth = depth - 1 + tt_move_ext if mv == tt_move else depth - 1
        sgn = 1 if P.st[ST_STM] == us else -1  # side-change test: negamax flips only when the mover changes
        # the child's expected type: the same node's when the mover does not change (a multi-part turn goes on)
        same_side = sgn == 1
        if searched == 0:
            lo, hi = (alpha, beta) if sgn == 1 else (-beta, -alpha)
            child_cut = cut_node if same_side else (not pv_node and not cut_node)
            v = sgn * search(P, T, E, S, lo, hi, new_depth, ply + 1, yes, child_cut, rolls)
        else:
            red = 0
            wide_lmr = (S.ctl[CTL_FEATURES] & FEAT_WIDE_LMR) != 0
            if wide_lmr:
                reducible = depth >= 2 and not root and (quiet or mscore < ORD_CAPTURE)
            else:
                root_ok = not root or ((S.ctl[CTL_FEATURES] & FEAT_ROOT_LMR) != 0 and searched >= ROOT_LMR_AFTER)
                reducible = (depth >= 3 and late_kind and root_ok
                             and (not incheck or (S.ctl[CTL_FEATURES] & FEAT_LMR_EVASIONS) != 0)
                             and (not gives_check or (S.ctl[CTL_FEATURES] & FEAT_LMR_CHECKS) != 0))
            if reducible:
                red = S.lmr[min(depth, 63), min(searched, 63)]
                if not_improving and red >= 1:
                    red += 1
                if pv_node:
                    red -= 1
                elif wide_lmr:
                    red += 1
                if cut_node and (S.ctl[CTL_FEATURES] & FEAT_CUT_NODE) != 0:
                    red += CUT_NODE_RED
                if wide_lmr and (gives_check or incheck):
                    red -= 1
                if mv == S.killers[ply, 0] or mv == S.killers[ply, 1]:
                    red -= 1
                if (S.ctl[CTL_FEATURES] & FEAT_HIST_LMR) != 0:
                    red -= S.history[code, mv & 0xFF] // S.tune[TUNE_HIST_LMR_DIV]
                if red > new_depth - 1:
                    red = new_depth - 1
                if red < 0:
                    red = 0
            lo, hi = (alpha, alpha + 1) if sgn == 1 else (-alpha - 1, -alpha)
            v = sgn * search(P, T, E, S, lo, hi, new_depth - red, ply + 1, yes, cut_node if same_side else yes,
                             rolls)
            if v > alpha and red > 0:
                v = sgn * search(P, T, E, S, lo, hi, new_depth, ply + 1, yes,
                                 cut_node if same_side else not cut_node, rolls)
            if v > alpha and v < beta:
                lo, hi = (alpha, beta) if sgn == 1 else (-beta, -alpha)
                v = sgn * search(P, T, E, S, lo, hi, new_depth, ply + 1, yes, no, rolls)
        undo_move(P, T)
        if S.ctl[CTL_STOP] != 0:
            return 0
        searched += 1
        if root:
            S.root_scores[i] = v
        if v > best:
            best = v
            if v > alpha:
                best_move = mv
                alpha = v
                _update_pv(S, ply, mv)
                if root:
                    S.ctl[CTL_BEST_MOVE] = mv
                    S.ctl[CTL_BEST_SCORE] = v
                    _root_to_front(S, mv)
                if v >= beta:
                    if quiet and not root:
                        if S.killers[ply, 0] != mv:
                            S.killers[ply, 1] = S.killers[ply, 0]
                            S.killers[ply, 0] = mv
                        if pm != 0:
                            S.counter[P.board[pm & 0xFF], pm & 0xFF] = mv
                        bonus = min(depth * depth * 16, HISTORY_MAX // 2)
                        _history_add(S, code, mv & 0xFF, bonus)
                        if cont_row >= 0:
                            _cont_add(S, cont_row, code, mv & 0xFF, bonus)
                        for j in range(n_quiets - 1):  # the quiet moves tried before it (it is the last)
                            m2 = S.quiets[ply, j]
                            code2 = moving_code(P, m2)
                            _history_add(S, code2, m2 & 0xFF, -bonus)
                            if cont_row >= 0:
                                _cont_add(S, cont_row, code2, m2 & 0xFF, -bonus)
                    break

    if best == -INF and i == 0 and not root:
        return -MATE + ply  # no legal move loses (checkmate; shogi has no stalemate)
    if excluded != 0:
        # the search without the TT move: its result is no bound of the node, so it is not stored; no other move
        # at all fails it low
        return alpha if best == -INF else best

    # 7. Store and return.
    _tt_store(S, key, depth, ply, best, _bound(best, orig_alpha, beta), best_move)
    return best


@kernel
def hashfull(S):
    """Permille of the first 1000 TT entries written in the current generation."""
    gen = S.ctl[CTL_GEN] & 255
    m = min(1000, S.tt_key.shape[0])
    c = 0
    for i in range(m):
        if S.tt_gen[i] == gen and S.tt_depth[i] > 0:
            c += 1
    return c * 1000 // m
