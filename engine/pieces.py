"""Piece definitions as data: a Betza subset compiled into leaps and slides.

Supported Betza subset (enough for shogi, chu/dai shogi step-and-slide pieces, and fairy pieces):

* atoms ``W`` (1,0), ``F`` (1,1), ``D`` (2,0), ``N`` (2,1), ``A`` (2,2), ``H`` (3,0), ``C`` (3,1), ``Z`` (3,2),
  ``G`` (3,3); shorthands ``K`` = WF, ``R`` = WW, ``B`` = FF, ``Q`` = RB;
* a doubled orthogonal/diagonal atom (``WW``, ``FF``) slides without limit; an atom followed by a number slides up
  to that many squares (``W2``, ``R2`` = two squares orthogonally);
* direction prefixes ``f b l r`` (forward, backward, left, right), ``v`` (= f+b), ``s`` (= l+r). On orthogonal atoms
  each letter adds directions. On diagonal and oblique atoms two letters form a pair that narrows
  (``fl`` = forward-left only, ``ff``/``fs`` = the narrow / wide forward knight leaps), single letters add.

Coordinates are from the owner's view: ``dx`` > 0 is to the owner's right, ``dy`` > 0 is forward. Moves that the
subset cannot express (lion, igui, hop-and-capture, breath, ...) are *special movers* written in code per variant.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

ATOMS: dict[str, tuple[int, int]] = {
    "W": (1, 0), "F": (1, 1), "D": (2, 0), "N": (2, 1), "A": (2, 2),
    "H": (3, 0), "C": (3, 1), "Z": (3, 2), "G": (3, 3),
}
SHORTHANDS = {"K": "WF", "R": "W", "B": "F", "Q": "WF"}
UNLIMITED = 255  # slide range meaning "to the edge of the board"

_PAIRS = {"fl", "fr", "bl", "br", "lf", "rf", "lb", "rb", "ff", "bb", "ll", "rr", "fs", "sf", "bs", "sb",
          "lv", "vl", "rv", "vr", "fh", "bh"}


def _symmetric_offsets(atom: tuple[int, int]) -> set[tuple[int, int]]:
    a, b = atom
    out = set()
    for x, y in ((a, b), (b, a)):
        for sx in (1, -1):
            for sy in (1, -1):
                out.add((sx * x, sy * y))
    return out


def _letter_ok(letter: str, dx: int, dy: int) -> bool:
    return {"f": dy > 0, "b": dy < 0, "l": dx < 0, "r": dx > 0,
            "v": dx == 0 or abs(dy) > abs(dx), "s": dy == 0 or abs(dx) > abs(dy)}[letter]


def _pair_ok(pair: str, dx: int, dy: int) -> bool:
    a, b = pair
    if a == b:  # ff, bb, ll, rr: the narrow (long-axis) leaps on that side
        if a in "fb":
            return _letter_ok(a, dx, dy) and abs(dy) > abs(dx)
        return _letter_ok(a, dx, dy) and abs(dx) > abs(dy)
    return _letter_ok(a, dx, dy) and _letter_ok(b, dx, dy)


def _filter(mods: str, offsets: set[tuple[int, int]], orthogonal: bool) -> set[tuple[int, int]]:
    if not mods:
        return offsets
    if orthogonal:  # every letter adds directions
        return {o for o in offsets if any(_letter_ok(m, *o) for m in mods)}
    groups: list[str] = []
    i = 0
    while i < len(mods):
        if i + 1 < len(mods) and mods[i:i + 2] in _PAIRS:
            groups.append(mods[i:i + 2])
            i += 2
        else:
            groups.append(mods[i])
            i += 1
    return {o for o in offsets
            if any(_pair_ok(g, *o) if len(g) == 2 else _letter_ok(g, *o) for g in groups)}


def parse_betza(betza: str) -> tuple[set[tuple[int, int]], dict[tuple[int, int], int]]:
    """Compile a Betza string into ``(leaps, slides)``.

    ``leaps`` is a set of ``(dx, dy)`` single jumps (blocking is irrelevant for one step). ``slides`` maps a unit
    direction ``(dx, dy)`` to its maximum range (``UNLIMITED`` for a full rider).

    >>> leaps, slides = parse_betza("FfW")   # silver general
    >>> sorted(leaps)
    [(-1, -1), (-1, 1), (0, 1), (1, -1), (1, 1)]
    >>> parse_betza("fR")[1]
    {(0, 1): 255}
    """
    text = _expand_shorthands(betza.replace(" ", ""))
    leaps: set[tuple[int, int]] = set()
    slides: dict[tuple[int, int], int] = {}
    pos = 0
    token = re.compile(r"([a-z]*)([A-Z])(\2)?(\d*)")
    while pos < len(text):
        m = token.match(text, pos)
        if not m or m.group(2) not in ATOMS:
            raise ValueError(f"unsupported Betza notation {betza!r} at {text[pos:]!r}")
        mods, atom, doubled, rng = m.groups()
        pos = m.end()
        orthogonal = atom in "WDH"
        offsets = _filter(mods, _symmetric_offsets(ATOMS[atom]), orthogonal)
        if doubled or rng:
            if atom not in "WF":
                raise ValueError(f"only orthogonal and diagonal riders are supported, not {atom}{atom} in {betza!r}")
            limit = int(rng) if rng else UNLIMITED
            for o in offsets:
                slides[o] = max(slides.get(o, 0), limit)
        else:
            leaps |= offsets
    # A one-square step is implied by a slide in the same direction; drop the duplicate leap.
    leaps -= {o for o in slides}
    return leaps, slides


def _expand_shorthands(text: str) -> str:
    """``fR`` -> ``fWW``, ``R2`` -> ``W2``, ``Q`` -> ``WWFF``, ``fK`` -> ``fWfF``; other tokens unchanged."""
    out = []
    for mods, letter, rng in re.findall(r"([a-z]*)([A-Z])(\d*)", text):
        if letter not in SHORTHANDS:
            out.append(mods + letter + rng)
            continue
        rider = letter in "RBQ"
        for atom in dict.fromkeys(SHORTHANDS[letter]):
            out.append(mods + atom + (rng if rng else (atom if rider else "")))
    expanded = "".join(out)
    if len(re.sub(r"[a-z\d]", "", expanded)) == 0 and text:
        raise ValueError(f"unsupported Betza notation {text!r}")
    return expanded


@dataclass(frozen=True)
class PieceType:
    """One kind of piece of a variant.

    ``letter`` is the SFEN letter (upper case; promoted kinds are written ``+`` plus the base letter).
    ``promotes_to`` names the promoted kind, ``royal`` marks a piece whose loss (capture or mate) ends the game,
    ``special`` names a move the Betza subset cannot express (added to the Betza moves by the kernels).
    ``token`` marks a kind that leaves the game when captured (the captor gets nothing; fantasista's tokens).
    ``like`` names the standard kind whose positional evaluation terms it takes (empty: its own letter's).
    """

    name: str
    letter: str
    betza: str
    kanji: str = ""
    promotes_to: str | None = None
    royal: bool = False
    value: int = 0
    special: str = ""  # a special mover in code: "pass-orthogonal", "pass-diagonal", "lion"
    token: bool = False
    like: str = ""
    leaps: frozenset = field(init=False, compare=False)
    slides: tuple = field(init=False, compare=False)

    def __post_init__(self) -> None:
        leaps, slides = parse_betza(self.betza)
        object.__setattr__(self, "leaps", frozenset(leaps))
        object.__setattr__(self, "slides", tuple(sorted(slides.items())))
