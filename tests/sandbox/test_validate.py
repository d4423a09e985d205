"""Environments, test runners and task replay on tiny repos built here."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from datagen.config.sandbox import EnvConfig, SandboxConfig, ValidateRecipe, ValidationConfig
from datagen.records.tasks import TaskRecord
from datagen.sandbox.envs.python.manager import EnvManager
from datagen.sandbox.harness.runners import run_tests
from datagen.sandbox.harness.task_store import read_tasks
from datagen.sandbox.harness.validate import Validator
from tests.sandbox.conftest import git
from tests.sitekit import SITE


def recipe(tmp_path: Path, reruns: int = 2) -> ValidateRecipe:
    return ValidateRecipe(
        sandbox=SandboxConfig(backend="bwrap"),
        env=EnvConfig(cache_dir=str(tmp_path / "envs"), inherit_site_packages=[SITE]),
        validation=ValidationConfig(reruns=reruns, workers=2, test_timeout_s=60),
    )


def task(fields: dict, **over) -> TaskRecord:
    row = {"instance_id": "calc__add", "repo": "local/calc",
           "FAIL_TO_PASS": ["tests/test_add.py::test_add"],
           "PASS_TO_PASS": json.dumps(["tests/test_mul.py::test_mul"]), **fields, **over}
    return TaskRecord.model_validate(row)


@pytest.mark.slow
def test_replay_proves_a_good_task(bwrap, tmp_path, calc_task):
    fields = calc_task
    row = Validator(recipe(tmp_path), bwrap).validate(task(fields), tmp_path)
    assert row.status == "valid", row
    assert row.fail_to_pass == ["tests/test_add.py::test_add"]
    assert row.pass_to_pass == ["tests/test_mul.py::test_mul"]
    assert row.flaky == [] and row.backend == "bwrap"


@pytest.mark.slow
def test_replay_rejects_a_fix_that_does_not_fix(bwrap, tmp_path, calc_task):
    fields = calc_task
    bad = task(fields, patch="", instance_id="calc__nofix")
    missing = task(fields, repo_path="nowhere", instance_id="calc__gone")
    rows = Validator(recipe(tmp_path, reruns=1), bwrap).validate_all(
        [(bad, tmp_path), (missing, tmp_path)])
    assert (rows[0].status, rows[0].reason) == ("invalid", "f2p_mismatch")
    assert rows[0].missing_f2p == ["tests/test_add.py::test_add"]
    assert (rows[1].status, rows[1].reason) == ("error", "repo_missing")


def test_env_is_cached_by_dependency_files(bwrap, tmp_path, limits):
    repo = tmp_path / "r"
    repo.mkdir()
    envs = EnvManager(EnvConfig(cache_dir=str(tmp_path / "envs"), inherit_site_packages=[SITE]),
                      bwrap, limits.model_copy(update={"timeout_s": 60}))
    first = envs.ensure(repo)
    stamp = (first.path / "ok.json").stat().st_mtime_ns
    assert envs.ensure(repo).path == first.path
    assert (first.path / "ok.json").stat().st_mtime_ns == stamp  # reused, not rebuilt
    (repo / "requirements.txt").write_text("# nothing yet\n")
    assert envs.key(repo) != first.path.name  # a dependency file changes the key


def _node_with_junit() -> bool:
    """Node's JUnit reporter arrived in 20.10 (Debian bookworm ships 18)."""
    if shutil.which("node") is None:
        return False
    out = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout
    major, minor = (int(x) for x in out.strip().lstrip("v").split(".")[:2])
    return (major, minor) >= (20, 10)


@pytest.mark.skipif(not _node_with_junit(), reason="needs node >= 20.10 (JUnit reporter)")
def test_node_runner_reports_per_test(bwrap, workdir, limits):
    (workdir / "test").mkdir()
    (workdir / "test" / "a.test.js").write_text(
        "const test = require('node:test'); const assert = require('node:assert');\n"
        "test('ok', () => assert.ok(true));\n"
        "test('bad', () => assert.strictEqual(1, 2));\n")
    run = run_tests("node", bwrap, workdir, limits.model_copy(update={"memory_mb": 1024}), [])
    assert run.results == {"ok": "pass", "bad": "fail"}, run.run.stderr[-500:]
    assert run.run.exit_code == 1


