"""Search for Ousho Fantasista: expectimax over whole turns with Star1 pruning at the d20 chance nodes.

The root and the nodes of remaining depth 4 and more run in a Python loop over the numba kernels of
:mod:`engine.variants.fantasista.kernels` (generation, evaluation, ordering) on kernel rows (``int8[S]``), one
generation buffer per ply; a node of depth 3, 2 or 1 is searched with everything below it by one call of
:mod:`search.fantasista_kernels`, which does exactly what the Python loop would (``frontier_kernel=False`` keeps
the all-Python search; both give the same results, tested; with ``late_move_reduction`` the kernels take depth 2
and 1 only).

* Decision nodes are whole turns (a multi-part turn is one action: its parts were expanded by the generator as a
  run of decisions of the same side and collapsed to outcomes), in negamax form: a value is from the point of view
  of the side to move on the board.
* Chance nodes come right after plies 15k and 15k+1 (:func:`engine.variants.fantasista.magic_after`). The 20 faces
  are merged into the distinct table rows ("1", "2", "3", "4-8", "nothing" after the ``reserved`` mapping, e.g.
  4-18 is one row of probability 0.75), so at most five outcomes. After ayumi 3 / yokaku 3 the roller picks the
  target: a min (for the side to move) over the eligible pieces.
* Default chance node (:meth:`FantasistaSearcher._chance_main`): the most probable outcome is searched to full
  depth, every other outcome is valued as that result plus its static difference from it (a constant shift, so the
  main child gets the exact shifted window). A roll then costs one subtree, not five: with five full subtrees the
  aware engine lost one to two plies of depth within a few plies of every roll for the same node budget (and lost
  to the roll-blind engine); the rare outcomes are mostly tokens in hand, whose static value is what they add.
* ``expand_every_outcome=True``: exact expectimax, every outcome searched, Star1: child values clamped to the
  evaluation bounds [-EVAL_BOUND, EVAL_BOUND] (a mate counts as the worst / best evaluation there), so after some
  outcomes have been searched the remaining ones can only move the expectation within those bounds; each child gets
  the window that would make the whole chance node fail low/high, and the node is cut as soon as it does; the
  outcomes are searched most probable first (4-18 first), so the cut comes early.
* Transposition table (:class:`TransTable`, numpy arrays shared with the kernels): decision nodes keyed by the
  position key mixed with the move number mod 30 — whether and how soon rolls come — and, with
  ``expand_every_outcome``, chance nodes in a dict by (position key, move number, "roll"), so the same board before
  and after a roll is never confused. Leaves (depth 0) do not probe it.
* Leaves: a capture-aware quiescence (stand pat, then captures only, ``QDEPTH`` plies); positions repeated on the
  search path or in the game score a draw (0), so the side ahead avoids repetitions.
* No roll term in the evaluation: the coming magics are fixed by the ply number (the same for every line that
  reaches that ply), so a term for them cannot rank turns; it only biases leaves of different ply numbers against
  each other. A roll is counted once, as a chance node in the full-width part; the quiescence ignores rolls for
  stand pat and captures alike (counting a roll after a capture but not after the quiet move that standing pat stands
  for made a losing capture by the side about to roll look better than standing pat).
* ``chance_aware=False`` gives the roll-ignoring engine used as a baseline, otherwise identical (same evaluation,
  ordering, quiescence, TT, node counting): no chance nodes (every roll treated as nothing). The node budget counts
  decision and quiescence nodes only; a chance node is not counted (its children are), so both engines spend a
  budget on the same kinds of node (``count_chance_nodes=True`` counts the default chance node as one node, the
  former rule). :func:`greedy_turn` is the one-ply greedy.
* Twin drops: an ordinary piece is not dropped while a token of its type is in hand (``prune_twin_drops``, on by
  default; the token's drop is the same turn but for what a capture of the dropped piece gives the captor).
* Experiments kept as options, off by default (measured weaker or no better, docs/fantasista.md):
  ``late_move_reduction``, ``king_drop_cp``, ``chance_sides`` other than "both", ``quiescence_checks``.
"""
from __future__ import annotations

from typing import Callable

import functools
import time
from collections import namedtuple
from dataclasses import dataclass

import numpy as np

from engine.kernels import DirectCall
from engine.variants.fantasista import kernels as FK
from engine.variants.fantasista import pieces as PC
from engine.variants.fantasista.board import Board
from engine.variants.fantasista.magic import FAIRIES, magic_after, magic_of, roll_effect
from engine.variants.fantasista.state import FantasistaState
from engine.variants.fantasista.turngen import desc_text, grow_wave, tables, to_array
from eval import params as EP
from search import fantasista_kernels as FKS
from search.fantasista_kernels import EXACT, LMR_FULL_TURNS, LOWER, UPPER
from search.kernels import MATE  # the one mate score (a mate here is flat: no distance)

EVAL_BOUND = 20000
QDEPTH = 2
BUFFER_PLIES = 32  # the per-ply buffers' length: the deepest search

VALUE = [0, 90, 315, 405, 495, 540, 855, 990, 0, 540, 540, 540, 540, 945, 1395,
         1600, 1500, 450, 1300, 1250, 800]
HAND_BONUS = 1.1
# the prior of eval.params (awakening, curtain, wave; the emblem; the marks; a rider)
RIGHT_VALUE = EP.FANTASISTA_RIGHT_VALUES
EMBLEM_VALUE, EMBLEM_PER_PAWN = EP.FANTASISTA_EMBLEM, EP.FANTASISTA_EMBLEM_PER_PAWN
INVINCIBLE_VALUE, CARRIER_VALUE, RIDER_BONUS = EP.FANTASISTA_INVINCIBLE, EP.FANTASISTA_CARRIER, EP.FANTASISTA_RIDER
#: King exposure to drops: ``king_drop_cp`` per empty square next to a king and per unit of the enemy hand's drop
#: attack (DROP_WEIGHT per piece in hand, tokens included, at most DROP_ATTACK_CAP). A coming token raises the enemy
#: hand, so a chance-aware search closes its king a turn before the roll (the roll-blind one only after it). Off by
#: default: at 8 cp the chance-aware engine scored 0.44 against the roll-blind one (docs/fantasista.md, Strength).
KING_DROP_CP = 8
#: The largest silver-wave seen-set a search node grows to (slots): 2^20, about half a million wave positions.
SEARCH_MAX_WAVE = 1 << 20
DROP_WEIGHT = [0, 1, 1, 1, 2, 2, 2, 2] + [0] * 7 + [2] * 6 + [0] * 11  # P L N: 1; S G B R and the fairy tokens: 2
DROP_ATTACK_CAP = 6

