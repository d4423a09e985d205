"""``datagen report OUT``: PNG charts and a markdown page of a build's manifest."""

from __future__ import annotations

from pathlib import Path

import typer


def report_command(
    out: str = typer.Argument(..., help="Build output folder (or its manifest.duckdb file)."),
    dest: Path = typer.Option(None, "--dest", "-d", help="Where to write the report (default: OUT/report)."),
    run_id: str = typer.Option(None, "--run-id", help="Only rows of this run (default: every row)."),
) -> None:
    """Draw charts of a build's manifest (opened read-only) into OUT/report/.

    Writes index.md with one PNG per chart and, under each, the table of the numbers
    drawn: files kept/dropped by reason, kept bytes by language, near-duplicate cluster
    sizes, syntax error ratio per language, tokens per repo and language, teacher calls
    by status. A chart whose table is absent or empty is skipped and listed as skipped.
    Running it twice on the same manifest gives the same files, byte for byte.

    Examples:

      datagen report out/cpt-corpus                 # -> out/cpt-corpus/report/index.md

      datagen report out/cpt-corpus --dest /tmp/cpt-report

      datagen report out/teacher/manifest.duckdb    # a teacher run: teacher-call chart only
    """
    from datagen.manifest.report import build_report  # duckdb loads only when a report runs

    report = build_report(out, dest=dest, run_id=run_id)
    for chart in report.charts:
        if chart.skipped:
            typer.echo(f"skipped {chart.key}: {chart.skipped}")
        else:
            typer.echo(f"wrote {report.folder / chart.png}")
    typer.echo(f"wrote {report.folder / 'index.md'} ({len(report.drawn)} chart(s), "
               f"{len(report.charts) - len(report.drawn)} skipped)")
