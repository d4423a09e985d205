"""Grading one patch on one task: the core of ``datagen serve grader``, for any caller.

``TaskGrader(tasks, sandbox).grade(instance_id, patch)`` grades a policy's patch the way
the difficulty scorer (``difficulty.py``) grades an attempt: the same answer parsing (a
fenced or raw diff), the same forbidden-edit checks, the same working copy (source at
``base_commit``, the patch, then the task's ``test_patch``), the same test run in the
sandbox on the repo's environment and the same hint for a failed attempt. What it adds:
each task's environment is built once and kept warm (``environment``, the one place
grading reaches a task's environment), and the answer is a ``GradeResult`` with a status
and a reward (None for an ``infra_error``: the environment or the sandbox failed, not the
patch). It holds no queue and no HTTP: the server (``datagen.serve.grader``) schedules
calls to it, an agent's rollouts call it once per run.

    grader = TaskGrader({task.instance_id: (task, base)}, sandbox, limits=..., env=...)
    result = grader.grade(task.instance_id, diff)          # GradeResult(status, reward, ...)
"""

from __future__ import annotations

import copy
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from datagen.config.sandbox import EnvConfig, SandboxLimits
from datagen.config.score import DifficultyConfig
from datagen.errors import SkipItem, UserError
from datagen.records.tasks import TaskRecord
from datagen.sandbox.isolation.base import CancelScope, Sandbox
from datagen.score.difficulty import DifficultyScorer, Prepared
from datagen.teachers.types import TeacherResult

PATCH_FAILED = {"empty_answer", "no_diff", "patch_does_not_apply", "test_patch_does_not_apply"}
INFRA = {"no_required_tests", "repo_missing", "bad_base_commit"}


class UnknownTask(UserError):
    """No task with that instance (or instruction) id."""


@dataclass
class GradeResult:
    """One graded patch (the ``/v1/grade`` answer)."""

    instance_id: str
    status: str  # resolved | unresolved | patch_failed | timeout | infra_error
    reward: float | None
    resolved: bool
    fail_to_pass: dict[str, str] = field(default_factory=dict)
    pass_to_pass: dict[str, str] = field(default_factory=dict)
    hint: str = ""
    reason: str | None = None
    seconds: float = 0.0


def status_of(reason: str | None, passed: bool) -> str:
    """The grade status of an attempt's reason (see ``AttemptResult``)."""
    if passed:
        return "resolved"
    if reason in PATCH_FAILED:
        return "patch_failed"
    if reason == "timeout":
        return "timeout"
    if reason in INFRA or reason == "policy_error":
        return "infra_error"
    return "unresolved"  # tests_failed, no_report, another limit, forbidden_* edits


class TaskGrader:
    """Grades patches on a fixed set of tasks (``{instance_id: (task, source base)}``);
    ``aliases`` maps other ids a caller may send (a pool's instruction ids) to instance ids.
    Thread-safe: a caller may grade from several threads at once."""

    def __init__(self, tasks: Mapping[str, tuple[TaskRecord, Path]], sandbox: Sandbox, *,
                 aliases: Mapping[str, str] | None = None, timeout_s: float = 300.0,
                 limits: SandboxLimits | None = None, env: EnvConfig | None = None, ro_paths: tuple[Path, ...] = (),
                 work_root: Path | None = None, workers: int = 1):
        self.tasks, self.aliases = dict(tasks), dict(aliases or {})
        self.timeout_s = timeout_s
        cfg = DifficultyConfig(k=1, workers=max(1, workers), test_timeout_s=timeout_s)
        self.scorer = DifficultyScorer(cfg, None, sandbox, limits=limits, env=env, ro_paths=ro_paths,
                                       work_root=work_root)
        self.root = Path(tempfile.mkdtemp(prefix="datagen-grader-", dir=work_root))
        self._prepared: dict[str, Prepared] = {}
        self._env_locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()
        self.done = 0  # grades answered
        self.total_seconds = 0.0  # their time, summed

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def resolve(self, instance_id: str) -> str:
        """The instance id of a task id or alias; ``UnknownTask`` if there is none."""
        key = self.aliases.get(instance_id, instance_id)
        if key not in self.tasks:
            raise UnknownTask(f"no task {instance_id!r}")
        return key

    def environment(self, instance_id: str) -> Prepared:
        """The task laid out for grading: its environment built (or reused from the env
        cache) once per task and kept warm. The one place grading reaches a task's
        environment (per-ecosystem environments plug in here)."""
        with self._lock:
            lock = self._env_locks.setdefault(instance_id, threading.Lock())
        with lock:
            if instance_id in self._prepared:
                return self._prepared[instance_id]
            task, base = self.tasks[instance_id]
            scratch = self.root / re.sub(r"[^\w.-]", "_", instance_id)
            prep = self.scorer.lay_out(task, base, scratch)
            scope = CancelScope.current()
            if scope is None or not scope.cancelled:  # a build cut short by a cancel is not kept
                self._prepared[instance_id] = prep
            return prep

    def grade(self, instance_id: str, patch: str, timeout_s: float | None = None) -> GradeResult:
        """Grade one patch (a diff, raw or fenced in an answer) on one task; blocking.
        ``timeout_s`` lowers the test run's limit for this grade (never above the grader's)."""
        start = time.monotonic()
        key = self.resolve(instance_id)
        task = self.tasks[key][0]
        try:
            prep = self.environment(key)
            if prep.error is not None:
                return self._result(key, "infra_error", start, reason=prep.error, hint=f"environment: {prep.error}")
            scorer = self.scorer
            if timeout_s is not None:
                scorer = copy.copy(scorer)
                scorer.limits = scorer.limits.model_copy(update={"timeout_s": min(timeout_s, self.timeout_s)})
            answer = TeacherResult(key=key, status="ok", texts=[patch])
            attempt = scorer.grade(prep, 0, answer)
        except SkipItem as exc:
            return self._result(key, "infra_error", start, reason=exc.reason, hint=str(exc))
        except Exception as exc:  # noqa: BLE001 - any other failure is the grader's, not the patch's
            return self._result(key, "infra_error", start, reason="grader_error", hint=f"{type(exc).__name__}: {exc}")
        status = status_of(attempt.reason, attempt.passed)
        return self._result(
            key, status, start, reason=attempt.reason, hint=attempt.hint or "",
            fail_to_pass={t: attempt.results.get(t, "missing") for t in task.FAIL_TO_PASS},
            pass_to_pass={t: attempt.results.get(t, "missing") for t in task.PASS_TO_PASS})

    def _result(self, key: str, status: str, start: float, **kw) -> GradeResult:
        reward = None if status == "infra_error" else float(status == "resolved")
        seconds = round(time.monotonic() - start, 3)
        with self._lock:
            self.done += 1
            self.total_seconds += seconds
        return GradeResult(key, status, reward, status == "resolved", seconds=seconds, **kw)
