"""Turncoat shogi (寝返り将棋): standard shogi plus one secret plan per side and a once-per-game defection.

Rules as implemented, notation and readings: ``docs/turncoat.md``. This is an :class:`engine.game.GameState` game
(:class:`TurncoatGame`) wrapped around a standard-shogi :class:`engine.Position`; the kernels stay plain shogi.

>>> g = new_game()
>>> g.side_to_move(), len(g.legal_actions())
(0, 332)
"""
from .plans import all_plans, package_of, parse_plan, plan_text
from .state import DECLARE_FROM_MOVE, HIDDEN, VARIANT_ID, TurncoatGame, new_game

__all__ = ["VARIANT_ID", "TurncoatGame", "new_game", "all_plans", "package_of", "parse_plan", "plan_text", "HIDDEN",
           "DECLARE_FROM_MOVE"]
