"""Difficulty end to end: a tiny git repo with a bug, a scripted local OpenAI-compatible
policy server answering each sample (by its seed) with the fix, a wrong fix, garbage, a
test edit or a diff that does not apply; graded in the real sandbox with a real env."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from datagen.config.sandbox import EnvConfig, SandboxLimits
from datagen.config.score import DifficultyConfig
from datagen.config.teacher import TeacherConfig
from datagen.records.tasks import TaskRecord
from datagen.sandbox.isolation.select import get_sandbox
from datagen.score.difficulty import DifficultyScorer, attempt_requests, best_attempts, context_paths
from datagen.teachers import make_teacher
from tests.sandbox.conftest import make_task_repo
from tests.sitekit import SITE
from tests.teachers.fake_server import FakeOpenAI

LIMITS = SandboxLimits(timeout_s=60, cpu_s=60, memory_mb=1024, processes=64, file_size_mb=16,
                       tmp_size_mb=32, output_bytes=100_000)


def fenced(diff: str, before: str = "Here is the fix:\n") -> str:
    return f"{before}```diff\n{diff}```\nThis makes add() add."


def script(fix: str) -> dict[int, tuple[str, bool, str | None]]:
    """seed -> (answer, passes?, reason)."""
    wrong = fix.replace("a + b", "a * b")
    edits_test = (
        "diff --git a/tests/test_mul.py b/tests/test_mul.py\n--- a/tests/test_mul.py\n"
        "+++ b/tests/test_mul.py\n@@ -4,2 +4,2 @@\n def test_mul():\n-    assert mul(2, 3) == 6\n"
        "+    assert True\n")
    stale = fix.replace(" def add(a, b):", " def add(x, y):")  # context that is not in the file
    return {
        0: (fenced(fix), True, None),
        1: (fenced(wrong), False, "tests_failed"),
        2: ("I am not sure what to change here.", False, "no_diff"),
        3: (fix, True, None),  # a raw diff, no fence
        4: (fenced(edits_test), False, "forbidden_edits_tests"),
        5: (fenced(stale), False, "patch_does_not_apply"),
        6: ("", False, "empty_answer"),
    }


@pytest.fixture
def calc(tmp_path) -> tuple[TaskRecord, Path]:
    fields = make_task_repo(tmp_path)
    task = TaskRecord.model_validate({
        "instance_id": "calc__add", "repo": "local/calc",
        "problem_statement": "add(2, 3) returns -1 instead of 5.",
        "FAIL_TO_PASS": ["tests/test_add.py::test_add"],
        "PASS_TO_PASS": json.dumps(["tests/test_mul.py::test_mul"]), **fields})
    return task, tmp_path


def scorer(tmp_path: Path, server: FakeOpenAI, k: int, **kw) -> DifficultyScorer:
    policy = make_teacher(TeacherConfig(model="tiny-teacher", base_url=server.base_url,
                                        api_key_env="DATAGEN_TEST_KEY", timeout_s=30,
                                        cache_dir=str(tmp_path / "teacher-cache")))
    cfg = DifficultyConfig(k=k, workers=2, test_timeout_s=60, **kw)
    env = EnvConfig(cache_dir=str(tmp_path / "envs"), inherit_site_packages=[SITE])
    return DifficultyScorer(cfg, policy, get_sandbox("auto", warn=False), limits=LIMITS, env=env)


def test_pass_vector_matches_the_script(tmp_path, calc):
    task, base = calc
    plan = script(task.patch)
    missing = task.model_copy(update={"instance_id": "calc__gone", "repo_path": "nowhere"})
    with FakeOpenAI(answer=lambda body: plan[body["seed"]][0]) as server:
        report = scorer(tmp_path, server, k=len(plan)).score([(task, base), (missing, base)], "r1")
        first_calls = server.total_calls
        again = scorer(tmp_path, server, k=len(plan)).score([(task, base)], "r2")
        assert server.total_calls == first_calls  # a re-run is answered from the cache
    row, gone = report.tasks
    assert row.pass_vector == [plan[i][1] for i in range(len(plan))]
    assert (row.k, row.passes, row.pass_rate) == (7, 2, pytest.approx(2 / 7))
    assert 0 < row.wilson_low < 2 / 7 < row.wilson_high < 1
    assert (gone.passes, gone.pass_rate, gone.error) == (None, None, "repo_missing")
    by_sample = {a.sample: a for a in report.attempts}
    assert [by_sample[i].reason for i in range(len(plan))] == [plan[i][2] for i in range(len(plan))]
    assert again.tasks[0].pass_vector == row.pass_vector

    wrong = by_sample[1]
    assert wrong.failing == ["tests/test_add.py::test_add"]
    assert wrong.hint == ("tests/test_add.py::test_add fails at tests/test_add.py:5: "
                          "assert 6 == 5 (+ where 6 = add(2, 3)).")
    assert by_sample[4].hint.startswith("The patch edits the test file tests/test_mul.py")
    assert by_sample[5].hint.startswith("The patch does not apply at calc.py:1")
    assert all(a.hint is None for a in report.attempts if a.passed)

    rows = report.attempt_rows()
    assert {(r.run_id, r.policy_id) for r in rows} == {("r1", "tiny-teacher")}
    assert rows[0].tokens > 0 and rows[0].patch.startswith("diff --git a/calc.py")
    # samples 0 and 3 pass with the same diff; 3 (no prose around it) took fewer tokens
    assert best_attempts(report.attempts)["calc__add"].sample == 3


def test_prompt_shows_the_statement_and_the_files_to_fix(tmp_path, calc):
    task, base = calc
    with FakeOpenAI(answer=lambda body: "no idea") as server:
        report = scorer(tmp_path, server, k=2).score([(task, base)])
        prompt = server.bodies[0]["messages"][0]["content"]
        seeds = sorted(b["seed"] for b in server.bodies)
    assert report.tasks[0].pass_vector == [False, False]
    assert "add(2, 3) returns -1 instead of 5." in prompt
    assert "### calc.py" in prompt and "return a - b" in prompt
    assert "test_add" not in prompt  # the grading tests stay hidden
    assert seeds == [0, 1] and context_paths(task) == ["calc.py"]


def test_disabled_difficulty_leaves_pass_rates_unknown(tmp_path, calc):
    task, base = calc
    cfg = DifficultyConfig(enabled=False)
    report = DifficultyScorer(cfg, None, get_sandbox("auto", warn=False)).score([(task, base)], "r")
    [row] = report.tasks
    assert (row.passes, row.pass_rate, row.wilson_low, row.pass_vector) == (None, None, None, [])
    assert report.attempts == []


def test_requests_are_k_independent_seeded_samples(calc):
    task, _ = calc
    reqs = attempt_requests(task, "fix it", DifficultyConfig(k=3, seed=10, temperature=0.7))
    assert [r.seed for r in reqs] == [10, 11, 12]
    assert {r.sampling.temperature for r in reqs} == {0.7}
    assert len({r.id for r in reqs}) == 3