def test_read_tasks_accepts_swe_bench_strings_and_rejects_junk(tmp_path):
    good = {"instance_id": "x", "repo": "r", "base_commit": "", "patch": "", "repo_path": ".",
            "FAIL_TO_PASS": '["a"]', "PASS_TO_PASS": ["b"]}
    (tmp_path / "tasks.jsonl").write_text(json.dumps(good) + "\n\n")
    [(t, base)] = read_tasks(tmp_path)
    assert t.FAIL_TO_PASS == ["a"] and t.PASS_TO_PASS == ["b"] and base == tmp_path
    (tmp_path / "bad.jsonl").write_text('{"instance_id": 1}\n')
    from datagen.errors import UserError

    with pytest.raises(UserError, match="bad.jsonl:1"):
        read_tasks(tmp_path / "bad.jsonl")


@pytest.mark.slow
def test_replay_notes_runs_stopped_by_a_limit(bwrap, tmp_path, calc_task):
    # one line, so the hunk still applies: iter(int, 1) yields 0 forever
    hang = calc_task["patch"].replace("+    return a + b", "+    return next(x for x in iter(int, 1) if x)")
    # 8 s: room for the unpatched run (about 1 s) on a loaded machine; the hang takes them all
    cfg = recipe(tmp_path, reruns=1).model_copy(
        update={"validation": ValidationConfig(reruns=1, workers=2, test_timeout_s=8)})
    row = Validator(cfg, bwrap).validate(task(calc_task, patch=hang), tmp_path)
    assert row.status == "invalid"
    assert any(n.startswith("after run 1: stopped by the timeout limit") for n in row.notes)
    assert not any(n.startswith("before") for n in row.notes)


@pytest.mark.slow
def test_env_failure_is_recorded_not_retried_unless_asked(bwrap, tmp_path, calc_task):
    repo = tmp_path / "calc"
    (repo / "requirements.txt").write_text("nosuchpkg @ file:///no-such-package-dir\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "deps")
    fields = {**calc_task, "base_commit": git(repo, "rev-parse", "HEAD").strip()}
    row = Validator(recipe(tmp_path, reruns=1), bwrap).validate(task(fields), tmp_path)
    assert (row.status, row.reason) == ("error", "env_setup_failed")
    # the note says why, in the installer's words, not only "dependencies ... failed (exit 2)"
    assert "dependencies (requirements.txt) failed (exit " in row.notes[0]
    assert "no-such-package-dir" in row.notes[0]
    failed = next((tmp_path / "envs").glob("*/failed.json"))
    assert "no-such-package-dir" in json.loads(failed.read_text())["log_tail"]
    failed.write_text(failed.read_text().replace("failed (", "failed-marker ("))
    start = time.monotonic()
    again = Validator(recipe(tmp_path, reruns=1), bwrap).validate(task(fields), tmp_path)
    assert time.monotonic() - start < 1.5
    assert "failed-marker" in again.notes[0]  # the record was read, nothing rebuilt
    retried = Validator(recipe(tmp_path, reruns=1), bwrap, retry_failed_envs=True).validate(
        task(fields), tmp_path)
    assert retried.reason == "env_setup_failed" and "failed-marker" not in retried.notes[0]


def test_last_error_prefers_pips_error_lines():
    from datagen.sandbox.envs.python.manager import last_error

    log = "Collecting x\nERROR: first\n  detail\nERROR: second\nERROR: third\nHint: y\n"
    assert last_error(log) == "ERROR: second | ERROR: third"
    assert last_error("building...\nSegmentation fault\n\n") == "Segmentation fault"
    assert last_error("") == ""
