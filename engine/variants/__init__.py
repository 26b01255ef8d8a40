"""Variant registry: each game is found by its id in ``engine/variants/<id>.py``."""
from __future__ import annotations

from ..variant import Variant
from .daishogi2017 import DAISHOGI2017
from .shogi import SHOGI

#: The six games of the project. Only those with a rules module are playable so far.
VARIANT_IDS = ("shogi", "fantasista", "turncoat", "mawarikudoi", "daishogi2017", "enokian")
_REGISTRY: dict[str, Variant] = {"shogi": SHOGI, "daishogi2017": DAISHOGI2017}


def available_variants() -> tuple[str, ...]:
    """Ids of the variants that can be played now."""
    return tuple(v for v in VARIANT_IDS if v in _REGISTRY)


def get_variant(variant_id: str) -> Variant:
    """The :class:`Variant` for an id; raises ``ValueError`` for an unknown or not yet implemented one."""
    if variant_id in _REGISTRY:
        return _REGISTRY[variant_id]
    if variant_id in VARIANT_IDS:
        raise ValueError(f"variant {variant_id!r} is not implemented yet (available: {', '.join(available_variants())})")
    raise ValueError(f"unknown variant {variant_id!r} (known: {', '.join(VARIANT_IDS)})")
