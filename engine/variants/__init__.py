"""Variant registry: each game is found by its id in ``engine/variants/<id>.py`` or ``engine/variants/<id>/``.

Two kinds of games live here:

* shogi-like games described by a :class:`~engine.variant.Variant` record and played through
  :class:`engine.Position` and the shared kernels (``shogi``, ``daishogi2017``): :func:`get_variant`;
* games whose state is richer than a shogi position (secret plans, magic, a dice race, a card deck), each a
  :class:`engine.game.GameState`: :func:`new_game`. Their modules are imported lazily.
"""
from __future__ import annotations

import importlib

from ..variant import Variant
from .daishogi2017 import DAISHOGI2017
from .shogi import SHOGI

#: The six games of the project.
VARIANT_IDS = ("shogi", "fantasista", "turncoat", "mawarikudoi", "daishogi2017", "enokian")
_REGISTRY: dict[str, Variant] = {"shogi": SHOGI, "daishogi2017": DAISHOGI2017}
#: GameState games: id -> module whose ``new_game(**options)`` starts one.
_GAMES: dict[str, str] = {
    "fantasista": "engine.variants.fantasista",
    "turncoat": "engine.variants.turncoat",
    "enokian": "engine.variants.enokian",
    "mawarikudoi": "engine.variants.mawarikudoi",
}


def available_variants() -> tuple[str, ...]:
    """Ids of the variants that can be played now."""
    return tuple(v for v in VARIANT_IDS if v in _REGISTRY or v in _GAMES)


def is_game_state_variant(variant_id: str) -> bool:
    """Whether ``variant_id`` is played as a :class:`engine.game.GameState` (see :func:`new_game`)."""
    return variant_id in _GAMES


def get_variant(variant_id: str) -> Variant:
    """The :class:`Variant` record of a shogi-like game; ``ValueError`` naming the problem otherwise."""
    if variant_id in _REGISTRY:
        return _REGISTRY[variant_id]
    if variant_id in _GAMES:
        raise ValueError(f"variant {variant_id!r} is not a shogi position game: start it with new_game({variant_id!r})")
    if variant_id in VARIANT_IDS:
        raise ValueError(f"variant {variant_id!r} is not implemented yet (available: {', '.join(available_variants())})")
    raise ValueError(f"unknown variant {variant_id!r} (known: {', '.join(VARIANT_IDS)})")


def game_module(variant_id: str):
    """The rules module of a GameState game (``new_game``, its state class); ``ValueError`` for any other id."""
    if variant_id not in _GAMES:
        get_variant(variant_id)  # raises the right error for unknown / not implemented ids
        raise ValueError(f"{variant_id!r} is not a GameState game: it is played through engine.Position")
    return importlib.import_module(_GAMES[variant_id])


def new_game(variant_id: str, **options):
    """A fresh :class:`engine.game.GameState` of a GameState game, with its rule options."""
    return game_module(variant_id).new_game(**options)
