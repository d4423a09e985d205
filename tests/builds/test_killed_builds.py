"""A build killed while it publishes leaves the previous outputs or the new ones, never a mix.

Each build runs as the CLI in its own process and is killed (SIGKILL, no cleanup) at a
fault point (``DATAGEN_FAULT``, ``datagen.runtime.faults``) of its last steps:

- ``write:<file>``: an output half written (whole in its temp file, not yet renamed), in
  the staging folder: the output folder still holds the old outputs, untouched;
- ``switch-move#2``: two new files moved in, the rest still staged, the manifest old: a
  mix on disk until ``recover`` (what the next build on the folder runs first) puts the
  old files back;
- ``switch-commit``: the manifest committed, the old files not yet removed: ``recover``
  finishes the switch, and the folder holds the new outputs, the same bytes as a build
  that was never killed.

"The outputs" are every file of the folder (its bytes) but the manifest and the work
folder, with what the manifest lists (its ``shards`` and the build's rows), which must
agree with the files.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from datagen.runtime.switch import journal_path, recover
from tests.builds.test_rl_pool import tasks_file  # noqa: F401 - the fixture
from tests.synth.buildkit import ROOT

pytestmark = pytest.mark.slow


def files(out: Path) -> dict[str, str | None]:
    """Every output file's sha256 (empty folders as None), the manifest, the work folder and
    the run's kept logs (``logs/``: timings and ranks of each run, not outputs) aside."""
    found: dict[str, str | None] = {}
    for p in sorted(out.rglob("*")):
        rel = p.relative_to(out)
        if rel.parts[0].startswith(".") or rel.parts[0].startswith("manifest.duckdb") or rel.parts[0] == "logs":
            continue
        if p.is_file():
            found[str(rel)] = hashlib.sha256(p.read_bytes()).hexdigest()
        elif p.is_dir() and not any(p.iterdir()):
            found[str(rel)] = None
    return found


def published(out: Path, rows_sql: str) -> tuple[dict, list]:
    """The folder's outputs and the manifest's rows, after checking that the files the
    manifest lists in ``shards`` are the ones on disk."""
    on_disk = files(out)
    con = duckdb.connect(str(out / "manifest.duckdb"), read_only=True)
    try:
        shards = con.execute("SELECT path, sha256 FROM shards ORDER BY path").fetchall()
        rows = con.execute(rows_sql).fetchall()
        tables = {t for (t,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    finally:
        con.close()
    assert "output_switch" not in tables
    # every output file the manifest lists is listed with its bytes (the pool's ``shards``
    # keeps earlier runs' rows too, so a row may name a file of an older build)
    shard_paths = {path for path, _ in shards}
    listed = {rel: sha for rel, sha in on_disk.items() if rel in shard_paths}
    assert listed and all((rel, sha) in set(shards) for rel, sha in listed.items()), (shards, on_disk)
    return on_disk, rows


def killed(cmd: list[str], env: dict[str, str], fault: str) -> None:
    proc = subprocess.run(cmd, env={**env, "DATAGEN_FAULT": fault}, capture_output=True, text=True, cwd=ROOT,
                          timeout=900)
    assert proc.returncode == -9, f"not killed at {fault}: rc {proc.returncode}\n{proc.stderr[-3000:]}"


def kill_at_each_point(out: Path, new: list[str], env: dict[str, str], rows_sql: str, mid_write: str,
                       ids_on_disk) -> tuple[tuple, tuple]:
    """Kill the ``new`` build over the outputs in ``out`` at each point; returns the old
    outputs and the new ones (each checked whole)."""
    old = published(out, rows_sql)
    assert ids_on_disk(out) == [r[0] for r in old[1]]

    killed(new, env, mid_write)
    assert published(out, rows_sql) == old and not journal_path(out).exists()

    killed(new, env, "switch-move#2")
    assert journal_path(out).is_file() and files(out) != old[0]  # a mix on disk, until recovered
    assert recover(out) == "rolled back"
    assert published(out, rows_sql) == old

    killed(new, env, "switch-commit")
    assert recover(out) == "finished"
    after = published(out, rows_sql)
    assert after != old and ids_on_disk(out) == [r[0] for r in after[1]]
    assert not journal_path(out).exists()

    rerun = subprocess.run(new, env=env, capture_output=True, text=True, cwd=ROOT, timeout=900)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert published(out, rows_sql) == after  # what a build that was never killed leaves
    return old, after


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-c", "from datagen.cli.app import main; main()", *args]


POOL_ROWS = "SELECT instruction_id FROM pool ORDER BY 1"


def _pool_ids(out: Path) -> list[str]:
    import pyarrow.parquet as pq

    return sorted(i for p in sorted((out / "data").glob("*.parquet"))
                  for i in pq.read_table(p).column("instruction_id").to_pylist())


def test_a_killed_rl_pool_build_leaves_the_old_pool_or_the_new_one(tmp_path, tasks_file):  # noqa: F811
    fewer = tmp_path / "fewer.jsonl"  # the new build's input: one task less, so other outputs
    fewer.write_text("".join(line + "\n" for line in tasks_file.read_text().splitlines()
                             if json.loads(line)["instance_id"] != "calc__easy"))
    out = tmp_path / "pool"
    env = {**os.environ, "DATAGEN_NO_PROGRESS": "1", "PYTHONPATH": str(ROOT)}
    build = lambda tasks: _cli("build", "rl-pool", "--tasks", str(tasks), "-o", str(out))  # noqa: E731
    first = subprocess.run(build(tasks_file), env=env, capture_output=True, text=True, cwd=ROOT)
    assert first.returncode == 0, first.stderr
    old, new = kill_at_each_point(out, build(fewer), env, POOL_ROWS, "write:swebench.jsonl", _pool_ids)
    assert [r[0] for r in old[1]] != [r[0] for r in new[1]]

    # a build killed mid-switch, then the other recipe: the folder is whole first (the new
    # outputs back), then the other build's outputs switch in
    killed(build(tasks_file), env, "switch-move#2")
    again = subprocess.run(build(tasks_file), env=env, capture_output=True, text=True, cwd=ROOT)
    assert again.returncode == 0, again.stderr
    assert published(out, POOL_ROWS) == old and not journal_path(out).exists()
