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
    """Rows to stdout as a table, CSV (LF line ends) or JSON lines (one object per row).

    The table is a grid when every column fits the terminal at its full width, else one
    block per row (``column | value``, as psql's ``\\x``), each value cut to one line of
    the terminal; a footer says how many were cut and that CSV / JSON give them whole."""
    if format is Format.csv:
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(rows)
    elif format is Format.json:
        for row in rows:
            sys.stdout.write(json.dumps(dict(zip(columns, row)), default=str) + "\n")
    else:
        console = Console()
        cells = [[_cell(v) for v in row] for row in rows]
        if _grid_width(columns, cells) <= console.width:
            table = Table(*columns, show_lines=False)
            for row in cells:
                table.add_row(*row)
            console.print(table)
        else:
            _print_vertical(console, columns, cells)
    sys.stdout.flush()


def _cell(value: object) -> str:
    return "NULL" if value is None else str(value)


def _grid_width(columns: list[str], cells: list[list[str]]) -> int:
    """Width of a rich grid that shows every cell on one line (borders and padding: 3 per column + 1)."""
    widths = [len(c) for c in columns]
    for row in cells:
        for i, value in enumerate(row):
            widths[i] = max(widths[i], max((len(line) for line in value.splitlines()), default=0))
    return sum(widths) + 3 * len(columns) + 1


def _print_vertical(console: Console, columns: list[str], cells: list[list[str]]) -> None:
    """One block per row: ``-[ row N ]-`` then ``column | value``, values cut to one line."""
    key_width = max((len(c) for c in columns), default=0)
    room = max(10, console.width - key_width - 3)
    cut = 0
    for n, row in enumerate(cells, 1):
        sys.stdout.write(f"-[ row {n} ]" + "-" * max(0, console.width - len(f"-[ row {n} ]") - 1) + "\n")
        for name, value in zip(columns, row):
            one = value.replace("\r", "").replace("\n", "\\n")
            if len(one) > room:
                one, cut = one[: room - 1] + "…", cut + 1
            sys.stdout.write(f"{name.ljust(key_width)} | {one}\n")
    if not cells:
        sys.stdout.write("(0 rows)\n")
    if cut:
        sys.stdout.write(f"({cut} value(s) cut to fit {console.width} columns; --format json or csv "
                         "gives them whole)\n")
