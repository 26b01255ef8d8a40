"""The throw of generals: face probabilities, the exact distribution of a throw, and the faces notation.

A thrown piece lands in one of five ways. Faces are written with one letter each, and a group of pieces is written
in the canonical order ``x v s u d`` (highest score first):

======  =======================  =====  ==========================
letter  face                     score  default probability
======  =======================  =====  ==========================
``x``   standing upside down 逆さ  100    0.002
``v``   standing upright 縦      10     0.018
``s``   on its side 横           5      0.08
``u``   face up 表               1      0.45
``d``   face down 裏             0      0.45
======  =======================  =====  ==========================

A group scores the sum of its pieces, except that a group lying all face down scores 20. The gold throw is the
four golds; the gold-and-silver (*mixed*) throw adds the silvers that are not runners and scores
``min(gold score * silver score, 50)``. Distributions are computed exactly (multinomial sums over face counts),
never sampled.

>>> d = gold_distribution()
>>> round(float(d.sum()), 12), round(mean(d), 6), round(float(d[1]), 6)
(1.0, 5.740125, 0.164025)
>>> round(mean(mixed_distribution(4)), 4), round(float(mixed_distribution(4)[10:].sum()), 5)
(18.3323, 0.56027)
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

FACE_LETTERS = "xvsud"  # canonical order inside a group
FACE_SCORES = {"x": 100, "v": 10, "s": 5, "u": 1, "d": 0}
ALL_DOWN_SCORE = 20
MIXED_CAP = 50
MIXED_LOSS_THRESHOLD = 10  # a mixed throw of N >= 10 ends the right to mixed throws
N_GOLDS = 4
N_SILVERS = 4
GOLD_MAX = 4 * 100


@dataclass(frozen=True)
class ThrowProbabilities:
    """Probability of each way a thrown general lands (a rule option; the five must sum to 1)."""

    face_up: float = 0.45
    face_down: float = 0.45
    side: float = 0.08
    upright: float = 0.018
    upside_down: float = 0.002

    def __post_init__(self) -> None:
        values = self.as_tuple()
        if any(not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0) for v in values):
            raise ValueError(f"face probabilities must be finite and non-negative, got {values}")
        if abs(sum(values) - 1.0) > 1e-9:
            raise ValueError(f"face probabilities must sum to 1, got {sum(values)!r}")

    def as_tuple(self) -> tuple[float, float, float, float, float]:
        return (self.face_up, self.face_down, self.side, self.upright, self.upside_down)

    def of_letter(self, letter: str) -> float:
        return {"u": self.face_up, "d": self.face_down, "s": self.side, "v": self.upright,
                "x": self.upside_down}[letter]


DEFAULT_PROBABILITIES = ThrowProbabilities()


def group_score(faces: str) -> int:
    """Score of one group of thrown pieces (``"dddd"`` -> 20, ``"suud"`` -> 7)."""
    if faces and all(f == "d" for f in faces):
        return ALL_DOWN_SCORE
    return sum(FACE_SCORES[f] for f in faces)


def canonical_group(faces: str) -> str:
    """The faces of a group in canonical order (``"udsu"`` -> ``"suud"``)."""
    return "".join(sorted(faces, key=FACE_LETTERS.index))


@lru_cache(maxsize=64)
def group_outcomes(n: int, probs: ThrowProbabilities = DEFAULT_PROBABILITIES) -> tuple[tuple[str, float], ...]:
    """Every distinct result of throwing ``n`` pieces: (canonical faces, probability), by multinomial counts."""
    out = []
    for combo in itertools.combinations_with_replacement(FACE_LETTERS, n):
        counts = [combo.count(f) for f in FACE_LETTERS]
        ways = math.factorial(n)
        for c in counts:
            ways //= math.factorial(c)
        p = float(ways)
        for f, c in zip(FACE_LETTERS, counts):
            p *= probs.of_letter(f) ** c
        if p > 0.0:
            out.append(("".join(combo), p))
    return tuple(out)


@lru_cache(maxsize=64)
def _group_score_distribution(n: int, probs: ThrowProbabilities) -> tuple[tuple[int, float], ...]:
    dist: dict[int, float] = {}
    for faces, p in group_outcomes(n, probs):
        s = group_score(faces)
        dist[s] = dist.get(s, 0.0) + p
    return tuple(sorted(dist.items()))


@lru_cache(maxsize=64)
def _gold(probs: ThrowProbabilities) -> np.ndarray:
    d = np.zeros(GOLD_MAX + 1)
    for s, p in _group_score_distribution(N_GOLDS, probs):
        d[s] += p
    d.flags.writeable = False
    return d


@lru_cache(maxsize=64)
def _mixed(n_silvers: int, probs: ThrowProbabilities) -> np.ndarray:
    d = np.zeros(MIXED_CAP + 1)
    for g, pg in _group_score_distribution(N_GOLDS, probs):
        for s, ps in _group_score_distribution(n_silvers, probs):
            d[min(g * s, MIXED_CAP)] += pg * ps
    d.flags.writeable = False
    return d


def gold_distribution(probs: ThrowProbabilities = DEFAULT_PROBABILITIES) -> np.ndarray:
    """``d[N]`` = probability that the gold throw gives N steps (read-only array, length 401)."""
    return _gold(probs)


def mixed_distribution(n_silvers: int, probs: ThrowProbabilities = DEFAULT_PROBABILITIES) -> np.ndarray:
    """``d[N]`` for the gold-and-silver throw with ``n_silvers`` silvers (read-only array, length 51)."""
    if not 1 <= n_silvers <= N_SILVERS:
        raise ValueError(f"a mixed throw uses 1 to {N_SILVERS} silvers, not {n_silvers}")
    return _mixed(n_silvers, probs)


def mean(dist: np.ndarray) -> float:
    return float(np.dot(np.arange(len(dist)), dist))


# ------------------------------------------------------------------ events
def format_throw(gold: str, silver: str | None = None) -> str:
    """The event token of a throw: ``throw=<gold faces>`` or ``throw=<gold faces>/<silver faces>``."""
    text = canonical_group(gold)
    if silver is not None:
        text += "/" + canonical_group(silver)
    return "throw=" + text


def parse_throw(token: str) -> tuple[str, str | None]:
    """Split a ``throw=`` token into (gold faces, silver faces or None); faces are checked, order is free."""
    if not token.startswith("throw="):
        raise ValueError(f"expected a throw event 'throw=<faces>', got {token!r}")
    body = token[len("throw="):]
    parts = body.split("/")
    if len(parts) > 2 or not all(parts):
        raise ValueError(f"malformed throw {token!r}: write the gold faces, then '/' and the silver faces if mixed")
    for part in parts:
        bad = set(part) - set(FACE_LETTERS)
        if bad:
            raise ValueError(f"unknown face letter(s) {''.join(sorted(bad))!r} in {token!r} (faces are x v s u d)")
    return parts[0], (parts[1] if len(parts) == 2 else None)


def throw_value(gold: str, silver: str | None) -> int:
    """Steps N of a throw: the gold score, or the capped product for a mixed throw."""
    if silver is None:
        return group_score(gold)
    return min(group_score(gold) * group_score(silver), MIXED_CAP)


def throw_events(n_silvers: int | None, probs: ThrowProbabilities = DEFAULT_PROBABILITIES) -> list[tuple[str, float]]:
    """All event tokens of a throw with their probabilities (``n_silvers`` None = gold throw)."""
    golds = group_outcomes(N_GOLDS, probs)
    if n_silvers is None:
        return [(format_throw(g), p) for g, p in golds]
    silvers = group_outcomes(n_silvers, probs)
    return [(format_throw(g, s), pg * ps) for g, pg in golds for s, ps in silvers]


def sample_group(rng: np.random.Generator, n: int, probs: ThrowProbabilities = DEFAULT_PROBABILITIES) -> str:
    """Faces of ``n`` pieces drawn at random (for referees and simulations)."""
    p = np.array([probs.of_letter(f) for f in FACE_LETTERS])
    idx = rng.choice(len(FACE_LETTERS), size=n, p=p / p.sum())
    return canonical_group("".join(FACE_LETTERS[i] for i in idx))
