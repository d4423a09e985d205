"""The pool folder: shards loadable by `datasets`, the card, verl / SkyRL / SWE-bench
exports in their consumers' shapes, byte-identical rebuilds, manifest tables."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml

from datagen.errors import UserError
from datagen.manifest import Manifest, query
from datagen.pool import ledger
from datagen.pool.exports import SWEBENCH_FIELDS, write_pool
from datagen.pool.hygiene import assign_splits, drop_row
from datagen.pool.manifest import TABLES, record_pool
from datagen.pool.rows import rows_from_tasks
from tests.pool.conftest import make_tasks, write_tasks

VERL_COLUMNS = ["data_source", "prompt", "ability", "reward_model", "extra_info"]


@pytest.fixture
def built(tmp_path):
    """A pool with both splits, some rows scored, one dropped row."""
    rows = rows_from_tasks(write_tasks(tmp_path / "tasks", make_tasks(30, repos=10)), group_size=8)
    rows = assign_splits(rows, eval_fraction=0.3, seed=0)
    first_train = next(i for i, r in enumerate(rows) if r.split == "train")
    rows[first_train] = rows[first_train].model_copy(update={
        "pass_rate": 0.25, "difficulty_band": "in_band", "policy_id": "qwen-7b", "scorer": "difficulty_v1",
        "perplexity": 3.5})
    dropped = [drop_row(rows.pop(), "near_duplicate", "duplicate_of:x")]
    out = tmp_path / "pool"
    shards = write_pool(rows, dropped, out, {"pretty_name": "Test pool", "license": "apache-2.0",
                                             "max_rows_per_shard": 8})
    return out, rows, dropped, shards


def test_layout_and_shard_rows(built):
    out, rows, _, shards = built
    names = sorted(s.path for s in shards)
    assert "exports/swebench.jsonl" in names and "exports/verl/train.parquet" in names
    assert "exports/skyrl/validation.parquet" in names
    data = sorted(p for p in names if p.startswith("data/"))
    n_train = sum(r.split == "train" for r in rows)
    assert f"data/train-00000-of-{(n_train + 7) // 8:05d}.parquet" in data
    assert sum(s.rows for s in shards if s.path.startswith("data/")) == len(rows)
    assert all(len(s.sha256) == 64 and s.bytes > 0 for s in shards)


def test_datasets_loads_the_pool_folder(built, tmp_path):
    out, rows, _, _ = built
    ds = datasets.load_dataset("parquet", data_dir=str(out / "data"), cache_dir=str(tmp_path / "hf"))
    assert set(ds) == {"train", "validation"}
    assert ds["train"].num_rows + ds["validation"].num_rows == len(rows)
    first = ds["train"][0]
    assert first["prompt"][0]["role"] == "system" and isinstance(first["fail_to_pass"], list)
    verl = datasets.load_dataset("parquet", data_files={"train": str(out / "exports/verl/train.parquet")},
                                 cache_dir=str(tmp_path / "hf"))
    assert verl["train"].column_names == VERL_COLUMNS


def test_card_header_follows_the_hub(built):
    out, rows, _, _ = built
    text = (out / "README.md").read_text()
    head = yaml.safe_load(text.split("---")[1])
    assert head["license"] == "apache-2.0" and head["pretty_name"] == "Test pool"
    assert head["size_categories"] == ["n<1K"] and head["task_categories"] == ["text-generation"]
    default = head["configs"][0]
    assert default["config_name"] == "default" and default["default"] is True
    assert default["data_files"] == [{"split": "train", "path": "data/train-*.parquet"},
                                     {"split": "validation", "path": "data/validation-*.parquet"}]
    assert [c["config_name"] for c in head["configs"]] == ["default", "verl", "skyrl"]
    assert "| near_duplicate | 1 |" in text


def test_verl_export_has_the_five_columns(built):
    out, rows, _, _ = built
    df = pd.read_parquet(out / "exports/verl/train.parquet")
    assert list(df.columns) == VERL_COLUMNS
    prompt = list(df["prompt"][0])
    assert [set(m) for m in prompt] == [{"role", "content"}] * 2 and prompt[1]["role"] == "user"
    assert all(rm["style"] == "rule" for rm in df["reward_model"])
    truth = json.loads(df["reward_model"][0]["ground_truth"])
    assert {"FAIL_TO_PASS", "PASS_TO_PASS", "test_patch", "runner", "aux_checks"} <= set(truth)
    keys = {tuple(sorted(e)) for e in df["extra_info"]}
    assert len(keys) == 1  # identical keys in every row
    assert {"instruction_id", "policy_id", "pass_rate", "difficulty_band", "group_size"} <= set(next(iter(keys)))
    scored = [(e["pass_rate"], e["policy_id"], e["difficulty_band"]) for e in df["extra_info"] if e["pass_rate"]]
    assert scored == [(0.25, "qwen-7b", "in_band")]
    assert df["extra_info"].map(lambda e: e["pass_rate"] is None).sum() == len(df) - 1  # null = unknown


def test_skyrl_and_swebench_rows(built):
    out, rows, _, _ = built
    sky = pq.read_table(out / "exports/skyrl/train.parquet").to_pylist()
    assert list(sky[0]) == ["data_source", "prompt", "env_class", "instance"]
    inst = sky[0]["instance"]
    assert set(SWEBENCH_FIELDS) <= set(inst) and isinstance(inst["FAIL_TO_PASS"], list)
    assert inst["eval_script"].startswith("#!/bin/bash") and "image_name" in inst
    lines = [json.loads(line) for line in (out / "exports/swebench.jsonl").read_text().splitlines()]
    assert len(lines) == len(rows) and list(lines[0]) == list(SWEBENCH_FIELDS)
    assert all(isinstance(x["FAIL_TO_PASS"], str) and json.loads(x["PASS_TO_PASS"]) for x in lines)
    by_id = {r.task_id: r for r in rows}
    assert all(x["patch"] == by_id[x["instance_id"]].patch for x in lines)


def _digest(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_rebuild_is_byte_identical(tmp_path):
    tasks = write_tasks(tmp_path / "tasks", make_tasks(25, repos=7))
    outs = []
    for k, order in enumerate((1, -1)):
        rows = assign_splits(rows_from_tasks(tasks, group_size=4)[::order], eval_fraction=0.3)
        write_pool(rows, [], tmp_path / f"pool{k}", {"max_rows_per_shard": 10})
        outs.append(_digest(tmp_path / f"pool{k}"))
    assert outs[0] == outs[1]
    write_pool(rows, [], tmp_path / "pool1", {"max_rows_per_shard": 10})  # again, in place
    assert _digest(tmp_path / "pool1") == outs[0]


def test_duplicate_ids_are_refused(tmp_path):
    rows = rows_from_tasks(write_tasks(tmp_path / "t", make_tasks(3)), group_size=1)
    with pytest.raises(UserError, match="more than once"):
        write_pool([*rows, rows[0]], [], tmp_path / "pool")


def test_manifest_tables_and_ledger_mirror(built):
    out, rows, dropped, shards = built
    ledger.take(out, 3, "run-1")
    with Manifest(out, tables=TABLES) as db:
        record_pool(db, "run-x", rows, dropped, shards, out)
        record_pool(db, "run-x", rows, dropped, shards, out)  # replaces, never doubles
    assert query(out, "SELECT count(*) FROM pool")[1] == [(len(rows),)]
    assert query(out, "SELECT reason, detail FROM pool_drops")[1] == [("near_duplicate", "duplicate_of:x")]
    assert query(out, "SELECT count(*) FROM shards WHERE run_id='run-x'")[1] == [(len(shards),)]
    assert query(out, "SELECT count(*) FROM ledger WHERE consumer='run-1'")[1] == [(3,)]
    _, prompts = query(out, "SELECT prompt[1].role, len(aux_checks) FROM pool LIMIT 1")
    assert prompts == [("system", 3)]


def test_take_reads_rows_across_shards_in_pool_order(built):
    out, rows, _, _ = built
    train = sorted(r.instruction_id for r in rows if r.split == "train")
    taken = ledger.take(out, 1000, "all")
    assert [r["instruction_id"] for r in taken] == train  # several shards, pool order
    assert taken == [r.model_dump() for r in sorted((r for r in rows if r.split == "train"),
                                                    key=lambda r: r.instruction_id)]
    val = ledger.take(out, 1000, "eval", split="validation")
    assert len(val) == len(rows) - len(train) > 0


# -- Harbor and SkyRL for every runner -------------------------------------------------
def every_runner_pool(tmp_path: Path, **card) -> tuple[Path, list]:
    """A pool of the calc repo's task once per runner (the source is the same: each
    runner's profile makes its own plan of it, or its defaults)."""
    from datagen.pool.rows import rows_from_tasks
    from datagen.sandbox.harness.profiles.registry import profile_names
    from tests.serve.conftest import calc_tasks

    base = rows_from_tasks(calc_tasks(tmp_path), group_size=4)[0]
    rows = [base.model_copy(update={"runner": r, "task_id": f"calc__{r}",
                                    "instruction_id": f"{base.instruction_id}-{r}"})
            for r in profile_names()]
    out = tmp_path / "pool"
    write_pool(rows, [], out, card or None)
    return out, rows


