"""The grading core without a server: ``TaskGrader.grade(instance_id, patch)`` on a real
task in the real sandbox, as `datagen serve grader` and an agent's rollouts call it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from datagen.config.sandbox import EnvConfig, SandboxLimits
from datagen.records.tasks import TaskRecord
from datagen.sandbox.isolation.select import get_sandbox
from datagen.score.grading import TaskGrader, UnknownTask
from tests.sandbox.conftest import make_task_repo
from tests.sitekit import SITE

LIMITS = SandboxLimits(timeout_s=60, cpu_s=60, memory_mb=1024, processes=64, file_size_mb=16,
                       tmp_size_mb=32, output_bytes=100_000)


@pytest.fixture
def grader(tmp_path) -> TaskGrader:
    fields = make_task_repo(tmp_path)
    task = TaskRecord.model_validate({
        "instance_id": "calc__add", "repo": "local/calc", "problem_statement": "add(2, 3) returns -1.",
        "FAIL_TO_PASS": ["tests/test_add.py::test_add"],
        "PASS_TO_PASS": json.dumps(["tests/test_mul.py::test_mul"]), **fields})
    missing = task.model_copy(update={"instance_id": "calc__gone", "repo_path": "nowhere"})
    env = EnvConfig(cache_dir=str(tmp_path / "envs"), inherit_site_packages=[SITE])
    tasks = {t.instance_id: (t, Path(tmp_path)) for t in (task, missing)}
    grader = TaskGrader(tasks, get_sandbox("auto", warn=False), aliases={"instr-1": "calc__add"}, timeout_s=60,
                        limits=LIMITS, env=env, work_root=tmp_path)
    yield grader
    grader.close()


def test_grade_a_patch_on_a_task(grader):
    gold = grader.tasks["calc__add"][0].patch
    result = grader.grade("calc__add", gold)
    assert (result.status, result.reward, result.resolved) == ("resolved", 1.0, True)
    assert result.fail_to_pass == {"tests/test_add.py::test_add": "pass"}
    assert result.pass_to_pass == {"tests/test_mul.py::test_mul": "pass"}

    wrong = grader.grade("instr-1", gold.replace("a + b", "a * b"))  # an alias names the same task
    assert (wrong.instance_id, wrong.status, wrong.reward, wrong.reason) == ("calc__add", "unresolved", 0.0,
                                                                             "tests_failed")
    assert wrong.fail_to_pass == {"tests/test_add.py::test_add": "fail"} and "test_add" in wrong.hint
    assert grader.grade("calc__add", "no diff here").status == "patch_failed"
    assert grader.environment("calc__add") is grader.environment("calc__add")  # built once, kept warm
    assert grader.done == 3


def test_a_task_without_an_environment_is_an_infra_error_and_an_unknown_id_raises(grader):
    result = grader.grade("calc__gone", "")
    assert (result.status, result.reward, result.reason) == ("infra_error", None, "repo_missing")
    with pytest.raises(UnknownTask):
        grader.grade("calc__nope", "")
