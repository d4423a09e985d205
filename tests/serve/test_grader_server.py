"""`datagen serve grader` as a real process on a pool of two real tasks: gold patches
resolve, empty and garbage ones fail with the right status, hostile patches stay in their
slot, 16 concurrent grades with -w 2 complete, verl's compute_score and the NeMo-Gym,
slime and OpenRLHF shapes."""

from __future__ import annotations

import json
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from datagen.serve import clients
from tests.serve.conftest import Server, request
from tests.sitekit import SITE

pytestmark = pytest.mark.slow  # real servers and sandboxes: seconds each

WORKERS, QUEUE = 2, 2


@pytest.fixture(scope="module")
def grader(calc_pool, tmp_path_factory):
    cache = tmp_path_factory.mktemp("grader-cache")
    server = Server("grader", str(calc_pool), "-w", str(WORKERS), "--queue", str(QUEUE), "--timeout-s", "60",
                    "--max-patch-kb", "64", "--set", f"env.inherit_site_packages=[{SITE}]",
                    "--set", f"env.cache_dir={cache / 'envs'}", "--set", "sandbox.limits.processes=64",
                    "--set", "sandbox.limits.memory_mb=1024", extra_env={"DATAGEN_CACHE": str(cache)})
    with server:
        yield server


@pytest.fixture(scope="module")
def rows(calc_pool) -> dict[str, dict]:
    return {r["task_id"]: r for r in pq.read_table(next((calc_pool / "data").glob("train-*.parquet"))).to_pylist()}


def grade(server: Server, instance_id: str, patch: str, **extra) -> tuple[int, dict]:
    status, body, _ = request(server.port, "/v1/grade", {"instance_id": instance_id, "patch": patch, **extra},
                              timeout=120)
    return status, body


def wrong(patch: str) -> str:
    return patch.replace("+    return a + b", "+    return a + b + 1").replace("+    return a * b", "+    return b - a")


def test_gold_empty_garbage_wrong(grader, rows):
    for task_id, row in rows.items():  # every task's gold patch, by task id and by instruction id
        code, body = grade(grader, row["instruction_id"] if task_id == "calc__mul" else task_id, row["patch"])
        assert code == 200 and body["status"] == "resolved" and body["reward"] == 1.0, body
        assert body["instance_id"] == task_id and set(body["fail_to_pass"].values()) == {"pass"}
        assert body["pass_to_pass"] == {"tests/test_sub.py::test_sub": "pass"}
    add = rows["calc__add"]["patch"]
    code, body = grade(grader, "calc__add", wrong(add))
    assert (code, body["status"], body["reward"], body["resolved"]) == (200, "unresolved", 0.0, False)
    assert body["fail_to_pass"] == {"tests/test_add.py::test_add": "fail"} and "test_add" in body["hint"]
    for patch in ("", "I would change add() but here is no diff."):
        code, body = grade(grader, "calc__add", patch)
        assert (code, body["status"], body["reward"]) == (200, "patch_failed", 0.0) and body["hint"]
    stale = add.replace(" def add(a, b):", " def add(x, y):")
    assert grade(grader, "calc__add", stale)[1]["status"] == "patch_failed"
    assert grade(grader, "nope", add)[0] == 404
    assert request(grader.port, "/v1/grade", {"instance_id": "calc__add"})[0] == 400
    assert request(grader.port, "/v1/grade", raw=b"{not json")[0] == 400
    assert grade(grader, "calc__add", "x" * 70_000)[0] == 413


def hostile(body: str) -> str:
    """A patch putting ``body`` in place of add()'s body."""
    new = ["    " + line for line in body.strip("\n").splitlines()]
    return "\n".join(["diff --git a/calc.py b/calc.py", "--- a/calc.py", "+++ b/calc.py",
                      f"@@ -1,4 +1,{len(new) + 3} @@", " def add(a, b):", "-    return a - b",
                      *("+" + line for line in new), " ", " "]) + "\n"


