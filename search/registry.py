"""One registry from variant id to its searcher. The rules stay in :mod:`engine.variants` (``get_variant``,
``new_game``); this says which searcher thinks for each game and builds it.

Light: the searchers' modules (numba kernels) are imported when a searcher is first built, not here.
"""
from __future__ import annotations

import importlib
from typing import Any

from .interface import GameSearcher

#: The games played as an :class:`engine.Position`, searched by the shared alpha-beta search.
POSITION_SEARCHERS: dict[str, str] = {
    "shogi": "search.position:PositionSearcher",
    "daishogi2017": "search.position:PositionSearcher",
}
#: The games played as an :class:`engine.game.GameState` and their searchers.
GAME_SEARCHERS: dict[str, str] = {
    "fantasista": "search.games:FantasistaGameSearcher",
    "turncoat": "search.games:TurncoatGameSearcher",
    "mawarikudoi": "search.games:MawarikudoiGameSearcher",
    "enokian": "search.games:EnokianGameSearcher",
}


def is_game_state_variant(variant_id: str) -> bool:
    """Whether ``variant_id`` is played as an :class:`engine.game.GameState` with a searcher of
    :data:`GAME_SEARCHERS` (standard shogi and dai shogi are played as an :class:`engine.Position`)."""
    return variant_id in GAME_SEARCHERS


#: Variant id -> its searcher, as ``module:class``; every class is built as ``cls(seed, hash_mb, **settings)``.
SEARCHERS: dict[str, str] = {**POSITION_SEARCHERS, **GAME_SEARCHERS}


def searcher_class(variant_id: str) -> type:
    """The searcher class of ``variant_id`` (``ValueError`` for an id without one)."""
    try:
        module, name = SEARCHERS[variant_id].split(":")
    except KeyError:
        raise ValueError(f"no searcher for variant {variant_id!r}") from None
    return getattr(importlib.import_module(module), name)


def make_searcher(variant_id: str, seed: int = 0, hash_mb: int = 16, **settings: Any) -> GameSearcher:
    """A new searcher for ``variant_id``: ``seed`` (0: its secret choices from OS entropy), ``hash_mb`` (its table,
    where it has one sized by it) and the settings its class takes (the shogi family's ``searcher`` to drive and
    ``entering_king`` rule, fantasista's search settings, mawarikudoi's throw probabilities, enokian's
    ``michizane``)."""
    if variant_id in POSITION_SEARCHERS:
        settings["variant"] = variant_id
    return searcher_class(variant_id)(seed, hash_mb, **settings)
