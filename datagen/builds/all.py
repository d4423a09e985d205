"""``datagen build all``: repos -> CPT shards, verified tasks and the RL pool in one command.

``pipelines/all.yaml`` names the recipe of each stage. The stages run in order, each into
its own folder with its own manifest (``OUT/cpt-corpus``, ``OUT/tasks``, ``OUT/rl-pool``;
the pool reads ``OUT/tasks``). Each stage is a ``BuildRun`` of its own build, so the whole
command resumes: a finished stage says so and is not redone, a killed one resumes from its
work folder. The result holds one line of counts per stage, read from its manifest, so a
stage that was already built reports the same numbers as the run that built it.
"""

from __future__ import annotations

import functools
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from datagen.builds.base import recipe_with_flags
from datagen.config.all import STAGES, AllRecipe, StageRef, route_overrides
from datagen.manifest.db import open_readonly

FOLDERS = {"cpt_corpus": "cpt-corpus", "tasks": "tasks", "rl_pool": "rl-pool"}
# one line of counts per stage, from its manifest: (label, SQL) pairs
COUNTS = {
    "cpt_corpus": [("files seen", "SELECT count(*) FROM files"),
                   ("kept", "SELECT count(*) FROM files WHERE decision = 'kept'"),
                   ("shards", "SELECT count(*) FROM shards WHERE path LIKE 'data/%'")],
    "tasks": [("candidates", "SELECT count(*) FROM candidates"), ("tasks", "SELECT count(*) FROM tasks")],
    "rl_pool": [("instructions pooled", "SELECT count(*) FROM pool"), ("dropped", "SELECT count(*) FROM pool_drops")],
}


@dataclass
class StageResult:
    stage: str  # the build's name, also its folder under OUT
    folder: Path
    status: str  # built, already built, disabled, submitted: ..., waits for tasks: ...
    run_id: str | None = None
    counts: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


@dataclass
class AllResult:
    output: Path
    stages: list[StageResult]
    seconds: float = 0.0


def load_all_recipe(recipe: str | Path | None, overrides: list[str] | None, inputs: list[str] | None,
                    output: str | Path | None, workers: int | None) -> tuple[AllRecipe, Path, dict[str, list[str]]]:
    """The recipe, its folder (stage recipes are looked up there first) and each stage's
    routed ``--set`` items (``config.all.route_overrides``)."""
    own, routed = route_overrides(overrides)
    # the builds' one rule for flags (``--workers 0`` is refused here as by every build)
    cfg, path = recipe_with_flags(AllRecipe, recipe, "all", own,
                                  {"inputs": list(inputs or []), "output": output, "workers": workers})
    return cfg, path.parent, routed


def run_all(inputs: list[str] | None = None, output: str | Path | None = None, recipe: str | Path | None = None,
            overrides: list[str] | None = None, workers: int | None = None, force: bool = False,
            console: Console | None = None, allow_empty: bool = False) -> AllResult:
    """Run the enabled stages in order; see the module docstring. ``allow_empty``: the
    cpt-corpus and rl-pool stages are written even when they keep nothing."""
    t0 = time.monotonic()
    console = console or Console(file=sys.__stderr__)
    cfg, base, routed = load_all_recipe(recipe, overrides, inputs, output, workers)
    out = Path(cfg.output)
    results = []
    for stage in STAGES:
        ref: StageRef = getattr(cfg, stage)
        folder = out / FOLDERS[stage]
        if not ref.enabled:
            results.append(StageResult(FOLDERS[stage], folder, "disabled"))
            continue
        if stage == "rl_pool" and results and results[-1].status.startswith("submitted"):
            # its input is the tasks stage's output, still being built on the cluster
            results.append(StageResult(FOLDERS[stage], folder, "waits for tasks: run this command again "
                                       "when the tasks run is finished"))
            continue
        console.print(f"[bold]stage {FOLDERS[stage]}[/] -> {folder}")
        s0 = time.monotonic()
        runner = (functools.partial(_RUNNERS[stage], allow_empty=allow_empty) if stage in ("cpt_corpus", "rl_pool")
                  else _RUNNERS[stage])
        result = runner(cfg, folder, out, _stage_recipe(ref, base), [*ref.set, *routed[stage]], force, console)
        results.append(StageResult(FOLDERS[stage], folder, _status(result), result.run_id,
                                   stage_counts(stage, folder), time.monotonic() - s0))
    return AllResult(out, results, time.monotonic() - t0)


def _status(result) -> str:
    submitted = getattr(result, "submitted", None)  # a stage on --executor slurm
    if submitted is not None:
        return f"submitted: job {submitted.job_id}, resumes in job {submitted.continuation}"
    return "already built" if result.skipped else "built"


def _stage_recipe(ref: StageRef, base: Path) -> str:
    local = base / ref.recipe
    return str(local) if local.is_file() else ref.recipe


def _inputs(cfg: AllRecipe, stage: str) -> list[str]:
    ref: StageRef = getattr(cfg, stage)
    return list(ref.inputs if ref.inputs is not None else cfg.inputs)


def _cpt(cfg: AllRecipe, folder: Path, out: Path, recipe: str, sets: list[str], force: bool, console: Console,
         allow_empty: bool = False):
    from datagen.builds.cpt_corpus.build import run_cpt_corpus

    return run_cpt_corpus(_inputs(cfg, "cpt_corpus"), folder, recipe, sets, cfg.workers, force, console,
                          allow_empty=allow_empty)


def _tasks(cfg: AllRecipe, folder: Path, out: Path, recipe: str, sets: list[str], force: bool, console: Console):
    from datagen.builds.tasks.build import run_tasks

    return run_tasks(_inputs(cfg, "tasks"), folder, recipe, sets, cfg.workers, force, console)


def _pool(cfg: AllRecipe, folder: Path, out: Path, recipe: str, sets: list[str], force: bool, console: Console,
          allow_empty: bool = False):
    from datagen.builds.rl_pool.build import run_rl_pool

    return run_rl_pool(out / FOLDERS["tasks"], folder, recipe, sets, cfg.workers, force, console,
                       allow_empty=allow_empty)


_RUNNERS = {"cpt_corpus": _cpt, "tasks": _tasks, "rl_pool": _pool}


def stage_counts(stage: str, folder: Path) -> dict[str, int]:
    """The stage's line of counts, read from its manifest."""
    con = open_readonly(folder)
    try:
        return {label: con.execute(sql).fetchone()[0] for label, sql in COUNTS[stage]}
    finally:
        con.close()


__all__ = ["run_all", "load_all_recipe", "AllResult", "StageResult", "FOLDERS"]
