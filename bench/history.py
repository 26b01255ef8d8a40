"""The shogi strength history as pictures, drawn from the ledgers in ``bench/strength/`` (issue 52).

``python -m bench.strength --plot [DIR]`` writes two PNGs (default ``docs/img/``, the pictures ``docs/matches.md``
shows):

- ``strength-gauntlet.png`` from ``shogi-gauntlet.tsv``: score and Elo of every gauntlet with their 95% intervals
  (the game pair as the unit) against the date, one series per opponent and control, the bar (25% against
  fairy-stockfish at byoyomi 1 s) drawn on both panels;
- ``strength-sprt.png`` from ``shogi-sprt.tsv``: the Elo of each self-play SPRT with its 95% interval against the
  date, the accepted changes named, the rejected and the undecided ones drawn lighter.

The SPRT ledger is written by hand, so it is read leniently where its lines differ in form (a date such as
``2026-12-02T18:26-19:5x`` or ``2026-12-03T07:48-09:30 (stopped twice ...)`` is read as its first date and time; an
``elo_95ci`` such as ``+130.9 [+93.7,+171.4]``, ``pooled +73.5 [...]`` or ``+inf [+278 (Wilson ...),+inf]`` as its
first value and interval) and strictly where a line cannot be read: :class:`LedgerError` names the file and line.

``fantasista.tsv`` makes no series: its lines are single games of the fantasista variant between two settings of
fantasista's first engine (chance-aware against roll-blind, since deleted), with no date and no outside opponent, so
they fit neither picture's axes.
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import math
import re
from pathlib import Path
from typing import Any, Optional, Sequence

from usi import stats

from . import chart
from . import ledger as L

SPRT_LEDGER = L.LEDGER.parent / "shogi-sprt.tsv"
SPRT_COLUMNS = ("date", "base_commit", "test_commit", "change", "control", "games", "w_d_l", "pentanomial", "score",
                "elo_95ci", "llr", "verdict", "command")
#: the bar of issue 24: a score of 25% against fairy-stockfish at byoyomi 1 s
BAR_OPPONENT, BAR_CONTROL, BAR_SCORE = "fairy-stockfish", "byoyomi 1000ms", 0.25
GAUNTLET_PNG, SPRT_PNG = "strength-gauntlet.png", "strength-sprt.png"
#: where ``--plot`` writes by default: the checkout's docs/img, else bench/results (an installed package has no docs)
_DOCS_IMG = Path(__file__).resolve().parents[1] / "docs" / "img"
DEFAULT_PLOT_DIR = _DOCS_IMG if _DOCS_IMG.parent.is_dir() else Path(__file__).parent / "results"

_DATE = re.compile(r"\s*(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?")
_NUM = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+|inf)"
_ELO_CI = re.compile(rf"({_NUM})\s*\[\s*({_NUM})[^,\]]*,\s*({_NUM})[^\]]*\]")
_CLOCK = re.compile(r"(?:(\d{4}-\d{2}-\d{2})T)?(\d{2}:\d{2})")


class LedgerError(ValueError):
    """A ledger line that cannot be read; the message starts ``FILE:LINE:``."""


# ------------------------------------------------------------------- reading
def parse_date(text: str) -> _dt.datetime:
    """The first date and time at the start of a ledger's date field (minutes; seconds when given).

    >>> parse_date("2026-12-02T18:26-19:5x"), parse_date("2026-12-04T08:15:24Z")
    (datetime.datetime(2026, 12, 2, 18, 26), datetime.datetime(2026, 12, 4, 8, 15, 24))
    """
    m = _DATE.match(text)
    if not m:
        raise ValueError(f"no date YYYY-MM-DDTHH:MM at the start of {text[:40]!r}")
    return _dt.datetime(*(int(g) for g in m.groups() if g is not None))


def parse_elo_ci(text: str) -> tuple[float, float, float]:
    """``(elo, lower, upper)``: the first ``VALUE [LOWER, UPPER]`` of an ``elo_95ci`` field (±inf allowed).

    >>> parse_elo_ci("+130.9 [+93.7,+171.4]")
    (130.9, 93.7, 171.4)
    >>> parse_elo_ci("+inf [+278 (Wilson lower bound of 19/19),+inf]")
    (inf, 278.0, inf)
    """
    m = _ELO_CI.search(text)
    if not m:
        raise ValueError(f"no 'ELO [LOWER,UPPER]' in {text[:40]!r}")
    return tuple(float(g) for g in m.groups())  # type: ignore[return-value]


@dataclasses.dataclass(frozen=True)
class GauntletPoint:
    """One gauntlet line: the run's date, opponent, control, games, score with its 95% interval, Elo with its."""
    date: _dt.datetime
    opponent: str
    control: str
    games: int
    score: float
    score_lower: float
    score_upper: float
    elo: float
    elo_lower: float
    elo_upper: float
    options: bool  # our engine ran with --engine-option: not the shipped settings
    line: int


