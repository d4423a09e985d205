"""Sandboxed work spread by repo: a datatrove stage whose ranks each take a share of the repos.

The tasks build (baselines, validation) and the pool build (graded policy attempts) run
untrusted code in the sandbox; that is their slow part, and what a cluster should take.
Each such stage is a ``RepoStage``, a datatrove ``PipelineStep`` run by the build's
``StageRunner`` (``datagen.runtime.executors``), so local, Slurm and Ray runs go through
datatrove's own executors:

- the split is by repo name, never by order of completion: rank ``r`` of ``n`` takes the
  sorted names ``r, r + n, ...`` (``repo_share``), so a rank always gets the same repos
  and builds only their sandboxed environments;
- every item (a baseline, a verdict, a task's graded attempts) is stored in the run's
  work folder as it finishes, and a stored item is never redone: a rank that is lost or
  rerun resumes, and the main process reads the stores and merges them in its own order.

``local`` runs the whole stage as one task in the build process, ``workers`` items at a
time (what the builds did before they had executors); ``slurm`` and ``ray`` run one task
per repo, each ``executor.cpus_per_task`` items at a time.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from datatrove.data import DocumentsPipeline
from datatrove.pipeline.base import PipelineStep

from datagen.config.executor import ExecutorConfig
from datagen.runtime.atomic import atomic_write
from datagen.runtime.executors import StageRunner


def repo_share(repos: Iterable[str], rank: int, world_size: int) -> list[str]:
    """The repos of rank ``rank`` of ``world_size``: every ``world_size``-th sorted name."""
    return sorted(set(repos))[rank::world_size]


def stage_threads(cfg: ExecutorConfig, workers: int) -> int:
    """Items one task runs at once: the build's workers locally, a task's CPUs elsewhere."""
    return workers if cfg.kind == "local" else cfg.cpus_per_task


class RepoStage(PipelineStep):
    """A stage over repos; subclasses say what one rank does with its share (``work_on``)."""

    type = "🧪 - SANDBOX"

    def __init__(self, repos: list[str], threads: int):
        super().__init__()
        self.repos = sorted(set(repos))
        self.threads = threads

    def work_on(self, repos: list[str]) -> None:
        raise NotImplementedError

    def each(self, fn: Callable, items: list) -> None:
        """``fn`` over ``items``, ``threads`` at a time (the sandbox runs are subprocesses)."""
        with ThreadPoolExecutor(max(1, self.threads)) as pool:
            for _ in pool.map(fn, items):
                self.stat_update("items")

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        self.work_on(repo_share(self.repos, rank, world_size))
        return
        yield  # a generator that consumes the pipeline and yields nothing


def run_repo_stage(runner: StageRunner, name: str, step: RepoStage, workers: int, logging_dir: Path,
                   total: int, done: Callable[[], int]) -> None:
    """Run ``step`` on the runner's executor: one task locally, one per repo elsewhere.
    ``total`` items, ``done()`` of them stored so far (the progress bar)."""
    local = runner.cfg.kind == "local"
    tasks = 1 if local else max(1, len(step.repos))
    runner.run(name, [step], tasks, 1 if local else min(workers, tasks), logging_dir,
               progress={"files_per_task": total, "total_files": total, "count": done})


def store_json(path: Path, data: object) -> None:
    """Write ``data`` to ``path`` whole or not at all (a killed writer leaves no half file)."""
    atomic_write(path, json.dumps(data, sort_keys=True), mkdir=True)


def stored(folder: Path, names: Iterable[str]) -> int:
    """How many of ``names`` have a stored ``<name>.json`` in ``folder``."""
    try:
        present = {p[:-5] for p in (e.name for e in folder.iterdir()) if p.endswith(".json")}
    except FileNotFoundError:
        return 0
    return sum(1 for n in names if n in present)


__all__ = ["RepoStage", "repo_share", "run_repo_stage", "stage_threads", "store_json", "stored"]