def test_harbor_and_skyrl_exports_for_every_runner(tmp_path):
    from datagen.pool.exports import harbor_task, write_harbor
    from datagen.sandbox.harness.profiles.registry import profile_names

    pool, rows = every_runner_pool(tmp_path)
    assert len(rows) == len(profile_names()) == 15
    written, skipped = write_harbor(pool, tmp_path / "harbor")
    assert not skipped and len(written) == 15
    images = set()
    for row in rows:
        docker = (tmp_path / "harbor" / row.task_id / "environment/Dockerfile").read_text()
        images.add(next(line for line in docker.splitlines() if line.startswith("FROM ")).split()[1].split(":")[0])
        assert "USER agent" in docker and "git tag datagen-base" in docker, row.runner
        assert "pip install" in docker or "RUN <<'DATAGEN_SETUP'" in docker, row.runner  # the plan's install
        assert 'environment_mode = "separate"' in (tmp_path / "harbor" / row.task_id / "task.toml").read_text()
    assert {"python", "node", "golang", "rust", "gcc", "ruby", "php"} <= images and len(images) >= 9, images
    python = (tmp_path / "harbor" / "calc__pytest" / "environment/Dockerfile").read_text()
    assert "RUN pip install --no-deps" in python and "RUN pip install pytest" in python  # the plan's steps, the runner
    # --base-image: every task FROM it; a runner nobody knows is skipped with the reason
    pinned = "python:3.11-slim@sha256:" + "0" * 64
    written, _ = write_harbor(pool, tmp_path / "pinned", base_image=pinned)
    assert all(f"FROM {pinned}\n" in (w / "environment/Dockerfile").read_text() for w in written)
    odd = rows[0].model_copy(update={"runner": "nosuchrunner"})
    assert "unknown test runner 'nosuchrunner'" in harbor_task(odd, tmp_path / "odd")
    sky = pq.read_table(pool / "exports/skyrl/train.parquet").to_pylist()
    assert {r["instance"]["image_name"] for r in sky} == {None}
    named, _ = every_runner_pool(tmp_path / "named", skyrl_image="swe-env:calc")
    assert {r["instance"]["image_name"] for r in pq.read_table(named / "exports/skyrl/train.parquet").to_pylist()} \
        == {"swe-env:calc"}


