"""A tasks build killed while it publishes leaves the previous tasks or the new ones, never a
mix (the kill points and what "the outputs" are: tests/builds/test_killed_builds.py; a file of
its own so that it and the pool's run on two workers)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.builds.test_killed_builds import _cli, kill_at_each_point
from tests.synth.buildkit import ROOT, build_args, build_env, make_minilib

pytestmark = pytest.mark.slow


TASK_ROWS = "SELECT instance_id FROM tasks ORDER BY 1"


def _task_ids(out: Path) -> list[str]:
    return [json.loads(line)["instance_id"] for line in (out / "tasks.jsonl").read_text().splitlines()]


def test_a_killed_tasks_build_leaves_the_old_tasks_or_the_new_ones(tmp_path):
    lib = make_minilib(tmp_path / "minilib")
    cache = tmp_path / "cache"
    out = tmp_path / "tasks"
    env = {**build_env(cache), "DATAGEN_NO_PROGRESS": "1"}
    one = ("synth.families=[procedural]", "synth.strategies=[py_op_change_v1]")
    two = ("synth.families=[procedural]",)  # both strategies of the kit: more tasks
    first = subprocess.run(_cli(*build_args([lib], out, cache, *one)), env=env, capture_output=True, text=True,
                           cwd=ROOT, timeout=900)
    assert first.returncode == 0, first.stderr[-3000:]
    old, new = kill_at_each_point(out, _cli(*build_args([lib], out, cache, *two)), env, TASK_ROWS,
                                  "write:tasks.jsonl", _task_ids)
    assert len(new[1]) > len(old[1])
    assert any(rel.startswith("envs/") and rel not in old[0] for rel in new[0])  # the new envs switched in
