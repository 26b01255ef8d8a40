"""Elo, LOS and SPRT maths against known values and an independent computation."""
import math

import pytest
try:
    from scipy.optimize import minimize
except ImportError:  # scipy is not a test dependency: fall back to the convex dual, minimised by ternary search
    minimize = None

from usi import stats as S


def test_elo_known_values():
    assert S.elo_from_score(0.75) == pytest.approx(190.848501, abs=1e-5)  # 400*log10(3)
    assert S.elo_from_score(0.5) == 0
    assert S.score_from_elo(S.elo_from_score(0.3)) == pytest.approx(0.3)
    assert S.elo_from_score(1.0) == math.inf and S.elo_from_score(0.0) == -math.inf


def test_wilson_interval():
    lo, hi = S.wilson(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-4) and hi == pytest.approx(0.5962, abs=1e-4)
    assert S.wilson(0, 10)[0] == pytest.approx(0.0, abs=1e-12) and S.wilson(10, 10)[1] == pytest.approx(1.0)
    assert S.wilson(0, 0) == (0.0, 1.0)


def test_los_known_values():
    assert S.los(10, 0) == pytest.approx(0.5 * (1 + math.erf(10 / math.sqrt(20))))
    assert S.los(10, 0) == pytest.approx(0.999217, abs=1e-6)
    assert S.los(5, 5) == 0.5 and S.los(0, 0) == 0.5


def test_elo_interval_trinomial():
    # 60 wins, 20 draws, 20 losses: score 0.7, per-game variance (60*.09 + 20*.04 + 20*.49)/100 = 0.16
    elo, lo, hi = S.elo_interval(60, 20, 20)
    se = math.sqrt(0.16 / 100)
    assert elo == pytest.approx(S.elo_from_score(0.7))
    assert lo == pytest.approx(S.elo_from_score(0.7 - 1.959964 * se), abs=1e-3)
    assert hi == pytest.approx(S.elo_from_score(0.7 + 1.959964 * se), abs=1e-3)


def test_sprt_bounds():
    lower, upper = S.sprt_bounds(0.05, 0.05)
    assert upper == pytest.approx(2.944439, abs=1e-6) and lower == pytest.approx(-2.944439, abs=1e-6)
    assert S.sprt_bounds(0.05, 0.1)[1] == pytest.approx(math.log(0.9 / 0.05))


def _independent_llr(penta, elo0, elo1):
    """The pentanomial GSPRT LLR by direct constrained maximisation (SLSQP), not through the Lagrange root."""
    p = S.regularize(penta)
    a = [0, 0.25, 0.5, 0.75, 1]
    n = sum(penta)

    def mle_dual(s):
        d = [x - s for x in a]
        lo, hi = -1 / max(d) + 1e-12, -1 / min(d) - 1e-12
        g = lambda lam: -sum(pi * math.log(1 + lam * x) for pi, x in zip(p, d))  # noqa: E731
        for _ in range(300):
            m1, m2 = lo + (hi - lo) / 3, hi - (hi - lo) / 3
            lo, hi = (lo, m2) if g(m1) < g(m2) else (m1, hi)
        lam = (lo + hi) / 2
        return [pi / (1 + lam * x) for pi, x in zip(p, d)]

    def mle(s):
        if minimize is None:
            return mle_dual(s)
        cons = [{"type": "eq", "fun": lambda q: sum(q) - 1}, {"type": "eq", "fun": lambda q: sum(x * y for x, y in zip(q, a)) - s}]
        r = minimize(lambda q: -sum(pi * math.log(max(qi, 1e-300)) for pi, qi in zip(p, q)), p, method="SLSQP",
                     constraints=cons, bounds=[(1e-12, 1)] * 5, options={"ftol": 1e-14, "maxiter": 500})
        return r.x

    q0, q1 = mle(S.score_from_elo(elo0)), mle(S.score_from_elo(elo1))
    return n * sum(pi * math.log(b / c) for pi, b, c in zip(p, q1, q0))


@pytest.mark.parametrize("penta,elo0,elo1", [
    ([10, 40, 100, 50, 12], 0, 5), ([3, 20, 60, 25, 5], -3, 3), ([30, 60, 80, 50, 20], 0, 10), ([0, 5, 7, 9, 0], 0, 20)])
def test_pentanomial_llr_matches_independent_computation(penta, elo0, elo1):
    ours = S.llr_pentanomial(penta, elo0, elo1)
    assert ours == pytest.approx(_independent_llr(penta, elo0, elo1), rel=1e-4, abs=1e-6)
    # and roughly the normal approximation N * (s1 - s0) * (2 m - s0 - s1) / (2 var)
    a = [0, 0.25, 0.5, 0.75, 1]
    n = sum(penta)
    m = sum(c * x for c, x in zip(penta, a)) / n
    var = sum(c * (x - m) ** 2 for c, x in zip(penta, a)) / n
    s0, s1 = S.score_from_elo(elo0), S.score_from_elo(elo1)
    approx = n * (s1 - s0) * (2 * m - s0 - s1) / (2 * var)
    assert ours == pytest.approx(approx, rel=0.05, abs=0.05)