def test_harbor_verifier_rejects_test_edits_and_restores_test_files(tmp_path):
    """tests/test.sh on a checkout laid out as the Dockerfile does (source.tar, one commit
    tagged datagen-base): the gold fix is 1; the gold fix plus an edited test is 0; a
    conftest.py git ignores (the guard cannot see it) is removed before the tests run."""
    import subprocess
    import sys

    from datagen.pool.exports import write_harbor

    pool, _ = every_runner_pool(tmp_path)
    write_harbor(pool, tmp_path / "harbor")
    task = tmp_path / "harbor" / "calc__pytest"
    gold = pq.read_table(next((pool / "data").glob("train-*"))).to_pylist()[0]["patch"]

    def reward(name: str, change) -> str:
        checkout, logs = tmp_path / name, tmp_path / f"logs-{name}"
        checkout.mkdir()
        subprocess.run(["tar", "-xf", str(task / "environment/source.tar"), "-C", str(checkout)], check=True)
        git = ["git", "-C", str(checkout), "-c", "user.email=t@x", "-c", "user.name=t"]
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"], ["tag", "datagen-base"]):
            subprocess.run(git + args, check=True)
        subprocess.run(["git", "-C", str(checkout), "apply", "-"], input=gold, text=True, check=True)
        change(checkout)
        env = {"REPO_DIR": str(checkout), "LOGS_DIR": str(logs), "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
        subprocess.run(["bash", str(task / "tests/test.sh")], env=env, check=True, capture_output=True)
        return (logs / "verifier" / "reward.txt").read_text().strip()

    def edit_test(c: Path) -> None:
        (c / "tests/test_sub.py").write_text("def test_sub():\n    assert True\n")

    def ignored_conftest(c: Path) -> None:  # would fail every test run if it stayed
        (c / ".gitignore").write_text("conftest.py\n")
        subprocess.run(["git", "-C", str(c), "add", ".gitignore"], check=True)
        (c / "tests/conftest.py").write_text("raise SystemExit('conftest planted by the agent')\n")

    assert reward("gold", lambda c: None) == "1"
    assert reward("edited", edit_test) == "0"
    assert reward("planted", ignored_conftest) == "1" and not (tmp_path / "planted/tests/conftest.py").exists()