def read_gauntlet(path: Path) -> list[GauntletPoint]:
    """The gauntlet ledger's lines as points; a line that cannot be read raises :class:`LedgerError`."""
    path = Path(path)
    out = []
    for n, row in enumerate(L.read_ledger(path), 2):
        try:
            penta = [int(x) for x in row["pentanomial"].split(",")]
            if len(penta) != 5:
                raise ValueError(f"pentanomial {row['pentanomial']!r} is not five counts")
            elo, lo, hi = (float(row[k]) for k in ("elo", "elo_lower", "elo_upper"))
            score = float(row["score"])
            if sum(penta):  # the score interval with the game pair as the unit, as the run printed it
                _, s_lo, s_hi = stats.pentanomial_score(penta)
            else:  # no complete pair: the trinomial interval the Elo bounds came from
                s_lo, s_hi = stats.score_from_elo(lo), stats.score_from_elo(hi)
            out.append(GauntletPoint(parse_date(row["date"]), row["opponent"], row["control"], int(row["games"]),
                                     score, max(s_lo, 0.0), min(s_hi, 1.0), elo, lo, hi,
                                     "--engine-option" in row["command"], n))
        except ValueError as exc:
            raise LedgerError(f"{path}:{n}: {exc}") from None
    return out


@dataclasses.dataclass(frozen=True)
class SprtPoint:
    """One SPRT line: its start date, a short name of the change, control, games, Elo with its 95% interval and the
    verdict: ``H1`` (accepted, the change kept), ``H0`` (rejected) or ``open`` (stopped without a verdict)."""
    date: _dt.datetime
    label: str
    control: str
    games: int
    elo: float
    elo_lower: float
    elo_upper: float
    verdict: str
    line: int
    superseded: bool = False  # a later line continues this run (its figures include these games)

    @property
    def variant(self) -> str:
        """``daishogi2017`` for a dai shogi SPRT (its control names the variant), else ``shogi``."""
        return "daishogi2017" if "daishogi" in self.control else "shogi"


def _config(field: str) -> dict[str, str]:
    """``KEY=VALUE`` settings of a commit column, leaving out the commit and parenthesised remarks."""
    return dict(re.findall(r"(\w+)=(\S+)", re.sub(r"\([^)]*\)?", "", field)))


def _clip(text: str, width: int = 40) -> str:
    return text if len(text) <= width else text[:width - 1].rstrip() + "…"


