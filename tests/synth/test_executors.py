"""The tasks build on datatrove's Ray and Slurm executors gives the local build's bytes.

The reference is the session's local build of ``minilib`` (``built``). Ray: a local Ray
instance started by the test (``tests/conftest.py``). Slurm: the generated job scripts run
under the stand-in scheduler of ``tests/standin/slurm``, with the first array task of the
first validation wave lost: the build's next job submits it again, it completes, and the
build goes on to the grown wave and the outputs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.builds.executorkit import jobs, manifest_rows, slurm_env, wait_for_queue
from tests.sealed import envs_digest
from tests.synth.buildkit import build_args, read_tasks
from tests.synth.conftest import cli_build

pytestmark = pytest.mark.slow
# what two runs of one build may differ in: run times
TABLES = {"candidates": ("sandbox_s",), "tasks": (), "repo_baselines": ("suite_s",)}


def assert_same_build(a: Path, b: Path) -> None:
    assert read_tasks(a), "the reference build kept no task"
    assert (a / "tasks.jsonl").read_bytes() == (b / "tasks.jsonl").read_bytes()
    assert envs_digest(a) == envs_digest(b)
    assert manifest_rows(a, TABLES) == manifest_rows(b, TABLES)


def test_ray_build_matches_local(built, minilib, synth_cache, ray_cluster, tmp_path):
    ray = cli_build([minilib], tmp_path / "ray", synth_cache, "executor.kind=ray", "workers=2")
    assert_same_build(built.out, ray.out)


def test_slurm_build_with_a_lost_array_task_resumes_and_matches_local(built, minilib, synth_cache, tmp_path):
    state = tmp_path / "state"
    env = slurm_env(state, "validating:0", DATAGEN_CACHE=str(synth_cache))
    cmd = [sys.executable, "-m", "datagen.cli.app", *build_args([minilib], tmp_path / "out", synth_cache),
           "--executor", "slurm"]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "submitted baselines: 1 of 1 task(s) as Slurm job" in proc.stdout
    wait_for_queue(env, timeout=900)
    out = tmp_path / "out"
    runs = subprocess.run([sys.executable, "-m", "datagen.cli.app", "runs", str(out), "-f", "json"], env=env,
                          capture_output=True, text=True)
    assert json.loads(runs.stdout)["status"] == "finished", runs.stdout
    assert_same_build(built.out, out)
    stages = [(j["name"].rsplit("-", 1)[0], j["state"]) for j in jobs(state) if j["deps"] == []]
    assert stages == [("datagen-baselines", "COMPLETED"), ("datagen-validating", "FAILED"),
                      ("datagen-validating", "COMPLETED"), ("datagen-validating-grown", "COMPLETED")]
    builds = [j for j in jobs(state) if j["name"] == "datagen-build-tasks"]
    assert len(builds) == 4 and all(j["deps"][0][0] == "afterany" and j["state"] == "COMPLETED" for j in builds)
