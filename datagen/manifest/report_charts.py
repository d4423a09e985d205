"""The report's charts: one ``ChartSpec`` per chart, holding its query and its drawing.

A spec's ``query(db)`` returns the rows behind the chart (both what is drawn and the table
printed under the picture) or why it is skipped (an absent or empty table or column).
Its ``draw(fig, chart)`` draws those rows with matplotlib, imported only when something is
drawn. Figures use matplotlib's default style whatever the user's matplotlibrc says, at a
fixed size and dpi, and are saved without the ``Software`` PNG text chunk, so the same
rows give the same PNG bytes. To add a chart: write its query and its drawing next to
each other, make its spec, and add it to ``CHARTS``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import humanize

if TYPE_CHECKING:
    from matplotlib.figure import Figure

TOP_REPOS = 25  # the token chart shows this many repos; the rest are one "(other repos)" bar
OTHER_REPOS = "(other repos)"  # the token_counts row label of repos past the top ones
# syntax_error_ratio bins; 0.05 is the default syntax.max_error_ratio
RATIO_BINS: list[tuple[str, str]] = [
    ("0", "r = 0"),
    ("≤0.01", "r > 0 AND r <= 0.01"),
    ("≤0.05", "r > 0.01 AND r <= 0.05"),
    ("≤0.1", "r > 0.05 AND r <= 0.1"),
    ("≤0.25", "r > 0.1 AND r <= 0.25"),
    ("≤0.5", "r > 0.25 AND r <= 0.5"),
    ("≤1", "r > 0.5"),
]
WIDTH = 9.0  # inches
DPI = 100
KEPT, DROPPED = "#2e7d32", "#9e9e9e"


def _bar_height(n: int) -> float:
    """Figure height for ``n`` horizontal bars: readable labels, bounded."""
    return min(max(2.2, 0.9 + 0.35 * n), 14.0)


@dataclass(frozen=True)
class ChartSpec:
    """One chart: what it shows (key = PNG file stem), its query and its drawing."""

    key: str
    title: str
    note: str  # what is counted, one line under the title
    columns: list[str]
    query: Callable[[Db], list[tuple] | str]  # rows, or why the chart is skipped
    draw: Callable[[Figure, Chart], None]
    height: Callable[[Chart], float] = lambda chart: _bar_height(len(chart.rows))

    def collect(self, db: Db) -> Chart:
        found = self.query(db)
        return Chart(self, skipped=found) if isinstance(found, str) else Chart(self, rows=found)


@dataclass
class Chart:
    """A spec with the rows of one manifest behind it, or why it was skipped."""

    spec: ChartSpec
    rows: list[tuple] = field(default_factory=list)
    skipped: str | None = None

    @property
    def key(self) -> str:
        return self.spec.key

    @property
    def title(self) -> str:
        return self.spec.title

    @property
    def note(self) -> str:
        return self.spec.note

    @property
    def columns(self) -> list[str]:
        return self.spec.columns

    @property
    def png(self) -> str:
        return f"{self.key}.png"


class Db:
    """The read-only manifest plus what tables/columns it has, and the optional run filter."""

    def __init__(self, con: duckdb.DuckDBPyConnection, run_id: str | None):
        self.con = con
        self.run_id = run_id
        self.columns: dict[str, set[str]] = {}
        for table, column in con.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'main'"
        ).fetchall():
            self.columns.setdefault(table, set()).add(column)

    def missing(self, table: str, *columns: str) -> str | None:
        """Why ``table`` cannot be charted (absent table/column, or no rows), else None."""
        if table not in self.columns:
            return f"the manifest has no `{table}` table"
        absent = [c for c in columns if c not in self.columns[table]]
        if absent:
            return f"`{table}` has no column {', '.join(f'`{c}`' for c in absent)}"
        (n,) = self.rows(f"SELECT count(*) FROM {table} WHERE {self.where(table)}")[0]
        if n == 0:
            run = f" for run {self.run_id}" if self.run_id and "run_id" in self.columns[table] else ""
            return f"`{table}` has no rows{run}"
        return None

    def where(self, table: str) -> str:
        if self.run_id is not None and "run_id" in self.columns.get(table, ()):
            return "run_id = '" + self.run_id.replace("'", "''") + "'"  # a run_id listed in runs (collect)
        return "true"

    def rows(self, sql: str) -> list[tuple]:
        return self.con.execute(sql).fetchall()


def _human(n: float) -> str:
    return humanize.naturalsize(n, binary=True, format="%.1f")


def _hbars(fig: Figure, labels: list[str], values: list[float], colors: list[str], text: list[str],
           xlabel: str) -> None:
    from matplotlib.ticker import EngFormatter

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


def _files_by_outcome_rows(db: Db) -> list[tuple] | str:
    if skip := db.missing("files", "decision", "reason", "bytes"):
        return skip
    return db.rows(
        "SELECT CASE WHEN decision = 'kept' THEN 'kept' ELSE coalesce(reason, '(no reason)') END AS outcome, "
        f"decision, count(*) AS files, sum(bytes)::BIGINT AS bytes FROM files WHERE {db.where('files')} "
        "GROUP BY ALL ORDER BY files DESC, outcome")


def _files_by_outcome_draw(fig: Figure, chart: Chart) -> None:
    labels = [r[0] for r in chart.rows]
    files = [r[2] for r in chart.rows]
    colors = [KEPT if r[1] == "kept" else DROPPED for r in chart.rows]
    _hbars(fig, labels, files, colors, [str(n) for n in files], "files")


FILES_BY_OUTCOME = ChartSpec(
    "files_by_outcome", "Files kept and dropped, by reason",
    "Every file the crawl saw: kept, or dropped with the reason recorded in `files.reason`.",
    ["outcome", "decision", "files", "bytes"],
    query=_files_by_outcome_rows, draw=_files_by_outcome_draw,
)


def _kept_bytes_by_lang_rows(db: Db) -> list[tuple] | str:
    if skip := db.missing("files", "decision", "lang", "bytes"):
        return skip
    rows = db.rows(
        "SELECT coalesce(lang, '(unknown)') AS lang, count(*) AS files, sum(bytes)::BIGINT AS bytes "
        f"FROM files WHERE decision = 'kept' AND {db.where('files')} GROUP BY ALL ORDER BY bytes DESC, lang")
    return rows or "no file was kept"


def _kept_bytes_by_lang_draw(fig: Figure, chart: Chart) -> None:
    labels = [r[0] for r in chart.rows]
    sizes = [r[2] for r in chart.rows]
    _hbars(fig, labels, sizes, [KEPT] * len(sizes), [f"{_human(b)} ({f} files)" for _, f, b in chart.rows],
           "bytes kept")


KEPT_BYTES_BY_LANG = ChartSpec(
    "kept_bytes_by_lang", "Kept bytes by language",
    "Size of the kept files per language (`files.lang`; unknown when null).",
    ["lang", "files", "bytes"],
    query=_kept_bytes_by_lang_rows, draw=_kept_bytes_by_lang_draw,
)


def _cluster_sizes_rows(db: Db) -> list[tuple] | str:
    if skip := db.missing("clusters", "size"):
        return skip
    return db.rows(f"SELECT size, count(*) AS clusters, sum(size)::BIGINT AS files FROM clusters "
     f"WHERE {db.where('clusters')} GROUP BY size ORDER BY size")


def _cluster_sizes_draw(fig: Figure, chart: Chart) -> None:
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


CLUSTER_SIZES = ChartSpec(
    "cluster_sizes", "Near-duplicate cluster sizes",
    "Clusters of near-duplicate files (table `clusters`) by number of members; "
    "one member of each is kept.", ["size", "clusters", "files"],
    query=_cluster_sizes_rows, draw=_cluster_sizes_draw,
    height=lambda chart: 4.0,
)


def _syntax_error_ratio_rows(db: Db) -> list[tuple] | str:
    if skip := db.missing("files", "lang", "syntax_error_ratio"):
        return skip
    bins = ", ".join(f"count(*) FILTER ({cond}) AS \"{label}\"" for label, cond in RATIO_BINS)
    rows = db.rows(
        f"SELECT lang, count(*) AS files, {bins} FROM (SELECT coalesce(lang, '(unknown)') AS lang, "
        f"syntax_error_ratio AS r FROM files WHERE syntax_error_ratio IS NOT NULL AND {db.where('files')}) "
        "GROUP BY lang ORDER BY lang")
    return rows or "no file has a `syntax_error_ratio` (syntax check off or no grammar)"


def _syntax_error_ratio_draw(fig: Figure, chart: Chart) -> None:
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


SYNTAX_ERROR_RATIO = ChartSpec(
    "syntax_error_ratio", "Syntax error ratio by language",
    "Share of lines with tree-sitter ERROR/MISSING nodes, per file seen (kept or dropped); "
    "files without a grammar are not counted.",
    ["lang", "files", *(label for label, _ in RATIO_BINS)],
    query=_syntax_error_ratio_rows, draw=_syntax_error_ratio_draw,
    height=lambda chart: 0.6 + 2.2 * math.ceil(len(chart.rows) / 3),
)


def _token_counts_rows(db: Db) -> list[tuple] | str:
    if skip := db.missing("token_counts", "repo", "lang", "files", "tokens"):
        return skip
    return db.rows(f"""
        WITH t AS (SELECT repo, CASE WHEN lang = '' THEN '(headers+EOS)' ELSE lang END AS lang, files, tokens
     FROM token_counts WHERE {db.where('token_counts')}),
             top AS (SELECT repo FROM t GROUP BY repo ORDER BY sum(tokens) DESC, repo LIMIT {TOP_REPOS}),
             named AS (SELECT CASE WHEN repo IN (SELECT repo FROM top) THEN repo ELSE '(other repos)' END AS repo,
                              lang, files, tokens FROM t)
        SELECT repo, lang, sum(files)::BIGINT AS files, sum(tokens)::BIGINT AS tokens FROM named
        GROUP BY repo, lang
        ORDER BY repo = '(other repos)', sum(sum(tokens)) OVER (PARTITION BY repo) DESC, repo, lang""")


def _token_counts_draw(fig: Figure, chart: Chart) -> None:
    import matplotlib
    from matplotlib.ticker import EngFormatter

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


TOKEN_COUNTS = ChartSpec(
    "token_counts", "Tokens per repository and language",
    f"Packed tokens (table `token_counts`, all splits) of the {TOP_REPOS} largest repos, largest "
    "first; the rest are summed in the table only; `(headers+EOS)` is document headers and "
    "end-of-text tokens.",
    ["repo", "lang", "files", "tokens"],
    query=_token_counts_rows, draw=_token_counts_draw,
    height=lambda chart: _bar_height(len({r[0] for r in chart.rows if r[0] != OTHER_REPOS})),
)


def _teacher_calls_rows(db: Db) -> list[tuple] | str:
    if skip := db.missing("teacher_calls", "status", "cached", "prompt_tokens", "completion_tokens"):
        return skip
    return db.rows(
        "SELECT status, count(*) AS calls, count(*) FILTER (cached) AS cached, "
        "sum(prompt_tokens)::BIGINT AS prompt_tokens, sum(completion_tokens)::BIGINT AS completion_tokens "
        f"FROM teacher_calls WHERE {db.where('teacher_calls')} GROUP BY status ORDER BY status")


def _teacher_calls_draw(fig: Figure, chart: Chart) -> None:
    colors = {"ok": KEPT, "truncated": "#ef6c00", "invalid": "#c62828", "error": "#6a1b9a"}
    labels = [r[0] for r in chart.rows]
    calls = [r[1] for r in chart.rows]
    _hbars(fig, labels, calls, [colors.get(s, DROPPED) for s in labels],
           [f"{c} ({k} cached)" for _, c, k, *_ in chart.rows], "calls")


TEACHER_CALLS = ChartSpec(
    "teacher_calls", "Teacher calls by status",
    "Requests to teacher models recorded in `teacher_calls` (cached answers cost nothing).",
    ["status", "calls", "cached", "prompt_tokens", "completion_tokens"],
    query=_teacher_calls_rows, draw=_teacher_calls_draw,
)


CHARTS: list[ChartSpec] = [FILES_BY_OUTCOME, KEPT_BYTES_BY_LANG, CLUSTER_SIZES, SYNTAX_ERROR_RATIO, TOKEN_COUNTS,
                           TEACHER_CALLS]


def draw_chart(chart: Chart, path: Path) -> None:
    """Draw ``chart`` to ``path`` (PNG) with a fixed style, size and dpi."""
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    with matplotlib.rc_context():
        matplotlib.rcdefaults()  # the user's matplotlibrc must not change the bytes
        fig = Figure(figsize=(WIDTH, chart.spec.height(chart)), dpi=DPI, layout="constrained")
        FigureCanvasAgg(fig)
        chart.spec.draw(fig, chart)
        fig.suptitle(chart.title, fontsize=11)
        fig.savefig(path, format="png", dpi=DPI, metadata={"Software": None})
