"""Fantasista as a position of the shared alpha-beta / expectimax search (issue 50).

:class:`FxPosition` puts a fantasista game in the shape :class:`search.position.PositionSearcher` and
:class:`search.alphabeta.Searcher` drive (the part of :class:`engine.Position`'s interface they use): the shared
position arrays (:mod:`engine.variants.fantasista.variant`), fantasista's kernel tables, legal move codes, moves
pushed without validation, and move codes as the game layer's tokens. The kernel does the rest through the rule
hooks: whole turns from the shared generator, a roll as a chance node (Star1 over the distinct results, most
probable first), a magic target as a decision of the roller, the TT key with the magic schedule.

A one-part move's token is spelt from its code (:func:`spell`); a multi-part turn's is the game layer's turn with
the same outcome (:meth:`FxPosition.move_usi`). Only the root's moves are named (a PV is its first move).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from engine.kernels.movegen import do_move, in_check, undo_move
from engine.variants.fantasista.magic import FAIRIES
from engine.variants.fantasista.movers import legal_moves
from engine.variants.fantasista.position import to_board, to_pos
from engine.variants.fantasista.state import FantasistaState
from engine.variants.fantasista.turns import spell
from engine.variants.fantasista.variant import FANTASISTA, SP_MASK, SP_TURN, ST_TABLE, FxPosState, fx_tables, table_ids

from .kernels import MAX_PLY

#: history arrays of a position: the search's plies and some to spare (no game history is loaded: repetitions are
#: seen inside the search only)
CAPACITY = MAX_PLY + 32
#: outcomes a generation looks at at most (``ST_SEEN_LIMIT``): with many silvers and a wave right, finding the few
#: waves that answer a check searched the whole outcome set, 786,000 positions and two seconds a node (about 10 ms
#: at this budget; a wave past it is not searched, as one past the move list's width is not)
WAVE_OUTCOMES = 1 << 12


class _Parsed(NamedTuple):
    code: int


class FxPosition:
    """A fantasista position (a turn or a magic target to decide) as the shared searchers use a shogi position."""

    variant = FANTASISTA

    def __init__(self, state: FxPosState, game: FantasistaState, checks: list[bool]) -> None:
        self.state = state
        self.tables = fx_tables()
        self._checks = checks
        self._game = game  # the game layer at the root, for the moves' tokens
        self._line: list[int] = []  # codes pushed since the root
        self._buf = np.zeros(FANTASISTA.max_moves, np.int32)  # as wide as the search's lists

    @classmethod
    def from_game(cls, game: FantasistaState) -> FxPosition:
        """The shared position of ``game`` at a turn or a magic target (not at a roll or before the game)."""
        if game.phase == "roll" or game.pregame_side() is not None:
            raise ValueError("a fantasista position is searched at a turn or a magic target")
        fairies = [FAIRIES[f] for f in game.fairy]
        P = to_pos(game.bd, game.move_number, game.phase, game.pending, table_ids(fairies, game.reserved),
                   capacity=CAPACITY, outcomes=WAVE_OUTCOMES)
        return cls(P, game, [bool(in_check(P, fx_tables()))])

    @property
    def ply(self) -> int:
        return int(self.state.st[1])

    def copy(self) -> FxPosition:
        """An independent copy. Of the turn arena (4 MiB) only the rows of the plies played and generated so far
        are copied, the rest left to the copy's own generations (the searchers copy a position for every report)."""
        top = int(max(self.state.turn_top[self.ply], self.state.turn_base[self.ply]))  # the top may be stale
        turns = np.zeros_like(self.state.turns)
        turns[:top] = self.state.turns[:top]
        arrays = {k: v.copy() for k, v in self.state._asdict().items() if k != "turns"}
        other = FxPosition(self.state._replace(turns=turns, **arrays), self._game, list(self._checks))
        other._line = list(self._line)
        return other

    def _ensure_depth(self, depth: int) -> None:
        if self.ply + depth + 2 >= len(self.state.keys):
            raise ValueError(f"a fantasista position holds {len(self.state.keys)} plies, not {self.ply + depth + 2}")

    def legal_codes(self, mode: str = "all") -> np.ndarray:
        """Every legal move (turns, drops, magic targets) as codes; ``mode`` is accepted for the searchers' calls
        and ignored (the root searches every move: the few non-promotions a search would skip cost little)."""
        n = legal_moves(self.state, self.tables, self._buf)
        return self._buf[:n].copy()

    def push_unchecked(self, code: int) -> None:
        do_move(self.state, self.tables, np.int64(code))
        self._checks.append(bool(in_check(self.state, self.tables)))
        self._line.append(int(code))

    def pop(self) -> None:
        undo_move(self.state, self.tables)
        self._checks.pop()
        self._line.pop()

    def can_declare_win(self, rule) -> bool:
        """No entering-king declaration in fantasista."""
        return False

    # ------------------------------------------------------------ tokens
    def _token(self, game: FantasistaState, code: int) -> str | None:
        """The token of ``code`` in ``game`` (the game layer at this position): a one-part move spelt from its code
        (:func:`spell`; ``apply`` takes any spelling), a multi-part turn the game layer's with the same outcome."""
        if game.phase == "target" or (code & SP_MASK) != SP_TURN:
            return spell(code)
        self.push_unchecked(code)
        try:
            after = to_board(self.state)
        finally:
            self.pop()
        return game.turn_to(after)

    def move_usi(self, code: int) -> str | None:
        """The game layer's token of the legal move ``code`` at the root (None past the root: naming a line's later
        turns would have the game layer generate every turn of each of its positions, for every info line of the
        search; a PV is its first move)."""
        return self._token(self._game, int(code)) if not self._line else None

    def parse_move(self, token: str) -> _Parsed:
        """The code of the legal move spelt ``token`` (``ValueError`` when none is)."""
        if self._line:
            raise ValueError("fantasista moves are named at the root only")
        text = self._game.canonical(token)
        for code in self.legal_codes():
            if self._token(self._game, int(code)) == text:
                return _Parsed(int(code))
        raise ValueError(f"{token!r} is not a legal fantasista move here")


def pregame_worths(game: FantasistaState, E) -> list[tuple[str, int]]:
    """**[design]** The pre-game decision's tokens (:meth:`FantasistaState.pregame_actions`) with their worth, best
    first (the first listed on a tie): the expected static gain of the chooser's first roll in the start position by
    the search's evaluation ``E`` (:func:`search.kernels.chance_gain`, what the search's leaves anticipate: the
    mean over the d20 of what each result adds; a magic target adds nothing before it is placed). The magics are the
    whole difference between the choices, and this is the yardstick the search then plays by."""
    from engine.variants.fantasista.magic import FAIRIES as NAMES
    from eval import threat_scratch

    from .kernels import chance_gain_k

    c = game.pregame_side()
    if c is None:
        return []
    att = threat_scratch(FANTASISTA)
    T = fx_tables()
    # one start position; a candidate only changes the chooser's magic table (what chance_gain reads of it)
    P = to_pos(game.bd, game.move_number, "move", "", (-1, -1), capacity=CAPACITY)
    worths = []
    for token in game.pregame_actions():
        g = game.copy()
        g.apply(token)
        fairies = [None if f is None else NAMES[f] for f in g.fairy]
        P.st[ST_TABLE + c] = table_ids(fairies, g.reserved)[c]
        gain = int(chance_gain_k(P, T, E, att, c))  # roll 0 follows sente's ply 15, roll 1 gote's ply 16
        worths.append((token, gain if c == 0 else -gain))
    return sorted(worths, key=lambda tw: -tw[1])
