"""One small ``datagen build all`` that the lineage, runs and report tests read: the corpus
stage over the bundled sample_data plus the tiny ``minilib`` repo (tokenized with a tiny
BPE), the tasks stage over minilib alone (two procedural strategies, no teacher), and the
pool stage graded against a local policy server whose answers give pass rates 0, 1/2, 1."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from typer.testing import CliRunner

from datagen.cli.app import app
from tests.synth.buildkit import SITE, make_minilib
from tests.teachers.fake_server import FakeOpenAI

K = 2


@dataclass
class AllBuilt:
    root: Path  # cwd of the build: out/all lies under it
    out: Path
    stdout: str
    args: list[str]

    def stage(self, name: str) -> Path:
        return self.out / name


def policy(tasks_file: Path):
    """Task i (in tasks.jsonl order) gets the fix for the first ``i % 3`` of its K seeds."""

    def answer(body: dict) -> str:
        prompt = body["messages"][-1]["content"]
        tasks = [json.loads(line) for line in tasks_file.read_text().splitlines()]
        for i, task in enumerate(tasks):
            if task["problem_statement"] in prompt:
                good = body["seed"] < i % 3
                return f"```diff\n{task['patch'] if good else 'no idea'}\n```"
        return "no idea"

    return answer


def all_args(root: Path, minilib: Path, tokenizer: Path, base_url: str) -> list[str]:
    cache = root / "cache"
    env = [f"env.inherit_site_packages=[{SITE}]", f"env.cache_dir={cache / 'envs'}"]
    sets = [f"cpt_corpus.inputs=[{minilib},sample_data/*]", f"cpt_corpus.pack.tokenizer={tokenizer}",
            "cpt_corpus.pack.seq_lens=[256]", "cpt_corpus.mix.weights={python: 1.0}",  # the mix, counted (nothing cut)
            *(f"tasks.{s}" for s in env), "tasks.synth.strategies=[py_op_change_v1,py_compare_change_v1]",
            "tasks.synth.families=[procedural]", "tasks.validation.test_timeout_s=60",
            *(f"rl_pool.{s}" for s in env), f"rl_pool.difficulty.k={K}", "rl_pool.difficulty.test_timeout_s=60",
            f"rl_pool.policy.base_url={base_url}", "rl_pool.policy.model=tiny-teacher",
            "rl_pool.policy.api_key_env=DATAGEN_TEST_KEY", f"rl_pool.policy.cache_dir={cache / 'policy'}"]
    return ["build", "all", "-i", str(minilib), "-o", "out/all", *sum((["--set", s] for s in sets), [])]


def build_all(root: Path) -> AllBuilt:
    from tests.manifest.test_report import tiny_tokenizer

    minilib = make_minilib(root / "inputs" / "minilib")
    tokenizer = tiny_tokenizer(root / "tok")
    out = root / "out" / "all"
    with FakeOpenAI(answer=policy(out / "tasks" / "tasks.jsonl")) as server:
        args = all_args(root, minilib, tokenizer, server.base_url)
        result = invoke(root, args)
    return AllBuilt(root, out, result, args)


def invoke(root: Path, args: list[str]) -> str:
    import os

    here = os.getcwd()
    os.chdir(root)  # the recipe's relative output folder, as a user types it
    try:
        result = CliRunner().invoke(app, args, env={"DATAGEN_CACHE": str(root / "cache"), "COLUMNS": "200"},
                                    catch_exceptions=False)
    finally:
        os.chdir(here)
    assert result.exit_code == 0, result.output
    return result.output
