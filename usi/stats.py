"""Match statistics: W/D/L, Elo with a 95% interval, LOS, draw ratio, Wilson intervals, and a pentanomial SPRT.

All Elo figures are logistic Elo: a score ``s`` means ``-400 * log10(1/s - 1)``. The SPRT follows the
generalised SPRT used by fishtest: game pairs (the same opening with colours swapped) are the sampling unit, their
score (0, 0.5, 1, 1.5 or 2 points) is a pentanomial variable, and the log-likelihood ratio compares the maximum
likelihood distributions of the observed pair results constrained to the mean scores of ``elo0`` and ``elo1``.

>>> round(elo_from_score(0.75), 2)
190.85
>>> round(los(10, 0), 5)
0.99922
>>> [round(b, 3) for b in sprt_bounds(0.05, 0.05)]
[-2.944, 2.944]
"""
from __future__ import annotations

import dataclasses
import math
from typing import Iterable, Optional, Sequence

Z95 = 1.959963984540054  # two-sided 95% quantile of the standard normal


def score_from_elo(elo: float) -> float:
    """Expected score for an Elo difference."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def elo_from_score(score: float) -> float:
    """Elo difference for an expected score (±inf at 0 and 1)."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def los(wins: int, losses: int) -> float:
    """Likelihood of superiority: P(true strength of the first > second) from wins and losses (draws ignored)."""
    if wins + losses == 0:
        return 0.5
    return 0.5 * (1.0 + math.erf((wins - losses) / math.sqrt(2.0 * (wins + losses))))


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``k / n`` (95% by default); ``(0, 1)`` when ``n == 0``."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, centre - half), min(1.0, centre + half)


def elo_interval(wins: int, draws: int, losses: int, z: float = Z95) -> tuple[float, float, float]:
    """(elo, lower, upper) from the trinomial model of independent games."""
    n = wins + draws + losses
    if n == 0:
        return 0.0, -math.inf, math.inf
    s = (wins + 0.5 * draws) / n
    var = (wins * (1 - s) ** 2 + draws * (0.5 - s) ** 2 + losses * s ** 2) / n
    se = math.sqrt(var / n)
    return elo_from_score(s), elo_from_score(s - z * se), elo_from_score(s + z * se)


def sprt_bounds(alpha: float, beta: float) -> tuple[float, float]:
    """(lower, upper) LLR bounds: accept H0 below ``log(beta/(1-alpha))``, H1 above ``log((1-beta)/alpha)``."""
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


PENTA_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)  # per-game score of a pair worth 0, 1/2, 1, 3/2, 2 points


def _mle_constrained(probs: Sequence[float], scores: Sequence[float], mean: float) -> list[float]:
    """The distribution ``q`` maximising ``sum p_i log q_i`` subject to ``sum q_i a_i = mean``.

    Lagrange: ``q_i = p_i / (1 + lam (a_i - mean))``, ``lam`` the root of ``sum p_i (a_i - mean) / (1 + lam
    (a_i - mean)) = 0`` on the interval where every denominator stays positive; found by bisection (the function is
    decreasing in ``lam``).
    """
    d = [a - mean for a in scores]
    support = [x for p, x in zip(probs, d) if p > 0]
    hi_d, lo_d = max(support), min(support)
    if hi_d <= 0 or lo_d >= 0:  # mean outside the support's range: degenerate, return the empirical law
        return list(probs)
    lo, hi = -1.0 / hi_d, -1.0 / lo_d
    eps = 1e-12 * (hi - lo)
    lo, hi = lo + eps, hi - eps

    def f(lam: float) -> float:
        return sum(p * x / (1.0 + lam * x) for p, x in zip(probs, d) if p > 0)

    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
    lam = 0.5 * (lo + hi)
    return [p / (1.0 + lam * x) for p, x in zip(probs, d)]


def regularize(counts: Sequence[int], eps: float = 1e-3) -> list[float]:
    """Counts -> probabilities, empty cells given ``eps`` so that the LLR stays finite (as fishtest does)."""
    filled = [c if c > 0 else eps for c in counts]
    total = sum(filled)
    return [c / total for c in filled]


def llr_pentanomial(penta: Sequence[int], elo0: float, elo1: float) -> float:
    """Log-likelihood ratio of H1 (``elo1``) against H0 (``elo0``) for pentanomial pair counts
    ``[0, 1/2, 1, 3/2, 2 points]``."""
    n = sum(penta)
    if n == 0:
        return 0.0
    p = regularize(penta)
    s0, s1 = score_from_elo(elo0), score_from_elo(elo1)
    q0 = _mle_constrained(p, PENTA_SCORES, s0)
    q1 = _mle_constrained(p, PENTA_SCORES, s1)
    return n * sum(pi * math.log(b / a) for pi, a, b in zip(p, q0, q1) if pi > 0)


@dataclasses.dataclass
class SprtResult:
    llr: float
    lower: float
    upper: float

    @property
    def decision(self) -> Optional[str]:
        """``"H1"`` (the first engine is at least ``elo1`` better), ``"H0"``, or ``None`` (continue)."""
        return "H1" if self.llr >= self.upper else "H0" if self.llr <= self.lower else None


