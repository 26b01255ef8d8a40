"""Pictures a user can read (issue 52): the ``python -m bench`` chart and the strength history of
``python -m bench.strength --plot``, drawn with matplotlib from small fixture ledgers: each is a PNG of sensible size
with its title, axis labels, legend and values drawn, and a ledger line that cannot be read is a one-line error
naming the file and the line."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

from bench import chart
from bench import history as H
from bench import strength as B

ROOT = Path(__file__).resolve().parents[1]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _png_checks(path: Path) -> None:
    """A PNG of sensible size whose pixels hold text: near-black pixels (labels) besides the coloured marks."""
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert 600 <= width <= 1600 and 400 <= height <= 1600, (width, height)
    assert 10_000 < len(data) < 400_000, len(data)  # a few hundred KB at most
    import matplotlib.image

    img = matplotlib.image.imread(str(path))[..., :3]
    dark = (img.max(axis=2) < 0.25).mean()  # text and axes are black; the bars and markers are coloured
    assert dark > 0.004, dark


def _texts(fig) -> str:
    """Every text of a figure (titles, labels, tick labels, legend entries, annotations) in one string."""
    return "\n".join(t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text") and a.get_text()))


# ------------------------------------------------------------------ python -m bench
PANELS = [("perft: ours against the peers", [("startpos", {"ours": 2.6e6, "cshogi": 2.0e5, "python-shogi": 8.0e3}),
                                            ("matsuri", {"ours": 5.5e7, "cshogi": 4.2e7})]),
          ("perft of the variants' start positions", [("daishogi-start", {"ours": 6.6e5})]),
          ("search to depth 5", [])]


def test_bench_chart_is_titled_labelled_with_values_and_a_legend(tmp_path):
    fig = chart.bar_figure(PANELS, "nodes per second, test")
    try:
        ax = fig.axes[0]
        assert fig._suptitle.get_text() == "nodes per second, test"
        assert len(fig.axes) == 2  # the empty search panel is left out
        assert fig.axes[-1].get_xlabel() == "nodes per second (log scale)" and ax.get_xscale() == "log"
        assert [t.get_text() for t in ax.get_yticklabels()] == ["startpos", "matsuri"]
        assert {t.get_text() for t in ax.texts} == {"2.6M", "200k", "8k", "55M", "42M"}  # values on bars
        (legend,) = fig.legends
        assert [t.get_text() for t in legend.get_texts()] == ["ours", "cshogi", "python-shogi"]
        # one colour per engine in every panel
        assert fig.axes[1].patches[0].get_facecolor() == ax.patches[0].get_facecolor()
    finally:
        chart.pyplot().close(fig)
    path = chart.bar_chart(PANELS, tmp_path / "bench.png", "nodes per second, test")
    _png_checks(path)
    with pytest.raises(ValueError, match="nothing to draw"):
        chart.bar_chart([("empty", [])], tmp_path / "none.png", "t")


def test_bench_chart_panels_come_from_the_run_result():
    from bench.__main__ import chart_panels

    result = {"perft": [{"position": "startpos", "ours": {"nps": 3.0}, "cshogi": {"nps": 2.0}, "python-shogi": None}],
              "variant_perft": [{"position": "dai", "ours": {"nps": 1.0}}],
              "search": [{"position": "mid", "nps": 5.0}]}
    panels = chart_panels(result, 6)
    assert [rows for _, rows in panels] == [[("startpos", {"ours": 3.0, "cshogi": 2.0})], [("dai", {"ours": 1.0})],
                                            [("mid", {"ours": 5.0})]]
    assert "depth 6" in panels[2][0]


# ------------------------------------------------------------------ fixture ledgers
def _gauntlet_line(date: str, opponent: str, control: str, wdl: tuple[int, int, int], penta: str, score: str,
                   elo: str, lower: str, upper: str, command: str = "python -m bench.strength") -> str:
    w, d, l = wdl
    return "\t".join([date, "abc1234", opponent, control, str(w + d + l), str(w), str(d), str(l), penta, score, elo,
                      lower, upper, "11.20", "21.80", "checkmate 20", "-", "-", command])


GAUNTLET_LINES = [
    _gauntlet_line("2026-12-04T08:15:24Z", "fairy-stockfish", "byoyomi 1000ms", (1, 0, 19), "9,0,1,0,0", "0.0500",
                   "-511.5", "-inf", "-311.1"),
    _gauntlet_line("2026-12-04T09:00:00Z", "gpsusi", "byoyomi 1000ms", (0, 0, 10), "5,0,0,0,0", "0.0000", "-inf",
                   "-inf", "-inf"),
    _gauntlet_line("2026-12-05T11:02:24Z", "fairy-stockfish", "nodes 20000", (27, 0, 53), "18,0,17,0,5", "0.3375",
                   "-117.2", "-208.6", "-39.3", "python -m bench.strength --engine-option EvalFile=x.npz"),
    _gauntlet_line("2026-12-06T10:24:55Z", "fairy-stockfish", "byoyomi 1000ms", (29, 0, 71), "23,0,25,0,2",
                   "0.2900", "-155.5", "-228.9", "-93.3"),
]

SPRT_HEAD = "\t".join(H.SPRT_COLUMNS)


def _sprt_line(date: str, base: str, test: str, change: str, elo_ci: str, llr: str, verdict: str,
               games: str = "350") -> str:
    return "\t".join([date, base, test, change, "nodes 10000 per move", games, "235/6/109", "[20,2,69,0,84]", "68.0%",
                      elo_ci, llr, verdict, "fantasista-match ..."])


SPRT_LINES = [
    _sprt_line("2026-12-02T18:26-19:5x", "4bc67f2", "4717cb9", "SEE in quiescence (now feature 'see')",
               "+130.9 [+93.7,+171.4]", "2.95 [-2.94,2.94]", "H1 accepted"),
    _sprt_line("2026-12-03T11:48-12:44", "ab1ea22 EvalMode=hand", "ab1ea22 EvalMode=learned", "learned tables",
               "+39.5 [+6.1,+73.6] (pentanomial +40.5 [+8.2,+73.5])", "1.28 [-2.94,2.94]", "stopped undecided"),
    _sprt_line("2026-12-03T11:48-12:44 and 13:05-14:25 (the run above, resumed)", "ab1ea22 EvalMode=hand",
               "ab1ea22 EvalMode=learned", "the same tables, the whole run", "+37.4 [+16.3,+58.8]",
               "2.97 [-2.94,2.94]", "H1 accepted: EvalMode learned becomes the default", "1044"),
    _sprt_line("2026-12-04T00:13-01:03", "30d0ae7 SearchFeatures=default", "30d0ae7 SearchFeatures=default+mate1",
               "mate in one", "-72.1 [-113.5,-32.7]", "-2.97 [-2.94,2.94] SPRT(0,15)", "H0 accepted (mate1 stays off)"),
    _sprt_line("2026-12-05T09:15-09:19", "d62726d nodes=20000", "d62726d nodes=80000 (the same engine)",
               "scaling check", "+inf [+278 (Wilson lower bound of 19/19),+inf]", "0.13 [-2.94,2.94]",
               "stopped after 19 games", "19"),
    _sprt_line("2026-12-06T03:30-04:53", "6c3d5f1 (θ - c_k Δ)", "6c3d5f1 (θ + c_k Δ)", "SPSA of five parameters",
               "θ+ against θ-: +13.0 [-6.5,+32.7]", "-", "SPSA run, no SPRT"),
    _sprt_line("2026-12-06T08:22-08:43", "b03fdae (defaults)", "b03fdae SearchParams=LMRBase=70,LMRDiv=228",
               "the SPSA candidate", "pooled +30.7 [+12.7,+48.9]", "pooled 2.95 [-2.94,2.94]", "H1 accepted",
               "160 (pooled 1396)"),
]


@pytest.fixture
def ledgers(tmp_path):
    gauntlet, sprt = tmp_path / "gauntlet.tsv", tmp_path / "sprt.tsv"
    gauntlet.write_text("\t".join(B.COLUMNS) + "\n" + "\n".join(GAUNTLET_LINES) + "\n", encoding="utf-8")
    sprt.write_text(SPRT_HEAD + "\n" + "\n".join(SPRT_LINES) + "\n", encoding="utf-8")
    return gauntlet, sprt


def test_gauntlet_ledger_is_read_with_score_intervals_by_game_pairs(ledgers):
    points = H.read_gauntlet(ledgers[0])
    assert [(p.opponent, p.control, p.games, p.line) for p in points] == [
        ("fairy-stockfish", "byoyomi 1000ms", 20, 2), ("gpsusi", "byoyomi 1000ms", 10, 3),
        ("fairy-stockfish", "nodes 20000", 80, 4), ("fairy-stockfish", "byoyomi 1000ms", 100, 5)]
    last = points[-1]
    # the interval the run printed, "29.0 % [21.1, 36.9]": pairs as the unit, from the pentanomial counts
    assert (round(100 * last.score_lower, 1), round(100 * last.score_upper, 1)) == (21.1, 36.9)
    assert points[1].elo == -math.inf and points[1].score_lower == 0.0 == points[1].score_upper
    assert [p.options for p in points] == [False, False, True, False]


def test_gauntlet_picture_has_title_labels_series_and_the_bar(ledgers, tmp_path):
    points = H.read_gauntlet(ledgers[0])
    fig = H.gauntlet_figure(points, "gauntlet.tsv")
    try:
        ax_s, ax_e = fig.axes
        assert "gauntlet.tsv" in fig._suptitle.get_text()
        assert "score" in ax_s.get_ylabel() and "%" in ax_s.get_ylabel() and "Elo" in ax_e.get_ylabel()
        assert "date" in ax_e.get_xlabel()
        legend = [t.get_text() for t in ax_s.get_legend().get_texts()]
        assert legend[0] == "fairy-stockfish, byoyomi 1000ms (the bar's control)"  # the bar's series first
        assert "gpsusi, byoyomi 1000ms" in legend and "fairy-stockfish, nodes 20000" in legend
        bar = [line for line in ax_s.get_lines() if list(line.get_ydata()) == [25, 25]]
        bar_elo = [line for line in ax_e.get_lines()
                   if list(line.get_ydata()) == pytest.approx([H.stats.elo_from_score(0.25)] * 2)]
        assert bar and bar_elo
        text = _texts(fig)
        assert "bar: 25% against fairy-stockfish at byoyomi 1 s" in text
        assert "score 29.0% [21.1, 36.9], Elo -156 [-229, -93]" in text  # the latest at the bar's control
        assert "Dec 05" in [t.get_text() for t in ax_e.get_xticklabels()]  # dates a reader can read
    finally:
        chart.pyplot().close(fig)
    _png_checks(H.plot_gauntlet(points, tmp_path / "g.png"))


def test_sprt_ledger_is_read_leniently_and_resumed_runs_once(ledgers):
    points = H.read_sprt(ledgers[1])
    # the SPSA line (llr "-") is no SPRT; the partial line of the resumed run is superseded by its continuation
    assert [(p.line, p.verdict, p.superseded) for p in points] == [
        (2, "H1", False), (3, "open", True), (4, "H1", False), (5, "H0", False), (6, "open", False),
        (8, "H1", False)]
    assert points[0].date.isoformat() == "2026-12-02T18:26:00" and points[0].label == "SEE in quiescence"
    assert (points[2].elo, points[2].elo_lower, points[2].elo_upper, points[2].games) == (37.4, 16.3, 58.8, 1044)
    assert points[2].label == "EvalMode learned" and points[3].label == "features +mate1"
    assert points[4].elo == math.inf and points[4].elo_lower == 278.0
    assert (points[5].elo, points[5].games, points[5].label) == (30.7, 1396, "SearchParams LMRBase=70,LMRDiv=228")


def test_sprt_picture_names_the_accepted_changes(ledgers, tmp_path):
    points = H.read_sprt(ledgers[1])
    fig = H.sprt_figure(points, "sprt.tsv")
    try:
        (ax,) = fig.axes
        assert "sprt.tsv" in fig._suptitle.get_text() and "Elo" in ax.get_ylabel() and "date" in ax.get_xlabel()
        names = {t.get_text() for t in ax.texts}
        assert names == {"SEE in quiescence: +131", "EvalMode learned: +37", "SearchParams LMRBase=70,LMRDiv=228: +31"}
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        assert legend == ["H1 accepted: the change kept", "H0 accepted: rejected", "stopped without a verdict"]
    finally:
        chart.pyplot().close(fig)
    _png_checks(H.plot_sprt(points, tmp_path / "s.png"))


@pytest.mark.parametrize("which, line, bad, message", [
    ("gauntlet", 3, lambda f: f.replace("0.0000", "zero", 1), "could not convert"),
    ("gauntlet", 3, lambda f: f.replace("5,0,0,0,0", "5,0,0", 1), "not five counts"),
    ("gauntlet", 3, lambda f: "\t".join(f.split("\t")[:-1]), "not a ledger line"),
    ("gauntlet", 3, lambda f: f.replace("2026-12-04T09:00:00Z", "yesterday"), "no date"),
    ("sprt", 4, lambda f: f.replace("+37.4 [+16.3,+58.8]", "+37.4 about"), "no 'ELO [LOWER,UPPER]'"),
    ("sprt", 4, lambda f: f.replace("2026-12-03T11:48", "2026-13-03T11:48"), "month must be in 1..12"),
    ("sprt", 4, lambda f: f.replace("\t1044\t", "\tmany\t"), "is not a count"),
    ("sprt", 4, lambda f: f.replace("\t", " ", 1), "12 tab-separated columns, expected 13"),
])
def test_a_malformed_ledger_line_is_an_error_naming_file_and_line(ledgers, tmp_path, capsys, which, line, bad,
                                                                 message):
    gauntlet, sprt = ledgers
    path = gauntlet if which == "gauntlet" else sprt
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[line - 1] = bad(lines[line - 1])
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    read = H.read_gauntlet if which == "gauntlet" else H.read_sprt
    with pytest.raises(ValueError) as got:
        read(path)
    assert str(got.value).startswith(f"{path}:{line}: ") and message in str(got.value)
    # the command line says the same in one line, and draws nothing
    out = tmp_path / "pictures"
    assert B.main(["--plot", str(out), "--ledger", str(gauntlet), "--sprt-ledger", str(sprt)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"bench.strength: error: {path}:{line}: ") and err.count("\n") == 1
    assert not list(out.glob("*.png"))


def test_plot_command_writes_both_pictures(ledgers, tmp_path, capsys):
    gauntlet, sprt = ledgers
    out = tmp_path / "pictures"
    assert B.main(["--plot", str(out), "--ledger", str(gauntlet), "--sprt-ledger", str(sprt)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed == [f"wrote {out / H.GAUNTLET_PNG}", f"wrote {out / H.SPRT_PNG}"]
    for name in (H.GAUNTLET_PNG, H.SPRT_PNG):
        _png_checks(out / name)


def test_a_run_names_the_picture_it_wrote(ledgers, tmp_path):
    """The final summary of a gauntlet run draws the ledger into the run's directory and names the picture, or says
    why there is none."""
    gauntlet, _ = ledgers
    assert B.history_picture(gauntlet, tmp_path) == str(tmp_path / H.GAUNTLET_PNG)
    _png_checks(tmp_path / H.GAUNTLET_PNG)
    gauntlet.write_text(gauntlet.read_text().replace("0.2900", "?", 1))
    assert B.history_picture(gauntlet, tmp_path).startswith(f"none ({gauntlet}:5: ")


def test_the_real_ledgers_all_parse():
    """Every line of the ledgers in bench/strength/ is read: every gauntlet line, every SPRT line (all but the
    lines whose llr is '-', which are no SPRT)."""
    gauntlet_lines = H.L.LEDGER.read_text(encoding="utf-8").splitlines()[1:]
    assert len(H.read_gauntlet(H.L.LEDGER)) == len([t for t in gauntlet_lines if t.strip()])
    sprt_lines = [t.split("\t") for t in H.SPRT_LEDGER.read_text(encoding="utf-8").splitlines()[1:] if t.strip()]
    points = H.read_sprt(H.SPRT_LEDGER)
    assert len(points) == len([f for f in sprt_lines if f[H.SPRT_COLUMNS.index("llr")].strip() != "-"])
    assert all(p.label for p in points) and any(p.verdict == "H1" for p in points)


def test_the_docs_show_the_strength_pictures():
    doc = (ROOT / "docs" / "matches.md").read_text(encoding="utf-8")
    for name in (H.GAUNTLET_PNG, H.SPRT_PNG):
        assert f"(img/{name})" in doc
        assert (ROOT / "docs" / "img" / name).read_bytes()[:8] == PNG_MAGIC


def test_without_matplotlib_each_picture_says_how_to_install_it(ledgers, tmp_path, monkeypatch, capsys):
    """No matplotlib: a one-line error naming the extra, never a traceback; a run's summary says why no picture."""
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    with pytest.raises(chart.ChartError, match=r"matplotlib is not installed: pip install -e '\.\[bench\]'"):
        chart.bar_chart(PANELS, tmp_path / "x.png", "t")
    gauntlet, sprt = ledgers
    assert B.main(["--plot", str(tmp_path), "--ledger", str(gauntlet), "--sprt-ledger", str(sprt)]) == 2
    assert capsys.readouterr().err == "bench.strength: error: matplotlib is not installed: pip install -e '.[bench]'\n"
    assert B.history_picture(gauntlet, tmp_path) == "none (matplotlib is not installed: pip install -e '.[bench]')"
    assert not list(tmp_path.glob("*.png"))
