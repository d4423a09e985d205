"""``datagen report OUT``: one self-contained report.html (and a markdown page with PNGs)."""

from __future__ import annotations

from pathlib import Path

import typer


def report_command(
    out: str = typer.Argument(..., help="Build output folder, its manifest.duckdb, or a `build all` folder."),
    dest: Path = typer.Option(None, "--dest", "-d", help="Where to write the report (default: OUT/report)."),
    run_id: str = typer.Option(None, "--run-id", help="Only rows of this run (default: every row)."),
) -> None:
    """Draw charts of a build's manifest (opened read-only) into OUT/report/.

    Writes report.html, one self-contained page (charts embedded, nothing fetched when
    viewed), and index.md with one PNG per chart; beside each chart, the table of its
    numbers: files kept/dropped by reason, languages, licenses, file sizes, near-duplicate
    clusters, syntax errors, tokens, task candidates by reason, task yield per strategy,
    fix sizes, pool outcomes, pass rates, teacher calls and cost, ledger progress. A chart
    whose table is absent or empty is skipped and listed as skipped. A `build all` folder
    gets one report per stage. The same manifest gives the same files, byte for byte.

    Examples:

      datagen report out/cpt-corpus                 # -> out/cpt-corpus/report/report.html

      datagen report out/all                        # each stage: out/all/<stage>/report/

      datagen report out/cpt-corpus --dest /tmp/cpt-report

      datagen report out/teacher/manifest.duckdb    # a teacher run: teacher-call chart only
    """
    from datagen.manifest.report import build_report  # duckdb loads only when a report runs
    from datagen.manifest.runs import stage_manifests

    stages = stage_manifests(out)
    for stage, folder in stages:
        target = dest if dest is None or len(stages) == 1 else dest / stage
        report = build_report(folder, dest=target, run_id=run_id)
        for chart in report.charts:
            if chart.skipped:
                typer.echo(f"skipped {chart.key}: {chart.skipped}")
            else:
                typer.echo(f"wrote {report.folder / chart.png}")
        typer.echo(f"wrote {report.folder / 'report.html'} and index.md ({len(report.drawn)} chart(s), "
                   f"{len(report.charts) - len(report.drawn)} skipped)")
