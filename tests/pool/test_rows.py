"""Tasks -> pool rows: prompts from the Jinja templates, reward spec, lineage, ids."""

from __future__ import annotations

import json
import subprocess

import pytest

from datagen.errors import UserError
from datagen.pool.rows import (
    PROMPTS,
    aux_checks_for,
    eval_script,
    instruction_id,
    read_pool_tasks,
    reward_spec,
    rows_from_tasks,
)
from tests.pool.conftest import task, write_tasks

EXTRAS = {"relevant_files": ["src/mod1.py", "src/util.py"], "strategy": "op_swap_v1", "statement_style": "terse",
          "parent_ids": ["org__lib-0"], "changed_files": 2}


def test_prompt_is_a_system_and_a_user_message(tmp_path):
    path = write_tasks(tmp_path, [task(1, "org/lib", "Parsing an empty header crashes with KeyError.")])
    (row,) = rows_from_tasks(path, group_size=4)
    assert [m.role for m in row.prompt] == ["system", "user"]
    system, user = (m.content for m in row.prompt)
    assert "org/lib" in system and "pytest" in system and "do not delete, skip" in system
    assert "Parsing an empty header crashes with KeyError." in user
    assert f"Base commit: {1:040x}" in user and "Repository: org/lib" in user
    assert row.patch not in system + user  # the fix never reaches the policy
    assert (PROMPTS / "system.jinja").is_file() and (PROMPTS / "user.jinja").is_file()


def test_reward_spec_and_lineage(tmp_path):
    path = write_tasks(tmp_path, [task(1, "org/lib", "x " * 20, **EXTRAS), task(2, "org/lib", "y " * 20)])
    first, second = rows_from_tasks(path, group_size=8)
    assert first.fail_to_pass == ["tests/test_1.py::test_fix"] and first.group_size == 8
    assert first.source_files == ["src/mod1.py", "src/util.py"]  # relevant_files when the tasks build gives them
    assert second.source_files == ["src/mod2.py"]  # else read from the fix
    assert first.strategy == "op_swap_v1" and first.parent_ids == ["org__lib-0"]
    assert first.repo_path == str(tmp_path / "repos" / "lib")  # resolved against the tasks file
    assert (first.pass_rate, first.perplexity, first.difficulty_band) == (None, None, "unknown")
    assert {c.kind for c in first.aux_checks} == {"no_test_deletion", "no_test_skip", "no_network"}
    spec = json.loads(reward_spec(first))
    assert spec["FAIL_TO_PASS"] == first.fail_to_pass and "patch" not in spec
    assert spec["aux_checks"][0]["kind"] == "no_test_deletion"


def test_lint_check_reaches_the_spec_and_the_system_prompt(tmp_path):
    path = write_tasks(tmp_path, [task(1, "org/lib", "z " * 20)])
    (row,) = rows_from_tasks(path, group_size=2, lint_command="ruff check .")
    lint = [c for c in row.aux_checks if c.kind == "lint"]
    assert lint and lint[0].command == "ruff check ."
    assert "ruff check ." in row.prompt[0].content
    assert [c.kind for c in aux_checks_for("node")] == ["no_test_deletion", "no_test_skip", "no_network"]


def test_instruction_id_is_stable_and_depends_on_task_and_prompt(tmp_path):
    path = write_tasks(tmp_path, [task(1, "org/lib", "Sorting is unstable for equal keys.")])
    (a,) = rows_from_tasks(path, group_size=4)
    (b,) = rows_from_tasks(path, group_size=16)
    assert a.instruction_id == b.instruction_id and len(a.instruction_id) == 16
    assert instruction_id("other", a.prompt) != a.instruction_id


def test_custom_prompt_folder(tmp_path):
    folder = tmp_path / "prompts"
    folder.mkdir()
    (folder / "system.jinja").write_text("Fix {{ repo }}.")
    (folder / "user.jinja").write_text("{{ problem_statement }}")
    path = write_tasks(tmp_path / "t", [task(1, "org/lib", "Broken.")])
    (row,) = rows_from_tasks(path, group_size=1, prompts=folder)
    assert [m.content for m in row.prompt] == ["Fix org/lib.\n", "Broken.\n"]
    (folder / "user.jinja").write_text("{{ no_such_field }}")
    with pytest.raises(Exception, match="no_such_field"):
        rows_from_tasks(path, group_size=1, prompts=folder)


def test_reading_a_tasks_folder_and_rejecting_bad_rows(tmp_path):
    write_tasks(tmp_path / "build", [task(1, "org/lib", "a " * 20)])
    (tmp_path / "build" / "teacher_calls.jsonl").write_text('{"call_id": "x"}\n')  # not a task: ignored
    assert [t.instance_id for t, _ in read_pool_tasks(tmp_path / "build")] == ["org__lib-1"]
    write_tasks(tmp_path / "bad", [task(1, "org/lib", "a", bogus=1)])
    with pytest.raises(UserError, match="not a task record"):
        read_pool_tasks(tmp_path / "bad")
    write_tasks(tmp_path / "twice", [task(1, "org/lib", "a"), task(1, "org/lib", "b")])
    with pytest.raises(UserError, match="appears twice"):
        rows_from_tasks(tmp_path / "twice", group_size=1)


def test_swebench_encoded_test_lists_are_accepted(tmp_path):
    t = task(1, "org/lib", "a " * 20)
    t["FAIL_TO_PASS"] = json.dumps(t["FAIL_TO_PASS"])
    (row,) = rows_from_tasks(write_tasks(tmp_path, [t]), group_size=1)
    assert row.fail_to_pass == ["tests/test_1.py::test_fix"]


def test_eval_script_applies_the_test_patch_and_runs_the_graded_tests(tmp_path):
    t = task(1, "org/lib", "a " * 20)
    t["PASS_TO_PASS"] = ["tests/test_a.py::test_x[a b]"]
    (row,) = rows_from_tasks(write_tasks(tmp_path, [t]), group_size=1)
    script = eval_script(row)
    assert script.startswith("#!/bin/bash") and "git apply" in script and row.test_patch in script
    assert "'tests/test_a.py::test_x[a b]'" in script and "tests/test_1.py::test_fix" in script
    assert subprocess.run(["bash", "-n"], input=script, text=True).returncode == 0
