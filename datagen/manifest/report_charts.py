"""Drawing of the report's charts (matplotlib, Agg canvas, no pyplot global state).

Imported only by ``build_report`` when there is something to draw. Figures are made with
matplotlib's default style whatever the user's matplotlibrc says, at a fixed size and dpi, and
saved without the ``Software`` PNG text chunk, so the same rows give the same PNG bytes.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import humanize
import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import EngFormatter

OTHER_REPOS = "(other repos)"  # the token_counts row label of repos past the top ones

if TYPE_CHECKING:  # report imports this module lazily; no import cycle at run time
    from datagen.manifest.report import Chart

WIDTH = 9.0  # inches
DPI = 100
KEPT, DROPPED = "#2e7d32", "#9e9e9e"


def _human(n: float) -> str:
    return humanize.naturalsize(n, binary=True, format="%.1f")


def _bar_height(n: int) -> float:
    """Figure height for ``n`` horizontal bars: readable labels, bounded."""
    return min(max(2.2, 0.9 + 0.35 * n), 14.0)


def _hbars(fig: Figure, labels: list[str], values: list[float], colors: list[str], text: list[str],
           xlabel: str) -> None:
    ax = fig.add_subplot()
    ys = list(range(len(labels)))
    ax.barh(ys, values, color=colors)
    ax.set_yticks(ys, labels)
    ax.invert_yaxis()  # largest first, at the top
    ax.set_xlabel(xlabel)
    ax.set_xlim(0, max(values) * 1.18 if values and max(values) > 0 else 1)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.xaxis.set_major_formatter(EngFormatter(sep=" "))
    for y, v, t in zip(ys, values, text):
        ax.annotate(t, (v, y), xytext=(3, 0), textcoords="offset points", va="center", fontsize=8)
    ax.spines[["top", "right"]].set_visible(False)


def _files_by_outcome(fig: Figure, chart: Chart) -> None:
    labels = [r[0] for r in chart.rows]
    files = [r[2] for r in chart.rows]
    colors = [KEPT if r[1] == "kept" else DROPPED for r in chart.rows]
    _hbars(fig, labels, files, colors, [str(n) for n in files], "files")


def _kept_bytes_by_lang(fig: Figure, chart: Chart) -> None:
    labels = [r[0] for r in chart.rows]
    sizes = [r[2] for r in chart.rows]
    _hbars(fig, labels, sizes, [KEPT] * len(sizes), [f"{_human(b)} ({f} files)" for _, f, b in chart.rows],
           "bytes kept")


def _cluster_sizes(fig: Figure, chart: Chart) -> None:
    ax = fig.add_subplot()
    sizes = [r[0] for r in chart.rows]
    counts = [r[1] for r in chart.rows]
    bars = ax.bar(sizes, counts, width=0.8, color="#1565c0")
    if len(sizes) <= 20:
        ax.bar_label(bars, fontsize=8)
    ax.set_xlim(min(sizes) - 1, max(sizes) + 1)  # one size alone must not fill the axes
    ax.set_xlabel("files in cluster")
    ax.set_ylabel("clusters")
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.yaxis.get_major_locator().set_params(integer=True)
    if max(counts) > 50 * min(counts):
        ax.set_yscale("log")
    ax.spines[["top", "right"]].set_visible(False)


def _syntax_error_ratio(fig: Figure, chart: Chart) -> None:
    ncols = min(3, len(chart.rows))
    nrows = math.ceil(len(chart.rows) / ncols)
    labels = chart.columns[2:]  # the ratio bins
    axes = fig.subplots(nrows, ncols, squeeze=False, sharex=True)
    for i, ax in enumerate(axes.flat):
        if i >= len(chart.rows):
            ax.set_visible(False)
            continue
        lang, files, *counts = chart.rows[i]
        bars = ax.bar(range(len(labels)), counts, color=["#2e7d32"] * 3 + ["#ef6c00"] * (len(labels) - 3))
        ax.bar_label(bars, [str(c) if c else "" for c in counts], fontsize=7)  # a lone bad file shows
        ax.set_ylim(0, max(max(counts), 1) * 1.2)
        ax.set_title(f"{lang} ({files} files)", fontsize=9)
        ax.set_xticks(range(len(labels)), labels, fontsize=7)
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.tick_params(axis="y", labelsize=7)
    fig.supxlabel("share of lines with syntax errors (bins; orange: above the default 0.05 limit)", fontsize=9)
    fig.supylabel("files", fontsize=9)


def _token_counts(fig: Figure, chart: Chart) -> None:
    # the "(other repos)" sum is in the table, not drawn: it would dwarf every named bar
    repos = list(dict.fromkeys(r[0] for r in chart.rows if r[0] != OTHER_REPOS))
    other = sum(r[3] for r in chart.rows if r[0] == OTHER_REPOS)
    langs = sorted({r[1] for r in chart.rows})
    cmap = matplotlib.colormaps["tab10" if len(langs) <= 10 else "tab20"]
    tokens = {(r[0], r[1]): r[3] for r in chart.rows}
    ax = fig.add_subplot()
    left = [0] * len(repos)
    for i, lang in enumerate(langs):
        values = [tokens.get((repo, lang), 0) for repo in repos]
        color = DROPPED if lang == "(headers+EOS)" else cmap(i % cmap.N)
        ax.barh(range(len(repos)), values, left=left, label=lang, color=color)
        left = [a + b for a, b in zip(left, values)]
    ax.set_yticks(range(len(repos)), repos)
    ax.invert_yaxis()
    ax.set_xlabel("tokens" + (f" (other repos, not drawn: {EngFormatter(sep=' ')(other)})" if other else ""))
    ax.xaxis.set_major_formatter(EngFormatter(sep=" "))
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="lang", title_fontsize=8)
    ax.spines[["top", "right"]].set_visible(False)


def _teacher_calls(fig: Figure, chart: Chart) -> None:
    colors = {"ok": KEPT, "truncated": "#ef6c00", "invalid": "#c62828", "error": "#6a1b9a"}
    labels = [r[0] for r in chart.rows]
    calls = [r[1] for r in chart.rows]
    _hbars(fig, labels, calls, [colors.get(s, DROPPED) for s in labels],
           [f"{c} ({k} cached)" for _, c, k, *_ in chart.rows], "calls")


DRAW = {
    "files_by_outcome": _files_by_outcome,
    "kept_bytes_by_lang": _kept_bytes_by_lang,
    "cluster_sizes": _cluster_sizes,
    "syntax_error_ratio": _syntax_error_ratio,
    "token_counts": _token_counts,
    "teacher_calls": _teacher_calls,
}


def figure_height(chart: Chart) -> float:
    if chart.key == "syntax_error_ratio":
        return 0.6 + 2.2 * math.ceil(len(chart.rows) / 3)
    if chart.key == "token_counts":
        return _bar_height(len({r[0] for r in chart.rows if r[0] != OTHER_REPOS}))
    if chart.key == "cluster_sizes":
        return 4.0
    return _bar_height(len(chart.rows))


def draw_chart(chart: Chart, path: Path) -> None:
    """Draw ``chart`` to ``path`` (PNG) with a fixed style, size and dpi."""
    with matplotlib.rc_context():
        matplotlib.rcdefaults()  # the user's matplotlibrc must not change the bytes
        fig = Figure(figsize=(WIDTH, figure_height(chart)), dpi=DPI, layout="constrained")
        FigureCanvasAgg(fig)
        DRAW[chart.key](fig, chart)
        fig.suptitle(chart.title, fontsize=11)
        fig.savefig(path, format="png", dpi=DPI, metadata={"Software": None})
