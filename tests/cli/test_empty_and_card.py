"""No silent emptiness: an input that keeps nothing is refused, a card is written only when
it loads, and a build without a tokenizer says that packing is off. Real processes."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def cli(*args: str) -> subprocess.CompletedProcess:
    env = {"COLUMNS": "200", "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "DATAGEN_NO_PROGRESS": "1"}
    return subprocess.run([sys.executable, "-m", "datagen.cli.app", *args], capture_output=True, text=True,
                          env=env, timeout=300)


def test_empty_input_is_refused_with_one_line(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    out = tmp_path / "out"
    proc = cli("build", "cpt-corpus", "-i", str(empty), "-o", str(out))
    assert proc.returncode == 2, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in proc.stderr
    assert "no file kept of 1 seen" in errors[0] and "empty_repo 1" in errors[0] and "--allow-empty" in errors[0]
    assert not (out / "data").exists() and not (out / "README.md").exists()


def test_allow_empty_writes_the_manifest_but_no_card_that_cannot_load(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    out = tmp_path / "out"
    proc = cli("build", "cpt-corpus", "-i", str(empty), "-o", str(out), "--allow-empty")
    assert proc.returncode == 0, proc.stderr
    assert (out / "manifest.duckdb").is_file() and not (out / "README.md").exists()
    reasons = cli("sql", str(out), "SELECT reason FROM files", "-f", "csv")
    assert reasons.stdout.splitlines() == ["reason", "empty_repo"]


def test_allow_empty_resumes_the_refused_run(tmp_path):
    """The refused build's crawl is kept: the same command with --allow-empty finishes it."""
    empty = tmp_path / "empty"
    empty.mkdir()
    out = tmp_path / "out"
    assert cli("build", "cpt-corpus", "-i", str(empty), "-o", str(out)).returncode == 2
    assert cli("build", "cpt-corpus", "-i", str(empty), "-o", str(out), "--allow-empty").returncode == 0
    runs = cli("sql", str(out), "SELECT count(DISTINCT run_id), max(status) FROM runs", "-f", "csv")
    assert runs.stdout.splitlines()[1] == "1,finished"


@pytest.mark.slow
def test_card_loads_with_datasets_and_packing_off_is_said(two_repos, tmp_path):
    datasets = pytest.importorskip("datasets")
    out = tmp_path / "out"
    proc = cli("build", "cpt-corpus", *[str(p) for p in two_repos], "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "packing off: pack.tokenizer is not set" in proc.stderr and "--set pack.tokenizer=PATH" in proc.stderr
    kept = cli("sql", str(out), "SELECT count(*) FROM files WHERE decision='kept'", "-f", "csv")
    ds = datasets.load_dataset(str(out), cache_dir=str(tmp_path / "hf-cache"))
    assert list(ds) == ["train"]
    assert ds["train"].num_rows == int(kept.stdout.splitlines()[1]) > 0


def test_quiet_build_prints_no_summary_and_verbose_shows_stage_logs(two_repos, tmp_path):
    quiet = cli("-q", "build", "cpt-corpus", *[str(p) for p in two_repos], "-o", str(tmp_path / "q"))
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stdout == "" and "kept" not in quiet.stderr
    loud = cli("-v", "build", "cpt-corpus", *[str(p) for p in two_repos], "-o", str(tmp_path / "v"))
    assert loud.returncode == 0, loud.stderr
    assert "kept" in loud.stdout and "INFO" in loud.stderr


def test_an_empty_tasks_input_gives_no_silent_empty_pool(tmp_path):
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "tasks.jsonl").write_text("")
    out = tmp_path / "pool"
    proc = cli("build", "rl-pool", "-i", str(tasks), "-o", str(out))
    assert proc.returncode == 2, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "no instruction pooled of 0 tasks" in errors[0] and "--allow-empty" in errors[0]
    assert not (out / "data").exists()
    assert cli("build", "rl-pool", "-i", str(tasks), "-o", str(out), "--allow-empty").returncode == 0
