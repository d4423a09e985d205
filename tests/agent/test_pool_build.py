"""``datagen build rl-pool`` with ``difficulty.mode: agent``: mini-swe-agent runs against a
scripted stand-in policy, the band kept on pass@1, and the runs as data: the manifest's
``agent_runs`` / ``agent_tasks`` / ``trajectory_segments`` (a summarized run's segments chain
back to segment 0 in SQL), SFT rows that ``datasets`` loads, ``.traj.json`` files that
mini-swe-agent's own inspector reads, ATIF files that Harbor's validator accepts. A second
build pays for no policy call again."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import duckdb
import pytest

from datagen.builds.rl_pool.build import run_rl_pool
from datagen.sandbox.isolation.select import bwrap_works
from tests.agent import standin
from tests.agent.standin import MODEL, ScriptedPolicy
from tests.sandbox.conftest import make_task_repo
from tests.sitekit import SITE
from tests.trainer_venvs import VENVS

pytestmark = pytest.mark.slow
STATEMENTS = {
    "calc__add": "Adding two numbers gives their difference: add(2, 3) returns -1 instead of 5.",
    "calc__sum": "The add helper of calc subtracts; summing 2 and 3 should give 5, and it does not.",
}


@pytest.fixture
def tasks_file(tmp_path: Path) -> Path:
    pytest.importorskip("minisweagent")
    if not bwrap_works()[0]:
        pytest.skip(f"agent runs need bwrap: {bwrap_works()[1]}")
    fields = make_task_repo(tmp_path)
    lines = [json.dumps({"instance_id": iid, "repo": "calc", "problem_statement": statement,
                         "FAIL_TO_PASS": ["tests/test_add.py::test_add"],
                         "PASS_TO_PASS": ["tests/test_mul.py::test_mul"],
                         "strategy": "py_op_change_v1", **fields}) for iid, statement in STATEMENTS.items()]
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def overrides(tmp_path: Path, server, *extra: str) -> list[str]:
    return [f"env.inherit_site_packages=[{SITE}]", f"env.cache_dir={tmp_path / 'envs'}", "difficulty.mode=agent",
            "difficulty.k=2", "difficulty.test_timeout_s=60", "difficulty.agent.workers=2",
            "difficulty.agent.max_tokens=100000", "hygiene.near_dedup.enabled=false",
            f"policy.base_url={server.base_url}", f"policy.model={MODEL}", "policy.api_key_env=DATAGEN_TEST_KEY",
            f"policy.cache_dir={tmp_path / 'cache'}", "policy.max_retries=0", *extra]


def _sql(out: Path, query: str) -> list[tuple]:
    con = duckdb.connect(str(out / "manifest.duckdb"), read_only=True)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


def test_agent_difficulty_keeps_the_band_and_the_runs(tmp_path, tasks_file):
    tasks = [json.loads(line) for line in tasks_file.read_text().splitlines()]
    with ScriptedPolicy([_record(t) for t in tasks], [standin.solve, standin.give_up]) as server:
        result = run_rl_pool(tasks=tasks_file, output=tmp_path / "pool", overrides=overrides(tmp_path, server))
        again = run_rl_pool(tasks=tasks_file, output=tmp_path / "pool2", overrides=overrides(tmp_path, server))
    out = result.output
    assert result.funnel["in band"] == 2 and result.funnel["pooled"] == 2
    runs = _sql(out, "SELECT trajectory_id, exit_status, masked, passed, steps, tokens_in > 0 FROM agent_runs "
                     "ORDER BY trajectory_id")
    assert runs == [("calc__add/0.0", "submitted", False, True, 6, True),
                    ("calc__add/1.0", "submitted", False, False, 2, True),
                    ("calc__sum/0.0", "submitted", False, True, 6, True),
                    ("calc__sum/1.0", "submitted", False, False, 2, True)]
    assert _sql(out, "SELECT instance_id, pass_at_1, pass_at_k FROM agent_tasks ORDER BY 1") == [
        ("calc__add", 0.5, 1.0), ("calc__sum", 0.5, 1.0)]
    # lineage: a trajectory to its task and repo in one query
    assert _sql(out, "SELECT DISTINCT r.repo, p.task_id FROM agent_runs r JOIN pool p ON p.task_id = r.instance_id "
                     "ORDER BY 2") == [("calc", "calc__add"), ("calc", "calc__sum")]
    # resumed from the cache: the second build paid for no policy call
    paid = _sql(again.output, "SELECT count(*) FROM teacher_calls WHERE NOT cached")
    assert paid == [(0,)] and (again.output / "sft/agent.jsonl").read_bytes() == (out / "sft/agent.jsonl").read_bytes()
    _check_exports(out)


def _record(task: dict):
    from datagen.records.tasks import TaskRecord

    return TaskRecord.model_validate(task)


def _check_exports(out: Path) -> None:
    datasets = pytest.importorskip("datasets")
    rows = datasets.load_dataset("json", data_files=str(out / "sft/agent.jsonl"), split="train")
    assert len(rows) == 2 and set(rows["reward"]) == {1.0}
    messages = rows[0]["messages"]
    assert [m["role"] for m in messages[:3]] == ["system", "user", "assistant"]
    assert messages[2]["tool_calls"][0]["function"]["name"] == "bash" and messages[3]["role"] == "tool"
    from minisweagent.run.utilities.inspector import TrajectoryInspector

    trajs = sorted((out / "trajectories").glob("*.traj.json"))
    assert len(trajs) == 4
    inspector = TrajectoryInspector(trajs)
    assert inspector.n_trajectories == 4 and inspector.n_steps >= 2 and inspector.messages[0]["role"] == "system"
    atifs = sorted((out / "trajectories" / "atif").glob("*.atif.json"))
    assert len(atifs) == 4
    harbor = VENVS / "harbor" / "bin" / "python"  # tests/run makes it where python3.12 exists
    if harbor.is_file():
        proc = subprocess.run([str(harbor), "-m", "harbor.utils.trajectory_validator", str(atifs[0])],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_summarized_run_is_stored_as_segments_that_chain_in_sql(tmp_path, tasks_file):
    tasks = [json.loads(line) for line in tasks_file.read_text().splitlines()][:1]
    one = tmp_path / "one.jsonl"
    one.write_text(json.dumps(tasks[0]) + "\n")
    extra = ("difficulty.k=1", "difficulty.agent.context_budget=240", "difficulty.agent.max_segments=2",
             "difficulty.band_high=1.0", "difficulty.band_low=0.0")
    with ScriptedPolicy([_record(tasks[0])], standin.slow_solve) as server:
        result = run_rl_pool(tasks=one, output=tmp_path / "pool", overrides=overrides(tmp_path, server, *extra),
                             allow_empty=True)
    out = result.output
    chain = _sql(out, """
        WITH RECURSIVE up(trajectory_id, segment, hops) AS (
            SELECT trajectory_id, segment, 0 FROM trajectory_segments
            WHERE segment = (SELECT max(segment) FROM trajectory_segments)
            UNION ALL
            SELECT s.trajectory_id, s.segment, up.hops + 1 FROM trajectory_segments s
            JOIN trajectory_segments c ON c.trajectory_id = s.trajectory_id AND c.continues = s.segment
            JOIN up ON up.trajectory_id = c.trajectory_id AND up.segment = c.segment)
        SELECT trajectory_id, segment, hops FROM up ORDER BY hops""")
    assert chain == [("calc__add/0.0", 1, 0), ("calc__add/0.0", 0, 1)]
    segs = _sql(out, "SELECT segment, continues, summary IS NOT NULL, reward FROM trajectory_segments ORDER BY 1")
    assert segs == [(0, None, False, 1.0), (1, 0, True, 1.0)]
    assert _sql(out, "SELECT exit_status, passed, segments FROM agent_runs") == [("submitted", True, 2)]
    rows = [json.loads(line) for line in (out / "sft/agent.jsonl").read_text().splitlines()]
    assert [(r["segment"], r["continues"], r["reward"]) for r in rows] == [(0, None, 1.0), (1, 0, 1.0)]
    assert standin.SUMMARY_WORDS in rows[1]["messages"][1]["content"]
