"""Rules layer: geometry, pieces, variants, positions and the numba move generator."""
from .geometry import SHOGI_GEOMETRY, BoardGeometry
from .move import Move, MoveParseError
from .pieces import PieceType, parse_betza
from .position import (BLACK, WHITE, EnteringKingRule, IllegalMoveError, Position, Repetition, SfenError)
from .variant import Variant
from .variants import VARIANT_IDS, available_variants, get_variant, is_game_state_variant, new_game

__all__ = [
    "BLACK", "WHITE", "BoardGeometry", "SHOGI_GEOMETRY", "EnteringKingRule", "IllegalMoveError", "Move",
    "MoveParseError", "PieceType", "Position", "Repetition", "SfenError", "Variant", "VARIANT_IDS",
    "available_variants", "get_variant", "is_game_state_variant", "new_game", "parse_betza",
]
