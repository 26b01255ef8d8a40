"""Enokian shogi (榎庵将棋): the card-driven solitaire (variant id ``enokian``).

:class:`EnokianState` is the rules layer (a :class:`engine.game.GameState`); ``kernels`` holds the numba card effects
used by the state and by :mod:`search.enokian`; ``simulate`` plays whole games for strategy comparison.
"""
from .state import (EnokianState, card_index, card_name, move_name, parse_square, square_name)

VARIANT_ID = "enokian"


def new_game(michizane: str = "1a") -> EnokianState:
    """The start position (``michizane='9i'``: Michizane in the south-west corner)."""
    return EnokianState.new(michizane=michizane)


__all__ = ["EnokianState", "VARIANT_ID", "card_index", "card_name", "move_name", "new_game", "parse_square",
           "square_name"]
