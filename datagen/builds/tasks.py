"""``datagen build tasks``: repos with test suites -> verified agent tasks + manifest.

Stages (each resumable from the run's work folder):
1. prepare: per repo, the clean snapshot (secrets redacted), its commit in
   ``repos/<repo>.git``; then the sandboxed environment and the baseline (the suite three
   times, once under coverage);
2. propose: covered entities x strategies (procedural, removal, feature_removal), git
   history, teacher rewrites;
3. validate: every candidate in the sandbox (``synth.check``), in parallel, each verdict
   stored as it arrives;
4. grow: combine validated bugs, evolve them with the teacher; validate again;
5. emit: a commit per kept task, statements (teacher or template), ``tasks.jsonl``,
   parquet + dataset card, and the manifest (``candidates``, ``tasks``,
   ``repo_baselines``, ``teacher_calls``) in one transaction.

Baselines and validation run in the sandbox as datatrove stages on the recipe's executor
(``executor.kind``: local, slurm or ray; one task per repo on a cluster, see
``builds/repo_stage.py``); the teacher stays in this process. With slurm the build stops
after submitting a stage and a job that depends on it runs the build again, which
resumes from the stored baselines and verdicts.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from datagen.builds.executors import StageRunner, submit_rest
from datagen.builds.run import BuildRun
from datagen.builds.tasks_env import repair_envs
from datagen.builds.tasks_output import write_outputs
from datagen.builds.tasks_stages import (
    RepoState,
    emit_tasks,
    grow,
    measure_baselines,
    prepare_repo,
    propose_all,
    validate_all,
)
from datagen.config.base import load_recipe, validate
from datagen.config.tasks import TasksRecipe
from datagen.crawl.rules import CrawlRules
from datagen.crawl.sources import discover, fingerprint, list_repo
from datagen.errors import JobsSubmitted
from datagen.records.tasks import CandidateRow, RepoBaselineRow, TaskRecord
from datagen.sandbox.select import untrusted_sandbox


@dataclass
class TasksResult:
    output: Path
    run_id: str
    skipped: bool
    repos: list[RepoBaselineRow] = field(default_factory=list)
    candidates: list[CandidateRow] = field(default_factory=list)
    tasks: list[TaskRecord] = field(default_factory=list)
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    submitted: JobsSubmitted | None = None  # --executor slurm: the stage submitted, the build's next job


def load_tasks_recipe(recipe: str | Path | None, overrides: list[str] | None, inputs: list[str] | None,
                      output: str | Path | None, workers: int | None) -> TasksRecipe:
    cfg, _ = load_recipe(TasksRecipe, recipe, "tasks", overrides)
    update = {k: v for k, v in (("inputs", list(inputs or [])), ("output", str(output) if output else None),
                                ("workers", workers)) if v}
    if update:  # flags are validated like recipe fields
        cfg = validate(TasksRecipe, {**cfg.model_dump(mode="json"), **update}, "command line")
    return cfg


def run_tasks(inputs: list[str] | None = None, output: str | Path | None = None,
              recipe: str | Path | None = None, overrides: list[str] | None = None,
              workers: int | None = None, force: bool = False, console: Console | None = None) -> TasksResult:
    """Run the build; see the module docstring."""
    t0 = time.monotonic()
    console = console or Console(file=sys.__stderr__)
    cfg = load_tasks_recipe(recipe, overrides, inputs, output, workers)
    out = Path(cfg.output)
    untrusted_sandbox(cfg.sandbox.backend)  # refuses an unisolated run unless asked, before any work
    repos = discover(cfg.inputs, cfg.crawl.repo_names)
    rules = CrawlRules.from_config(cfg.crawl)
    listed = {r.name: list_repo(r, rules) for r in repos}
    run = BuildRun(out, "build tasks", cfg, fingerprint(repos, [f for r in repos for f in listed[r.name]]), force)
    if run.already_built(lambda con: (out / "tasks.jsonl").is_file()):
        console.print(f"[green]Nothing to do:[/] {out} already holds this build (run {run.run_id}). "
                      "Use --force to rebuild.")
        return TasksResult(out, run.run_id, skipped=True, seconds=time.monotonic() - t0)
    runner = StageRunner(cfg.executor, run.run_id, console)
    try:
        with run:
            result = _build(cfg, out, run, runner, repos, listed, console)
    except JobsSubmitted as sub:  # --executor slurm: the build goes on in a job after the stage
        sub.continuation = submit_rest("tasks", cfg.model_dump(mode="json"), cfg.executor, run.work,
                                       out / "logs" / "slurm", sub.job_id, cfg.workers)
        return TasksResult(out, run.run_id, skipped=False, submitted=sub, seconds=time.monotonic() - t0)
    result.seconds = time.monotonic() - t0
    return result


def _build(cfg: TasksRecipe, out: Path, run: BuildRun, runner: StageRunner, repos, listed,
           console: Console) -> TasksResult:
    teacher = None
    notes = []
    if cfg.has_teacher:
        teacher = run.accounted_teacher(cfg.teacher)  # calls land in teacher_calls with the run's row
    elif any(f in cfg.synth.families for f in ("lm_rewrite", "evolve")):
        notes.append("lm_rewrite and evolve skipped: no teacher (set teacher.base_url)")
    states: list[RepoState] = [prepare_repo(cfg, r, listed[r.name], out, run.work) for r in repos]
    measure_baselines(cfg, states, run.work, runner)
    if teacher is not None and repair_envs(cfg, states, run.work, teacher, console):
        measure_baselines(cfg, states, run.work, runner)  # the repaired plans' baselines
    ready = [s for s in states if s.baseline is not None and s.baseline.reason is None]
    proposed = propose_all(cfg, ready, teacher, console)
    verdicts = validate_all(cfg, ready, proposed, run.work, runner, "first")
    extra = grow(cfg, ready, proposed, verdicts, teacher, console)
    verdicts.update(validate_all(cfg, ready, extra, run.work, runner, "grown"))
    emitted, rows = emit_tasks(cfg, ready, proposed + extra, verdicts, teacher, run.run_id, console)
    repo_rows = write_outputs(cfg, out, run.run_id, states, rows, emitted, run.work)
    return TasksResult(out, run.run_id, skipped=False, repos=repo_rows, candidates=rows,
                       tasks=[e.record for e in emitted], notes=notes)


__all__ = ["run_tasks", "TasksResult", "load_tasks_recipe"]
