"""Pictures of the benchmarks, drawn with matplotlib (the ``bench`` extra) on its Agg backend (no display needed).

:func:`pyplot` is the one way in: it selects Agg before pyplot is imported and turns a missing matplotlib into a
:class:`ChartError` that says how to install it. :func:`bar_chart` draws the ``python -m bench`` chart;
:mod:`bench.history` draws the strength ledgers.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

#: how to get matplotlib: the extra that installs it
INSTALL_HINT = "pip install -e '.[bench]'"
#: the resolution of every picture written here: readable text at a few hundred KB at most
DPI = 100
#: one colour per engine, the same in every picture; engines not listed take the next colours of the cycle
ENGINE_COLOURS = {"ours": "#1f77b4", "cshogi": "#ff7f0e", "python-shogi": "#2ca02c"}


class ChartError(RuntimeError):
    """A picture cannot be drawn (no matplotlib); the message is one line saying why and what to do."""


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend; :class:`ChartError` with the install hint without matplotlib."""
    try:
        import matplotlib
    except ImportError:
        raise ChartError(f"matplotlib is not installed: {INSTALL_HINT}") from None
    matplotlib.use("Agg")  # before pyplot: files only, never a window (CI and ssh have no display)
    import matplotlib.pyplot as plt

    return plt


def si(value: float) -> str:
    """A rate in short form for a bar's label.

    >>> si(42_123_456), si(2_640_000_000), si(264_000), si(950)
    ('42.1M', '2.64G', '264k', '950')
    """
    for factor, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= factor:
            scaled = value / factor
            return f"{scaled:.3g}{suffix}" if scaled < 100 else f"{scaled:.0f}{suffix}"
    return f"{value:.0f}"


def save(fig: Any, path: str | Path) -> Path:
    """Write a figure as a PNG at :data:`DPI` and close it (pyplot keeps every open figure); returns ``path``."""
    path = Path(path)
    try:
        fig.savefig(path, dpi=DPI, format="png")
    finally:
        pyplot().close(fig)
    return path


def bar_chart(panels: Sequence[tuple[str, Sequence[tuple[str, Mapping[str, float]]]]], path: str | Path,
              title: str, xlabel: str = "nodes per second (log scale)") -> Path:
    """:func:`bar_figure` written as a PNG; returns ``path``."""
    return save(bar_figure(panels, title, xlabel), path)


def bar_figure(panels: Sequence[tuple[str, Sequence[tuple[str, Mapping[str, float]]]]], title: str,
               xlabel: str = "nodes per second (log scale)") -> Any:
    """Horizontal grouped bars on a log scale: a matplotlib figure.

    ``panels`` is ``[(panel title, [(row label, {engine: value}), ...]), ...]``: one subplot per panel, one group of
    bars per row, one bar per engine in the row, each bar labelled with its value; a legend names the engines, in
    the same colours in every panel. Empty panels are left out.
    """
    plt = pyplot()
    panels = [(name, rows) for name, rows in panels if rows]
    if not panels:
        raise ValueError("nothing to draw: no rows")
    engines: list[str] = []
    for _, rows in panels:
        for _, values in rows:
            engines += [e for e in values if e not in engines]
    cycle = [c for c in plt.rcParams["axes.prop_cycle"].by_key()["color"] if c not in ENGINE_COLOURS.values()]
    colours = {e: ENGINE_COLOURS.get(e) or cycle[i % len(cycle)] for i, e in enumerate(engines)}
    # y units of each panel: a bar is 1, a gap between groups 0.6, and 0.7 of margin at each end; the panels'
    # heights follow them, so that a bar is equally thick in every panel
    spans = [sum(len(v) for _, v in rows) + 0.6 * (len(rows) - 1) + 1.4 for _, rows in panels]
    fig, axes = plt.subplots(len(panels), 1, figsize=(9, 0.27 * sum(spans) + 0.85 * len(panels) + 0.6), dpi=DPI,
                             squeeze=False, gridspec_kw={"height_ratios": spans})
    top = max(v for _, rows in panels for _, values in rows for v in values.values())
    bottom = min(v for _, rows in panels for _, values in rows for v in values.values() if v > 0)
    shown: set[str] = set()
    for ax, (name, rows) in zip(axes[:, 0], panels):
        y, ticks, labels = 0.0, [], []
        for label, values in rows:
            start = y
            for engine, value in values.items():
                ax.barh(y, value, height=0.8, color=colours[engine],
                        label=engine if engine not in shown else "_nolegend_")
                shown.add(engine)
                ax.text(value * 1.04, y, si(value), va="center", fontsize=8)
                y += 1
            ticks.append((start + y - 1) / 2)
            labels.append(label)
            y += 0.6  # a gap between groups
        ax.set_yticks(ticks, labels)
        ax.set_ylim(y - 0.6 + 0.2, -0.7)  # inverted: the first row on top, as in the printed table
        ax.set_xscale("log")
        ax.set_xlim(bottom / 2, top * 4)  # room for the value labels right of the longest bar
        ax.set_title(name, fontsize=10, loc="left")
        ax.grid(axis="x", which="major", alpha=0.3)
    axes[-1, 0].set_xlabel(xlabel)
    fig.suptitle(title)
    fig.legend(loc="upper right", fontsize=9, title="engine", title_fontsize=9)
    fig.tight_layout(rect=(0, 0, 0.86, 1))
    return fig
