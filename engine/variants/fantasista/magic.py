"""Fantasista's magic: the fairies' tables, the d20 roll, when a roll comes, and what each result gives.

One definition serves the game layer (:mod:`.state` applies a roll to a :class:`.board.Board`) and the kernels
(:mod:`.variant` turns :func:`roll_rows` into the chance arrays of :class:`.variant.FxTables`). The readings are in
``docs/fantasista.md``.
"""
from __future__ import annotations

from typing import NamedTuple

from . import pieces as PC

FAIRIES = ("hiko", "ayumi", "yokaku", "ginsara")
FAIRY_LETTERS = "hayg"
#: The rows of a fairy's table: "1", "2", "3", "4-8" (and "nothing", 19-20).
TABLE_ROWS = ("1", "2", "3", "4-8")
#: **[reading, 2026-12-02]** What a side's rolls 9-18 give (its *reserved* result), chosen per side before the game:
#: ``4-8`` (nothing added: as its own 4-8, the default), ``<fairy>:<row>`` (any result of any of the four tables,
#: e.g. ``ginsara:1`` silver curtain for a hiko player) or ``nothing``; ``1``, ``2``, ``3`` are short for the own
#: fairy's row (the former single option).
RESERVED_CHOICES = ("4-8", "1", "2", "3", "nothing")
RESERVED_RESULTS = ("4-8", "nothing") + tuple(f"{f}:{r}" for f in FAIRIES for r in TABLE_ROWS)
#: A side's rights (bd.rights indices; the emblem is the fourth, held apart as a flag by the board)
RIGHT_AWAKEN, RIGHT_CURTAIN, RIGHT_WAVE, RIGHT_EMBLEM = range(4)
DIE_FACES = 20
#: magic targets: none, the invincible mark (ayumi 3), the carrier mark (yokaku 3)
TARGET_NONE, TARGET_INVINCIBLE, TARGET_CARRIER = "", "i", "c"


class Effect(NamedTuple):
    """What one result gives the side that rolled it: pieces to its token hand (board kinds of :mod:`.pieces`),
    uses of rights (``RIGHT_*``; the emblem is held once), or a magic target to choose."""
    tokens: tuple[tuple[int, int], ...] = ()  # (kind, count)
    rights: tuple[int, ...] = ()
    target: str = TARGET_NONE


#: (fairy, row) -> what it gives (seed rule 5's tables)
EFFECTS: dict[tuple[str, str], Effect] = {
    ("hiko", "1"): Effect(tokens=((PC.D, 1),)),
    ("hiko", "2"): Effect(tokens=((PC.O, 1),)),
    ("hiko", "3"): Effect(rights=(RIGHT_AWAKEN,)),
    ("hiko", "4-8"): Effect(tokens=((PC.R, 1),)),
    ("ayumi", "1"): Effect(rights=(RIGHT_EMBLEM,)),
    ("ayumi", "2"): Effect(tokens=((PC.Y, 2),)),
    ("ayumi", "3"): Effect(target=TARGET_INVINCIBLE),
    ("ayumi", "4-8"): Effect(tokens=((PC.P, 2), (PC.G, 1))),
    ("yokaku", "1"): Effect(tokens=((PC.T, 1),)),
    ("yokaku", "2"): Effect(tokens=((PC.H, 1),)),
    ("yokaku", "3"): Effect(target=TARGET_CARRIER),
    ("yokaku", "4-8"): Effect(tokens=((PC.B, 1),)),
    ("ginsara", "1"): Effect(rights=(RIGHT_CURTAIN,)),
    ("ginsara", "2"): Effect(tokens=((PC.W, 1),)),
    ("ginsara", "3"): Effect(rights=(RIGHT_WAVE,)),
    ("ginsara", "4-8"): Effect(tokens=((PC.S, 2),)),
}
NOTHING = Effect()


def roll_effect(n: int, reserved: str = "4-8") -> str:
    """The table row a d20 roll selects: "1", "2", "3", "4-8" or "nothing"; 9-18 give the ``reserved`` result
    (which may name another fairy's row, ``ginsara:1``: see :func:`magic_of`)."""
    if not 1 <= n <= DIE_FACES:
        raise ValueError(f"a d20 roll is 1..20, not {n}")
    if n <= 3:
        return str(n)
    if n <= 8:
        return "4-8"
    if n <= 18:
        return reserved
    return "nothing"


def normalize_reserved(value: str, fairy: str | None) -> str:
    """A side's reserved result in its one spelling: ``4-8``, ``nothing`` or ``<fairy>:<row>`` (the own fairy's
    ``4-8`` is ``4-8``; ``1``-``3`` name the own fairy's rows). ``ValueError`` for anything else."""
    v = str(value).strip().lower()
    if v in ("1", "2", "3") and fairy is not None:
        v = f"{fairy}:{v}"
    if v == f"{fairy}:4-8":
        v = "4-8"
    if v not in RESERVED_RESULTS:
        raise ValueError(f"a reserved result is one of 4-8, nothing, 1, 2, 3 or <fairy>:<1|2|3|4-8> with a fairy of "
                         f"{', '.join(FAIRIES)}; not {value!r}")
    return v


def magic_of(n: int, fairy: str, reserved: str = "4-8") -> tuple[str, str]:
    """(table, row) of what roll ``n`` gives a side of ``fairy`` with that ``reserved`` result: the row of the own
    table, or for 9-18 the reserved result's table and row; ("", "nothing") for nothing."""
    eff = roll_effect(n, normalize_reserved(reserved, fairy))
    if eff == "nothing":
        return "", "nothing"
    if ":" in eff:
        table, row = eff.split(":")
        return table, row
    return fairy, eff


def effect_of(n: int, fairy: str, reserved: str = "4-8") -> Effect:
    """What roll ``n`` gives a side of ``fairy`` with that ``reserved`` result."""
    table, row = magic_of(n, fairy, reserved)
    return EFFECTS.get((table, row), NOTHING)


#: Magic comes every this many plies: after plies 15k and 15k + 1 (k >= 1)
MAGIC_PERIOD = 15


def magic_after(ply: int) -> bool:
    """**[reading]** The side that has just played ply ``ply`` (counted from 1) receives a magic after 15k, 15k+1."""
    return ply >= MAGIC_PERIOD and ply % MAGIC_PERIOD in (0, 1)


def table_id(fairy: str, reserved: str) -> int:
    """The number of a side's magic table (its fairy and reserved result): the index of the kernels' chance rows."""
    return FAIRIES.index(fairy) * len(RESERVED_RESULTS) + RESERVED_RESULTS.index(normalize_reserved(reserved, fairy))


N_TABLES = len(FAIRIES) * len(RESERVED_RESULTS)


def roll_rows(fairy: str, reserved: str = "4-8") -> list[tuple[int, Effect]]:
    """The distinct results of one roll for a side of ``fairy`` and ``reserved``: (faces of the 20, effect), the
    faces that give the same effect merged, the most probable first (ties: the lower face first)."""
    rows: dict[Effect, int] = {}
    first: dict[Effect, int] = {}
    for n in range(1, DIE_FACES + 1):
        e = effect_of(n, fairy, reserved)
        rows[e] = rows.get(e, 0) + 1
        first.setdefault(e, n)
    return sorted(((w, e) for e, w in rows.items()), key=lambda we: (-we[0], first[we[1]]))
