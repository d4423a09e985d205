"""What an agent's shell can and cannot reach: each command is a sandboxed run on the task's
working copy (one root commit, the repo's env), so the repo's own tests run, while the network,
the host's files, another task's env, the gold patch, the task's test_patch and its eval script
stay out of reach. A scripted policy tries each; the observations it gets back say what it saw."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from datagen.records.tasks import TaskRecord
from datagen.sandbox.isolation.select import bwrap_works
from tests.agent import standin
from tests.agent.standin import ScriptedPolicy, reply
from tests.sandbox.conftest import make_task_repo

pytestmark = pytest.mark.slow
SECRET = "s3cret-host-file-7f2c"
# every folder of the sandbox's view but the system's own and the interpreter's (slow to read)
SEARCHED = "/ --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev --exclude-dir=usr --exclude-dir=.pyenv"


def _probes(tmp: Path, port: int) -> list[tuple[str, str]]:
    """(name, command): each prints what it reached; the test reads the observations."""
    return [
        ("tests", "python -m pytest -q tests/test_mul.py 2>&1 | tail -1"),
        ("network", f"(exec 3<>/dev/tcp/127.0.0.1/{port} && echo REACHED) 2>&1 || echo BLOCKED"),
        ("host_file", f"cat {tmp / 'host-secret.txt'} 2>&1; ls {tmp} 2>&1 | head -3"),
        ("other_env", f"ls {tmp / 'envs' / 'other-task-env'} 2>&1; cat {tmp / 'envs' / 'other-task-env' / 'x'} 2>&1"),
        ("tasks_file", f"cat {tmp / 'tasks.jsonl'} 2>&1 | head -3"),
        ("source_repo", f"ls {tmp / 'calc'} 2>&1; git -C {tmp / 'calc'} log --all --oneline 2>&1 | head"),
        ("history", "git log --all --oneline 2>&1; git show HEAD~1 2>&1 | head -3; ls tests"),
        ("search", f"grep -rlsF -D skip 'add(2, 3) == 5' {SEARCHED} 2>/dev/null | head -5; echo END"),
        ("eval_script", f"grep -rlsF -D skip DATAGEN_EVAL_MARKER {SEARCHED} 2>/dev/null | head -5; echo END"),
    ]


@pytest.fixture
def calc(tmp_path: Path):
    pytest.importorskip("minisweagent")
    if not bwrap_works()[0]:
        pytest.skip(f"agent runs need bwrap: {bwrap_works()[1]}")
    fields = make_task_repo(tmp_path)  # its later commit holds the test_patch; the fix is in tasks.jsonl
    task = TaskRecord.model_validate({
        "instance_id": "calc__add", "repo": "calc", "problem_statement": "add(2, 3) returns -1 instead of 5.",
        "FAIL_TO_PASS": ["tests/test_add.py::test_add"], "PASS_TO_PASS": ["tests/test_mul.py::test_mul"],
        "eval_script": "#!/bin/bash\n# DATAGEN_EVAL_MARKER\npytest tests\n", **fields})
    (tmp_path / "tasks.jsonl").write_text(json.dumps(task.model_dump(mode="json")) + "\n")
    (tmp_path / "host-secret.txt").write_text(SECRET)
    (tmp_path / "eval.sh").write_text(task.eval_script)
    (tmp_path / "envs" / "other-task-env").mkdir(parents=True)
    (tmp_path / "envs" / "other-task-env" / "x").write_text(SECRET)
    return task


def test_an_agents_shell_reaches_its_repo_and_env_and_nothing_else(tmp_path, calc):
    from tests.agent import helpers

    with ScriptedPolicy([calc], lambda task, step: "") as server:
        probes = _probes(tmp_path, server.port)
        steps = [reply(name, command) for name, command in probes] + [reply("done", f"echo {standin.SUBMIT}")]
        server.scripts = [lambda task, step: steps[min(step, len(steps) - 1)]]
        s = helpers.scorer(server, tmp_path, tmp_path / "work", k=1, step_limit=len(steps) + 1)
        (run,) = s.score([(calc, tmp_path)], "r").runs
    seen = {}
    observations = [m["content"] for m in run.trajectory["messages"] if m["role"] == "user"][1:]
    for (name, _), text in zip(probes, observations, strict=False):
        seen[name] = re.search(r"<output>\n(.*)</output>", text, re.S).group(1)
    assert "1 passed" in seen["tests"], seen["tests"]
    assert "BLOCKED" in seen["network"] and "REACHED" not in seen["network"]
    assert SECRET not in seen["host_file"] and "No such file" in seen["host_file"]
    assert SECRET not in seen["other_env"] and "No such file" in seen["other_env"]
    assert '"patch"' not in seen["tasks_file"] and "No such file" in seen["tasks_file"]
    assert "No such file" in seen["source_repo"] and "tests" not in seen["source_repo"].replace("tests/", "")
    history = seen["history"]
    assert len(re.findall(r"^[0-9a-f]{7} ", history, re.M)) == 1 and "test_add.py" not in history, history
    assert seen["search"].split() == ["END"], seen["search"]  # the fixed line is nowhere
    assert seen["eval_script"].split() == ["END"], seen["eval_script"]
    assert run.exit_status == "submitted" and run.passed is False and run.reason == "empty_answer"
