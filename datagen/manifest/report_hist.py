"""Histogram charts for the report: one ``ChartSpec`` made from a table, a column and bins.

``histogram(...)`` counts the rows of ``table`` whose ``column`` falls in each half-open bin
``[low, high)`` (``None`` = unbounded), optionally once per value of a group column (e.g.
kept / dropped: one bar each per bin), and draws vertical bars with their counts on top.
The table under the chart is the same counts: one row per bin, one column per group.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from datagen.manifest.report_charts import DROPPED, KEPT, Chart, ChartSpec, Db

if TYPE_CHECKING:
    from matplotlib.figure import Figure

Bin = tuple[str, float | None, float | None]  # label, low (inclusive), high (exclusive)
PALETTE = [KEPT, DROPPED, "#1565c0", "#ef6c00", "#6a1b9a", "#c62828"]


def _condition(low: float | None, high: float | None) -> str:
    parts = ([f"v >= {low}"] if low is not None else []) + ([f"v < {high}"] if high is not None else [])
    return " AND ".join(parts) or "true"


def histogram(key: str, title: str, note: str, table: str, column: str, bins: list[Bin], xlabel: str, *,
              group: tuple[str, list[str]] | None = None, ylabel: str = "count") -> ChartSpec:
    """A histogram spec (see the module docstring). ``group`` = (SQL expression, its values)."""
    expr, values = group or ("'count'", ["count"])
    needs = [column, *([expr] if group else [])]

    def rows(db: Db) -> list[tuple] | str:
        if skip := db.missing(table, *needs):
            return skip
        cells = ", ".join(f"count(*) FILTER ({_condition(lo, hi)} AND g = '{value}')"
                          for _, lo, hi in bins for value in values)
        (counts,) = db.rows(f"SELECT [{cells}] FROM (SELECT {column} AS v, {expr} AS g FROM {table} "
                            f"WHERE {column} IS NOT NULL AND {db.where(table)})")[0]
        if not any(counts):
            return f"no `{table}` row has a `{column}`"
        n = len(values)
        return [(label, *counts[i * n:(i + 1) * n]) for i, (label, _, _) in enumerate(bins)]

    def draw(fig: Figure, chart: Chart) -> None:
        ax = fig.add_subplot()
        width = 0.8 / len(values)
        for j, value in enumerate(values):
            xs = [i + (j - (len(values) - 1) / 2) * width for i in range(len(chart.rows))]
            heights = [r[j + 1] for r in chart.rows]
            bars = ax.bar(xs, heights, width=width, label=value, color=PALETTE[j % len(PALETTE)])
            ax.bar_label(bars, [str(h) if h else "" for h in heights], fontsize=7)
        ax.set_xticks(range(len(chart.rows)), [r[0] for r in chart.rows], fontsize=8)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.yaxis.get_major_locator().set_params(integer=True)
        if group:
            ax.legend(fontsize=8)
        ax.spines[["top", "right"]].set_visible(False)

    return ChartSpec(key, title, note, ["bin", *values], query=rows, draw=draw, height=lambda chart: 3.6)


__all__ = ["histogram", "Bin"]