def change_label(base: str, test: str, change: str, kept: frozenset[str] = frozenset()) -> str:
    """A short name of a tested change: the settings the test build has and the base lacks, else the first clause
    of the change's description. ``kept``: the search features accepted before, left out of a feature list tested
    against a bare ``SearchFeatures=default`` (which held them).

    >>> change_label("f778c7d (shipped kp_shogi.npz, n4)", "f778c7d EvalFile=/work/fits/n5a.npz", "KP tables n5a")
    'eval n5a'
    >>> change_label("93b8cee SearchFeatures=default", "8db17ed SearchFeatures=default+rootlmr (the same)", "")
    'features +rootlmr'
    >>> change_label("9f3d415 SearchFeatures=default", "9f3d415 SearchFeatures=see+histlmr+qstt", "", {"see", "histlmr"})
    'features +qstt'
    >>> change_label("4bc67f2", "4717cb9", "SEE in quiescence, losing captures last (now feature 'see')")
    'SEE in quiescence'
    """
    old, new = _config(base), _config(test)
    listed = re.search(r"SearchFeatures=default \(([\w+]+)\)", base)  # "default (see+...)": the default spelled out
    if listed:
        old["SearchFeatures"] = listed.group(1)
    parts = []
    for key, value in new.items():
        if old.get(key) == value:
            continue
        if key == "SearchFeatures":
            before = set(old.get(key, "").split("+")) | (set(kept) if old.get(key) == "default" else set())
            feats = [f for f in value.split("+") if f not in before | {"default"}]
            added = value.startswith("default+") or len(feats) < len(value.split("+"))
            parts.append("features " + ("+" if added else "") + "+".join(feats))
        elif key == "EvalFile":
            parts.append("eval " + Path(value).stem)
        else:
            parts.append(f"{key} {value}")
    if parts:
        return _clip(", ".join(parts))
    return _clip(re.split(r" \(|;|:|, ", change, maxsplit=1)[0].strip())


def _continues(text: str) -> set[tuple[str, str]]:
    """(date, HH:MM) of every time a continuation's date field names (each time dated by the last date before it)."""
    got, day = set(), ""
    for m in _CLOCK.finditer(text):
        day = m.group(1) or day
        got.add((day, m.group(2)))
    return got


def read_sprt(path: Path) -> list[SprtPoint]:
    """The SPRT ledger's SPRT lines as points, in the ledger's order.

    A line whose ``llr`` is ``-`` is no SPRT (an SPSA run) and is left out. A line whose date names an earlier run
    "above" (a resumed or continued run) marks the earlier lines of that run ``superseded``. A line that cannot be
    read raises :class:`LedgerError` naming the file and line.
    """
    path = Path(path)
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    if not lines:
        return []
    head = tuple(lines[0].split("\t"))
    if head != SPRT_COLUMNS:
        raise LedgerError(f"{path}:1: not the SPRT ledger's header ({len(SPRT_COLUMNS)} tab-separated columns: "
                          f"{' '.join(SPRT_COLUMNS)})")
    points: list[SprtPoint] = []
    kept: set[str] = set()  # search features accepted so far (for the short names)
    starts: list[tuple[str, str]] = []
    for n, text in enumerate(lines[1:], 2):
        if not text.strip():
            continue
        fields = text.split("\t")
        if len(fields) != len(SPRT_COLUMNS):
            raise LedgerError(f"{path}:{n}: {len(fields)} tab-separated columns, expected {len(SPRT_COLUMNS)}")
        row = dict(zip(SPRT_COLUMNS, fields))
        try:
            date = parse_date(row["date"])
            if row["llr"].strip() == "-":
                continue  # no SPRT (an SPSA run): nothing accepted or rejected
            elo, lo, hi = parse_elo_ci(row["elo_95ci"])
            games = re.search(r"pooled (\d+)", row["games"]) or re.match(r"\s*(\d+)", row["games"])
            if not games:
                raise ValueError(f"games {row['games'][:40]!r} is not a count")
        except ValueError as exc:
            raise LedgerError(f"{path}:{n}: {exc}") from None
        verdict = row["verdict"].strip()
        verdict = "H1" if verdict.startswith("H1 accepted") else "H0" if verdict.startswith("H0 accepted") else "open"
        if "above" in row["date"]:  # a continuation: the earlier lines of the same run are partial figures
            named = _continues(row["date"])
            for i, key in enumerate(starts):
                if key in named:
                    points[i] = dataclasses.replace(points[i], superseded=True)
        starts.append((date.strftime("%Y-%m-%d"), date.strftime("%H:%M")))
        points.append(SprtPoint(date, change_label(row["base_commit"], row["test_commit"], row["change"],
                                                   frozenset(kept)),
                                row["control"], int(games.group(1)), elo, lo, hi, verdict, n))
        if verdict == "H1":
            kept |= set(_config(row["test_commit"]).get("SearchFeatures", "").split("+")) - {"default", ""}
    return points


