"""``datagen sql OUT "QUERY"``: read-only SQL over a build's manifest."""

from __future__ import annotations

import csv
import json
import sys
from enum import Enum

import typer
from rich.console import Console
from rich.table import Table


class Format(str, Enum):
    table = "table"
    csv = "csv"
    json = "json"


def sql_command(
    out: str = typer.Argument(..., help="Build output folder (or a manifest.duckdb file)."),
    statement: str = typer.Argument(..., metavar="QUERY", help="SQL to run (read-only)."),
    format: Format = typer.Option(Format.table, "--format", "-f", help="table, csv or json."),
) -> None:
    """Run SQL on a build's manifest (opened read-only) and print the result; with several
    statements (separated by ;), each result in turn (a blank line between them).

    Examples:

      datagen sql out/cpt-corpus "SELECT lang, count(*), sum(bytes) FROM files WHERE decision='kept' GROUP BY lang"

      datagen sql out/cpt-corpus "SELECT reason, count(*) FROM files GROUP BY reason" --format csv
    """
    from datagen.manifest import query_all  # duckdb loads only when a query runs

    for i, (columns, rows) in enumerate(query_all(out, statement)):
        if i:
            sys.stdout.write("\n")
            sys.stdout.flush()
        print_rows(columns, rows, format)


def print_rows(columns: list[str], rows: list[tuple], format: Format) -> None:
    """Rows to stdout as a table, CSV or JSON lines (one object per row)."""
    if format is Format.csv:
        writer = csv.writer(sys.stdout)
        writer.writerow(columns)
        writer.writerows(rows)
    elif format is Format.json:
        for row in rows:
            sys.stdout.write(json.dumps(dict(zip(columns, row)), default=str) + "\n")
    else:
        table = Table(*columns, show_lines=False)
        for row in rows:
            table.add_row(*("NULL" if v is None else str(v) for v in row))
        Console().print(table)
    sys.stdout.flush()