# What each row gives: ("th", ptype, n) token(s) to hand, ("right", i), ("emblem",), ("target",) or ().
ROW_EFFECT = {
    "hiko": {"1": ("th", PC.D, 1), "2": ("th", PC.O, 1), "3": ("right", 0), "4-8": ("th", PC.R, 1)},
    "ayumi": {"1": ("emblem",), "2": ("th", PC.Y, 2), "3": ("target",), "4-8": ("th2",)},
    "yokaku": {"1": ("th", PC.T, 1), "2": ("th", PC.H, 1), "3": ("target",), "4-8": ("th", PC.B, 1)},
    "ginsara": {"1": ("right", 1), "2": ("th", PC.W, 1), "3": ("right", 2), "4-8": ("th", PC.S, 2)},
}

EvalTables = namedtuple("EvalTables", ["value", "hand_value", "right_value", "extra", "magic", "bound",
                                       "drop_weight", "pst"])

#: The shogi piece whose piece-square term (:func:`eval._positional`) each special piece takes: the one it moves
#: like (fire dragon and king-god dragon a dragon, thunder and gale horse a horse, sword silver a silver); the spear
#: pawn is a pawn.
PST_LETTER = {PC.D: "+R", PC.O: "+R", PC.Y: "P", PC.T: "+B", PC.H: "+B", PC.W: "S"}


@functools.cache
def piece_square_table(positional: bool = True) -> np.ndarray:
    """``pst[colour, ptype, square]``: the standard shogi engine's piece-square terms (:mod:`eval.params`: pawn
    and minor advance, central files, the king low and on a wing), from the owner's point of view, on the
    fantasista board (``square = file * 9 + rank``, rank 0 = gote's back rank); all zeros unless ``positional``.
    Built once and shared by every searcher (which sets its tables before each search): not to be written."""
    pst = np.zeros((2, 32, 81), np.int32)
    if not positional:
        return pst
    from eval import _positional
    for pt in range(1, PC.N_TYPES):
        letter = PST_LETTER.get(pt, PC.LETTERS[pt])
        start_rank = 2 if letter == "P" else 0
        for sq in range(81):
            f, r = divmod(sq, 9)
            edge = min(f, 8 - f)
            for colour, fwd in ((0, 8 - r), (1, r)):  # ranks advanced from the owner's back rank
                pst[colour, pt, sq] = _positional(letter, fwd, 9, edge, start_rank)
    return pst


def roll_rows(reserved: str) -> list[tuple[str, float]]:
    """The distinct table rows of a d20 roll with their probabilities (identical outcomes merged), one ``reserved``
    result for the roller's own table ("1", "2", "3", "4-8", "nothing")."""
    rows: dict[str, float] = {}
    for n in range(1, 21):
        r = roll_effect(n, reserved)
        rows[r] = rows.get(r, 0.0) + 0.05
    return sorted(rows.items())


def roll_rows_per_side(fairy, reserved) -> list[tuple[tuple, float]]:
    """The rows of a d20 roll for a game: the faces grouped by what they give each side, ``((table, row) of sente,
    (table, row) of gote)`` with :func:`magic_of` (each side's fairy and its own reserved result), in the order of
    their first face, most probable first (a stable sort: with both reserved results at 4-8 these are the rows of
    :func:`roll_rows`, in its order)."""
    rows: dict[tuple, float] = {}
    for n in range(1, 21):
        label = tuple(magic_of(n, FAIRIES[fairy[c]], reserved[c]) for c in (0, 1))
        rows[label] = rows.get(label, 0.0) + 0.05
    return sorted(rows.items(), key=lambda rp: -rp[1])


class TransTable:
    """The transposition table of decision nodes, in numpy arrays (:class:`.fantasista_kernels.TTable`) so that the
    kernels read and write the same entries as the Python loop: one entry per slot, replaced by every store; the
    key mixes the position key with the move number (:func:`.fantasista_kernels.tt_key`). ``chance`` holds the
    exact chance nodes of ``expand_every_outcome`` (Python only)."""

    def __init__(self, bits: int = 18) -> None:
        size = 1 << bits
        self.arrays = FKS.TTable(np.zeros(size, np.uint64), np.zeros(size, np.float64), np.zeros(size, np.uint64),
                                 np.zeros(size, np.int16), np.zeros(size, np.int8))
        self.mkeys = np.random.default_rng(20261130).integers(1, 2 ** 63, size=31, dtype=np.int64).astype(np.uint64)
        self.mask = size - 1
        self.chance: dict[tuple, tuple] = {}

    def key(self, h: int, mnum: int) -> int:
        """As :func:`.fantasista_kernels.tt_key`."""
        return h ^ int(self.mkeys[mnum % 30 if mnum > 30 else mnum])

    def get(self, key: int) -> tuple[int, float, int, int] | None:
        """(depth, value, flag, best child's key) stored under ``key``, or None."""
        i = key & self.mask
        a = self.arrays
        if int(a.key[i]) != key:
            return None
        return int(a.depth[i]), float(a.val[i]), int(a.flag[i]), int(a.move[i])

    def put(self, key: int, depth: int, value: float, flag: int, move: int) -> None:
        i = key & self.mask
        a = self.arrays
        a.key[i], a.val[i], a.move[i], a.depth[i], a.flag[i] = key, value, move, depth, flag

    def clear(self) -> None:
        for a in self.arrays:
            a[:] = 0
        self.chance.clear()

    def __len__(self) -> int:
        return int(np.count_nonzero(self.arrays.key)) + len(self.chance)