# ------------------------------------------------------------------ drawing
def _spread(dates: Sequence[_dt.datetime], gap: _dt.timedelta) -> list[_dt.datetime]:
    """The dates, each moved right until it is ``gap`` after the one before (in date order), so that runs minutes
    apart do not hide each other."""
    order = sorted(range(len(dates)), key=lambda i: dates[i])
    out = list(dates)
    last: Optional[_dt.datetime] = None
    for i in order:
        out[i] = dates[i] if last is None or dates[i] >= last + gap else last + gap
        last = out[i]
    return out


def _date_axis(ax) -> None:
    """Dates as ``Dec 03``, times as ``12:00``, the year once at the axis' end."""
    import matplotlib.dates as mdates

    locator = mdates.AutoDateLocator(minticks=4, maxticks=10)
    formatter = mdates.ConciseDateFormatter(locator)
    formatter.formats = ["%Y", "%b", "%b %d", "%H:%M", "%H:%M", "%S.%f"]
    formatter.zero_formats = ["", "%Y", "%b", "%b %d", "%H:%M", "%H:%M"]
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(formatter)


def _finite_range(values: Sequence[float], pad: float) -> tuple[float, float]:
    finite = [v for v in values if math.isfinite(v)]
    return (min(finite) - pad, max(finite) + pad) if finite else (-400.0, 400.0)


def plot_gauntlet(points: Sequence[GauntletPoint], path: str | Path, source: str = "shogi-gauntlet.tsv") -> Path:
    """:func:`gauntlet_figure` written as a PNG; returns ``path``."""
    return chart.save(gauntlet_figure(points, source), path)