def test_hostile_patches_stay_in_their_slot(grader, rows, tmp_path):
    add = rows["calc__add"]["patch"]
    outside = tmp_path / "escaped.txt"
    attacks = {
        "fork bomb": "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass",
        # reaching the host's grader port would make the test pass: it must not
        "network": f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {grader.port}), 2).close()\n"
                   "    return a + b\nexcept OSError:\n    return a - b",
        "write outside": f"try:\n    open({str(outside)!r}, 'w').write('out')\nexcept OSError:\n    pass\n"
                         "return a - b",
    }
    with ThreadPoolExecutor(2) as pool:
        bomb = pool.submit(grade, grader, "calc__add", hostile(attacks["fork bomb"]), timeout_s=4)
        time.sleep(1.0)
        started = time.monotonic()
        assert request(grader.port, "/health")[0] == 200 and time.monotonic() - started < 2.0
        gold = pool.submit(grade, grader, "calc__mul", rows["calc__mul"]["patch"])  # the other slot
        assert gold.result()[1]["status"] == "resolved"
        assert bomb.result()[1]["status"] == "timeout"
    for name in ("network", "write outside"):
        code, body = grade(grader, "calc__add", hostile(attacks[name]), timeout_s=20)
        assert code == 200 and body["status"] == "unresolved", (name, body)
    assert not outside.exists()
    assert grade(grader, "calc__add", add)[1]["status"] == "resolved"  # still healthy
    assert request(grader.port, "/health")[1]["active"] == 0


def test_sixteen_concurrent_grades_with_two_workers(grader, rows):
    url = f"http://127.0.0.1:{grader.port}"
    # 6 run the tests in the sandbox (3 gold, 3 wrong), 10 are stale diffs that fail to apply
    kinds = ["gold", "wrong"] * 3 + ["stale"] * 10
    patch = {"gold": lambda p: p, "wrong": wrong, "stale": lambda p: p.replace("(a, b):", "(x, y):")}
    jobs = [(tid, patch[kind](rows[tid]["patch"])) for n, kind in enumerate(kinds)
            for tid in [("calc__add", "calc__mul")[n % 2]]]
    expected = [{"gold": "resolved", "wrong": "unresolved", "stale": "patch_failed"}[k] for k in kinds]
    busy: list[tuple[int, dict]] = []

    def probe() -> None:  # while the queue is full, a call is 503 with Retry-After
        for _ in range(40):
            code, _, headers = request(grader.port, "/v1/grade", {"instance_id": "calc__add", "patch": ""})
            if code == 503:
                busy.append((code, headers))
                return
            time.sleep(0.05)

    with ThreadPoolExecutor(16) as pool:
        futures = [pool.submit(clients.grade, tid, patch, url) for tid, patch in jobs]
        prober = threading.Thread(target=probe)
        prober.start()
        results = [f.result(timeout=300) for f in futures]
        prober.join()
    assert [r["status"] for r in results] == expected
    assert busy and int(busy[0][1]["retry-after"]) >= 1
    health = request(grader.port, "/health")[1]
    assert health["busy_answers"] >= 1 and health["active"] == 0 and health["capacity"] == WORKERS + QUEUE


