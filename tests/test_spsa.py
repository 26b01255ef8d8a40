"""``python -m bench.spsa`` (issue 24, item 4): the SPSA arithmetic, the run log that a resumed or reported run
replays, refused settings, and one real iteration (a game pair of our engine at a small node budget)."""
from __future__ import annotations

import sys

import pytest

from bench import spsa as S
from search.params import TUNABLES, TUNE_LMP_BASE, TUNE_RFP_MARGIN


def test_gains_end_at_the_parameters_step_and_r_end():
    s = S.Spsa.start(["RFPMargin", "LMPBase"], iterations=400, r_end=0.004)
    for i, index in enumerate((TUNE_RFP_MARGIN, TUNE_LMP_BASE)):
        c_end = TUNABLES[index].step
        assert s.c_k(i, 400) == pytest.approx(c_end)
        assert s.a_k(i, 400) / s.c_k(i, 400) ** 2 == pytest.approx(0.004)
        assert s.c_k(i, 1) > s.c_k(i, 400) and s.a_k(i, 1) > s.a_k(i, 400)  # both shrink over the run
    assert s.theta == [TUNABLES[TUNE_RFP_MARGIN].default, TUNABLES[TUNE_LMP_BASE].default]


def test_update_follows_the_winner_and_stays_in_range():
    s = S.Spsa.start(["RFPMargin", "LMPBase"], iterations=100, r_end=0.05)
    before = list(s.theta)
    delta = [1, -1]
    plus, minus = s.perturbed(1, delta)
    assert plus["RFPMargin"] > before[0] > minus["RFPMargin"] and plus["LMPBase"] < before[1] < minus["LMPBase"]
    s.update(1, delta, 2.0)  # θ+ won both games: θ moves towards θ+
    assert s.theta[0] > before[0] and s.theta[1] < before[1] and s.k == 1
    for k in range(2, 500):
        s.update(k, [1, -1], 2.0)
    lo_hi = TUNABLES[TUNE_RFP_MARGIN]
    assert s.theta[0] == lo_hi.hi and s.theta[1] == TUNABLES[TUNE_LMP_BASE].lo  # clipped, never beyond
    assert s.perturbed(499, [1, -1])[0] == {"RFPMargin": lo_hi.hi, "LMPBase": TUNABLES[TUNE_LMP_BASE].lo}
    assert S.signs(7, 3, 5) == S.signs(7, 3, 5) and len({tuple(S.signs(7, k, 4)) for k in range(20)}) > 1


def test_pair_result_counts_wins_of_plus():
    recs = [{"result": "sente", "winner": "plus"}, {"result": "sente", "winner": "minus"}]
    assert S.pair_result(recs, "plus") == 0
    assert S.pair_result([{"result": "gote", "winner": "plus"}, {"result": "draw", "winner": None}], "plus") == 1
    assert S.pair_result([{"result": "gote", "winner": "minus"}] * 2, "plus") == -2


def test_the_log_replays_to_the_same_values_and_a_forged_line_is_found(tmp_path):
    out = tmp_path / "run"
    settings = S._new_settings(S.build_parser().parse_args(
        ["--params", "RFPMargin,NullBase", "--iterations", "50", "--out", str(out), "--start", "NullBase=4"]))
    S.save_settings(out, settings)
    s = S.Spsa.start(settings["params"], 50, settings["r_end"], settings["start"])
    assert s.theta[1] == 4.0
    for k, r in enumerate([2, -1, 0, 1, 2, -2], start=1):
        d = S.signs(settings["seed"], k, 2)
        plus, minus = s.perturbed(k, d)
        s.update(k, d, r)
        S.append_log(out, s, k, r, plus, minus)
    _, again = S.load_run(out)
    assert again.k == 6 and again.theta == pytest.approx(s.theta)
    text = S.report(settings, again)
    assert "6 of 50 iterations" in text and "SearchParams=RFPMargin=" in text
    log = out / "spsa.tsv"
    lines = log.read_text().splitlines()
    assert lines[4].startswith("4\t1\t")
    lines[4] = "4\t-1\t" + lines[4][len("4\t1\t"):]  # change a logged result: the values no longer replay
    log.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match="does not replay"):
        S.load_run(out)


def test_gradients_find_the_parameter_that_decides_the_games(tmp_path):
    """A made-up log in which the engine with the higher RFPMargin wins both games of 30 pairs of 40 (the other 10
    are split): the report gives RFPMargin a positive slope with its whole interval above 0, and NullBase, whose
    signs are drawn independently, a slope closer to 0."""
    out = tmp_path / "run"
    settings = S._new_settings(S.build_parser().parse_args(
        ["--params", "RFPMargin,NullBase", "--iterations", "40", "--out", str(out)]))
    S.save_settings(out, settings)
    s = S.Spsa.start(settings["params"], 40, settings["r_end"])
    for k in range(1, 41):
        d = S.signs(settings["seed"], k, 2)
        plus, minus = s.perturbed(k, d)
        r = 2 * d[0] if k % 4 else 0
        s.update(k, d, r)
        S.append_log(out, s, k, r, plus, minus)
    slopes = S.gradients(out, s.params)
    n, elo, lo, hi = slopes["RFPMargin"]
    assert n == 40 and lo > 0 and elo > 0
    assert abs(slopes["NullBase"][1]) < elo and slopes["NullBase"][0] <= 40
    text = S.report(settings, S.load_run(out)[1], out)
    assert text.count("higher value: Elo") == 2 and "over 40 pairs" in text


def test_bad_settings_are_refused(tmp_path, capsys):
    assert S.main(["--params", "Warp", "--out", str(tmp_path / "a")]) == 2
    assert "unknown search parameter" in capsys.readouterr().err
    assert S.main(["--params", "RFPMargin"]) == 2  # no --out
    assert S.main(["--params", "RFPMargin,RFPMargin", "--out", str(tmp_path / "b")]) == 2
    assert S.main(["--params", "RFPMargin", "--start", "RFPMargin=9999", "--out", str(tmp_path / "c")]) == 2
    assert S.main(["--params", "RFPMargin", "--iterations", "0", "--out", str(tmp_path / "d")]) == 2
    assert S.main(["--resume", str(tmp_path / "nothing")]) == 2
    assert "not an SPSA run directory" in capsys.readouterr().err


def test_one_real_iteration_then_resume_and_report(tmp_path, capsys):
    """One game pair of our engine (LMPBase ± c) at 300 nodes a move: a logged iteration, a report naming the
    candidate, and a resumed complete run that plays nothing."""
    out = tmp_path / "spsa"
    code = S.main(["--params", "LMPBase", "--iterations", "1", "--nodes", "300", "--out", str(out),
                   "--concurrency", "1", "--quiet", "--engine-cmd", f"{sys.executable} -m usi"])
    printed = capsys.readouterr().out
    assert code == 0 and "1 of 1 iterations (2 games, nodes 300)" in printed and "SearchParams=LMPBase=" in printed
    rows = (out / "spsa.tsv").read_text().splitlines()
    assert len(rows) == 2 and rows[1].split("\t")[1] in {"-2", "-1", "0", "1", "2"}
    assert S.main(["--resume", str(out), "--quiet"]) == 0
    assert S.main(["--params", "LMPBase", "--out", str(out)]) == 2  # an existing run is never overwritten
    assert S.main(["--report", str(out)]) == 0