def test_sprt_decision():
    assert S.sprt([0, 0, 100, 800, 800], 0, 5).decision == "H1"
    assert S.sprt([800, 800, 100, 0, 0], 0, 5).decision == "H0"
    assert S.sprt([1, 2, 3, 2, 1], 0, 5).decision is None


def _record(game, pair, sente, gote, result, reason="checkmate"):
    return {"game": game, "pair": pair, "sente": sente, "gote": gote, "result": result, "reason": reason}


def test_match_stats_by_colour_pentanomial_and_progress():
    st = S.MatchStats("a", "b")
    st.extend([_record(0, 0, "a", "b", "sente"), _record(1, 0, "b", "a", "gote"),  # a wins both: 2 points
               _record(2, 1, "a", "b", "draw", "sennichite"), _record(3, 1, "b", "a", "sente", "resign"),  # 0.5
               _record(4, 2, "x", "y", "sente")])  # another pairing: ignored
    assert (st.wins, st.draws, st.losses) == (2, 1, 1)
    assert st.by_colour == {"sente": [1, 1, 0], "gote": [1, 0, 1]}
    assert st.penta == [0, 1, 0, 0, 1]
    assert st.score == pytest.approx(0.625) and st.draw_ratio == 0.25
    line = st.progress_line(total=8)
    assert "a vs b: +2 =1 -1" in line and "62.5%" in line and "LLR" in line
    summary = st.summary()
    assert summary["reasons"] == {"checkmate": 2, "sennichite": 1, "resign": 1}
    assert "as sente +1 =1 -0" in st.report()


def test_pentanomial_counts_pairs_of_consecutive_games():
    # pairs: (1, 0) split, (1, 1) both won, (0.5, 0) half a point, (0, 0) both lost; the odd last game is left out
    assert S.pentanomial([1, 0, 1, 1, 0.5, 0, 0, 0, 1]) == [1, 1, 1, 0, 1]
    assert S.pentanomial([]) == [0] * 5


def test_pentanomial_score_uses_the_pair_as_the_unit():
    # every pair split one win each: no spread at all, while 200 independent games at 0.5 would give +-0.069
    assert S.pentanomial_score([0, 0, 100, 0, 0]) == (0.5, 0.5, 0.5)
    # 60 pairs won 2-0, 40 lost 0-2: per-pair scores 1 and 0, mean 0.6, spread sqrt(0.24) over 100 pairs
    m, lo, hi = S.pentanomial_score([40, 0, 0, 0, 60])
    assert m == pytest.approx(0.6) and hi - m == pytest.approx(S.Z95 * math.sqrt(0.24 / 100))
    assert m - lo == pytest.approx(hi - m)
    # the Elo interval is the score interval mapped through elo_from_score
    elo, elo_lo, elo_hi = S.pentanomial_elo([10, 20, 30, 25, 15])
    s, s_lo, s_hi = S.pentanomial_score([10, 20, 30, 25, 15])
    assert (elo, elo_lo, elo_hi) == pytest.approx((S.elo_from_score(s), S.elo_from_score(s_lo),
                                                   S.elo_from_score(s_hi)))


def test_prior_parses_a_ledger_line_and_refuses_nonsense():
    p = S.Prior.parse("291/1/194", "[36,1,121,0,85]")
    assert (p.wins, p.draws, p.losses, p.penta) == (291, 1, 194, (36, 1, 121, 0, 85))
    assert S.Prior.parse("3/0/1", " [0, 0, 1, 1, 0] ").penta == (0, 0, 1, 1, 0)
    for wdl, penta in [("291/1", "[36,1,121,0,85]"), ("a/1/2", "[0,0,0,0,0]"), ("1/1/1", "[0,0,0,0]"),
                       ("1/-1/1", "[0,0,0,0,0]"), ("2/0/1", "[0,1,1,0,0]")]:  # the last: 2 pairs need 4 games
        with pytest.raises(ValueError, match="prior"):
            S.Prior.parse(wdl, penta)


def test_prior_counts_in_the_pooled_statistics_and_sprt():
    prior = S.Prior.parse("291/1/194", "[36,1,121,0,85]")
    st = S.MatchStats("a", "b", elo0=0, elo1=10, prior=prior)
    assert (st.games, st.wins, st.penta) == (486, 291, [36, 1, 121, 0, 85])
    before = st.sprt().llr
    assert before == pytest.approx(S.llr_pentanomial([36, 1, 121, 0, 85], 0, 10))
    for game, result in enumerate(["sente", "gote"]):  # a won pair: a is sente, then gote
        st.add({"game": game, "pair": 0, "sente": "ab"[game], "gote": "ba"[game], "result": result, "reason": "x"})
    assert st.penta == [36, 1, 121, 0, 86] and st.wins == 293 and st.sprt().llr > before
    assert st.by_colour["sente"] == [1, 0, 0]  # colours: only the games played here
    assert st.summary()["prior"]["penta"] == (36, 1, 121, 0, 85) and "earlier part" in st.report()
    line = st.progress_line(total=100)
    assert "] 2/100 (+486 earlier) " in line and "+293 =1 -194" in line  # the bar counts this run's games
    assert S.MatchStats("a", "b").progress_line(total=10).startswith("[....................] 0/10 a vs b")
