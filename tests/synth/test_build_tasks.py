"""``datagen build tasks`` end to end on the tiny ``minilib`` repo: what it writes, that
every task replays with plain git + pytest outside datagen, determinism and resume."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from datagen.cli.app import app
from datagen.records.tasks import TaskRecord
from datagen.synth.statements import MIN_QUOTED_LINE, added_lines, listed_tests
from tests.conftest import MIT, git, write_tree
from tests.sealed import assert_sealed, envs_digest
from tests.synth.buildkit import ROOT, SITE, read_tasks, run_build, sql, start_build

pytestmark = pytest.mark.slow


def test_rows_are_task_records_with_lineage(built):
    rows = read_tasks(built.out)
    assert len(rows) >= 5
    records = [TaskRecord.model_validate(r) for r in rows]
    assert [r.instance_id for r in records] == sorted(r.instance_id for r in records)
    strategies = {r.strategy for r in records}
    assert {"py_op_change_v1", "history_revert_v1", "combine_files_v1"} <= strategies
    for r in records:
        assert r.FAIL_TO_PASS and r.PASS_TO_PASS and r.base_commit and r.patch and r.bug_patch
        assert not set(r.FAIL_TO_PASS) & set(r.PASS_TO_PASS)
        assert re.fullmatch(r"envs/[0-9a-f]{16}\.git", r.repo_path) and r.runner == "pytest"
        assert r.statement_style == "template" and r.problem_statement.strip()
        assert r.changed_lines >= 1 and r.relevant_files
        assert {t.split("::")[0] for t in r.FAIL_TO_PASS} <= set(r.relevant_files)


def test_a_task_names_the_functions_its_fix_changes_that_its_tests_call(built):
    records = [TaskRecord.model_validate(r) for r in read_tasks(built.out)]
    for r in records:
        env = built.out / r.repo_path
        tests = "".join(git(env, "show", f"{r.base_commit}:{f}") for f in {t.split("::")[0] for t in r.FAIL_TO_PASS})
        for item in r.interface:
            assert f"b/{item.path}" in r.patch and item.signature.startswith("def ")
            assert item.name.split(".")[-1] in tests, (r.instance_id, item.name)
    single = [r for r in records if r.strategy == "py_op_change_v1"]
    assert single and all(r.interface for r in single)  # minilib's tests call each function by name


def test_manifest_tables(built):
    tasks = {r["instance_id"]: r for r in read_tasks(built.out)}
    cands = sql(built.out, "SELECT candidate_id, strategy, family, status, reason, stage, instance_id "
                "FROM candidates")
    assert len(cands) >= len(tasks)
    for cid, _, _family, status, reason, stage, iid in cands:
        assert status in ("kept", "dropped")
        if status == "kept":
            assert reason is None and stage == "kept" and iid in tasks
        else:
            assert reason and iid is None, (cid, reason)
    kept = {row[6] for row in cands if row[3] == "kept"}
    assert kept == set(tasks)
    task_rows = sql(built.out, "SELECT instance_id, base_commit, fail_to_pass FROM tasks")
    assert {(i, b, n) for i, b, n in task_rows} == {
        (i, t["base_commit"], len(t["FAIL_TO_PASS"])) for i, t in tasks.items()}
    (base,) = sql(built.out, "SELECT repo, status, runner, tests, flaky_tests, source_lines, clean_commit "
                  "FROM repo_baselines")
    assert base[:4] == ("minilib", "ok", "pytest", 8) and base[4] == [] and base[5] > 20
    assert sql(built.out, "SELECT status FROM runs") == [("finished",)]
    assert not (built.out / ".work").exists()


def test_funnel_summary_printed(built):
    assert "candidates per strategy (funnel)" in built.stdout
    for word in ("generated", "broke tests", "kept", "py_op_change_v1", "history_revert_v1", "combine_files_v1"):
        assert word in built.stdout
    assert f"{len(read_tasks(built.out))} tasks in" in " ".join(built.stdout.split())


def test_combine_and_history(built):
    rows = read_tasks(built.out)
    combined = [r for r in rows if r["strategy"] == "combine_files_v1"]
    ids = {r["instance_id"] for r in rows}
    assert combined
    for r in combined:
        assert r["changed_files"] >= 2 and len(r["parent_ids"]) >= 2 and set(r["parent_ids"]) <= ids
    (history,) = [r for r in rows if r["strategy"] == "history_revert_v1"]
    assert history["FAIL_TO_PASS"] == ["tests/test_core.py::test_clamp_high"]
    assert "+        return high" in history["patch"]


def test_datagen_validate_replays_every_task(built):
    result = CliRunner().invoke(app, ["validate", str(built.out / "tasks.jsonl"), "--set",
                                      f"env.inherit_site_packages=[{SITE}]", "--set", "validation.reruns=1"])
    n = len(read_tasks(built.out))
    assert result.exit_code == 0, result.output
    assert f"{n}/{n} tasks still prove themselves" in result.output


def _git(cwd: Path, *args: str, input: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, input=input)


def _pytest(cwd: Path, tests: list[str]) -> dict[str, bool]:
    """Plain pytest (no sandbox, no datagen): node id -> passed."""
    report = cwd / ".report.json"
    plugin = ("import json, pytest\nres = {}\n"
              "def pytest_runtest_logreport(report):\n"
              "    if report.when == 'call' or report.outcome != 'passed':\n"
              "        res[report.nodeid] = res.get(report.nodeid, True) and report.outcome == 'passed'\n"
              f"def pytest_sessionfinish(session):\n    open({str(report)!r}, 'w').write(json.dumps(res))\n")
    (cwd / "replay_plugin.py").write_text(plugin)
    env = {**os.environ, "PYTHONPATH": str(cwd), "PYTHONDONTWRITEBYTECODE": "1"}
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "replay_plugin", "-p", "no:cacheprovider", *tests],
                   cwd=cwd, env=env, capture_output=True, timeout=120)
    return json.loads(report.read_text()) if report.exists() else {}


def test_replay_outside_datagen(built, tmp_path):
    """The quality bar: a fresh clone, plain pytest, git apply."""
    for k, task in enumerate(read_tasks(built.out)):
        clone = tmp_path / f"clone{k}"
        assert _git(tmp_path, "clone", "-q", str(built.out / task["repo_path"]), str(clone)).returncode == 0
        assert _git(clone, "checkout", "-q", task["base_commit"]).returncode == 0
        f2p, p2p = task["FAIL_TO_PASS"], task["PASS_TO_PASS"]
        before = _pytest(clone, f2p)
        assert not any(before.get(t, False) for t in f2p), (task["instance_id"], before)
        assert _git(clone, "apply", "--check", "-R", input=task["bug_patch"]).returncode == 0  # bug reverses
        applied = _git(clone, "apply", input=task["patch"])
        assert applied.returncode == 0, applied.stderr
        after = _pytest(clone, [*f2p, *p2p])
        assert all(after.get(t) for t in f2p + p2p), (task["instance_id"], after)
        # and the bug patch applies (forward) on the fixed tree
        assert _git(clone, "apply", "--check", input=task["bug_patch"]).returncode == 0


def test_environments_are_sealed(built, tmp_path):
    """Every task of a real build (mutations, a mined commit, combined bugs), cloned as the
    docs say: one root commit, an opaque branch, no object of the fixed files, no strategy
    or entity name anywhere the agent looks; no other repository in the output."""
    records = [TaskRecord.model_validate(r) for r in read_tasks(built.out)]
    assert {"history_revert_v1", "combine_files_v1"} <= {r.strategy for r in records}
    entities = dict(sql(built.out, "SELECT instance_id, entity FROM tasks"))
    for k, r in enumerate(records):
        scratch = tmp_path / str(k)
        scratch.mkdir()
        names = tuple(e.rsplit("::", 1)[-1] for e in entities[r.instance_id].split(";") if e)
        assert_sealed(built.out / r.repo_path, r, scratch, names)
    assert len(list((built.out / "envs").iterdir())) == len(records)
    assert not (built.out / "repos").exists()


def test_statements_count_the_rows_and_are_unique(built):
    """Each template statement's count is the row's FAIL_TO_PASS; it lists the first tests by
    name and counts the rest; no two tasks share a statement."""
    rows = read_tasks(built.out)
    for r in rows:
        text, f2p = r["problem_statement"], r["FAIL_TO_PASS"]
        (count,) = re.findall(r"(\d+) tests? of its suite fails?", text)
        assert int(count) == len(f2p), (r["instance_id"], count, len(f2p))
        listed = listed_tests(text)
        more = re.findall(r"^- and (\d+) more$", text, re.M)
        assert listed == f2p[:len(listed)] and len(listed) + sum(map(int, more)) == len(f2p), r["instance_id"]
    texts = [" ".join(r["problem_statement"].split()) for r in rows]
    assert len(set(texts)) == len(texts)
    dups = sql(built.out, "SELECT reason, duplicate_of FROM candidates WHERE reason LIKE 'duplicate_%' "
               "AND duplicate_of IS NOT NULL")
    assert all(d in {r["instance_id"] for r in rows} for _, d in dups)


def test_patches_unique_and_statements_do_not_leak(built):
    rows = read_tasks(built.out)
    assert len({r["patch"] for r in rows}) == len(rows)
    for r in rows:
        flat = " ".join(r["problem_statement"].split())
        for line in added_lines(r["patch"]):
            quoted = " ".join(line.split())
            assert len(quoted) < MIN_QUOTED_LINE or quoted not in flat, (r["instance_id"], line)


def test_deterministic(built, minilib, synth_cache, tmp_path):
    again = tmp_path / "again"
    proc = run_build([minilib], again, synth_cache)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (again / "tasks.jsonl").read_bytes() == (built.out / "tasks.jsonl").read_bytes()
    assert envs_digest(again) == envs_digest(built.out)


def test_resume_after_sigkill(built, minilib, synth_cache, tmp_path):
    out = tmp_path / "killed"
    proc = start_build([minilib], out, synth_cache)
    stored: dict[str, dict] = {}
    deadline = time.monotonic() + 300
    while proc.poll() is None and time.monotonic() < deadline:
        found = list(out.glob(".work/*/verdicts/*.json"))
        if len(found) >= 2:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            stored = {p.stem: json.loads(p.read_text()) for p in out.glob(".work/*/verdicts/*.json")}
            break
        time.sleep(0.05)
    assert stored, "the build ended before it stored two verdicts"
    assert not (out / "tasks.jsonl").exists()
    assert sql(out, "SELECT status FROM runs") == [("running",)]
    again = run_build([minilib], out, synth_cache)
    assert again.returncode == 0, again.stderr[-3000:]
    assert (out / "tasks.jsonl").read_bytes() == (built.out / "tasks.jsonl").read_bytes()
    # stored verdicts were read back, not run again: their sandbox seconds are the stored ones
    seconds = dict(sql(out, "SELECT candidate_id, sandbox_s FROM candidates"))
    for cid, verdict in stored.items():
        assert seconds[cid] == verdict["sandbox_s"], cid
    assert sql(out, "SELECT status FROM runs") == [("finished",)]


GREET = '''def greet(name, shout=False):
    text = "hello " + name
    return text.upper() if shout else text
'''
TEST_GREET = '''from minilib.text import greet


def test_greet():
    assert greet("ann") == "hello ann"
    assert greet("ann", shout=True) == "HELLO ANN"
'''


AREA = "def area(width, height):\n    return width * height\n"
TEST_AREA = "from minilib.shapes import area\n\n\ndef test_area():\n    assert area(3, 4) == 12\n"


def test_same_change_from_two_strategies(tmp_path, synth_cache):
    """py_constant_change and py_default_arg both flip ``shout=False``: one task, and the
    second proposer gets its own candidates row (the build once died on the primary key).
    The repo holds ``greet`` and ``area`` (no constant, no default: no candidate; its test
    is the one a broken ``greet`` leaves passing): minilib's functions gave the two
    strategies many more candidates to validate, none of which the assertions read."""
    repo = tmp_path / "greet"
    write_tree(repo, {"LICENSE": MIT, "minilib/__init__.py": '"""minilib."""\n', "minilib/text.py": GREET,
                      "tests/test_text.py": TEST_GREET, "minilib/shapes.py": AREA, "tests/test_shapes.py": TEST_AREA})
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "greet")
    out = tmp_path / "out"
    proc = run_build([repo], out, synth_cache, "synth.families=[procedural]", "synth.seeds_per_pair=4",
                     "synth.max_candidates_per_entity=8",
                     "synth.strategies=[py_constant_change_v1,py_default_arg_v1]")
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = sql(out, "SELECT candidate_id, status, reason FROM candidates WHERE entity = 'minilib/text.py::greet'")
    assert len(rows) == 8 and len({r[0] for r in rows}) == 8  # 2 strategies x 4 seeds, each with its row
    assert sorted(r[1:] for r in rows) == [("dropped", "duplicate_patch")] * 6 + [("kept", None)] * 2
    patches = [t["patch"] for t in read_tasks(out)]
    assert len(patches) == len(set(patches))


def test_a_repo_skipped_before_its_profile_is_listed_under_its_language(tmp_path, synth_cache):
    """The GPL sample is skipped by license before any runner is looked for: the per-language
    summary still lists it as C, not as a repo of no language."""
    out = tmp_path / "out"
    proc = run_build([ROOT / "sample_data" / "wordfreq-c"], out, synth_cache)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert sql(out, "SELECT repo, status, reason, language FROM repo_baselines") == [
        ("wordfreq-c", "skipped", "license:GPL-3.0", "c")]


def test_no_function_gives_more_than_its_quota(built):
    """synth.max_tasks_per_entity (2): no function is changed by more than two tasks, a
    combined task counting for each of its functions (further validated candidates are
    recorded as entity_quota); a combined task changes two or more files and functions."""
    per = Counter((repo, f) for repo, entity in sql(built.out, "SELECT repo, entity FROM tasks WHERE entity != ''")
                  for f in entity.split(";"))
    assert per and max(per.values()) <= 2
    combined = sql(built.out, "SELECT entity, changed_files, hunks FROM tasks WHERE strategy = 'combine_files_v1'")
    assert combined and all(len(e.split(";")) >= 2 and files >= 2 and h >= 2 for e, files, h in combined)
