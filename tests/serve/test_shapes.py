"""The grader's pure parts, no server: which tasks a TASKS argument names, how a reason
becomes a status, and where each wire format keeps the instance id and the answer."""

from __future__ import annotations

import json

import pytest

from datagen.errors import UserError
from datagen.score.grading import status_of
from datagen.serve.grader import load_tasks
from datagen.serve.grader.adapters import aggregate, instance_from_label, responses_text
from datagen.serve.http import check_bind, read_token
from tests.serve.conftest import calc_tasks


def test_tasks_from_a_build_folder_its_jsonl_or_a_pool(tmp_path, calc_pool):
    path = calc_tasks(tmp_path)
    for given in (path, path.parent):
        tasks, aliases = load_tasks(given)
        assert sorted(tasks) == ["calc__add", "calc__mul"] and aliases == {}
        assert tasks["calc__add"][0].FAIL_TO_PASS == ["tests/test_add.py::test_add"]
    tasks, aliases = load_tasks(calc_pool)
    assert sorted(tasks) == ["calc__add", "calc__mul"] and sorted(aliases.values()) == sorted(tasks)
    with pytest.raises(UserError):
        load_tasks(tmp_path / "missing")


@pytest.mark.parametrize("reason,passed,status", [
    (None, True, "resolved"), ("tests_failed", False, "unresolved"), ("no_report", False, "unresolved"),
    ("processes", False, "unresolved"), ("forbidden_edits_tests", False, "unresolved"),
    ("empty_answer", False, "patch_failed"), ("no_diff", False, "patch_failed"),
    ("patch_does_not_apply", False, "patch_failed"), ("test_patch_does_not_apply", False, "patch_failed"),
    ("timeout", False, "timeout"), ("repo_missing", False, "infra_error"), ("no_required_tests", False, "infra_error"),
])
def test_status_of_each_reason(reason, passed, status):
    assert status_of(reason, passed) == status


def test_labels_and_responses():
    spec = json.dumps({"instance_id": "calc__add", "FAIL_TO_PASS": []})
    assert instance_from_label(spec) == instance_from_label({"instance_id": "calc__add"}) == "calc__add"
    assert instance_from_label("calc__mul") == "calc__mul"
    # slime reading the pool's verl export: the label is its reward_model column
    assert instance_from_label({"style": "rule", "ground_truth": spec}) == "calc__add"
    assert instance_from_label({"style": "rule", "ground_truth": ""}) is None
    assert instance_from_label("") is None and instance_from_label("{bad json") is None
    response = {"output": [{"type": "reasoning", "summary": []},
                           {"type": "message", "content": [{"type": "output_text", "text": "a"},
                                                           {"type": "output_text", "text": "b"}]}]}
    assert responses_text(response) == "a\nb" and responses_text(None) == ""


def test_who_may_listen(tmp_path, monkeypatch):
    monkeypatch.delenv("DATAGEN_SERVE_TOKEN", raising=False)
    check_bind("127.0.0.1", None)
    with pytest.raises(UserError, match="without a token"):
        check_bind("0.0.0.0", None)
    check_bind("0.0.0.0", "s3cret")
    check_bind("0.0.0.0", None, trusted_network=True)  # said out loud, never by default
    (tmp_path / "token").write_text("s3cret\n")
    assert read_token(tmp_path / "token") == "s3cret" and read_token(None) is None
    monkeypatch.setenv("DATAGEN_SERVE_TOKEN", "env-token")
    assert read_token(None) == "env-token"


def test_aggregate_metrics_of_verify_answers():
    def answer(task: int, status: str, seconds: float) -> dict:
        reward = 1.0 if status == "resolved" else 0.0
        return {"_ng_task_index": task, "reward": reward, "resolved": status == "resolved",
                **({"mask_sample": True} if status == "infra_error" else {}),
                "datagen": {"instance_id": f"t{task}", "status": status, "seconds": seconds}}

    out = aggregate([answer(0, "resolved", 2.0), answer(0, "unresolved", 4.0), answer(1, "infra_error", 0.0),
                     answer(1, "resolved", 3.0)])
    assert out["agent_metrics"]["pass_rate"] == pytest.approx(2 / 3)  # the masked one is not a measurement
    assert out["agent_metrics"]["masked"] == 1 and out["agent_metrics"]["status/infra_error"] == 1
    assert out["key_metrics"] == {"pass_rate": pytest.approx(2 / 3), "resolved_share": pytest.approx(2 / 3),
                                  "mean_seconds": pytest.approx(9 / 4)}
    by_task = {g["_ng_task_index"]: g for g in out["group_level_metrics"]}
    assert by_task[0]["pass_rate"] == 0.5 and by_task[1]["pass_rate"] == 1.0 and by_task[1]["n"] == 2
    assert aggregate([])["agent_metrics"]["pass_rate"] is None
