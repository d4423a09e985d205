"""`datagen sql`: a table that stays readable for wide rows, CSV with LF line ends.

A real manifest (``Manifest`` creates every table) and the real command in a subprocess
with an 80-column terminal."""

from __future__ import annotations

import subprocess
import sys

import pytest

from datagen.manifest import Manifest

WIDE = "SELECT " + ", ".join(f"'value{i}' AS column_{i}" for i in range(26))


def sql(out, query: str, *flags: str, columns: int = 80) -> bytes:
    proc = subprocess.run([sys.executable, "-m", "datagen.cli.app", "sql", str(out), query, *flags],
                          capture_output=True, env={"COLUMNS": str(columns), "PATH": "/usr/bin:/bin"}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.fixture
def out(tmp_path):
    Manifest(tmp_path).close()
    return tmp_path


def test_wide_rows_switch_to_one_block_per_row(out):
    text = sql(out, f"{WIDE} UNION ALL {WIDE}").decode()
    lines = text.splitlines()
    assert lines[0].startswith("-[ row 1 ]") and any(line.startswith("-[ row 2 ]") for line in lines)
    assert "column_25 | value25" in lines
    assert max(len(line) for line in lines) <= 80


def test_narrow_rows_stay_a_grid(out):
    text = sql(out, "SELECT 1 AS a, 'x' AS b").decode()
    assert "┃ a ┃ b ┃" in text and "-[ row" not in text


def test_long_values_are_cut_and_the_cut_is_said(out):
    text = sql(out, f"SELECT repeat('x', 500) AS body, {', '.join(f'{i} AS c{i}' for i in range(3))}").decode()
    body = next(line for line in text.splitlines() if line.startswith("body"))
    assert body.endswith("…") and len(body) <= 80
    assert "1 value(s) cut to fit 80 columns; --format json or csv gives them whole" in text


def test_csv_has_lf_line_ends(out):
    raw = sql(out, "SELECT 1 AS a, 2 AS b UNION ALL SELECT 3, 4 ORDER BY a", "--format", "csv")
    assert raw == b"a,b\n1,2\n3,4\n"
