"""A run's limits, each recorded as its exit status: the token budget, the policy's context
window, the wall clock; and ``mask_limits`` (DeepSWE's choice), under which a run stopped by a
limit is masked and run again, and a task whose runs are all masked has no pass rate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from datagen.records.tasks import TaskRecord
from datagen.sandbox.isolation.select import bwrap_works
from tests.agent import helpers, standin
from tests.agent.standin import ScriptedPolicy, reply
from tests.sandbox.conftest import make_task_repo

pytestmark = pytest.mark.slow


def calc_task(tmp_path: Path) -> TaskRecord:
    """The calc repo's add bug as a task (skips without mini-swe-agent or bwrap)."""
    pytest.importorskip("minisweagent")
    if not bwrap_works()[0]:
        pytest.skip(f"agent runs need bwrap: {bwrap_works()[1]}")
    fields = make_task_repo(tmp_path)
    task = TaskRecord.model_validate({
        "instance_id": "calc__add", "repo": "calc", "problem_statement": "add(2, 3) returns -1 instead of 5.",
        "FAIL_TO_PASS": ["tests/test_add.py::test_add"], "PASS_TO_PASS": ["tests/test_mul.py::test_mul"], **fields})
    return task


def sleepy(task: TaskRecord, step: int) -> str:
    return reply("Wait for it.", "sleep 1.5; ls")


def test_limits_end_runs_with_their_status_and_mask_limits_masks_them(tmp_path: Path):
    task = calc_task(tmp_path)
    cases = {"token_limit": (standin.solve, {"token_limit": 1}),
             "context_limit": (standin.solve, {"context_limit": 50}),
             "time_limit": (sleepy, {"wall_time_s": 1.0})}
    for status, (script, limits) in cases.items():
        with ScriptedPolicy([task], script) as server:
            (run,) = helpers.scorer(server, tmp_path, tmp_path / status, **limits).score([(task, tmp_path)]).runs
        assert (run.exit_status, run.masked, run.passed) == (status, False, False), json.dumps(run.detail)
        assert run.reason == "empty_answer" and run.steps >= 1
    with ScriptedPolicy([task], standin.loop) as server:
        report = helpers.scorer(server, tmp_path, tmp_path / "masked", step_limit=2, mask_limits=True,
                                max_reruns=1).score([(task, tmp_path)], "r")
    assert [(r.rerun, r.exit_status, r.masked, r.reason) for r in report.runs] == [
        (0, "step_limit", True, "step_limit"), (1, "step_limit", True, "step_limit")]
    (row,), (totals,) = report.tasks, report.totals
    assert row.passes is None and row.error == "every run masked"
    assert (totals.runs, totals.masked, totals.measured, totals.pass_at_1) == (2, 2, 0, None)


def test_a_resumed_scorer_reads_its_stored_runs_and_asks_nothing(tmp_path: Path):
    task = calc_task(tmp_path)
    store = tmp_path / "store"
    with ScriptedPolicy([task], [standin.solve, standin.give_up]) as server:
        first = helpers.scorer(server, tmp_path, tmp_path / "a", k=2, store=store).score([(task, tmp_path)], "r")
        paid = server.total_calls
        again = helpers.scorer(server, tmp_path, tmp_path / "b", k=2, store=store).score([(task, tmp_path)], "r")
        assert paid == 8 and server.total_calls == paid  # six steps and two: none asked again
    assert [(r.trajectory_id, r.passed, r.diff) for r in again.runs] == [
        (r.trajectory_id, r.passed, r.diff) for r in first.runs]
    assert again.totals[0].pass_at_1 == 0.5 and sorted(p.name for p in (store / "calc__add").iterdir()) == [
        "0.0.json", "1.0.json"]
