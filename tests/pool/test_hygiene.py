"""Pool hygiene: near-duplicate statements, decontamination, split by repository."""

from __future__ import annotations

import json
import random

from datagen.config.curate import BenchmarkSource, DecontamConfig, NearDedupConfig
from datagen.pool.hygiene import assign_splits, clean, decontaminate, near_duplicates, split_of
from datagen.pool.rows import rows_from_tasks
from tests.pool.conftest import make_tasks, statement, task, write_tasks


def rows_of(tmp_path, tasks):
    return rows_from_tasks(write_tasks(tmp_path, tasks), group_size=4)


def test_near_duplicate_statements_are_dropped_with_reason(tmp_path):
    rng = random.Random(1)
    base = statement(rng, 60)
    near = base.replace("The function fails", "The function breaks")  # one word changed
    tasks = [task(0, "a/x", base), task(1, "b/y", near), *make_tasks(20, seed=3)[2:]]
    rows = rows_of(tmp_path, tasks)
    drops = near_duplicates(rows)
    assert len(drops) == 1 and drops[0].reason == "near_duplicate"
    kept = {r.instruction_id for r in rows} - {d.instruction_id for d in drops}
    assert drops[0].detail.startswith("duplicate_of:") and drops[0].detail.split(":")[1] in kept
    assert {drops[0].task_id, next(r.task_id for r in rows if r.instruction_id == drops[0].detail[13:])} == {
        "a__x-0", "b__y-1"}


def test_distinct_statements_all_stay_and_order_does_not_matter(tmp_path):
    rows = rows_of(tmp_path, make_tasks(30))
    assert near_duplicates(rows) == []
    rng = random.Random(2)
    text = statement(rng, 50)
    dup = rows_of(tmp_path / "d", [task(i, f"r/{i}", text) for i in range(4)])
    first = near_duplicates(dup, NearDedupConfig())
    assert len(first) == 3 and near_duplicates(list(reversed(dup))) == first


def test_decontamination_against_a_benchmark_file_and_eval_repos(tmp_path):
    rng = random.Random(5)
    leaked = statement(rng, 40)
    bench = tmp_path / "swebench.jsonl"
    bench.write_text(json.dumps({"instance_id": "bench-7", "problem_statement": "Issue: " + leaked}) + "\n")
    tasks = [task(0, "org/a", leaked), task(1, "org/b", statement(rng, 40)), task(2, "django/django", "short")]
    rows = rows_of(tmp_path / "t", tasks)
    cfg = DecontamConfig(benchmarks=[BenchmarkSource(name="swe", path=str(bench), fields=["problem_statement"],
                                                     id_field="instance_id")])
    drops = {d.task_id: d for d in decontaminate(rows, cfg)}
    assert set(drops) == {"org__a-0", "django__django-2"}
    assert drops["org__a-0"].reason == "contaminated" and drops["org__a-0"].detail.startswith("swe:bench-7")
    assert drops["django__django-2"].reason == "eval_repo"
    assert decontaminate(rows, DecontamConfig(enabled=False)) == []


def test_split_by_repository_is_deterministic_and_whole(tmp_path):
    rows = rows_of(tmp_path, make_tasks(120, repos=40))
    a = assign_splits(rows, eval_fraction=0.25, eval_repos=["org0/lib0"], seed=1)
    b = assign_splits(list(reversed(rows)), eval_fraction=0.25, eval_repos=["org0/lib0"], seed=1)
    assert {r.instruction_id: r.split for r in a} == {r.instruction_id: r.split for r in b}
    by_repo: dict[str, set] = {}
    for r in a:
        by_repo.setdefault(r.repo, set()).add(r.split)
    assert all(len(s) == 1 for s in by_repo.values())  # a repository never spans both splits
    assert by_repo["org0/lib0"] == {"validation"}
    n_eval = sum(s == {"validation"} for s in by_repo.values())
    assert 3 <= n_eval <= 20  # about a quarter of 40 repositories
    assert split_of("org7/lib7", 0.0) == "train" and split_of("org7/lib7", 1.0) == "validation"


def test_clean_runs_all_steps_and_reports_every_drop(tmp_path):
    rng = random.Random(9)
    text = statement(rng, 50)
    tasks = [*make_tasks(10), task(50, "x/y", text), task(51, "x/z", text), task(52, "sympy/sympy", "q " * 20)]
    rows = rows_of(tmp_path, tasks)
    kept, dropped = clean(rows, decontam=DecontamConfig(), eval_fraction=0.5)
    assert sorted(d.reason for d in dropped) == ["eval_repo", "near_duplicate"]
    assert len(kept) + len(dropped) == len(rows)
    assert {r.split for r in kept} <= {"train", "validation"}
