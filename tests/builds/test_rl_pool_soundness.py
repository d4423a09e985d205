"""Soundness in ``datagen build rl-pool``: planted tasks over one real git repo (a message
the statement never gives, a fix that edits a fixture the tests read, a statement that
names its failing test, a sound task), the static flags with their evidence, the policy
(drop, or keep with the flags), the card and ``datagen sql``; the teacher judge answered
by a scripted server on 127.0.0.1: its rows, a malformed answer skipped, a cached re-run
that pays nothing."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from typer.testing import CliRunner

from datagen.builds.rl_pool.build import run_rl_pool
from datagen.cli.app import app
from datagen.pool.exports import write_harbor
from tests.teachers.fake_server import FakeOpenAI

STUB = 'def parse_port(text):\n    """The port number in text (1-65535)."""\n    raise NotImplementedError\n'
CODE = ('def parse_port(text):\n    """The port number in text (1-65535)."""\n    value = int(text)\n'
        '    if not 0 < value < 65536:\n        raise ValueError("port out of range")\n    return value\n')
TESTS = ("import json\n\nimport pytest\n\nfrom ports import parse_port\n\n\ndef test_parse():\n"
         "    assert parse_port('80') == 80\n\n\ndef test_range():\n"
         "    with pytest.raises(ValueError, match='port out of range'):\n        parse_port('70000')\n\n\n"
         "def test_known():\n    assert json.load(open('tests/known.json')) == [80, 443]\n")
# distinct words, so near-duplicate hygiene keeps every one
STATEMENTS = {
    "ports__sound": "Implement parse_port so that it returns the integer port a text names; a port outside "
                    "1 to 65535 raises ValueError(\"port out of range\"). Callers in the proxy loader rely on it.",
    "ports__message": "The helper turning configuration strings into socket numbers is missing its body. "
                      "Write it: numeric text gives that number, anything beyond the valid span is refused.",
    "ports__fixture": "The table of well known services is incomplete: HTTPS is absent although clients "
                      "expect the secure web default next to plain HTTP. Add it to the shipped list.",
    "ports__named": "test_range fails: parse_port accepts 70000 although ports stop at 65535; it should "
                    "raise ValueError(\"port out of range\") for such values, as the docstring says.",
}
FLAGGED = {"ports__message": "b2_implicit_naming", "ports__fixture": "b10_text_files",
           "ports__named": "statement_names_test"}


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def _repo(root: Path) -> tuple[str, str, str]:
    """The buggy tree as one commit; (base commit, the code fix, the fixture fix)."""
    repo = root / "ports"
    (repo / "tests").mkdir(parents=True)
    _git(repo, "init", "-q")
    _git(repo, "config", "user.email", "t@example.com")
    _git(repo, "config", "user.name", "t")
    (repo / "ports.py").write_text(STUB)
    (repo / "tests" / "test_ports.py").write_text(TESTS)
    (repo / "tests" / "known.json").write_text("[80]\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    base = _git(repo, "rev-parse", "HEAD").strip()
    (repo / "ports.py").write_text(CODE)
    code_fix = _git(repo, "diff")
    _git(repo, "checkout", "-q", ".")
    (repo / "tests" / "known.json").write_text("[80, 443]\n")
    fixture_fix = _git(repo, "diff")
    _git(repo, "checkout", "-q", ".")
    return base, code_fix, fixture_fix


@pytest.fixture
def tasks_file(tmp_path: Path) -> Path:
    base, code_fix, fixture_fix = _repo(tmp_path)
    lines = []
    for iid, statement in STATEMENTS.items():
        fixture = iid == "ports__fixture"
        test = "tests/test_ports.py::" + ("test_known" if fixture else "test_range")
        lines.append(json.dumps({
            "instance_id": iid, "repo": "ports", "base_commit": base, "repo_path": "ports",
            "patch": fixture_fix if fixture else code_fix, "problem_statement": statement,
            "FAIL_TO_PASS": [test], "PASS_TO_PASS": ["tests/test_ports.py::test_parse"], "strategy": "feature_v1",
            "interface": [{"path": "ports.py", "name": "parse_port", "signature": "def parse_port(text)",
                           "doc": "The port number in text (1-65535)."}]}))
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _sql(out: Path, query: str) -> list[tuple]:
    con = duckdb.connect(str(out / "manifest.duckdb"), read_only=True)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


def test_each_planted_flag_is_found_with_its_evidence_and_the_sound_task_is_pooled(tmp_path, tasks_file):
    result = run_rl_pool(tasks=tasks_file, output=tmp_path / "pool")
    out = result.output
    assert result.dropped_by_reason == {"unsound": 3}
    flags = _sql(out, "SELECT task_id, flag, evidence, action FROM soundness WHERE flagged ORDER BY task_id")
    assert {(t, f) for t, f, _, _ in flags} == set(FLAGGED.items())
    evidence = {t: e for t, _, e, _ in flags}
    assert '"port out of range"' in evidence["ports__message"]
    assert "tests/known.json" in evidence["ports__fixture"]
    assert "test_range" in evidence["ports__named"]
    assert {a for *_, a in flags} == {"dropped"}
    assert _sql(out, "SELECT count(*) FROM soundness")[0][0] == 4 * 5  # every check ran on every task
    rows = pd.read_parquet(out / "data")
    assert list(rows.task_id) == ["ports__sound"]
    assert "def parse_port(text)" in rows.interface[0] and "<interface>" in rows.prompt[0][1]["content"]
    bench = [json.loads(line) for line in (out / "exports" / "swebench.jsonl").read_text().splitlines()]
    assert bench[0]["interface"] == rows.interface[0]
    written, skipped = write_harbor(out, tmp_path / "harbor")
    assert not skipped and "def parse_port(text)" in (written[0] / "instruction.md").read_text()
    card = (out / "README.md").read_text()
    for flag in FLAGGED.values():
        assert f"| {flag} | 1 |" in card
    listed = CliRunner().invoke(app, ["sql", str(out), "SELECT flag, count(*) AS n FROM soundness "
                                      "WHERE action = 'dropped' GROUP BY flag ORDER BY flag", "--format", "csv"])
    assert listed.exit_code == 0
    assert listed.output.splitlines() == ["flag,n", "b10_text_files,1", "b2_implicit_naming,1",
                                          "statement_names_test,1"]


def test_keep_mode_pools_the_flagged_tasks_with_their_flags(tmp_path, tasks_file):
    result = run_rl_pool(tasks=tasks_file, output=tmp_path / "pool", overrides=["soundness.action=keep"])
    rows = pd.read_parquet(result.output / "data").set_index("task_id")
    assert sorted(rows.index) == sorted(STATEMENTS)
    assert {t: list(rows.soundness_flags[t]) for t in FLAGGED} == {t: [f] for t, f in FLAGGED.items()}
    assert list(rows.soundness_flags["ports__sound"]) == []


VERDICT = {"solvable": True, "issues": [], "intent_completeness": 3, "time_bucket": "<15m", "confidence": 0.9,
           "reasoning": "the statement gives the message and the range"}


def judge_answer(body: dict) -> str:
    """Sound for the sound task, B4 for the fixture one, malformed for the one naming a test."""
    prompt = body["messages"][0]["content"]
    if STATEMENTS["ports__named"] in prompt:
        return "I think this task is fine."
    if STATEMENTS["ports__fixture"] in prompt:
        return json.dumps({**VERDICT, "solvable": False, "issues": ["B10", "B4"], "intent_completeness": 1,
                           "reasoning": "the tests read a fixture the statement does not describe"})
    return json.dumps(VERDICT)


def test_the_judge_flags_skips_a_malformed_answer_and_pays_once(tmp_path, tasks_file):
    with FakeOpenAI(answer=judge_answer) as server:
        sets = ["soundness.judge.enabled=true", f"soundness.judge.teacher.base_url={server.base_url}",
                "soundness.judge.teacher.model=tiny-teacher", "soundness.judge.teacher.api_key_env=DATAGEN_TEST_KEY",
                f"soundness.judge.teacher.cache_dir={tmp_path / 'cache'}", "soundness.judge.teacher.max_reasks=1",
                "soundness.checks=[b2_implicit_naming]"]
        first = run_rl_pool(tasks=tasks_file, output=tmp_path / "pool", overrides=sets)
        paid = sum(server.paid.values())
        again = run_rl_pool(tasks=tasks_file, output=tmp_path / "pool2", overrides=sets)
        assert sum(server.paid.values()) == paid  # every verdict came from the cache
    assert paid == 4 + 1  # one per task, one re-ask of the malformed answer
    verdicts = {t: (s, sol, issues) for t, s, sol, issues in
                _sql(first.output, "SELECT task_id, status, solvable, issues FROM judgements")}
    assert verdicts["ports__sound"] == ("ok", True, [])
    assert verdicts["ports__fixture"] == ("ok", False, ["B4", "B10"])
    status, solvable, _ = verdicts["ports__named"]
    assert status == "skipped" and solvable is None  # never a pass
    assert _sql(first.output, "SELECT reason FROM judgements WHERE status = 'skipped'")[0][0].startswith("invalid")
    dropped = dict(_sql(first.output, "SELECT task_id, detail FROM pool_drops"))
    assert set(dropped) == {"ports__message", "ports__fixture"}
    assert "judge:unsolvable" in dropped["ports__fixture"] and "judge:B4" in dropped["ports__fixture"]
    card = (first.output / "README.md").read_text()
    assert "| judge:unsolvable | 1 |" in card and "| b2_implicit_naming | 1 |" in card
    assert _sql(again.output, "SELECT count(*) FROM judgements WHERE cached")[0][0] == 4
    assert _sql(again.output, "SELECT status FROM judgements WHERE task_id = 'ports__named'") == [("skipped",)]
    rows = pd.read_parquet(again.output / "data")
    assert sorted(rows.task_id) == ["ports__named", "ports__sound"]
