"""The CLI as a user runs it: help with examples, sql output formats, error messages."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import pytest

from datagen.builds.cpt_corpus.build import run_cpt_corpus


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "datagen.cli.app", *args], capture_output=True, text=True,
                          env={"COLUMNS": "200", "PATH": "/usr/bin:/bin", "DATAGEN_NO_PROGRESS": "1"})


@pytest.mark.slow
@pytest.mark.parametrize("args", [[], ["build"], ["build", "cpt-corpus"], ["sql"]])
def test_help_shows_examples(args):
    proc = cli(*args, "--help")
    assert proc.returncode == 0, proc.stderr
    assert "Usage" in proc.stdout
    if args:
        assert "Examples" in proc.stdout or "Commands" in proc.stdout


@pytest.mark.slow
def test_sql_formats(two_repos, tmp_path):
    out = tmp_path / "out"
    run_cpt_corpus(inputs=[str(p) for p in two_repos], output=out)
    q = "SELECT lang, count(*) AS n FROM files WHERE decision='kept' GROUP BY lang ORDER BY lang"
    as_csv = cli("sql", str(out), q, "--format", "csv")
    assert as_csv.returncode == 0, as_csv.stderr
    rows = list(csv.reader(io.StringIO(as_csv.stdout)))
    assert rows[0] == ["lang", "n"] and ["python", "3"] in rows
    as_json = cli("sql", str(out), q, "--format", "json")
    parsed = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert {"lang": "javascript", "n": 2} in parsed
    table = cli("sql", str(out), q)
    assert "python" in table.stdout


@pytest.mark.slow
def test_sql_is_read_only_and_errors_are_one_line(two_repos, tmp_path):
    out = tmp_path / "out"
    run_cpt_corpus(inputs=[str(p) for p in two_repos], output=out)
    proc = cli("sql", str(out), "DELETE FROM files")
    assert proc.returncode == 2 and proc.stderr.startswith("error: SQL error")
    assert cli("sql", str(out), "SELECT count(*) FROM files", "-f", "csv").stdout.splitlines()[1] != "0"
    missing = cli("sql", str(tmp_path / "nothing"), "SELECT 1")
    assert missing.returncode == 2 and "no manifest" in missing.stderr


def test_unknown_recipe_key_is_one_line_error(tmp_path):
    proc = cli("build", "cpt-corpus", "--set", "crawl.bogus=1", "-o", str(tmp_path / "o"))
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "error: --set: unknown key 'crawl.bogus' (valid keys under crawl: max_file_bytes, respect_gitignore, "
        "rules, licenses, allow_unknown_license, repo_names, files_per_task)"]


@pytest.mark.parametrize("args", [
    ["build", "cpt-corpus", "--bogus"], ["sql"], ["nosuch"], ["sql", ".", "SELECT 1", "-f", "xml"],
])
@pytest.mark.slow
def test_usage_errors_exit_2_without_traceback(args):
    proc = cli(*args)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and proc.stderr.strip()


@pytest.mark.slow
def test_sql_cannot_write_files(two_repos, tmp_path):
    out = tmp_path / "out"
    run_cpt_corpus(inputs=[str(p) for p in two_repos], output=out)
    target = tmp_path / "leak.csv"
    proc = cli("sql", str(out), f"COPY files TO '{target}'")
    assert proc.returncode == 2 and not target.exists()


@pytest.mark.slow
def test_sql_on_a_manifest_being_written_is_a_clear_error(two_repos, tmp_path):
    out = tmp_path / "out"
    run_cpt_corpus(inputs=[str(p) for p in two_repos], output=out)
    holder = subprocess.Popen([sys.executable, "-c", (
        "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print('ready', flush=True); time.sleep(30)"),
        str(out / "manifest.duckdb")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        proc = cli("sql", str(out), "SELECT 1")
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert "read-only" in proc.stderr
    finally:
        holder.kill()
        holder.wait()


def test_sql_prints_the_result_of_every_statement(tmp_path):
    from datagen.manifest import Manifest

    Manifest(tmp_path).close()
    proc = cli("sql", str(tmp_path), "SELECT 1 AS first; SELECT 2 AS second, 3 AS third", "--format", "csv")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "first\n1\n\nsecond,third\n2,3\n"