def sprt(penta: Sequence[int], elo0: float = 0.0, elo1: float = 5.0, alpha: float = 0.05,
         beta: float = 0.05) -> SprtResult:
    lower, upper = sprt_bounds(alpha, beta)
    return SprtResult(llr_pentanomial(penta, elo0, elo1), lower, upper)


def pentanomial(scores: Sequence[float]) -> list[int]:
    """Pair counts ``[0, 1/2, 1, 3/2, 2 points]`` from per-game scores of the first engine, games ``2j`` and
    ``2j + 1`` forming pair ``j`` (an odd last game is left out)."""
    penta = [0] * 5
    for j in range(0, len(scores) - 1, 2):
        penta[int(round(2 * (scores[j] + scores[j + 1])))] += 1
    return penta


def pentanomial_score(penta: Sequence[int], z: float = Z95) -> tuple[float, float, float]:
    """(score, lower, upper): the mean per-game score and its normal interval with the pair as the sampling unit.

    When the two games of a pair are correlated (the same opening and rolls with colours swapped: two engines
    that play alike produce two copies of one game, one win each), the pair's spread is smaller than two
    independent games' and the interval narrower than the trinomial one; it is never assumed, only measured.
    """
    n = sum(penta)
    if n == 0:
        return 0.5, -math.inf, math.inf
    mean = sum(c * a for c, a in zip(penta, PENTA_SCORES)) / n
    var = sum(c * (a - mean) ** 2 for c, a in zip(penta, PENTA_SCORES)) / n
    half = z * math.sqrt(var / n)
    return mean, mean - half, mean + half


def pentanomial_elo(penta: Sequence[int], z: float = Z95) -> tuple[float, float, float]:
    """(elo, lower, upper) from pair results (accounts for the correlation within a pair)."""
    if sum(penta) == 0:
        return 0.0, -math.inf, math.inf
    return tuple(elo_from_score(x) for x in pentanomial_score(penta, z))  # type: ignore[return-value]


@dataclasses.dataclass(frozen=True)
class Prior:
    """Counts of an earlier part of the same test (same engines and settings), from the first engine's view: a
    stopped SPRT whose run directory is gone is continued from its ledger line's ``W/D/L`` and pentanomial."""

    wins: int
    draws: int
    losses: int
    penta: tuple[int, int, int, int, int]

    @classmethod
    def parse(cls, wdl: str, penta: str) -> "Prior":
        """``"291/1/194"`` and ``"[36,1,121,0,85]"`` (brackets and spaces optional), as a ledger line writes them.

        >>> Prior.parse("291/1/194", "[36,1,121,0,85]")
        Prior(wins=291, draws=1, losses=194, penta=(36, 1, 121, 0, 85))
        """
        malformed = ValueError(f"prior {wdl!r} {penta!r}: give W/D/L and five pair counts (none negative), e.g. "
                               "291/1/194 [36,1,121,0,85]")
        try:
            counts = [int(x) for x in wdl.split("/")]
            pairs = [int(x) for x in penta.strip().strip("[]").split(",")]
        except ValueError:
            raise malformed from None
        if len(counts) != 3 or len(pairs) != 5 or min(counts + pairs) < 0:
            raise malformed
        if 2 * sum(pairs) > sum(counts):
            raise ValueError(f"prior {wdl!r} {penta!r}: {sum(pairs)} pairs need {2 * sum(pairs)} games, the W/D/L "
                             f"counts only {sum(counts)}")
        return cls(counts[0], counts[1], counts[2], tuple(pairs))  # type: ignore[arg-type]


