"""Standard shogi (本将棋): the variant record with every default."""
from ..variant import Variant

SHOGI = Variant()
