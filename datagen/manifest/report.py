"""``datagen report``: charts and a markdown page of the numbers in a build's manifest.

The manifest is opened read-only. Each chart is one SQL query; its rows are both what is
drawn (``report_charts``) and the table printed under the picture, so every bar can also be
read as text. A chart whose table or column is absent or empty is skipped, and the page says
why, so the same command works on any build's manifest (a cpt-corpus build, a teacher run).
Output is deterministic: rows are sorted, and nothing in the page or the PNGs depends on the
time or the machine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from datagen.errors import UserError
from datagen.manifest.db import manifest_path, open_readonly

TOP_REPOS = 25  # the token chart shows this many repos; the rest are one "(other repos)" bar
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
RUN_COLUMNS = ["run_id", "command", "recipe_hash", "status", "started_at", "finished_at", "datagen_version"]


@dataclass
class Chart:
    """One chart: the rows behind it, or why it was skipped."""

    key: str  # file stem of the PNG
    title: str
    note: str  # what is counted, one line under the title
    columns: list[str] = field(default_factory=list)
    rows: list[tuple] = field(default_factory=list)
    skipped: str | None = None

    @property
    def png(self) -> str:
        return f"{self.key}.png"


@dataclass
class Report:
    folder: Path
    runs: list[tuple]
    charts: list[Chart]

    @property
    def drawn(self) -> list[Chart]:
        return [c for c in self.charts if not c.skipped]


class _Db:
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


def _files_by_outcome(db: _Db) -> Chart:
    chart = Chart("files_by_outcome", "Files kept and dropped, by reason",
                  "Every file the crawl saw: kept, or dropped with the reason recorded in `files.reason`.",
                  ["outcome", "decision", "files", "bytes"])
    if skip := db.missing("files", "decision", "reason", "bytes"):
        chart.skipped = skip
        return chart
    chart.rows = db.rows(
        "SELECT CASE WHEN decision = 'kept' THEN 'kept' ELSE coalesce(reason, '(no reason)') END AS outcome, "
        f"decision, count(*) AS files, sum(bytes)::BIGINT AS bytes FROM files WHERE {db.where('files')} "
        "GROUP BY ALL ORDER BY files DESC, outcome")
    return chart


def _kept_bytes_by_lang(db: _Db) -> Chart:
    chart = Chart("kept_bytes_by_lang", "Kept bytes by language",
                  "Size of the kept files per language (`files.lang`; unknown when null).",
                  ["lang", "files", "bytes"])
    skip = db.missing("files", "decision", "lang", "bytes")
    if not skip:
        chart.rows = db.rows(
            "SELECT coalesce(lang, '(unknown)') AS lang, count(*) AS files, sum(bytes)::BIGINT AS bytes "
            f"FROM files WHERE decision = 'kept' AND {db.where('files')} GROUP BY ALL ORDER BY bytes DESC, lang")
        skip = None if chart.rows else "no file was kept"
    chart.skipped = skip
    return chart


def _cluster_sizes(db: _Db) -> Chart:
    chart = Chart("cluster_sizes", "Near-duplicate cluster sizes",
                  "Clusters of near-duplicate files (table `clusters`) by number of members; "
                  "one member of each is kept.", ["size", "clusters", "files"])
    if skip := db.missing("clusters", "size"):
        chart.skipped = skip
        return chart
    chart.rows = db.rows(f"SELECT size, count(*) AS clusters, sum(size)::BIGINT AS files FROM clusters "
                         f"WHERE {db.where('clusters')} GROUP BY size ORDER BY size")
    return chart


def _syntax_error_ratio(db: _Db) -> Chart:
    chart = Chart("syntax_error_ratio", "Syntax error ratio by language",
                  "Share of lines with tree-sitter ERROR/MISSING nodes, per file seen (kept or dropped); "
                  "files without a grammar are not counted.",
                  ["lang", "files", *(label for label, _ in RATIO_BINS)])
    skip = db.missing("files", "lang", "syntax_error_ratio")
    if not skip:
        bins = ", ".join(f"count(*) FILTER ({cond}) AS \"{label}\"" for label, cond in RATIO_BINS)
        chart.rows = db.rows(
            f"SELECT lang, count(*) AS files, {bins} FROM (SELECT coalesce(lang, '(unknown)') AS lang, "
            f"syntax_error_ratio AS r FROM files WHERE syntax_error_ratio IS NOT NULL AND {db.where('files')}) "
            "GROUP BY lang ORDER BY lang")
        skip = None if chart.rows else "no file has a `syntax_error_ratio` (syntax check off or no grammar)"
    chart.skipped = skip
    return chart


def _token_counts(db: _Db) -> Chart:
    chart = Chart("token_counts", "Tokens per repository and language",
                  f"Packed tokens (table `token_counts`, all splits) of the {TOP_REPOS} largest repos, largest "
                  "first; the rest are summed in the table only; `(headers+EOS)` is document headers and "
                  "end-of-text tokens.",
                  ["repo", "lang", "files", "tokens"])
    if skip := db.missing("token_counts", "repo", "lang", "files", "tokens"):
        chart.skipped = skip
        return chart
    chart.rows = db.rows(f"""
        WITH t AS (SELECT repo, CASE WHEN lang = '' THEN '(headers+EOS)' ELSE lang END AS lang, files, tokens
                   FROM token_counts WHERE {db.where('token_counts')}),
             top AS (SELECT repo FROM t GROUP BY repo ORDER BY sum(tokens) DESC, repo LIMIT {TOP_REPOS}),
             named AS (SELECT CASE WHEN repo IN (SELECT repo FROM top) THEN repo ELSE '(other repos)' END AS repo,
                              lang, files, tokens FROM t)
        SELECT repo, lang, sum(files)::BIGINT AS files, sum(tokens)::BIGINT AS tokens FROM named
        GROUP BY repo, lang
        ORDER BY repo = '(other repos)', sum(sum(tokens)) OVER (PARTITION BY repo) DESC, repo, lang""")
    return chart


def _teacher_calls(db: _Db) -> Chart:
    chart = Chart("teacher_calls", "Teacher calls by status",
                  "Requests to teacher models recorded in `teacher_calls` (cached answers cost nothing).",
                  ["status", "calls", "cached", "prompt_tokens", "completion_tokens"])
    if skip := db.missing("teacher_calls", "status", "cached", "prompt_tokens", "completion_tokens"):
        chart.skipped = skip
        return chart
    chart.rows = db.rows(
        "SELECT status, count(*) AS calls, count(*) FILTER (cached) AS cached, "
        "sum(prompt_tokens)::BIGINT AS prompt_tokens, sum(completion_tokens)::BIGINT AS completion_tokens "
        f"FROM teacher_calls WHERE {db.where('teacher_calls')} GROUP BY status ORDER BY status")
    return chart


CHARTS = [_files_by_outcome, _kept_bytes_by_lang, _cluster_sizes, _syntax_error_ratio, _token_counts,
          _teacher_calls]


def collect(out: str | Path, run_id: str | None = None) -> tuple[list[tuple], list[Chart]]:
    """The runs and the chart rows of a manifest (no drawing). ``run_id`` limits rows to one run."""
    con = open_readonly(out)
    try:
        db = _Db(con, None)
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
        return runs, [make(db) for make in CHARTS]
    finally:
        con.close()


def build_report(out: str | Path, dest: str | Path | None = None, run_id: str | None = None) -> Report:
    """Write ``index.md`` and one PNG per chart into ``dest`` (default ``OUT/report``)."""
    runs, charts = collect(out, run_id)
    path = manifest_path(out)
    folder = Path(dest) if dest is not None else path.parent / "report"
    folder.mkdir(parents=True, exist_ok=True)
    report = Report(folder=folder, runs=runs, charts=charts)
    if report.drawn:
        from datagen.manifest.report_charts import draw_chart  # matplotlib only on this path

        for chart in report.drawn:
            draw_chart(chart, folder / chart.png)
    for chart in charts:  # a chart skipped now must not leave last run's picture behind
        if chart.skipped:
            (folder / chart.png).unlink(missing_ok=True)
    (folder / "index.md").write_text(render_markdown(report, path), encoding="utf-8")
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
