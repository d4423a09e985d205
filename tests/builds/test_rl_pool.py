"""``datagen build rl-pool`` end to end: a tasks.jsonl over a real git repo, a scripted
local policy server, the real sandbox; then the pool is read back the way its consumers
read it (pandas for verl, ``datasets`` for the folder, ``pool take`` for the ledger)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from typer.testing import CliRunner

from datagen.builds.rl_pool.build import run_rl_pool
from datagen.cli.app import app
from datagen.pool.ledger import take
from datagen.sandbox.isolation.select import bwrap_works
from tests.builds.executorkit import manifest_rows
from tests.sandbox.conftest import make_task_repo
from tests.sitekit import SITE
from tests.teachers.fake_server import FakeOpenAI

pytestmark = pytest.mark.slow
REPORT = ("Adding two numbers gives their difference: add(2, 3) returns -1 instead of 5. I noticed it "
          "while totalling a shopping list, where every total came out negative or far too small, and "
          "the multiplication helper next to it works as documented, so only addition seems {}.")
STATEMENTS = {
    "calc__add": REPORT.format("broken"),
    "calc__copy": REPORT.format("wrong"),
    "calc__easy": "The add helper of calc is wrong; summing 2 and 3 should be 5 but it is not.",
}


@pytest.fixture
def tasks_file(tmp_path: Path) -> Path:
    """Three tasks over one real repo: one in band, a near-copy of it, one too easy."""
    fields = make_task_repo(tmp_path)
    lines = []
    for iid, statement in STATEMENTS.items():
        lines.append(json.dumps({"instance_id": iid, "repo": "calc", "problem_statement": statement,
                                 "FAIL_TO_PASS": ["tests/test_add.py::test_add"],
                                 "PASS_TO_PASS": ["tests/test_mul.py::test_mul"],
                                 "strategy": "py_op_change_v1", **fields}))
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def policy_answer(fix: str):
    """The fix for every sample of the easy task; for the others only even seeds."""
    wrong = fix.replace("a + b", "a * b")

    def answer(body: dict) -> str:
        prompt = body["messages"][-1]["content"]
        good = STATEMENTS["calc__easy"] in prompt or body["seed"] % 2 == 0
        return f"```diff\n{fix if good else wrong}```"

    return answer


def overrides(tmp_path: Path, server: FakeOpenAI | None) -> list[str]:
    sets = [f"env.inherit_site_packages=[{SITE}]", f"env.cache_dir={tmp_path / 'envs'}",
            "difficulty.k=4", "difficulty.test_timeout_s=60"]
    if server is not None:
        sets += [f"policy.base_url={server.base_url}", "policy.model=tiny-teacher",
                 "policy.api_key_env=DATAGEN_TEST_KEY", f"policy.cache_dir={tmp_path / 'cache'}"]
    return sets


def test_pool_keeps_the_band_and_hands_each_instruction_out_once(tmp_path, tasks_file):
    if not bwrap_works()[0]:
        pytest.skip(f"the pool build runs policy patches only in bwrap: {bwrap_works()[1]}")
    fix = json.loads(tasks_file.read_text().splitlines()[0])["patch"]
    with FakeOpenAI(answer=policy_answer(fix)) as server:
        result = run_rl_pool(tasks=tasks_file, output=tmp_path / "pool", overrides=overrides(tmp_path, server))
        again = run_rl_pool(tasks=tasks_file, output=tmp_path / "pool2", overrides=overrides(tmp_path, server))
    out = result.output
    assert result.funnel == {"tasks": 3, "clean": 2, "sound": 2, "scored": 2, "in band": 1, "pooled": 1}
    assert result.dropped_by_reason == {"near_duplicate": 1, "too_easy": 1}
    # deterministic: a second build (policy answers from the cache) writes the same bytes
    for rel in ("data/train-00000-of-00001.parquet", "exports/verl/train.parquet", "sft/train.jsonl"):
        assert (out / rel).read_bytes() == (again.output / rel).read_bytes(), rel

    verl = pd.read_parquet(out / "exports/verl/train.parquet")
    assert list(verl.columns) == ["data_source", "prompt", "ability", "reward_model", "extra_info"]
    prompt = list(verl.loc[0, "prompt"])
    assert [m["role"] for m in prompt] == ["system", "user"] and STATEMENTS["calc__add"] in prompt[1]["content"]
    assert verl.loc[0, "extra_info"]["pass_rate"] == 0.5

    con = duckdb.connect(str(out / "manifest.duckdb"), read_only=True)
    drops = dict(con.execute("SELECT task_id, reason FROM pool_drops").fetchall())
    assert drops == {"calc__copy": "near_duplicate", "calc__easy": "too_easy"}
    vectors = dict(con.execute("SELECT instance_id, pass_vector FROM difficulty").fetchall())
    assert vectors == {"calc__add": [True, False, True, False], "calc__easy": [True] * 4}
    hints = [h for (h,) in con.execute("SELECT hint FROM attempts WHERE NOT passed").fetchall()]
    calls = con.execute("SELECT count(*), sum(completion_tokens) FROM teacher_calls").fetchone()
    assert calls[0] == 8 and calls[1] > 0  # 2 tasks x K=4 policy calls, paid once each
    assert hints and all("tests/test_add.py::test_add" in h for h in hints)
    con.close()

    sft = [json.loads(line) for line in (out / "sft/train.jsonl").read_text().splitlines()]
    assert [s["task_id"] for s in sft] == ["calc__add"]
    assert sft[0]["messages"][-1]["role"] == "assistant" and "a + b" in sft[0]["messages"][-1]["content"]

    taken = take(out, 5, "run-1")
    assert [t["task_id"] for t in taken] == ["calc__add"] and take(out, 5, "run-2") == []


# what two builds of one pool may differ in: grading times, and policy calls paid only once
POOL_TABLES = {"pool": (), "pool_drops": (), "attempts": ("duration_s",), "difficulty": (), "scores": ()}


def test_ray_grading_matches_local(tmp_path, tasks_file, ray_cluster):
    """The attempts graded by a datatrove stage on a local Ray instance: same pool, same rows."""
    if not bwrap_works()[0]:
        pytest.skip(f"the pool build runs policy patches only in bwrap: {bwrap_works()[1]}")
    fix = json.loads(tasks_file.read_text().splitlines()[0])["patch"]
    with FakeOpenAI(answer=policy_answer(fix)) as server:
        local = run_rl_pool(tasks=tasks_file, output=tmp_path / "local", overrides=overrides(tmp_path, server))
        ray = run_rl_pool(tasks=tasks_file, output=tmp_path / "ray",
                          overrides=[*overrides(tmp_path, server), "executor.kind=ray", "workers=2"])
    assert local.funnel == ray.funnel and local.funnel["in band"] == 1
    for rel in ("data/train-00000-of-00001.parquet", "exports/verl/train.parquet", "sft/train.jsonl"):
        assert (local.output / rel).read_bytes() == (ray.output / rel).read_bytes(), rel
    assert manifest_rows(local.output, POOL_TABLES) == manifest_rows(ray.output, POOL_TABLES)


def test_without_a_policy_every_clean_instruction_is_pooled_with_an_unknown_pass_rate(tmp_path, tasks_file, capfd):
    r = CliRunner().invoke(app, ["build", "rl-pool", "--tasks", str(tasks_file), "-o", str(tmp_path / "p"),
                                 *sum((["--set", s] for s in overrides(tmp_path, None)), [])])
    assert r.exit_code == 0, r.output
    assert "Pass rates: unknown" in r.output and "pooled" in r.output
    rows = pd.read_parquet(tmp_path / "p" / "data")
    assert sorted(rows.task_id) == ["calc__add", "calc__easy"]
    assert rows.pass_rate.isna().all() and set(rows.difficulty_band) == {"unknown"}
    assert "Pass rates: unknown" in (tmp_path / "p" / "README.md").read_text()
    capfd.readouterr()
    r2 = CliRunner().invoke(app, ["build", "rl-pool", "--tasks", str(tasks_file), "-o", str(tmp_path / "p"),
                                  *sum((["--set", s] for s in overrides(tmp_path, None)), [])])
    assert r2.exit_code == 0 and "Nothing to do" in capfd.readouterr().err  # progress and notes go to stderr


def test_a_missing_tasks_file_is_one_line(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "datagen.cli.app", "build", "rl-pool", "--tasks",
                           str(tmp_path / "nope"), "-o", str(tmp_path / "p")], capture_output=True, text=True)
    assert proc.returncode == 2 and "no such task file" in proc.stderr and "Traceback" not in proc.stderr
