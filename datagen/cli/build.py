"""``datagen build ...``: the builds. Each command parses flags and calls its module in ``datagen.builds``."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path

import typer

from datagen.cli.base import DatagenTyper
from datagen.config.all import AllRecipe
from datagen.config.cpt import CptCorpusRecipe
from datagen.config.rl_pool import RlPoolRecipe
from datagen.config.tasks import TasksRecipe


class Executor(str, Enum):
    local = "local"
    slurm = "slurm"
    ray = "ray"


app = DatagenTyper(help="Run a build (writes data shards and <out>/manifest.duckdb).", no_args_is_help=True)


def recipe_help(model: type) -> str:
    """The recipe keys of a build, for its --help: what --set accepts, with defaults."""
    from datagen.config.base import recipe_keys

    lines = ["Recipe keys (--set KEY=VALUE; defaults as in the bundled recipe):"]
    for key, default, description in recipe_keys(model):
        lines.append(f"  {key} = {json.dumps(default)}" + (f"  -- {description}" if description else ""))
    return "\n".join(lines)  # typer keeps single line breaks: one key per line


@app.command("cpt-corpus", epilog=recipe_help(CptCorpusRecipe))
def cpt_corpus(
    paths: list[str] = typer.Argument(None, metavar="PATH", help="More inputs (same as --input)."),
    input: list[str] = typer.Option(
        None, "--input", "-i", help="Local directories or git repos (working tree or bare .git). "
        "Repeat the flag or list several after it. Default: the recipe's inputs (bundled sample_data).",
    ),
    output: Path = typer.Option(None, "--output", "-o", help="Output folder (default: the recipe's)."),
    recipe: str = typer.Option(None, "--recipe", "-r", help="Recipe YAML (default: pipelines/cpt-corpus.yaml)."),
    set_: list[str] = typer.Option(None, "--set", help="Override one recipe field: --set quality.enabled=false"),
    workers: int = typer.Option(None, "--workers", "-w", help="Parallel worker processes (default: recipe)."),
    force: bool = typer.Option(False, "--force", help="Rebuild even if this exact build already finished."),
    executor: Executor = typer.Option(None, "--executor", "-e", help="Where the datatrove stages run: local, "
                                      "slurm or ray (default: the recipe's executor.kind). Same output either way."),
    allow_empty: bool = typer.Option(False, "--allow-empty", help="Write the build even when no file is kept "
                                     "(refused by default: exit 2 with why the files were dropped)."),
) -> None:
    """Build a clean code corpus for continued pretraining.

    Crawl repos -> quality, decontamination, syntax, secrets -> exact and near dedup ->
    parquet shards + dataset card -> manifest (one row per file seen, with the reason
    for every drop). See docs/curation.md.

    Files of a repo are in dependency order (each after what it imports). With
    pack.tokenizer set, repos are also tokenized and packed into sequences of
    pack.seq_lens tokens under tokens/ (parquet, datatrove .ds, Megatron .bin/.idx).

    Examples:

      datagen build cpt-corpus                                  # bundled sample_data

      datagen build cpt-corpus --input ~/src/repoA --input ~/src/repoB.git --output /data/cpt

      datagen build cpt-corpus -i ./repos/* -o out/cpt --set crawl.max_file_bytes=200000 -w 2

      datagen build cpt-corpus -i ./repos/* -o out/cpt --set pack.tokenizer=/models/tok/tokenizer.json

      datagen build cpt-corpus --set pack.tokenizer=/models/tok --set pack.holdout_fraction=0.01

      datagen build cpt-corpus -i /data/repos/* -o /data/cpt -e slurm --set executor.partition=cpu

      datagen build cpt-corpus -i /data/repos/* -o /data/cpt -e ray --set executor.ray_address=auto
    """
    from datagen.builds.cpt_corpus.build import run_cpt_corpus
    from datagen.cli.summary import print_build_summary, print_submitted

    result = run_cpt_corpus(
        inputs=_split_inputs((input or []) + (paths or [])), output=output, recipe=recipe,
        overrides=_executor_sets(set_, executor), workers=workers, force=force, allow_empty=allow_empty,
    )
    if result.submitted:
        print_submitted(result)
    elif not result.skipped:
        print_build_summary(result)


def _split_inputs(values: list[str] | None) -> list[str] | None:
    return list(values) if values else None


def _executor_sets(sets: list[str] | None, executor: Executor | None) -> list[str]:
    """The --set overrides, with --executor as ``executor.kind`` (the flag wins)."""
    return [*(sets or []), *([f"executor.kind={executor.value}"] if executor else [])]


@app.command("tasks", epilog=recipe_help(TasksRecipe))
def tasks(
    paths: list[str] = typer.Argument(None, metavar="PATH", help="More inputs (same as --input)."),
    input: list[str] = typer.Option(
        None, "--input", "-i", help="Repos with test suites (folders, git working trees, bare .git). "
        "Default: the recipe's inputs (bundled sample_data).",
    ),
    output: Path = typer.Option(None, "--output", "-o", help="Output folder (default: out/tasks)."),
    recipe: str = typer.Option(None, "--recipe", "-r", help="Recipe YAML (default: pipelines/tasks.yaml)."),
    set_: list[str] = typer.Option(None, "--set", help="Override one recipe field: --set synth.scale=25"),
    workers: int = typer.Option(None, "--workers", "-w", help="Parallel sandboxed test runs (default: recipe)."),
    force: bool = typer.Option(False, "--force", help="Rebuild even if this exact build already finished."),
    executor: Executor = typer.Option(None, "--executor", "-e", help="Where baselines and validation run: local, "
                                      "slurm or ray, one task per repo on a cluster (default: the recipe's "
                                      "executor.kind). Same output either way."),
) -> None:
    """Build agent tasks proven by execution (SWE-bench rows) from repos with test suites.

    Baseline each suite (3 runs + coverage) -> mutate covered functions (procedural,
    removal, feature removal, git history, teacher rewrites) -> validate in the sandbox
    (FAIL_TO_PASS fail in every run, PASS_TO_PASS pass) -> combine and evolve ->
    statements (teacher, or templates) -> repos/<repo>.git + tasks.jsonl + parquet +
    manifest (every candidate with its fate). Untrusted code runs in bubblewrap only.

    Examples:

      datagen build tasks                                     # bundled sample_data -> out/tasks

      datagen build tasks -i ~/src/repoA ~/src/repoB -o /data/tasks -w 8

      datagen build tasks -i ... -o ... --set teacher.base_url=http://gpu01:8000/v1 --set synth.scale=25

      datagen build tasks --set synth.families=[procedural] --set synth.strategies=[py_op_change_v1]

      datagen build tasks -i /shared/repos/* -o /shared/tasks -e slurm --set executor.partition=cpu \
          --set executor.cpus_per_task=8 --set env.cache_dir=/shared/envs

      datagen build tasks -i /shared/repos/* -o /shared/tasks -e ray --set executor.ray_address=auto -w 64

      datagen sql out/tasks "SELECT strategy, status, count(*) FROM candidates GROUP BY ALL"

      datagen validate out/tasks/tasks.jsonl                  # replay every task
    """
    from datagen.builds.tasks.build import run_tasks
    from datagen.cli.summary import print_submitted, print_tasks_summary

    result = run_tasks(
        inputs=_split_inputs((input or []) + (paths or [])), output=output, recipe=recipe,
        overrides=_executor_sets(set_, executor), workers=workers, force=force,
    )
    if result.submitted:
        print_submitted(result)
    elif not result.skipped:
        print_tasks_summary(result)


@app.command("rl-pool", epilog=recipe_help(RlPoolRecipe))
def rl_pool(
    tasks: str = typer.Option(None, "--input", "--tasks", "-i", "-t", help="A tasks build's output folder or "
                              "its tasks.jsonl (default: the recipe's, out/tasks). --tasks / -t: the same."),
    output: Path = typer.Option(None, "--output", "-o", help="Output folder (default: out/rl-pool)."),
    recipe: str = typer.Option(None, "--recipe", "-r", help="Recipe YAML (default: pipelines/rl-pool.yaml)."),
    set_: list[str] = typer.Option(None, "--set", help="Override one recipe field: --set difficulty.k=8"),
    workers: int = typer.Option(None, "--workers", "-w", help="Attempts graded in parallel (default: recipe)."),
    force: bool = typer.Option(False, "--force", help="Rebuild even if this exact build already finished."),
    executor: Executor = typer.Option(None, "--executor", "-e", help="Where the attempts are graded: local, slurm "
                                      "or ray, one task per repo on a cluster (default: the recipe's "
                                      "executor.kind). Same output either way."),
    allow_empty: bool = typer.Option(False, "--allow-empty", help="Write the pool even when no instruction is "
                                     "left (refused by default: exit 2 with why they were dropped)."),
) -> None:
    """Build the RL instruction pool: hard-but-solvable tasks, each handed out once.

    tasks -> decontamination, near-duplicate statements, split by repository ->
    perplexity (with a scorer model) -> K policy attempts per task in the sandbox,
    pass-rate band (with a policy) -> pool shards + verl / SkyRL / SWE-bench exports +
    SFT JSONL of passing attempts -> manifest (every dropped instruction with its reason).
    Then hand instructions out with `datagen pool take`.

    Examples:

      datagen build rl-pool --input out/tasks -o out/rl-pool

      datagen build rl-pool -t /data/tasks -o /data/pool --set policy.base_url=http://gpu02:8000/v1 \
          --set difficulty.k=8

      datagen build rl-pool -t /data/tasks --set perplexity.enabled=true --set perplexity.model=/models/ppl \
          --set perplexity_cut.max_percentile=95

      datagen build rl-pool -t /shared/tasks -o /shared/pool --set policy.base_url=http://gpu02:8000/v1 \
          -e slurm --set executor.partition=cpu --set executor.cpus_per_task=8 --set env.cache_dir=/shared/envs

      datagen pool take out/rl-pool --n 256 --consumer run-17 > batch.jsonl
    """
    from datagen.builds.rl_pool.build import run_rl_pool
    from datagen.cli.summary import print_pool_summary, print_submitted

    result = run_rl_pool(tasks=tasks, output=output, recipe=recipe, overrides=_executor_sets(set_, executor),
                         workers=workers, force=force, allow_empty=allow_empty)
    if result.submitted:
        print_submitted(result)
    elif not result.skipped:
        print_pool_summary(result)


@app.command("all", epilog=recipe_help(AllRecipe))
def all_(
    paths: list[str] = typer.Argument(None, metavar="PATH", help="More inputs (same as --input)."),
    input: list[str] = typer.Option(None, "--input", "-i", help="Repos for the cpt-corpus and tasks stages "
                                    "(default: the recipe's inputs, bundled sample_data)."),
    output: Path = typer.Option(None, "--output", "-o", help="Output folder, one sub-folder per stage "
                                "(default: out/all)."),
    recipe: str = typer.Option(None, "--recipe", "-r", help="Recipe YAML (default: pipelines/all.yaml)."),
    set_: list[str] = typer.Option(None, "--set", help="Override a key: --set tasks.synth.scale=3 (a stage's "
                                   "recipe), --set rl_pool.enabled=false (skip a stage)."),
    workers: int = typer.Option(None, "--workers", "-w", help="Workers of every stage (default: each recipe's)."),
    force: bool = typer.Option(False, "--force", help="Rebuild every stage even if it already finished."),
    allow_empty: bool = typer.Option(False, "--allow-empty", help="Write the cpt-corpus and rl-pool stages even "
                                     "when they keep nothing (refused by default)."),
) -> None:
    """Repos -> CPT shards, verified tasks and the RL pool, in one resumable command.

    Runs the recipes pipelines/all.yaml names, in order, each into its own folder with its
    own manifest: OUT/cpt-corpus, OUT/tasks, OUT/rl-pool (built from OUT/tasks). A finished
    stage is not redone; a killed one resumes. One summary at the end.

    Examples:

      datagen build all                                       # bundled sample_data -> out/all

      datagen build all -i ~/src/repoA ~/src/repoB -o /data/all -w 8

      datagen build all --set tasks.teacher.base_url=http://gpu01:8000/v1 --set rl_pool.difficulty.k=8

      datagen runs out/all                                    # the runs of every stage
    """
    from datagen.builds.all import run_all
    from datagen.cli.summary import print_all_summary

    result = run_all(inputs=_split_inputs((input or []) + (paths or [])), output=output, recipe=recipe,
                     overrides=set_ or [], workers=workers, force=force, allow_empty=allow_empty)
    print_all_summary(result)