def gauntlet_figure(points: Sequence[GauntletPoint], source: str = "shogi-gauntlet.tsv") -> Any:
    """Score (top) and Elo (bottom) with their 95% intervals against the date, one colour per opponent and control,
    the bar as a dashed line on both; hollow markers are runs with ``--engine-option`` (not the shipped settings);
    an infinite Elo or bound is drawn at the panel's edge (a triangle for the point). A matplotlib figure."""
    if not points:
        raise ValueError("no gauntlet lines to draw")
    plt = chart.pyplot()
    series: dict[tuple[str, str], list[int]] = {}
    for i in sorted(range(len(points)), key=lambda i: points[i].date):
        series.setdefault((points[i].opponent, points[i].control), []).append(i)
    span = max(p.date for p in points) - min(p.date for p in points)
    xs = _spread([p.date for p in points], max(span / 120, _dt.timedelta(minutes=10)))
    lo, hi = _finite_range([v for p in points for v in (p.elo, p.elo_lower, p.elo_upper)] + [
        stats.elo_from_score(BAR_SCORE)], 60)
    fig, (ax_s, ax_e) = plt.subplots(2, 1, figsize=(10, 7.6), dpi=chart.DPI, sharex=True)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    keys = sorted(series, key=lambda k: (k != (BAR_OPPONENT, BAR_CONTROL), k))  # the bar's series first
    for c, key in enumerate(keys):
        colour = colours[c % len(colours)]
        idx = series[key]
        name = f"{key[0]}, {key[1]}" + (" (the bar's control)" if key == (BAR_OPPONENT, BAR_CONTROL) else "")
        shipped = [i for i in idx if not points[i].options]
        for ax, get in ((ax_s, lambda p: (100 * p.score, 100 * p.score_lower, 100 * p.score_upper)),
                        (ax_e, lambda p: (p.elo, p.elo_lower, p.elo_upper))):
            if len(shipped) > 1:
                ax.plot([xs[i] for i in shipped], [min(max(get(points[i])[0], lo), hi) if ax is ax_e
                                                   else get(points[i])[0] for i in shipped],
                        color=colour, lw=0.8, alpha=0.5)
            for i in idx:
                y, y_lo, y_hi = get(points[i])
                if ax is ax_e:
                    marker = "v" if y < lo else "^" if y > hi else "o"
                    y, y_lo, y_hi = (min(max(v, lo), hi) for v in (y, y_lo, y_hi))
                else:
                    marker = "o"
                ax.errorbar(xs[i], y, yerr=[[y - y_lo], [y_hi - y]], fmt=marker, ms=5, color=colour, capsize=2,
                            lw=1, mfc="white" if points[i].options else colour,
                            label=name if ax is ax_s and i == idx[0] else "_nolegend_")
    bar_elo = stats.elo_from_score(BAR_SCORE)
    bar_text = f"bar: {100 * BAR_SCORE:.0f}% against {BAR_OPPONENT} at byoyomi 1 s"
    ax_s.axhline(100 * BAR_SCORE, color="crimson", ls="--", lw=1.2)
    ax_s.text(0.005, 100 * BAR_SCORE + 1.5, bar_text, color="crimson", fontsize=8, transform=ax_s.get_yaxis_transform())
    ax_e.axhline(bar_elo, color="crimson", ls="--", lw=1.2)
    ax_e.text(0.005, bar_elo + 12, f"bar: Elo {bar_elo:+.0f} (= {100 * BAR_SCORE:.0f}%)", color="crimson", fontsize=8,
              transform=ax_e.get_yaxis_transform())
    ax_e.axhline(0, color="grey", lw=0.6)
    ax_s.set_ylim(-2.5, 100)
    ax_e.set_ylim(lo - 0.03 * (hi - lo), hi + 0.03 * (hi - lo))  # the triangles of infinite values stay whole
    ax_s.set_ylabel("our score (%), 95% interval")
    ax_e.set_ylabel("our Elo against the opponent, 95% interval")
    ax_e.set_xlabel("date of the run")
    for ax in (ax_s, ax_e):
        ax.grid(alpha=0.3)
    _date_axis(ax_e)
    latest = max((i for i in series.get((BAR_OPPONENT, BAR_CONTROL), []) if not points[i].options),
                 key=lambda i: points[i].date, default=None)
    if latest is not None:
        p = points[latest]
        ax_s.text(0.99, 0.97, f"latest at the bar's control ({p.date:%Y-%m-%d}, {p.games} games):\n"
                  f"score {100 * p.score:.1f}% [{100 * p.score_lower:.1f}, {100 * p.score_upper:.1f}], "
                  f"Elo {p.elo:+.0f} [{p.elo_lower:+.0f}, {p.elo_upper:+.0f}]", transform=ax_s.transAxes,
                  ha="right", va="top", fontsize=8, bbox={"boxstyle": "round", "fc": "white", "ec": "0.8"})
    from matplotlib.lines import Line2D

    handles, labels = ax_s.get_legend_handles_labels()
    handles.append(Line2D([], [], marker="o", ls="", color="grey", mfc="white"))
    labels.append("hollow: ours with --engine-option (not shipped)")
    ax_s.legend(handles, labels, loc="upper left", fontsize=8, title="opponent, control", title_fontsize=8)
    fig.suptitle(f"Fantasista's shogi engine against other engines (gauntlets, {source})")
    ax_s.set_title("95% intervals with the game pair as the unit; a triangle at the edge: Elo -inf or +inf "
                   "(no game won or lost)", fontsize=8)
    fig.tight_layout()
    return fig


def plot_sprt(points: Sequence[SprtPoint], path: str | Path, source: str = "shogi-sprt.tsv") -> Path:
    """:func:`sprt_figure` written as a PNG; returns ``path``."""
    return chart.save(sprt_figure(points, source), path)


