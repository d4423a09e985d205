"""Replay stored tasks from scratch: fresh source, fresh sandbox, N runs per side, grade,
and compare with the task's stored FAIL_TO_PASS / PASS_TO_PASS.

Runs go to a thread pool (each run is its own sandboxed process), so all cores work.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from datagen.config.sandbox import ValidateRecipe
from datagen.errors import SkipItem
from datagen.records.tasks import TaskRecord, ValidationRow
from datagen.sandbox.harness.grading import grade
from datagen.sandbox.harness.profiles.base import ProfileEnv
from datagen.sandbox.harness.profiles.registry import get_profile, profile_names
from datagen.sandbox.harness.runners import TestRun, ensure_env, run_tests
from datagen.sandbox.harness.task_store import apply_patch, materialize, source_dir
from datagen.sandbox.isolation.base import Sandbox


@dataclass
class _Job:
    task: TaskRecord
    base: Path
    side: str  # "before" | "after"


class Validator:
    """Replays tasks with one sandbox back end and one recipe."""

    def __init__(self, recipe: ValidateRecipe, sandbox: Sandbox, work_root: Path | None = None,
                 retry_failed_envs: bool = False):
        self.recipe = recipe
        self.retry_failed_envs = retry_failed_envs
        self.sandbox = sandbox
        self.limits = recipe.sandbox.limits.model_copy(
            update={"timeout_s": recipe.validation.test_timeout_s})
        self.work_root = work_root

    def _env_for(self, task: TaskRecord, base: Path, scratch: Path) -> ProfileEnv:
        """The task's environment, by its runner's profile, from its source at ``base_commit``
        (built once per repo + plan key; a task whose runner is unknown here is a ``SkipItem``)."""
        if task.runner not in profile_names():
            raise SkipItem("unknown_runner", f"{task.runner!r}; known: {', '.join(profile_names())}")
        profile = get_profile(task.runner)
        if missing := profile.missing_tool():
            raise missing
        src = scratch / "env-src"
        src.mkdir()
        materialize(task, base, src)
        try:
            return ensure_env(profile, src, self.recipe.env, self.sandbox, self.recipe.sandbox.limits,
                              retry_failed=self.retry_failed_envs)
        finally:
            shutil.rmtree(src, ignore_errors=True)

    def run_side(self, job: _Job, env: ProfileEnv, scratch: Path) -> TestRun:
        """One fresh working copy, patched for ``job.side``, tested once."""
        work = Path(tempfile.mkdtemp(prefix=f"{job.side}-", dir=scratch))
        try:
            materialize(job.task, job.base, work)
            apply_patch(work, job.task.test_patch, "test_patch")
            if job.side == "after":
                apply_patch(work, job.task.patch, "patch")
            ro = tuple(Path(p) for p in self.recipe.sandbox.ro_paths)
            return run_tests(job.task.runner, self.sandbox, work, self.limits,
                             job.task.test_files, env=env, ro_paths=ro)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def validate(self, task: TaskRecord, base: Path, run_id: str = "",
                 pool: ThreadPoolExecutor | None = None) -> ValidationRow:
        """Replay one task; never raises for a bad task (the row says what went wrong)."""
        start = time.monotonic()
        scratch = Path(tempfile.mkdtemp(prefix="datagen-validate-", dir=self.work_root))
        try:
            env = self._env_for(task, base, scratch)
            n = self.recipe.validation.reruns
            jobs = [_Job(task, base, side) for side in ("before", "after") for _ in range(n)]
            mapper: Callable = pool.map if pool is not None else map
            results = list(mapper(lambda j: self.run_side(j, env, scratch), jobs))
        except SkipItem as exc:
            return _row(task, run_id, self.sandbox.name, "error", exc.reason, start, str(exc))
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        g = grade([r.results for r in results[:n]], [r.results for r in results[n:]])
        notes = [note for i, r in enumerate(results) if (note := _note(jobs[i].side, i % n, r))]
        missing_f2p = sorted(set(task.FAIL_TO_PASS) - set(g.fail_to_pass))
        missing_p2p = sorted(set(task.PASS_TO_PASS) - set(g.pass_to_pass))
        if missing_f2p or missing_p2p:
            status, reason = "invalid", "f2p_mismatch" if missing_f2p else "p2p_mismatch"
        elif not g.proves_fix:  # SWE-bench validity: >= 1 test flips and >= 1 keeps passing
            status, reason = "invalid", "no_fail_to_pass" if not g.fail_to_pass else "no_pass_to_pass"
        else:
            status, reason = "valid", None
        return ValidationRow(
            run_id=run_id, instance_id=task.instance_id, status=status, reason=reason,
            backend=self.sandbox.name, fail_to_pass=g.fail_to_pass, pass_to_pass=g.pass_to_pass,
            flaky=g.flaky, missing_f2p=missing_f2p, missing_p2p=missing_p2p, notes=notes,
            duration_s=round(time.monotonic() - start, 3),
        )

    def validate_all(self, tasks: list[tuple[TaskRecord, Path]], run_id: str = "") -> list[ValidationRow]:
        """Replay every task; runs of all tasks share one pool of ``workers`` threads."""
        workers = self.recipe.validation.workers or os.cpu_count() or 1
        with ThreadPoolExecutor(workers) as runs, ThreadPoolExecutor(workers) as outer:
            return list(outer.map(lambda tb: self.validate(tb[0], tb[1], run_id, runs), tasks))


def _note(side: str, index: int, run: TestRun) -> str | None:
    """Why one run's results may be incomplete (a limit, a missing report), if they are."""
    problems = []
    if run.run.limit_hit:
        problems.append(f"stopped by the {run.run.limit_hit} limit")
    if run.report_error:
        tail = run.run.stderr.strip().splitlines()[-1:] or [""]
        problems.append(f"{run.report_error} (exit {run.run.exit_code}) {tail[0][:200]}".strip())
    return f"{side} run {index + 1}: " + "; ".join(problems) if problems else None


def _row(task: TaskRecord, run_id: str, backend: str, status: str, reason: str,
         start: float, detail: str) -> ValidationRow:
    return ValidationRow(
        run_id=run_id, instance_id=task.instance_id, status=status, reason=reason,
        backend=backend, fail_to_pass=[], pass_to_pass=[], flaky=[], missing_f2p=[],
        missing_p2p=[], notes=[detail], duration_s=round(time.monotonic() - start, 3),
    )


__all__ = ["Validator", "source_dir"]
