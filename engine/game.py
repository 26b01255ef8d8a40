"""The one game model shared by all six games: a sequence of decision, chance and terminal nodes.

Standard shogi's :class:`engine.Position` is the fast path for 9x9 shogi-like games. Games whose state is not a
shogi position (the dice race, the card solitaire) implement :class:`GameState` directly, so that the USI loop, the
referee and the GUI can drive any game through the same text interface: actions and events are the tokens that
appear in a USI ``position ... moves ...`` line (see ``shared/spec/protocol.md``).
"""
from __future__ import annotations

import enum
from typing import Protocol, runtime_checkable


class NodeKind(enum.Enum):
    DECISION = "decision"  # a side chooses an action (move, part of a turn, target, plan, throw choice)
    CHANCE = "chance"  # nature picks an event with known probabilities (roll, throw, card)
    TERMINAL = "terminal"


class GameError(ValueError):
    """An action or event token that is malformed or not allowed now (the state is left unchanged)."""


@runtime_checkable
class GameState(Protocol):
    """What the referee, the USI loop and the GUI need from a game.

    Tokens are strings: ordinary moves and special actions as the variant's notation defines them, events as
    ``name=value`` (``roll=13``, ``throw=...``, ``card=KS``).
    """

    variant_id: str

    def sfen(self) -> str:
        """The (extended) SFEN of the state; ``from_sfen(sfen())`` reproduces it."""

    def node_kind(self) -> NodeKind: ...

    def side_to_move(self) -> int:
        """0 = sente / the player, 1 = gote / the opponent (meaningful at decision nodes)."""

    def legal_actions(self) -> list[str]:
        """Action tokens the side to move may play (decision nodes)."""

    def chance_events(self) -> list[tuple[str, float]]:
        """(event token, probability) for every outcome at a chance node; probabilities sum to 1."""

    def apply(self, token: str) -> None:
        """Play an action or event token. Raises :class:`GameError` naming the problem, state unchanged."""

    def result(self) -> tuple[float, str] | None:
        """``None`` while the game goes on; else (score for side 0 in [0, 1], reason)."""

    def copy(self) -> "GameState":
        """An independent copy (the USI loop searches a copy; the referee tries a token on one)."""
