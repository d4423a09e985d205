"""``datagen report``: charts of a build's manifest, as one self-contained ``report.html``
and as a markdown page with PNGs.

The manifest is opened read-only. Each chart is one ``ChartSpec`` (``report_charts``): a
query whose rows are both what is drawn and the table printed under the picture, so every bar can also be
read as text. A chart whose table or column is absent or empty is skipped, and the page says
why, so the same command works on any build's manifest (a cpt-corpus build, a teacher run).
Output is deterministic: rows are sorted, and nothing in the page or the PNGs depends on the
time or the machine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from datagen.errors import UserError
from datagen.manifest.db import manifest_path, open_readonly
from datagen.manifest.report_builds import ALL_CHARTS
from datagen.manifest.report_charts import Chart, Db, draw_chart
from datagen.manifest.report_html import render_html

RUN_COLUMNS = ["run_id", "command", "recipe_hash", "status", "started_at", "finished_at", "datagen_version"]


@dataclass
class Report:
    folder: Path
    runs: list[tuple]
    charts: list[Chart]

    @property
    def drawn(self) -> list[Chart]:
        return [c for c in self.charts if not c.skipped]


def collect(out: str | Path, run_id: str | None = None) -> tuple[list[tuple], list[Chart]]:
    """The runs and the chart rows of a manifest (no drawing). ``run_id`` limits rows to one run."""
    con = open_readonly(out)
    try:
        db = Db(con, None)
        runs: list[tuple] = []
        if "runs" in db.columns:
            cols = ", ".join(c if c in db.columns["runs"] else f"NULL AS {c}" for c in RUN_COLUMNS)
            runs = db.rows(f"SELECT {cols} FROM runs ORDER BY started_at, run_id")
        if run_id is not None:
            if run_id not in {r[0] for r in runs}:
                known = ", ".join(r[0] for r in runs) or "none"
                raise UserError(f"run {run_id!r} is not in {manifest_path(out)} (runs: {known})")
            db.run_id = run_id
            runs = [r for r in runs if r[0] == run_id]
        return runs, [spec.collect(db) for spec in ALL_CHARTS]
    finally:
        con.close()


def build_report(out: str | Path, dest: str | Path | None = None, run_id: str | None = None) -> Report:
    """Write ``report.html`` (self-contained), ``index.md`` and one PNG per chart into
    ``dest`` (default ``OUT/report``)."""
    runs, charts = collect(out, run_id)
    path = manifest_path(out)
    folder = Path(dest) if dest is not None else path.parent / "report"
    folder.mkdir(parents=True, exist_ok=True)
    report = Report(folder=folder, runs=runs, charts=charts)
    if report.drawn:
        for chart in report.drawn:
            draw_chart(chart, folder / chart.png)
    for chart in charts:  # a chart skipped now must not leave last run's picture behind
        if chart.skipped:
            (folder / chart.png).unlink(missing_ok=True)
    (folder / "index.md").write_text(render_markdown(report, path), encoding="utf-8")
    images = {c.key: (folder / c.png).read_bytes() for c in report.drawn}
    (folder / "report.html").write_text(render_html(report, path, images, RUN_COLUMNS), encoding="utf-8")
    return report


def render_markdown(report: Report, manifest: Path) -> str:
    """The page: runs, then each chart with the table of its numbers (or why it was skipped)."""
    lines = ["# Build report", "", f"Manifest: `{manifest.name}` (read-only). "
             f"{len(report.drawn)} chart(s) drawn, {len(report.charts) - len(report.drawn)} skipped.", ""]
    lines += ["## Runs", ""]
    lines += _table(RUN_COLUMNS, report.runs) if report.runs else ["_No `runs` rows in this manifest._"]
    skipped = [c for c in report.charts if c.skipped]
    if skipped:
        lines += ["", "## Skipped charts", ""]
        lines += [f"- {c.title}: skipped, {c.skipped}." for c in skipped]
    for chart in report.drawn:
        lines += ["", f"## {chart.title}", "", chart.note, "", f"![{chart.title}]({chart.png})", ""]
        lines += _table(chart.columns, chart.rows)
    return "\n".join(lines) + "\n"


def _cell(value: object) -> str:
    if value is None:
        return ""
    if hasattr(value, "isoformat"):
        return value.isoformat(sep=" ", timespec="seconds")
    return str(value).replace("|", "\\|").replace("\n", " ")


def _table(columns: Sequence[str], rows: Sequence[tuple]) -> list[str]:
    numeric = [all(isinstance(r[i], int | float) for r in rows) and rows for i in range(len(columns))]
    out = ["| " + " | ".join(columns) + " |",
           "|" + "|".join("---:" if num else "---" for num in numeric) + "|"]
    out += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return out
