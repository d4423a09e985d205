"""The sandboxed stage of ``datagen build rl-pool``: the policy's attempts graded, spread by repo.

The main process asks the policy (an HTTP client: it stays there) and writes every task
with its K answers to ``<work>/difficulty/jobs.jsonl``; a ``GradeStage`` (a ``RepoStage``,
``runtime/repo_stage.py``) grades the tasks of its share of repos in the sandbox, each task's
attempts stored in ``<work>/difficulty/graded/<instance id>.json`` as soon as they are
graded; the main process then reads them back in task order. A stored task is never graded
again, so a lost rank, or a killed build, resumes.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from datagen.config.rl_pool import RlPoolRecipe
from datagen.records.tasks import TaskRecord
from datagen.runtime.atomic import atomic_write
from datagen.runtime.executors import StageRunner
from datagen.runtime.repo_stage import RepoStage, run_repo_stage, stage_threads, store_json, stored
from datagen.score import DifficultyScorer
from datagen.score.attempt import AttemptResult
from datagen.score.difficulty import Graded
from datagen.teachers.types import TeacherResult

Job = tuple[TaskRecord, Path, list[TeacherResult]]


def scorer_for(cfg: RlPoolRecipe, sandbox, policy, work: Path) -> DifficultyScorer:
    """The build's scorer (``policy`` None where only grading is done)."""
    diff_cfg = cfg.difficulty.model_copy(update={"workers": cfg.difficulty.workers or cfg.workers})
    return DifficultyScorer(diff_cfg, policy, sandbox, limits=cfg.sandbox.limits, env=cfg.env,
                            ro_paths=[Path(p) for p in cfg.sandbox.ro_paths], work_root=work)


def grade_all(cfg: RlPoolRecipe, jobs: list[Job], work: Path, runner: StageRunner) -> dict[str, Graded]:
    """Every job graded by a ``GradeStage`` on the runner's executor (stored ones kept)."""
    folder = work / "difficulty" / "graded"
    ids = [t.instance_id for t, _, _ in jobs]
    if stored(folder, ids) < len(ids):
        path = work / "difficulty" / "jobs.jsonl"
        _write_jobs(path, jobs)
        step = GradeStage(cfg, work, path, sorted({t.repo for t, _, _ in jobs}),
                          stage_threads(runner.cfg, cfg.difficulty.workers or cfg.workers))
        run_repo_stage(runner, "grading attempts", step, cfg.workers, work / "logs" / "grading", len(ids),
                       lambda: stored(folder, ids))
    return {i: _read_graded(folder / f"{i}.json") for i in ids}


class GradeStage(RepoStage):
    """The tasks of the rank's repos, each with its stored answers, graded in the sandbox."""

    name = "grading"

    def __init__(self, cfg: RlPoolRecipe, work: Path, jobs: Path, repos: list[str], threads: int):
        super().__init__(repos, threads)
        self.cfg = cfg
        self.work = str(work.resolve())  # a Ray worker does not start in the build's folder
        self.jobs = str(jobs.resolve())

    def work_on(self, repos: list[str]) -> None:
        from datagen.sandbox.isolation.select import untrusted_sandbox

        folder = Path(self.work) / "difficulty" / "graded"
        mine = set(repos)
        todo = [j for j in _read_jobs(Path(self.jobs))
                if j[0].repo in mine and not (folder / f"{j[0].instance_id}.json").exists()]
        if not todo:
            return
        scorer = scorer_for(self.cfg, untrusted_sandbox(self.cfg.sandbox.backend), None, Path(self.work))
        scorer.grade_tasks(todo, self.threads, done=lambda iid, g: _store_graded(folder / f"{iid}.json", g))
        self.stat_update("items", value=len(todo))


def _write_jobs(path: Path, jobs: list[Job]) -> None:
    atomic_write(path, "".join(json.dumps({"task": t.model_dump(mode="json"), "base": str(b.resolve()),
                                           "answers": [a.model_dump(mode="json") for a in answers]},
                                          sort_keys=True) + "\n" for t, b, answers in jobs), mkdir=True)


def _read_jobs(path: Path) -> list[Job]:
    jobs = []
    for line in path.read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        jobs.append((TaskRecord.model_validate(d["task"]), Path(d["base"]),
                     [TeacherResult.model_validate(a) for a in d["answers"]]))
    return jobs


def _store_graded(path: Path, graded: Graded) -> None:
    store_json(path, {"error": graded.error, "attempts": [asdict(a) for a in graded.attempts]})


def _read_graded(path: Path) -> Graded:
    d = json.loads(path.read_text())
    return Graded([AttemptResult(**{**a, "required": tuple(a["required"])}) for a in d["attempts"]], d["error"])


__all__ = ["GradeStage", "grade_all", "scorer_for"]
