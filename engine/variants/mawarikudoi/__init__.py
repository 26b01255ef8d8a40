"""Mawarikudoi shogi (まわりくどい将棋): a two-player dice race with shogi-moving runners.

Rules as implemented, notation and readings: ``docs/mawarikudoi.md``. This is a :class:`engine.game.GameState`
game, not a :class:`engine.Variant` (there is no shogi position to hold).

>>> g = new_game()
>>> g.sfen()
'p8/9/9/9/9/9/9/9/8P b - 1 P1i:n:-:m/p9a:s:-:m/g'
>>> g.node_kind().value, len(g.chance_events())
('chance', 70)
>>> g.apply("throw=uddd"); g.legal_actions()
['1i1h', 'turn:e', 'turn:s', 'turn:w']
"""
from .state import VARIANT_ID, MawarikudoiState, new_game
from .throws import DEFAULT_PROBABILITIES, ThrowProbabilities

__all__ = ["VARIANT_ID", "MawarikudoiState", "new_game", "ThrowProbabilities", "DEFAULT_PROBABILITIES"]
