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
``runtime/repo_stage.py``); the teacher stays in this process. With slurm the build stops
after submitting a stage and a job that depends on it runs the build again, which
resumes from the stored baselines and verdicts.

The run is a ``base.Build``: the outputs of stage 5 (``tasks.jsonl``, ``data/``,
``README.md``, ``envs/``) are written into the run's staging folder and switch in around
the manifest transaction (``switch``), so a failed or killed build leaves the previous
outputs or the new ones.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from datagen.builds.base import Build, accounted_teacher
from datagen.builds.tasks.env_repair import repair_envs
from datagen.builds.tasks.output import write_outputs
from datagen.builds.tasks.stages import (
    RepoState,
    emit_tasks,
    grow,
    measure_baselines,
    prepare_repo,
    propose_all,
    validate_all,
)
from datagen.config.tasks import TasksRecipe
from datagen.crawl.rules import CrawlRules
from datagen.crawl.sources import discover, fingerprint, list_repo
from datagen.errors import JobsSubmitted
from datagen.records.tasks import CandidateRow, RepoBaselineRow, TaskRecord
from datagen.runtime.executors import StageRunner
from datagen.runtime.run import BuildRun
from datagen.sandbox.isolation.select import untrusted_sandbox
from datagen.synth.families.registry import check_families, chosen


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


# What the build replaces in its output folder through the output switch (``repos/`` is
# the pre-seal layout of older builds: removed when the sealed ``envs/`` switch in).
OWNED_OUTPUTS = ("tasks.jsonl", "data/*.parquet", "README.md", "envs/**/*", "repos/**/*")


def load_tasks_recipe(recipe: str | Path | None, overrides: list[str] | None, inputs: list[str] | None,
                      output: str | Path | None, workers: int | None) -> TasksRecipe:
    """The recipe with its flags (``base.recipe_with_flags``: ``--workers 0`` is refused)."""
    return TasksBuild.load(recipe, overrides, inputs=list(inputs or []), output=output, workers=workers)


def run_tasks(inputs: list[str] | None = None, output: str | Path | None = None,
              recipe: str | Path | None = None, overrides: list[str] | None = None,
              workers: int | None = None, force: bool = False, console: Console | None = None) -> TasksResult:
    """Run the build; see the module docstring."""
    return TasksBuild(load_tasks_recipe(recipe, overrides, inputs, output, workers), force, console).run()


class TasksBuild(Build):
    """The tasks build in the ``Build`` template: the repos' listed files name the run."""

    name = "tasks"
    recipe_type = TasksRecipe
    result_type = TasksResult
    owned = OWNED_OUTPUTS

    def __init__(self, cfg: TasksRecipe, force: bool = False, console: Console | None = None):
        super().__init__(cfg, force, console)
        untrusted_sandbox(cfg.sandbox.backend)  # refuses an unisolated run unless asked, before any work
        check_families(cfg.synth.families)

    def fingerprint(self) -> str:
        self.repos = discover(self.cfg.inputs, self.cfg.crawl.repo_names)
        rules = CrawlRules.from_config(self.cfg.crawl)
        self.listed = {r.name: list_repo(r, rules) for r in self.repos}
        return fingerprint(self.repos, [f for r in self.repos for f in self.listed[r.name]])

    def build(self, run: BuildRun, runner: StageRunner) -> TasksResult:
        return _build(self.cfg, self.out, run, runner, self.repos, self.listed, self.console,
                      functools.partial(self.publish, run), self.fresh_stage)


def _build(cfg: TasksRecipe, out: Path, run: BuildRun, runner: StageRunner, repos, listed,
           console: Console, publish, fresh_stage) -> TasksResult:
    teacher = None
    notes = []
    if cfg.has_teacher:
        teacher = accounted_teacher(run, cfg.teacher)  # calls land in teacher_calls with the run's row
    elif skipped := [f.name for f in chosen(cfg) if f.needs_teacher]:
        notes.append(f"{' and '.join(skipped)} skipped: no teacher (set teacher.base_url)")
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
    repo_rows = write_outputs(cfg, out, run.run_id, states, rows, emitted, run.work,
                              stage=fresh_stage(run), publish=publish)
    return TasksResult(out, run.run_id, skipped=False, repos=repo_rows, candidates=rows,
                       tasks=[e.record for e in emitted], notes=notes)


__all__ = ["run_tasks", "TasksResult", "load_tasks_recipe"]
