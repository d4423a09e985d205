"""The grader's pure parts, no server: which tasks a TASKS argument names, how a reason
becomes a status, and where each wire format keeps the instance id and the answer."""

from __future__ import annotations

import json

import pytest

from datagen.errors import UserError
from datagen.serve.grader import instance_from_label, load_tasks, responses_text, status_of
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
    (tmp_path / "token").write_text("s3cret\n")
    assert read_token(tmp_path / "token") == "s3cret" and read_token(None) is None
    monkeypatch.setenv("DATAGEN_SERVE_TOKEN", "env-token")
    assert read_token(None) == "env-token"