@dataclasses.dataclass
class MatchStats:
    """Running statistics of ``first`` against ``second`` from game records (:mod:`usi.records` dicts).

    Games of other pairings are ignored. Scores are from ``first``'s point of view.
    """

    first: str
    second: str
    elo0: float = 0.0
    elo1: float = 5.0
    alpha: float = 0.05
    beta: float = 0.05
    wins: int = 0
    draws: int = 0
    losses: int = 0
    by_colour: dict = dataclasses.field(default_factory=lambda: {"sente": [0, 0, 0], "gote": [0, 0, 0]})
    penta: list = dataclasses.field(default_factory=lambda: [0] * 5)
    reasons: dict = dataclasses.field(default_factory=dict)
    prior: Optional[Prior] = None
    _pairs: dict = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.prior is not None:  # the earlier part counts in W/D/L, the pentanomial and so the SPRT
            self.wins += self.prior.wins
            self.draws += self.prior.draws
            self.losses += self.prior.losses
            self.penta = [a + b for a, b in zip(self.penta, self.prior.penta)]

    def add(self, record: dict) -> bool:
        """Count one finished game; returns False when it is not a game between the two engines."""
        names = (record["sente"], record["gote"])
        if set(names) != {self.first, self.second}:
            return False
        colour = "sente" if record["sente"] == self.first else "gote"
        if record["result"] == "draw":
            points, idx = 0.5, 1
        else:
            points, idx = (1.0, 0) if record["result"] == colour else (0.0, 2)
        self.wins += idx == 0
        self.draws += idx == 1
        self.losses += idx == 2
        self.by_colour[colour][idx] += 1
        self.reasons[record["reason"]] = self.reasons.get(record["reason"], 0) + 1
        pair = record.get("pair")
        if pair is not None:
            got = self._pairs.setdefault(pair, [])
            got.append(points)
            if len(got) == 2:
                self.penta[int(round(2 * sum(got)))] += 1
        return True

    def extend(self, records: Iterable[dict]) -> "MatchStats":
        for r in records:
            self.add(r)
        return self

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        return (self.wins + 0.5 * self.draws) / self.games if self.games else 0.5

    @property
    def draw_ratio(self) -> float:
        return self.draws / self.games if self.games else 0.0

    def elo(self) -> tuple[float, float, float]:
        return elo_interval(self.wins, self.draws, self.losses)

    def los(self) -> float:
        return los(self.wins, self.losses)

    def sprt(self) -> SprtResult:
        return sprt(self.penta, self.elo0, self.elo1, self.alpha, self.beta)

    def summary(self) -> dict:
        elo, lo, hi = self.elo()
        pelo, plo, phi = pentanomial_elo(self.penta)
        s = self.sprt()
        return {"first": self.first, "second": self.second, "games": self.games, "wins": self.wins,
                "draws": self.draws, "losses": self.losses, "score": self.score,
                "by_colour": {k: dict(zip(("wins", "draws", "losses"), v)) for k, v in self.by_colour.items()},
                "elo": elo, "elo_lower": lo, "elo_upper": hi, "los": self.los(), "draw_ratio": self.draw_ratio,
                "pentanomial": list(self.penta), "pentanomial_elo": [pelo, plo, phi],
                "sprt": {"elo0": self.elo0, "elo1": self.elo1, "alpha": self.alpha, "beta": self.beta,
                         "llr": s.llr, "lower": s.lower, "upper": s.upper, "decision": s.decision},
                "reasons": dict(self.reasons),
                "prior": dataclasses.asdict(self.prior) if self.prior else None}

    def progress_line(self, total: Optional[int] = None, width: int = 20) -> str:
        """One line for a live display: bar, games, W/D/L, score, Elo ± half-interval, LOS, LLR. The bar and the
        game count are this run's (``total`` is its schedule); a prior's games are named beside them, and counted
        in W/D/L and the figures."""
        earlier = self.prior.wins + self.prior.draws + self.prior.losses if self.prior else 0
        done = self.games - earlier
        if total:
            filled = int(width * min(done, total) / total)
            bar = "[" + "#" * filled + "." * (width - filled) + f"] {done}/{total} "
        else:
            bar = f"{done} games "
        if earlier:
            bar += f"(+{earlier} earlier) "
        elo, lo, hi = self.elo()
        half = (hi - lo) / 2 if math.isfinite(hi - lo) else math.inf
        s = self.sprt()
        return (f"{bar}{self.first} vs {self.second}: +{self.wins} ={self.draws} -{self.losses} "
                f"score {100 * self.score:.1f}% Elo {_fmt(elo)} ±{_fmt(half, sign=False)} "
                f"LOS {100 * self.los():.1f}% draws {100 * self.draw_ratio:.0f}% "
                f"LLR {s.llr:.2f} [{s.lower:.2f}, {s.upper:.2f}]")

    def report(self) -> str:
        """A multi-line human summary."""
        elo, lo, hi = self.elo()
        s = self.sprt()
        sente, gote = self.by_colour["sente"], self.by_colour["gote"]
        lines = [f"{self.first} vs {self.second}: {self.games} games, +{self.wins} ={self.draws} -{self.losses}"
                 f" (score {100 * self.score:.1f}%)",
                 f"  as sente +{sente[0]} ={sente[1]} -{sente[2]}, as gote +{gote[0]} ={gote[1]} -{gote[2]}",
                 f"  Elo {_fmt(elo)} [{_fmt(lo)}, {_fmt(hi)}] (95%), LOS {100 * self.los():.1f}%, "
                 f"draw ratio {100 * self.draw_ratio:.1f}%",
                 f"  pentanomial {self.penta}, SPRT({self.elo0:g}, {self.elo1:g}) LLR {s.llr:.3f} "
                 f"[{s.lower:.3f}, {s.upper:.3f}]" + (f" -> {s.decision} accepted" if s.decision else ""),
                 "  endings: " + ", ".join(f"{k} {v}" for k, v in sorted(self.reasons.items()))]
        if self.prior:
            p = self.prior
            lines.insert(1, f"  including an earlier part: +{p.wins} ={p.draws} -{p.losses}, pentanomial "
                            f"{list(p.penta)} (its colours and endings are not known here)")
        return "\n".join(lines)


def _fmt(x: float, sign: bool = True) -> str:
    if math.isinf(x):
        return ("+" if x > 0 else "-") + "inf" if sign else "inf"
    return f"{x:+.1f}" if sign else f"{x:.1f}"
