"""``datagen runs OUT``: the runs of a build's manifest (or of every stage of ``build all``)."""

from __future__ import annotations

import typer

from datagen.cli.sql import Format, print_rows


def runs_command(
    out: str = typer.Argument(..., help="Build output folder, its manifest.duckdb, or a `build all` folder."),
    format: Format = typer.Option(Format.table, "--format", "-f", help="table, csv or json."),
) -> None:
    """List the runs recorded in a manifest: command, status, timing, recipe hash.

    A `datagen build all` folder lists the runs of each stage's manifest, with the stage.
    A run whose status is `running` was killed (or is still going); re-running the same
    command resumes it.

    Examples:

      datagen runs out/cpt-corpus

      datagen runs out/all                  # every stage of `datagen build all`

      datagen runs out/tasks -f json
    """
    from datagen.manifest.runs import RUNS_COLUMNS, list_runs  # duckdb loads only when needed

    print_rows(RUNS_COLUMNS, list_runs(out), format)
