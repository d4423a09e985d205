"""`datagen sandbox run|check` and `datagen validate` through the CLI."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from datagen.cli.app import app

runner = CliRunner()
SITE = str(Path(pytest.__file__).resolve().parent.parent)


def test_run_passes_the_exit_code_and_output(bwrap, workdir):
    r = runner.invoke(app, ["sandbox", "run", "-w", str(workdir), "--",
                            "sh", "-c", "echo hello; echo oops >&2; exit 7"])
    assert r.exit_code == 7
    assert "hello" in r.stdout


def test_run_reports_a_limit_with_its_own_code(bwrap, workdir):
    r = runner.invoke(app, ["sandbox", "run", "-w", str(workdir), "--timeout", "0.5", "--",
                            "sleep", "10"])
    assert r.exit_code == 124
    assert "stopped by the timeout limit" in r.stderr
    r = runner.invoke(app, ["sandbox", "run", "-w", str(workdir), "--memory-mb", "64", "--",
                            sys._base_executable, "-c", "x = 'a' * 10**9"])
    assert r.exit_code == 123


def test_run_needs_a_command_and_a_folder(workdir):
    r = runner.invoke(app, ["sandbox", "run", "-w", str(workdir)])
    assert r.exit_code != 0 and "give the command" in str(r.exception)
    r = runner.invoke(app, ["sandbox", "run", "-w", str(workdir / "nope"), "--", "true"])
    assert "not a folder" in str(r.exception)


def test_validate_command_replays_a_task_file(bwrap, tmp_path, calc_task):
    row = {"instance_id": "calc__add", "repo": "local/calc", **calc_task,
           "FAIL_TO_PASS": ["tests/test_add.py::test_add"],
           "PASS_TO_PASS": ["tests/test_mul.py::test_mul"]}
    broken = {**row, "instance_id": "calc__wrong", "FAIL_TO_PASS": ["tests/test_mul.py::test_mul"]}
    (tmp_path / "tasks.jsonl").write_text(json.dumps(row) + "\n" + json.dumps(broken) + "\n")
    out = tmp_path / "out"
    args = ["validate", str(tmp_path / "tasks.jsonl"), "-o", str(out),
            "--set", "validation.reruns=1", "--set", "sandbox.backend=bwrap",
            "--set", f"env.cache_dir={tmp_path / 'envs'}",
            "--set", f"env.inherit_site_packages=[{SITE}]"]
    r = runner.invoke(app, args)
    assert r.exit_code == 1, r.stdout
    assert "valid    calc__add" in r.stdout
    assert "invalid  calc__wrong (f2p_mismatch)" in r.stdout
    assert "1/2 tasks still prove themselves" in r.stdout
    from datagen.manifest import query

    _, rows = query(out, "SELECT instance_id, status FROM validations ORDER BY instance_id")
    assert rows == [("calc__add", "valid"), ("calc__wrong", "invalid")]


def test_check_proves_bwrap_contains_every_probe(bwrap):
    r = runner.invoke(app, ["sandbox", "check", "--backend", "bwrap"])
    assert r.exit_code == 0, r.stdout
    assert "back end: bwrap" in r.stdout
    assert "NOT CONTAINED" not in r.stdout and r.stdout.count("contained") >= 10


def test_check_says_loudly_what_the_fallback_cannot_isolate():
    r = runner.invoke(app, ["sandbox", "check", "--backend", "subprocess"])
    assert r.exit_code == 1
    assert "NOT ENFORCED: shares the host network" in r.stdout
    lines = {line.split()[0]: line for line in r.stdout.splitlines() if line.startswith("  ")}
    assert "NOT CONTAINED" in lines["network"]