@dataclass
class FantasistaResult:
    best: str | None
    score: float
    depth: int
    nodes: int
    pv: list[str]


class _Stop(Exception):
    pass


class FantasistaSearcher:
    """Depth-limited expectimax (negamax + Star1) over whole turns, iterative deepening, optional node budget.

    >>> from engine.variants.fantasista import new_game
    >>> r = FantasistaSearcher().search(new_game(("hiko", "ginsara")), depth=1)
    >>> r.best is not None and r.nodes > 0
    True
    """

    def __init__(self, chance_aware: bool = True, reserved: str = "4-8", quiescence: bool = True,
                 expand_every_outcome: bool = False, count_chance_nodes: bool = False,
                 frontier_kernel: bool = True, king_drop_cp: int = 0, late_move_reduction: bool = False,
                 chance_sides: str = "both", quiescence_checks: bool = False, prune_twin_drops: bool = True,
                 positional: bool = True) -> None:
        self.chance_aware = chance_aware
        #: True: the evaluation adds the shogi engine's piece-square terms (:func:`piece_square_table`) to the
        #: material (the default: it won the pst-seat match, docs/fantasista.md); False: material, hands, rights,
        #: marks only.
        self.positional = positional
        #: True (default): an ordinary piece is not dropped while a token of its type is in hand; the token is
        #: dropped instead (:func:`.fantasista_kernels.prune_twin_drops`). False: both drops are searched (the play
        #: of the ledger's ``blind`` matches).
        self.prune_twin_drops = prune_twin_drops
        #: Whose rolls a chance-aware search expands: "both" (default), "own" (the root side's; the opponent's
        #: rolls are treated as nothing, as the roll-blind engine treats all) or "opponent". An experiment.
        if chance_sides not in ("both", "own", "opponent"):
            raise ValueError(f"chance_sides is both, own or opponent, not {chance_sides!r}")
        self.chance_sides = chance_sides
        self._roll_mask = 3 if chance_aware else 0  # bit c: colour c's rolls are chance nodes (set per search)
        #: Late-move reduction at nodes of depth 2 and more (not at the root, not in check): the turns ordered after
        #: the first LMR_FULL_TURNS that capture nothing are searched one ply shallower with a null window first,
        #: and again at full depth only if that beats alpha (the kernels do the same at depth 2). Chance-aware, a
        #: roll of the opponent's right after the ply a reduction cuts off is counted statically; before the
        #: side's own roll there is no reduction.
        self.late_move_reduction = late_move_reduction
        #: Checks in the quiescence: at its first ply the turns that give check (drops included) are searched as
        #: well as the captures, and a side in check does not stand pat (every evasion is searched; none = mated),
        #: so a mate in one by a drop is seen one ply beyond the full-width horizon.
        self.quiescence_checks = quiescence_checks
        #: Weight of the king-exposure-to-drops term of the evaluation (0, the default: off; KING_DROP_CP = 8 is
        #: the weight measured).
        self.king_drop_cp = king_drop_cp
        #: True (default): a node of depth 1 to 3 (1 to 2 with ``late_move_reduction``) is searched with
        #: everything below it by one kernel call (:mod:`search.fantasista_kernels`); False: all in Python. Same
        #: turns, values and node counts.
        self.frontier_kernel = frontier_kernel and (QDEPTH if quiescence else 0) <= 2
        #: False (default): a chance node does not count against the node budget (its children do), so the aware
        #: engine spends the same budget on the same kinds of node as the roll-blind engine (decision and
        #: quiescence nodes). True: the former rule, a default chance node counted as one node.
        self.count_chance_nodes = count_chance_nodes
        #: Chance nodes visited by the last search (counted or not).
        self.chance_nodes = 0
        #: True: every roll outcome is searched to full depth (exact expectimax, Star1; five subtrees per roll).
        #: False (default): the most probable outcome is searched and the others are valued by their static
        #: difference from it (:meth:`_chance_main`), so a roll costs about what a decision node costs.
        self.expand_every_outcome = expand_every_outcome
        self.reserved = reserved
        self.quiescence = quiescence
        self._qdepth = QDEPTH if quiescence else 0
        self.T = tables()
        self.tt = TransTable()
        #: Polled at every node (e.g. by the USI loop for ``stop`` and the hard time limit); True aborts the
        #: search, which then answers from its deepest completed iteration.
        self.should_stop: Callable[[], bool] | None = None
        self.nodes = 0
        self.node_limit = 0
        self.deadline: float | None = None
        self.fairy = [0, 0]
        self.bufs = [FK.make_genbuf(1024) for _ in range(BUFFER_PLIES + 2)]
        self.g2 = FK.make_genbuf(256)
        self.scores = np.zeros((BUFFER_PLIES + 2, 1 << 14), np.int64)
        self.caps = np.zeros((BUFFER_PLIES + 2, 1 << 14), np.int8)
        self.keys = np.zeros((BUFFER_PLIES + 2, 1 << 14), np.int64)  # the kernels' child order per ply
        self.work = np.zeros((BUFFER_PLIES + 2, 2, FK.S), np.int8)  # the kernels' main roll outcomes per ply
        self.path_keys = np.zeros(BUFFER_PLIES + 2, np.uint64)  # key of the decision node at each ply of the path
        self.info = np.zeros(FKS.INFO_SIZE, np.int64)
        self._clock_at = 0
        self.history: set[int] = set()  # search keys of the positions of the game before the root
        self.path: set[int] = set()
        self._partial = None
        self._ply_bufs: dict[int, tuple] = {}  # ply -> the generation buffers of plies ply .. ply + 4
        # the hot kernels, called with this searcher's own buffers: no per-call type dispatch (~13 us a call)
        self._frontier_k, self._node2_k = DirectCall(FKS.frontier_k), DirectCall(FKS.node2_k)
        self._node3_k = DirectCall(FKS.node3_k)
        self._legal_turns_k, self._capture_turns_k = DirectCall(FK.legal_turns_k), DirectCall(FK.capture_turns_k)
        self._evaluate_many, self._prune_twin_drops = DirectCall(FK.evaluate_many), DirectCall(FKS.prune_twin_drops)
        self._set_fairies([0, 0])

    def _set_fairies(self, fairy, reserved=None) -> None:
        """The game's fairies and reserved results (a pair; None: this searcher's ``reserved`` for both sides)."""
        self.fairy = list(fairy)
        self._reserved_pair = [self.reserved, self.reserved] if reserved is None else list(reserved)
        # E.magic (the kernel's per-colour roll term) stays 0: a roll is a chance node in the full-width part and
        # is ignored by the quiescence for stand pat and captures alike (see the module docstring).
        magic = [0, 0]
        hv = np.array([int(HAND_BONUS * v) for v in VALUE] + [0] * 11, np.int32)
        self.E = EvalTables(np.array(VALUE + [0] * 11, np.int32), hv, np.array(RIGHT_VALUE, np.int32),
                            np.array([INVINCIBLE_VALUE, CARRIER_VALUE, RIDER_BONUS, EMBLEM_VALUE, EMBLEM_PER_PAWN,
                                      self.king_drop_cp, DROP_ATTACK_CAP], np.int32),
                            np.array(magic, np.int32), np.array([EVAL_BOUND], np.int32),
                            np.array(DROP_WEIGHT, np.int32),
                            piece_square_table(self.positional))
        # most probable outcome first
        self.rows = roll_rows_per_side(self.fairy, self._reserved_pair)
        per_colour = [self._roll_table(c) for c in (0, 1)]
        self.roll_arrays = (np.array([p for _, p in self.rows], np.float64),) + tuple(
            np.array([t[k] for t in per_colour], np.int64) for k in range(3))
        self._kernel_arrays()

    def _kernel_arrays(self) -> None:
        """The kernels' view of the search (:class:`.fantasista_kernels.SearchArrays`): the settings, the game's
        history and the d20 rows of the current fairies."""
        info = self.info
        info[FKS.F_AWARE], info[FKS.F_COUNT_CHANCE] = self._roll_mask, self.count_chance_nodes
        info[FKS.F_QDEPTH], info[FKS.F_MAX_PLY] = self._qdepth, BUFFER_PLIES
        info[FKS.F_LMR] = self.late_move_reduction
        info[FKS.F_QCHECKS] = self.quiescence_checks
        info[FKS.F_TWIN_DROPS] = self.prune_twin_drops
        #: The deepest node a kernel call searches (0: none): 3 (node3_k), 2 with late-move reduction (node3_k has
        #: none), none when every roll outcome is searched (chance nodes of expand_every_outcome are Python's).
        self._kernel_depth = 0 if not self.frontier_kernel or (self.expand_every_outcome and self.chance_aware) \
            else (2 if self.late_move_reduction else 3)
        self.A = FKS.SearchArrays(self.scores, self.caps, self.keys, self.work, self.path_keys,
                                  np.array(sorted(self.history), np.uint64), self.tt.mkeys, *self.roll_arrays, info)

    # ---------------------------------------------------------- evaluation
    def key(self, st: np.ndarray) -> int:
        """The search key of kernel row ``st``: its Zobrist key as a Python int (the TT and the history sets hold
        ints; every kernel call wraps a key in ``np.uint64``, so no kernel sees both types)."""
        return int(FK.zhash(st, self.T))

    def evaluate(self, st: np.ndarray, move_number: int) -> int:
        """Static value for the side to move of the kernel row ``st`` (see :func:`.kernels.evaluate_k`), without
        any term for coming rolls; ``move_number`` is kept for the interface (the evaluation does not use it)."""
        return int(FK.evaluate_k(st, self.E, 0, 0))

    # -------------------------------------------------------------- search
    def search(self, game: FantasistaState, depth: int = 2, time_limit: float | None = None,
               node_limit: int = 0) -> FantasistaResult:
        """Best turn for the side to move of ``game``; iterative deepening to ``depth`` or until the time or node
        budget runs out (the deepest completed iteration answers, or the unfinished one once it has searched the previous
        best turn)."""
        if game.pregame_side() is not None:  # the fairy (and reserved result): not a search (choose_pregame)
            token, worth, _ = self.choose_pregame(game)
            return FantasistaResult(token, worth, 0, 0, [token])
        self._set_fairies(game.fairy, game.reserved)
        if game.phase == "target":
            return self.best_target(game, depth=depth, node_limit=node_limit)
        self.nodes = 0
        self.chance_nodes = 0
        self.node_limit = node_limit
        self.deadline = None if time_limit is None else time.time() + time_limit
        self.path = set()
        depth = min(depth, BUFFER_PLIES)  # the per-ply buffers end there (USI deepens to 32 under a clock)
        self.history = self._game_history(game)
        root = game.bd.stm
        self._roll_mask = 0 if not self.chance_aware else {"both": 3, "own": 1 << root,
                                                           "opponent": 1 << (1 - root)}[self.chance_sides]
        self._kernel_arrays()
        self._clock_at = 0
        st = to_array(game.bd)
        h = self.key(st)
        best, score, done = None, 0.0, 0
        for d in range(1, depth + 1):
            self._partial = None
            try:
                s, b = self._decision(st, h, game.move_number, d, -MATE - 1, MATE + 1, 0, root=True)
            except _Stop:
                # An unfinished iteration still answers once its first root turn (the previous best, ordered
                # first by the TT hint) is searched: its best so far is then at least as well founded.
                if self._partial is not None and best is not None:
                    score, best = self._partial
                break
            best, score, done = b, s, d
            if self.deadline is not None and time.time() > self.deadline:
                break
        if best is None:  # not even depth 1 finished within the budget: take the best static reply
            best = self._greedy(st, game.move_number)
        text = game.canonical(best) if best is not None else None
        return FantasistaResult(text, score, done, self.nodes, [text] if text else [])

    def _game_history(self, game: FantasistaState) -> set[int]:
        """Search keys (zhash) of the game's positions before the root, so that the side ahead does not walk into
        a repetition (a repeated position scores a draw). The game keeps its positions as ``Board.key()`` tuples
        (``FantasistaState._hist``, the record its sennichite rule reads); each is rebuilt as a kernel row."""
        keys = set()
        for k in game._hist[:-1]:
            bd = Board.__new__(Board)
            bd.b, bd.m, bd.r, bd.rm = list(k[0]), list(k[1]), list(k[2]), list(k[3])
            bd.hand, bd.th, bd.rights = [list(k[4]), list(k[5])], [list(k[6]), list(k[7])], [list(k[8]), list(k[9])]
            bd.emblem, bd.stm = list(k[10]), k[11]
            keys.add(self.key(to_array(bd)))
        return keys

    def _gen(self, st: np.ndarray, h: int, ply: int, captures: bool = False) -> int:
        """The legal turns of ``st`` into ``self.bufs[ply]`` (grown on overflow); ``captures``: only those that may
        take material (``capture_turns_k``, the quiescence's generator). With ``prune_twin_drops`` an ordinary
        piece's drop is left out while a token of its type is in hand (:func:`.fantasista_kernels.prune_twin_drops`)."""
        G = self.bufs[ply]
        while True:
            if captures:
                n = self._capture_turns_k(st, np.uint64(h), self.T, G, self.g2)
            else:
                n = self._legal_turns_k(st, np.uint64(h), self.T, G, self.g2, 0)
                if n > 0 and self.prune_twin_drops:
                    n = self._prune_twin_drops(st, G, n)
            if n >= 0:
                return n
            if G.info[FK.I_OVERFLOW] == FK.OVERFLOW_WAVE:  # a silver wave's seen-set: grow it, leave out nothing
                if len(G.wkeys) >= SEARCH_MAX_WAVE:
                    return int(G.info[FK.I_N])  # a wave beyond the search's reach: keep what was found
                G, self.g2 = grow_wave(G, self.g2)
                self.bufs[ply] = G
                self._ply_bufs.clear()
                continue
            cap = int(G.info[FK.I_CAP])
            if cap >= 1 << 14:
                # keep what fits: a node of more than 16,384 turns (a wave of many silvers) is searched through
                # its first 16,384 (the game layer lists them all, part by part: turngen.legal_turns)
                return int(G.info[FK.I_N])
            G = self.bufs[ply] = FK.make_genbuf(cap * 2, 0, len(G.wkeys))
            self._ply_bufs.clear()

    def _order(self, st, n, ply, mnum, hint_hash):
        """Children sorted best first for the side to move (lowest static value for the opponent). A roll due after
        this turn is the same for every child, so it does not enter the ordering."""
        G = self.bufs[ply]
        self._evaluate_many(G.out, G.odesc, n, self.E, 0, 0, st, self.scores[ply], self.caps[ply])
        sc = self.scores[ply][:n].copy()
        if hint_hash is not None:
            sc[G.oh[:n] == np.uint64(hint_hash)] = -10 ** 9
        return np.argsort(sc, kind="stable")

    def _tick(self, count: bool = True):
        self.nodes += count
        if self.node_limit and self.nodes > self.node_limit:
            raise _Stop
        if self.should_stop is not None and self.should_stop():
            raise _Stop
        if self.deadline is not None and self.nodes >= self._clock_at:  # the clock every 256 nodes
            self._clock_at = self.nodes + 256
            if time.time() > self.deadline:
                raise _Stop

    def _decision(self, st, h, mnum, depth, alpha, beta, ply, root=False):
        """Negamax value of a decision node (kernel row ``st``, key ``h``, ``mnum`` = the next ply's number) and
        the text of its best turn (root) or its key (elsewhere)."""
        self._tick()
        if not root and (h in self.history or h in self.path):
            return 0, None  # a repetition: a draw
        if depth <= 0:  # a leaf: no TT probe (the kernels probe none either)
            return self._quiesce(st, h, mnum, alpha, beta, ply, self._qdepth), None
        key = self.tt.key(h, mnum)
        hint = None
        ent = self.tt.get(key)
        if ent is not None:
            d, v, flag, hint = ent
            if not root and d >= depth and (flag == EXACT or (flag == LOWER and v >= beta)
                                            or (flag == UPPER and v <= alpha)):
                return v, hint
        self.path_keys[ply] = h
        if depth <= self._kernel_depth and not root and ply + depth + 1 <= BUFFER_PLIES + 1:
            found = self._kernel_node(st, h, mnum, depth, alpha, beta, ply, hint)
            if found is not None:
                best_v, best_h = found
                if best_h is None:
                    return best_v, None  # no legal turn: mated (not stored, as in the Python loop)
                flag = EXACT if alpha < best_v < beta else (LOWER if best_v >= beta else UPPER)
                self.tt.put(key, depth, best_v, flag, best_h)
                return best_v, best_h
        n = self._gen(st, h, ply)
        if n == 0:
            return -MATE, None
        G = self.bufs[ply]
        order = self._order(st, n, ply, mnum, hint)
        a0 = alpha
        best_v, best_i = -MATE - 1, int(order[0])
        caps = self.caps[ply]  # which children captured (filled by _order)
        reduce_from, lmr_gain = n, 0
        stm = int(st[FK.ST_STM])
        if self.late_move_reduction and depth >= 2 and not root and not FK.in_check(st, self.T, stm):
            # When a roll follows the ply a reduction cuts off, the reduced searches end before that roll and the
            # full ones after it: their values would differ by the roll's tokens, not by merit. The opponent's
            # roll is then counted statically (lmr_gain); before the side's own roll nothing is reduced.
            if not self._rolls(mnum + depth - 1, stm if depth % 2 else 1 - stm):
                reduce_from = LMR_FULL_TURNS
            elif depth % 2 == 0:  # the ply cut off is the opponent's
                reduce_from, lmr_gain = LMR_FULL_TURNS, self._roll_gain(st)
        self.path.add(h)
        try:
            for k, i in enumerate(order):
                i = int(i)
                if k >= reduce_from and not caps[i]:
                    v = -self._after_turn(G.out[i], int(G.oh[i]), mnum, depth - 2, lmr_gain - alpha - 1,
                                          lmr_gain - alpha, ply + 1)
                    if -MATE < v < MATE:
                        v += lmr_gain
                    if v <= alpha:  # the reduced search fails low: the turn is not better, no full search
                        if v > best_v:
                            best_v, best_i = v, i
                        continue
                v = -self._after_turn(G.out[i], int(G.oh[i]), mnum, depth - 1, -beta, -alpha, ply + 1)
                if v > best_v:
                    best_v, best_i = v, i
                    if root:
                        self._partial = (best_v, desc_text(G.odesc[i]))
                alpha = max(alpha, v)
                if alpha >= beta:
                    break
        finally:
            self.path.discard(h)
        flag = EXACT if a0 < best_v < beta else (LOWER if best_v >= beta else UPPER)
        self.tt.put(key, depth, best_v, flag, int(G.oh[best_i]))
        return best_v, (desc_text(G.odesc[best_i]) if root else int(G.oh[best_i]))

    def _kernel_node(self, st, h, mnum, depth, alpha, beta, ply, hint):
        """A node of depth 1 to 3 searched by one kernel call (:func:`.fantasista_kernels.frontier_k`,
        :func:`.fantasista_kernels.node2_k`, :func:`.fantasista_kernels.node3_k`): (value, key of the best child;
        None when there is no legal turn), or None when a generation buffer was too small (the caller then searches
        the node in Python, which grows the buffers; the counts the kernel made are dropped, the TT entries it
        stored are sound and stay). The caller has counted the node and probed the TT."""
        info = self.info
        info[FKS.F_NODES] = self.nodes
        info[FKS.F_LIMIT] = self.node_limit
        info[FKS.F_CHANCE] = self.chance_nodes
        bufs = self._ply_bufs.get(ply)
        if bufs is None:  # built once per ply (and again after _gen grows a buffer): this call is hot
            bufs = self._ply_bufs[ply] = tuple(self.bufs[min(ply + k, BUFFER_PLIES + 1)] for k in range(5))
        args = (st, np.uint64(h), mnum, float(alpha), float(beta), np.uint64(hint or 0), ply, self.T, self.E)
        if depth == 1:
            v = self._frontier_k(*args, *bufs[:3], self.g2, self.A)
        elif depth == 2:
            v = self._node2_k(*args, *bufs[:4], self.g2, self.tt.arrays, self.A)
        else:
            v = self._node3_k(*args, *bufs, self.g2, self.tt.arrays, self.A)
        status = int(info[FKS.F_STATUS])
        if status == FKS.STOP_OVERFLOW:
            return None
        self.nodes = int(info[FKS.F_NODES])
        self.chance_nodes = int(info[FKS.F_CHANCE])
        if status == FKS.STOP_BUDGET:
            raise _Stop
        best = int(info[FKS.F_BEST])
        if best < 0:
            return -MATE, None
        self._tick(count=False)  # the clock and ``stop``, now that the kernel has spent its nodes
        return float(v), int(self.bufs[ply].oh[best])

    def _quiesce(self, st, h, mnum, alpha, beta, ply, qd):
        """Stand pat, then captures only (``qd`` plies): the capture-aware leaf. A roll due inside the quiescence is
        not counted, neither after a capture nor after the quiet move that standing pat stands for (counting it after
        captures only made a losing capture by the side about to roll look better than standing pat). With
        ``quiescence_checks`` the first ply searches checks too and a side in check searches every evasion instead
        of standing pat (as :func:`.fantasista_kernels._quiesce_open`)."""
        stand = self.evaluate(st, mnum)
        if qd <= 0 or ply >= BUFFER_PLIES:
            return stand
        checked = False
        if self.quiescence_checks or stand < beta:
            checked = bool(FK.in_check(st, self.T, np.int64(st[FK.ST_STM])))
        evasions = self.quiescence_checks and checked
        if stand >= beta and not evasions:
            return stand
        checks = self.quiescence_checks and not checked and qd == self._qdepth
        # out of check (and not looking for checks) the generator sees captures only: no capture is no verdict
        n = self._gen(st, h, ply, captures=not checked and not checks)
        if n == 0 and checked:
            return -MATE
        order = self._order(st, n, ply, mnum, None)
        caps = self.caps[ply]
        G = self.bufs[ply]
        if evasions:
            stand = -MATE
        alpha = max(alpha, stand)
        best = stand
        for i in order:
            i = int(i)
            if not caps[i] and not evasions:
                if not checks or not FK.in_check(G.out[i], self.T, np.int64(G.out[i][FK.ST_STM])):
                    continue
            self._tick()
            v = -self._quiesce(G.out[i], int(G.oh[i]), mnum + 1, -beta, -alpha, ply + 1, qd - 1)
            if v > best:
                best = v
            alpha = max(alpha, v)
            if alpha >= beta:
                break
        return best

    def _after_turn(self, row, h, played, depth, alpha, beta, ply):
        """Value for the side to move of ``row`` after ply ``played`` was made: through the roll if one is due."""
        if self._rolls(played, 1 - int(row[FK.ST_STM])):
            if self.expand_every_outcome:
                return self._chance(row, h, played + 1, depth, alpha, beta, ply)
            return self._chance_main(row, h, played + 1, depth, alpha, beta, ply)
        return self._decision(row, h, played + 1, depth, alpha, beta, ply)[0]

    def _rolls(self, played: int, roller: int) -> bool:
        """A chance node follows ply ``played``, made by ``roller``: a roll is due and this engine searches that
        colour's rolls (as :func:`.fantasista_kernels._rolls`)."""
        return bool((self._roll_mask >> roller) & 1) and magic_after(played)

    def _chance_main(self, row, h, mnum, depth, alpha, beta, ply):
        """A roll searched through its most probable outcome; the roller is the side not to move in ``row``.

        Value = v(main) + sum over the other rows r of p(r) * (static(r) - static(main)), where v(main) is the full
        search of the most probable row's position (4-18 with ``reserved`` = 4-8, p = 0.75) and static(x) the
        evaluation of a row's position (the minimum over the targets for ayumi 3 / yokaku 3: the roller picks). The
        expectation is then exact up to how differently the rare rows would play out, and costs one subtree instead
        of five, so the search keeps its depth near rolls. The shift is a constant for the node, so the main child
        gets the window shifted by it: no Star1 slack at all. A mate in the main outcome is returned as a mate.
        Counted as a node only with ``count_chance_nodes``."""
        self.chance_nodes += 1
        self._tick(count=self.count_chance_nodes)
        outcomes = [(self._receive(row, r), p) for r, p in self.rows]  # most probable first
        kids, _ = outcomes[0]
        statics = [self.evaluate(k, mnum) for k in kids]
        main_static = min(statics)
        main = kids[statics.index(main_static)]
        shift = 0.0
        for kids, p in outcomes[1:]:
            shift += p * (min(self.evaluate(k, mnum) for k in kids) - main_static)
        shift = int(round(shift))
        mh = self.key(main) if main is not row else h
        v, _ = self._decision(main, mh, mnum, depth, alpha - shift, beta - shift, ply)
        if abs(v) >= MATE:
            return v
        return v + shift

    def _roll_gain(self, st: np.ndarray) -> int:
        """How much the coming roll of the side not to move in ``st`` is expected to change the static value of
        ``st`` for the side to move: sum over the rows r of p(r) * (static(r) - static(st)), a target row at the
        roller's choice (as :func:`.fantasista_kernels._roll_gain`)."""
        s0 = self.evaluate(st, 0)
        acc = 0.0
        for r, p in self.rows:
            acc += p * (min(self.evaluate(k, 0) for k in self._receive(st, r)) - s0)
        return int(round(acc))

    def _chance(self, row, h, mnum, depth, alpha, beta, ply):
        """Exact expectimax at a roll (``expand_every_outcome``): Star1 over the merged roll outcomes; the roller
        is the side not to move in ``row``.

        Child values are clamped to [L, U] = [-EVAL_BOUND, EVAL_BOUND] (the bounds Star1 relies on). The node fails
        low when even U for every outcome not yet searched cannot lift it above ``alpha``, high when even L cannot
        pull it below ``beta``; otherwise every searched value is exact (a child that fails against a window
        clamped to L or U is exactly L or U) and the result is the expectation."""
        self.chance_nodes += 1
        self._tick(count=False)
        key = (h, mnum, "roll", depth)
        ent = self.tt.chance.get(key)
        if ent is not None:
            v, flag = ent
            if flag == EXACT or (flag == LOWER and v >= beta) or (flag == UPPER and v <= alpha):
                return v
        lo, hi = -EVAL_BOUND, EVAL_BOUND
        done_p, acc = 0.0, 0.0
        result, flag = None, EXACT
        for r, p in self.rows:
            children = self._receive(row, r)
            rest = 1.0 - done_p - p
            ca = max(lo, (alpha - acc - hi * rest) / p)
            cb = min(hi, (beta - acc - lo * rest) / p)
            v = None
            for child in children:  # the roller picks the target: the worst for the side to move
                ch = self.key(child) if child is not row else h
                cv, _ = self._decision(child, ch, mnum, depth, ca, cb if v is None else min(cb, v), ply)
                cv = max(lo, min(hi, cv))
                v = cv if v is None else min(v, cv)
            if acc + p * v + hi * rest <= alpha:
                result, flag = acc + p * v + hi * rest, UPPER  # cannot reach alpha: fail low
                break
            if acc + p * v + lo * rest >= beta:
                result, flag = acc + p * v + lo * rest, LOWER  # exceeds beta whatever the rest: fail high
                break
            acc += p * v
            done_p += p
        if result is None:
            result = acc
        self.tt.chance[key] = (result, flag)
        return result

    def _roll_table(self, c: int) -> tuple[list[int], list[int], list[int]]:
        """``self.rows`` as colour ``c`` receives them, for the kernels: per row its kind and two arguments
        (:func:`.fantasista_kernels._receive_into`), as :meth:`_receive` applies them."""
        kinds, a, b = [], [], []
        for r, _ in self.rows:
            fairy, row = r[c]
            eff = ROW_EFFECT[fairy].get(row, ()) if fairy else ()
            k, x, y = FKS.R_NOTHING, 0, 0
            if eff and eff[0] == "th":
                k, x, y = FKS.R_TOKENS, eff[1], eff[2]
            elif eff and eff[0] == "th2":
                k = FKS.R_PAWNS_GOLD
            elif eff and eff[0] == "right":
                k, x = FKS.R_RIGHT, eff[1]
            elif eff and eff[0] == "emblem":
                k = FKS.R_EMBLEM
            elif eff:
                k = FKS.R_INVINCIBLE if fairy == "ayumi" else FKS.R_CARRIER
            kinds.append(k)
            a.append(x)
            b.append(y)
        return kinds, a, b

    def _receive(self, row: np.ndarray, r: str) -> list[np.ndarray]:
        """Kernel rows after the roller (the side not to move) receives table row ``r`` (several for a target)."""
        c = 1 - int(row[FK.ST_STM])
        if isinstance(r, str):  # a row of the roller's own table (roll_rows)
            fairy = FAIRIES[self.fairy[c]]
        else:  # a row of self.rows: what each side receives
            fairy, r = r[c]
        eff = ROW_EFFECT[fairy].get(r, ()) if fairy else ()
        if not eff:
            return [row]
        x = row.copy()
        if eff[0] == "th":
            x[FK.ST_TH + 21 * c + eff[1]] += eff[2]
        elif eff[0] == "th2":
            x[FK.ST_TH + 21 * c + PC.P] += 2
            x[FK.ST_TH + 21 * c + PC.G] += 1
        elif eff[0] == "right":
            x[FK.ST_RIGHTS + 3 * c + eff[1]] += 1
        elif eff[0] == "emblem":
            x[FK.ST_EMBLEM + c] = 1
        else:
            out = []
            for s in range(81):
                if fairy == "ayumi":
                    for base, mbase in ((FK.ST_B, FK.ST_M), (FK.ST_R, FK.ST_RM)):
                        code = int(row[base + s])
                        if code and code >> 5 == c and code & 31 in (PC.P, PC.PP) and \
                                not row[mbase + s] & PC.INVINCIBLE:
                            y = row.copy()
                            y[mbase + s] |= PC.INVINCIBLE
                            out.append(y)
                else:
                    code = int(row[FK.ST_B + s])
                    if code and code >> 5 == c and code & 31 in (PC.B, PC.PB) and not row[FK.ST_M + s] & PC.CARRIER:
                        y = row.copy()
                        y[FK.ST_M + s] |= PC.CARRIER
                        out.append(y)
            return out or [row]
        return [x]

    def _greedy(self, st, mnum) -> str | None:
        n = self._gen(st, self.key(st), 0)
        if n == 0:
            return None
        i = int(self._order(st, n, 0, mnum, None)[0])
        return desc_text(self.bufs[0].odesc[i])

    def best_target(self, game: FantasistaState, depth: int = 2, node_limit: int = 0) -> FantasistaResult:
        """Magic target (ayumi 3 / yokaku 3: a decision of the roller that costs no move), chosen by search: each
        eligible target is played and the opponent's position searched ``depth`` plies (``node_limit`` shared out
        among the targets); the target whose position is worst for the opponent wins (the first on a tie). With
        ``depth`` 0 the static evaluation decides (the greedy player; it ties every pawn of equal square value)."""
        best, best_v, nodes, done = None, None, 0, depth
        acts = game.legal_actions()
        for act in acts:
            g = game.copy()
            g.apply(act)
            if depth <= 0:
                v = -self.evaluate(to_array(g.bd), g.move_number)  # the opponent is to move
            elif g.result() is not None:
                v = (1 if g.result()[0] == (1.0 if g.bd.stm == 1 else 0.0) else -1) * MATE
            else:
                r = self.search(g, depth=depth, node_limit=node_limit // max(len(acts), 1))
                v, nodes, done = -r.score, nodes + r.nodes, min(done, r.depth)
            if best_v is None or v > best_v:
                best, best_v = act, v
        return FantasistaResult(best, best_v or 0.0, done if depth > 0 else 0, nodes, [best] if best else [])

    def choose_pregame(self, game: FantasistaState) -> tuple[str, float, list[tuple[str, float]]]:
        """The pre-game decision of :meth:`FantasistaState.pregame_side`: the fairy (and the reserved result, when
        not fixed) whose magic is worth most by this searcher's evaluation (see :func:`magic_worth`). Returns the
        token, its worth and every candidate's worth (best first)."""
        c = game.pregame_side()
        worth = [(tok, magic_worth(self, tok)) for tok in game.pregame_actions()]
        ranked = sorted(worth, key=lambda tw: -tw[1])  # stable: the first in the list on a tie
        return ranked[0][0], ranked[0][1], ranked


def magic_worth(searcher: FantasistaSearcher, token: str) -> float:
    """**[design]** Expected worth of one magic for the side that takes pre-game decision ``token``
    (``fairy:<name>[,reserved:<result>]``): the mean over the 20 faces of what the magic adds to the side's static
    value (:meth:`FantasistaSearcher.evaluate`, the search's own yardstick) in the start position, a target at its
    best square. Magics are the whole difference between the fairies, and each side gets about one every 15 plies
    whatever it chooses, so their worth by the evaluation the search plays with is the criterion (measured table:
    docs/fantasista.md, "The pre-game decision")."""
    from engine.variants.fantasista.state import FAIRY_TOKEN, START_BOARD

    m = FAIRY_TOKEN.fullmatch(token)
    fairy, reserved = m.group(1), m.group(2) or "4-8"
    base = FantasistaState.from_sfen(f"{START_BOARD} b - 1 f=hh")
    st = to_array(base.bd)
    s0 = searcher.evaluate(st, 1)
    total = 0.0
    for n in range(1, 21):
        table, row = magic_of(n, fairy, reserved)
        if not table:
            continue
        old = searcher.fairy
        searcher.fairy = [FAIRIES.index(table), FAIRIES.index(table)]
        after = searcher._receive(_roller_view(st), row)
        searcher.fairy = old
        total += 0.05 * (max(searcher.evaluate(_mover_view(x), 1) for x in after) - s0)
    return total


def _roller_view(st: np.ndarray) -> np.ndarray:
    """``st`` with gote to move, so that sente is the roller (:meth:`FantasistaSearcher._receive`)."""
    x = st.copy()
    x[FK.ST_STM] = 1
    return x


def _mover_view(st: np.ndarray) -> np.ndarray:
    x = st.copy()
    x[FK.ST_STM] = 0
    return x


def greedy_turn(game: FantasistaState, searcher: FantasistaSearcher | None = None) -> str:
    """The one-ply greedy player: the turn with the best static value after it (no look-ahead, no rolls)."""
    s = searcher or FantasistaSearcher(chance_aware=False)
    if game.pregame_side() is not None:
        return s.choose_pregame(game)[0]
    s._set_fairies(game.fairy, game.reserved)
    if game.phase == "target":
        return s.best_target(game, depth=0).best
    return game.canonical(s._greedy(to_array(game.bd), game.move_number))
