"""Shared pool fixtures: a tasks.jsonl written by the tests, and a pool built from it."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from datagen.pool.exports import write_pool
from datagen.pool.rows import rows_from_tasks

WORDS = ("parser cache buffer token stream config loader header socket retry index queue mapper "
         "encoder decoder window schema record column router handler session thread signal").split()
PATCH = "diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"


def statement(rng: random.Random, words: int = 40) -> str:
    """A made-up issue text: random words, so two statements share almost no 5-grams."""
    return "The function fails when " + " ".join(rng.choice(WORDS) for _ in range(words)) + "."


def task(i: int, repo: str, text: str, **extra) -> dict:
    return {"instance_id": f"{repo.replace('/', '__')}-{i}", "repo": repo, "base_commit": f"{i:040x}",
            "patch": PATCH.format(path=f"src/mod{i}.py"), "test_patch": PATCH.format(path=f"tests/test_{i}.py"),
            "problem_statement": text, "FAIL_TO_PASS": [f"tests/test_{i}.py::test_fix"],
            "PASS_TO_PASS": [f"tests/test_{i}.py::test_old", "tests/test_base.py::test_ok"],
            "repo_path": f"repos/{repo.split('/')[-1]}", **extra}


def write_tasks(folder: Path, tasks: list[dict]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "tasks.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")
    return path


def make_tasks(n: int, seed: int = 7, repos: int = 6) -> list[dict]:
    rng = random.Random(seed)
    return [task(i, f"org{i % repos}/lib{i % repos}", statement(rng)) for i in range(n)]


def build_pool(tmp: Path, n: int, **card) -> Path:
    """A pool folder of ``n`` instructions (all train), returns its path."""
    tasks = write_tasks(tmp / "tasks", make_tasks(n))
    out = tmp / "pool"
    write_pool(rows_from_tasks(tasks, group_size=8), [], out, card or None)
    return out


@pytest.fixture
def pool_dir(tmp_path: Path) -> Path:
    return build_pool(tmp_path, 40)