def sprt_figure(points: Sequence[SprtPoint], source: str = "shogi-sprt.tsv") -> Any:
    """The Elo of each self-play SPRT (the tested build against its base) with its 95% interval against the date:
    accepted changes filled and named, rejected ones red, stopped ones grey; superseded partial lines (a later line
    continues the run) left out. A matplotlib figure."""
    shown = [p for p in points if not p.superseded]
    if not shown:
        raise ValueError("no SPRT lines to draw")
    plt = chart.pyplot()
    span = max(p.date for p in shown) - min(p.date for p in shown)
    xs = _spread([p.date for p in shown], max(span / 160, _dt.timedelta(minutes=10)))
    lo, hi = _finite_range([v for p in shown for v in (p.elo, p.elo_lower, p.elo_upper)], 30)
    hi += 0.5 * (hi - lo)  # room above for the names of the accepted changes
    fig, ax = plt.subplots(figsize=(11, 6.4), dpi=chart.DPI)
    style = {"H1": ("tab:green", "H1 accepted: the change kept"), "H0": ("tab:red", "H0 accepted: rejected"),
             "open": ("0.6", "stopped without a verdict")}
    seen: set[str] = set()
    for x, p in zip(xs, shown):
        colour, name = style[p.verdict]
        marker = "D" if p.variant != "shogi" else "v" if p.elo < lo else "^" if p.elo > hi else "o"
        y, y_lo, y_hi = (min(max(v, lo), hi) for v in (p.elo, p.elo_lower, p.elo_upper))
        ax.errorbar(x, y, yerr=[[y - y_lo], [y_hi - y]], fmt=marker, ms=6 if p.verdict == "H1" else 4,
                    color=colour, mfc=colour if p.verdict != "open" else "white", capsize=2,
                    lw=1.3 if p.verdict == "H1" else 0.8, zorder=3 if p.verdict == "H1" else 2,
                    label=name if p.verdict not in seen else "_nolegend_")
        seen.add(p.verdict)
        if p.verdict == "H1":
            label = p.label + (" (dai shogi)" if p.variant != "shogi" and "dai shogi" not in p.label else "")
            ax.annotate(f"{label}: {p.elo:+.0f}", (x, y_hi), xytext=(0, 4), textcoords="offset points",
                        rotation=90, ha="center", va="bottom", fontsize=7.5)
    ax.axhline(0, color="black", lw=0.8)
    ax.set_ylim(lo - 0.03 * (hi - lo), hi + 0.03 * (hi - lo))  # the triangles of infinite values stay whole
    ax.set_ylabel("Elo of the change against its base, 95% interval")
    ax.set_xlabel("date the SPRT started")
    ax.grid(alpha=0.3)
    _date_axis(ax)
    from matplotlib.lines import Line2D

    handles, labels = ax.get_legend_handles_labels()
    if any(p.variant != "shogi" for p in shown):
        handles.append(Line2D([], [], marker="D", ls="", color="tab:green"))
        labels.append("diamond: dai shogi (not 9x9)")
    ax.legend(handles, labels, loc="lower left", fontsize=8)
    fig.suptitle(f"Self-play SPRTs of the shogi engine's changes ({source})")
    ax.set_title("each run once, with its final figures (the partial lines of a resumed run left out); "
                 "a triangle at the edge: Elo +inf or -inf", fontsize=8)
    fig.tight_layout()
    return fig


def draw(out_dir: str | Path = DEFAULT_PLOT_DIR, gauntlet: str | Path = L.LEDGER,
         sprt: str | Path = SPRT_LEDGER) -> list[Path]:
    """Both pictures from the two ledgers into ``out_dir`` (a ledger that is missing or empty gives none); returns
    the paths written. Raises :class:`LedgerError` for an unreadable line, :class:`bench.chart.ChartError` without
    matplotlib."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    chart.pyplot()  # fail before reading anything when matplotlib is missing
    written = []
    g = read_gauntlet(Path(gauntlet))
    s = read_sprt(Path(sprt))
    if g:
        written.append(plot_gauntlet(g, out_dir / GAUNTLET_PNG, Path(gauntlet).name))
    if [p for p in s if not p.superseded]:
        written.append(plot_sprt(s, out_dir / SPRT_PNG, Path(sprt).name))
    return written