def test_verl_compute_score_and_adapter_shapes(grader, rows, calc_pool, monkeypatch):
    monkeypatch.setenv(clients.GRADER_URL_ENV, f"http://127.0.0.1:{grader.port}")
    verl = {r["extra_info"]["task_id"]: r for r in pq.read_table(calc_pool / "exports/verl/train.parquet").to_pylist()}
    row = verl["calc__add"]
    answer = f"The fix:\n```diff\n{rows['calc__add']['patch']}```\n"
    score = clients.compute_score(row["data_source"], answer, row["reward_model"]["ground_truth"], row["extra_info"])
    assert score["score"] == 1.0 and score["status"] == "resolved"
    miss = clients.compute_score(row["data_source"], "no idea", row["reward_model"]["ground_truth"], row["extra_info"])
    assert miss["score"] == 0.0 and miss["status"] == "patch_failed" and miss["hint"]

    nemo = {"responses_create_params": {"input": [{"role": "user", "content": "fix add"}]},
            "response": {"output": [{"type": "message", "role": "assistant",
                                     "content": [{"type": "output_text", "text": "no diff here"}]}]},
            "verifier_metadata": {"instance_id": "calc__mul"}}
    code, body, _ = request(grader.port, "/verify", nemo)
    assert code == 200 and body["reward"] == 0.0 and body["response"] == nemo["response"]
    code, body, _ = request(grader.port, "/slime/remote_rm", {"prompt": "p", "response": "",
                                                                "label": row["reward_model"]["ground_truth"]})
    assert (code, body) == (200, 0.0)
    batch = {"query": ["PROMPT" + answer, "PROMPT nothing"], "prompts": ["PROMPT", "PROMPT"],
             "labels": [json.dumps({"instance_id": "calc__add"}), "calc__mul"]}
    code, body, _ = request(grader.port, "/openrlhf/reward", batch, timeout=120)
    assert code == 200 and body["rewards"] == [1.0, 0.0] and body["extra_logs"]["resolved"] == [1.0, 0.0]


def test_harbor_export_grades_like_the_grader(calc_pool, rows, tmp_path):
    """The Harbor folder's verifier, run on a checkout at the base commit: 0 before the
    oracle's solve.sh, 1 after."""
    import subprocess

    from datagen.pool.exports import write_harbor

    written, skipped = write_harbor(calc_pool, tmp_path / "harbor")
    assert not skipped and sorted(p.name for p in written) == ["calc__add", "calc__mul"]
    task = tmp_path / "harbor" / "calc__add"
    for rel in ("instruction.md", "task.toml", "environment/Dockerfile", "environment/source.tar",
                "tests/test.sh", "solution/solve.sh"):
        assert (task / rel).is_file(), rel
    assert "FROM python" in (task / "environment/Dockerfile").read_text()
    assert 'task_id = "calc__add"' in (task / "task.toml").read_text()
    for solve, expect in ((False, "0"), (True, "1")):
        checkout, logs = tmp_path / f"testbed-{expect}", tmp_path / f"logs-{expect}"
        checkout.mkdir()
        subprocess.run(["tar", "-xf", str(task / "environment/source.tar"), "-C", str(checkout)], check=True)
        run_env = {"REPO_DIR": str(checkout), "LOGS_DIR": str(logs),
                   "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
        if solve:
            subprocess.run(["bash", str(task / "solution/solve.sh")], env=run_env, check=True)
        subprocess.run(["bash", str(task / "tests/test.sh")], env=run_env, check=True, capture_output=True)
        assert (logs / "verifier" / "reward.txt").read_text().strip() == expect


def test_a_patch_that_adds_or_deletes_tests_is_unresolved(grader, rows):
    """The gold fix plus a new conftest.py (it could deselect every test), or plus a deleted
    test file: unresolved, whatever the tests then say."""
    gold = rows["calc__add"]["patch"]
    conftest = ("diff --git a/tests/conftest.py b/tests/conftest.py\nnew file mode 100644\n--- /dev/null\n"
                "+++ b/tests/conftest.py\n@@ -0,0 +1 @@\n+collect_ignore = []\n")
    deleted = ("diff --git a/tests/test_sub.py b/tests/test_sub.py\ndeleted file mode 100644\n"
               "--- a/tests/test_sub.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n")
    for extra, reason in ((conftest, "forbidden_edits_tests"), (deleted, "forbidden_deletes_tests")):
        code, body = grade(grader, "calc__add", gold + extra)
        assert (code, body["status"], body["reward"], body["reason"]) == (200, "unresolved", 0.0, reason), body
