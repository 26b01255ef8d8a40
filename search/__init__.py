"""The search layer: one interface for every game's searcher and the searchers themselves.

- :mod:`search.interface`: :class:`Limits` (ms), :class:`Info`, :class:`Result`, the :class:`GameSearcher` protocol;
- :mod:`search.timeman`: the one time manager (a USI clock to soft and hard limits);
- :mod:`search.registry`: variant id -> its searcher;
- :mod:`search.alphabeta`: the shared alpha-beta search (:class:`Searcher`) of the shogi family, with its kernels
  (:mod:`search.kernels`, ``movepick``, ``see``, ``mate``, ``smp``, ``params``);
- :mod:`search.games`: the GameState games' searchers, over :mod:`search.turncoat` and
  :mod:`search.fantasista_shared` (the shared search), :mod:`search.mawarikudoi` and :mod:`search.enokian`.

Importing the package is light (no numpy, no numba): the USI loop reads the interface before it answers ``usiok``.
The names of :mod:`search.alphabeta` (``Searcher``, ``MATE``, ``FEATURES``, ...) are loaded on first use.
"""
from __future__ import annotations

import importlib
from typing import Any

from .interface import GameSearcher, Info, Limits, Result, pv_tokens
from .registry import is_game_state_variant, make_searcher

__all__ = ["GameSearcher", "Info", "Limits", "Result", "is_game_state_variant", "make_searcher", "pv_tokens"]


def __getattr__(name: str) -> Any:
    """The shared searcher's names (``from search import Searcher``), imported with numba on first use."""
    if name.startswith("__"):
        raise AttributeError(name)
    return getattr(importlib.import_module("search.alphabeta"), name)
