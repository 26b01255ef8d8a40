"""Moves: the integer encoding shared with the kernels, and USI notation.

A :class:`Move` wraps the ``int32`` code used by the kernels (layout in :mod:`engine.kernels.movegen`) together
with the board geometry needed to name its squares. USI strings: ``7g7f``, ``8h2b+``, ``P*5e``; files 10-13 take
two digits (``13m12l``). A two-step move names both legs, joined by a comma, the first leg ending on the middle
square: ``7f6e,6e5d`` (lion double move or a capture in passing), ``7f6e,6e7f`` (igui, or a lion's pass when 6e is
empty).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .geometry import SHOGI_GEOMETRY, BoardGeometry
from .kernels.movegen import DROP, HAS_MID, PROMOTE

_BOARD_MOVE = re.compile(r"^(\d{1,2}[a-z])(\d{1,2}[a-z])(\+?)$")
_TWO_LEG_MOVE = re.compile(r"^(\d{1,2}[a-z])(\d{1,2}[a-z]),(\d{1,2}[a-z])(\d{1,2}[a-z])(\+?)$")
_DROP_MOVE = re.compile(r"^([A-Z])\*(\d{1,2}[a-z])$")


class MoveParseError(ValueError):
    """A move string that is not valid USI notation for the board."""


@dataclass(frozen=True)
class Move:
    """An encoded move. Compare and hash by ``code`` (and geometry)."""

    code: int
    geometry: BoardGeometry = SHOGI_GEOMETRY

    # ------------------------------------------------------------ fields
    @property
    def to_sq(self) -> int:
        return self.code & 0xFF

    @property
    def from_sq(self) -> int | None:
        """Origin square, or ``None`` for a drop."""
        return None if self.is_drop else (self.code >> 8) & 0xFF

    @property
    def drop_type(self) -> int | None:
        """Dropped piece type number, or ``None`` for a board move."""
        return (self.code >> 8) & 0xFF if self.is_drop else None

    @property
    def is_drop(self) -> bool:
        return bool(self.code & DROP)

    @property
    def is_promotion(self) -> bool:
        return bool(self.code & PROMOTE)

    @property
    def middle_sq(self) -> int | None:
        return (self.code >> 18) & 0xFF if self.code & HAS_MID else None

    @property
    def special(self) -> int:
        return (self.code >> 27) & 0xF

    # ------------------------------------------------------------- build
    @classmethod
    def board_move(cls, from_sq: int, to_sq: int, promote: bool = False,
                   geometry: BoardGeometry = SHOGI_GEOMETRY) -> "Move":
        return cls(to_sq | (from_sq << 8) | (PROMOTE if promote else 0), geometry)

    @classmethod
    def two_step(cls, from_sq: int, mid_sq: int, to_sq: int, promote: bool = False,
                 geometry: BoardGeometry = SHOGI_GEOMETRY) -> "Move":
        return cls(to_sq | (from_sq << 8) | (mid_sq << 18) | HAS_MID | (PROMOTE if promote else 0), geometry)

    @classmethod
    def drop(cls, ptype: int, to_sq: int, geometry: BoardGeometry = SHOGI_GEOMETRY) -> "Move":
        return cls(to_sq | (ptype << 8) | DROP, geometry)

    @classmethod
    def from_usi(cls, text: str, geometry: BoardGeometry = SHOGI_GEOMETRY,
                 drop_letters: str = "PLNSGBR") -> "Move":
        """Parse USI notation. Drop letters map to piece types by their position in ``drop_letters`` (+1).

        >>> Move.from_usi("7g7f").usi()
        '7g7f'
        >>> Move.from_usi("P*5e").drop_type
        1
        """
        if not isinstance(text, str):
            raise MoveParseError(f"a move must be a string, not {type(text).__name__}")
        m = _BOARD_MOVE.match(text)
        try:
            if m:
                return cls.board_move(geometry.parse_square(m.group(1)), geometry.parse_square(m.group(2)),
                                      bool(m.group(3)), geometry)
            m = _TWO_LEG_MOVE.match(text)
            if m:
                if m.group(2) != m.group(3):
                    raise MoveParseError(f"{text!r}: the second leg must start where the first ends")
                return cls.two_step(geometry.parse_square(m.group(1)), geometry.parse_square(m.group(2)),
                                    geometry.parse_square(m.group(4)), bool(m.group(5)), geometry)
            m = _DROP_MOVE.match(text)
            if m:
                if m.group(1) not in drop_letters:
                    raise MoveParseError(f"{text!r}: {m.group(1)!r} is not a piece that can be dropped")
                return cls.drop(drop_letters.index(m.group(1)) + 1, geometry.parse_square(m.group(2)), geometry)
        except MoveParseError:
            raise
        except ValueError as exc:
            raise MoveParseError(f"{text!r}: {exc}") from None
        raise MoveParseError(f"unparseable move {text!r} (expected e.g. 7g7f, 8h2b+ or P*5e)")

    def usi(self, drop_letters: str = "PLNSGBR") -> str:
        g = self.geometry
        if self.is_drop:
            return f"{drop_letters[self.drop_type - 1]}*{g.square_name(self.to_sq)}"
        promo = "+" if self.is_promotion else ""
        if self.middle_sq is not None:
            mid = g.square_name(self.middle_sq)
            return f"{g.square_name(self.from_sq)}{mid},{mid}{g.square_name(self.to_sq)}{promo}"
        return f"{g.square_name(self.from_sq)}{g.square_name(self.to_sq)}{promo}"

    def __str__(self) -> str:
        return self.usi()
