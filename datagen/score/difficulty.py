"""Difficulty: K attempts per task from a policy, each applied and tested in the sandbox.

For each task the policy sees the statement and the relevant files at ``base_commit`` and
answers with a diff, K times (attempt i sampled with seed ``difficulty.seed + i``, so a
re-run is answered from the teacher cache). Each answer is graded in a fresh working copy:
the diff, then the task's ``test_patch``, then its FAIL_TO_PASS and PASS_TO_PASS tests in
the sandbox with the repo's environment. An attempt passes when every one of those tests
passes; anything else is a failure with a recorded reason and a hint (``feedback``).

Scores only: ``band_decision`` is the pure function a build calls to decide, with a reason.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from statistics import NormalDist

import jinja2

from datagen.config.sandbox import EnvConfig, SandboxLimits
from datagen.config.score import DifficultyConfig
from datagen.errors import SkipItem
from datagen.records.score import AttemptRow, DifficultyRow
from datagen.records.tasks import TaskRecord
from datagen.sandbox.harness.profiles.base import ProfileEnv
from datagen.sandbox.harness.profiles.registry import get_profile
from datagen.sandbox.harness.runners import ensure_env, run_tests
from datagen.sandbox.harness.task_store import apply_patch, materialize
from datagen.sandbox.isolation.base import Sandbox
from datagen.score.attempt import AttemptResult
from datagen.score.feedback import hint_for
from datagen.score.patches import extract_diff, file_changes, forbidden_operation
from datagen.teachers.base import Teacher
from datagen.teachers.types import Message, SamplingParams, TeacherRequest, TeacherResult

PROMPT = Path(__file__).parent / "prompts" / "attempt.jinja"
LOG_CHARS = 8_000
REPORT_CHARS = 200_000


# -- statistics and the decision ---------------------------------------------------------
def wilson_interval(passes: int, k: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a pass rate of ``passes`` out of ``k`` (``(0, 1)`` if k=0)."""
    if k <= 0:
        return 0.0, 1.0
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p, z2 = passes / k, z * z
    centre = (p + z2 / (2 * k)) / (1 + z2 / k)
    half = z * math.sqrt(p * (1 - p) / k + z2 / (4 * k * k)) / (1 + z2 / k)
    return max(0.0, centre - half), min(1.0, centre + half)


def band_decision(passes: int | None, k: int, cfg: DifficultyConfig) -> tuple[bool, str | None]:
    """Keep a task whose pass rate lies strictly inside (band_low, band_high)?

    With ``cfg.wilson`` the whole Wilson interval must lie inside the band. Reasons:
    ``unsolved`` (no attempt passed), ``too_hard`` (some passed, below the band),
    ``too_easy`` (at or above the band, every attempt passing included), ``no_attempts``.
    An unknown pass rate (``passes`` None: difficulty off) is kept, without a reason.
    """
    if passes is None:
        return True, None
    if k <= 0:
        return False, "no_attempts"
    low = high = passes / k
    if cfg.wilson:
        low, high = wilson_interval(passes, k, cfg.confidence)
    if passes == 0:
        return False, "unsolved"
    if low <= cfg.band_low:
        return False, "too_hard"
    if high >= cfg.band_high:
        return False, "too_easy"
    return True, None


# -- the prompt --------------------------------------------------------------------------
def context_paths(task: TaskRecord) -> list[str]:
    """The files shown to the policy: ``relevant_files`` when the task has them, else the
    files the reference fix modifies (they exist at the base commit)."""
    relevant = getattr(task, "relevant_files", None)
    if relevant:
        return list(relevant)
    return [c.path for c in file_changes(task.patch) if c.op in ("modify", "delete", "rename")]


def read_context(root: Path, paths: Sequence[str], max_chars: int) -> list[dict[str, str]]:
    """``{path, content}`` of each file that exists under ``root``, within ``max_chars``."""
    out, left = [], max_chars
    for rel in paths:
        path = root / rel
        if not path.is_file() or left <= 0:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if len(text) > left:
            text = text[:left] + "\n... (cut)"
        left -= len(text)
        out.append({"path": rel, "content": text.rstrip("\n")})
    return out


def attempt_prompt(task: TaskRecord, files: list[dict[str, str]]) -> str:
    """The user turn of an attempt (``prompts/attempt.jinja``)."""
    template = jinja2.Template(PROMPT.read_text(encoding="utf-8"), undefined=jinja2.StrictUndefined,
                               keep_trailing_newline=True)
    return template.render(repo=task.repo, statement=task.problem_statement.strip(), files=files)


def attempt_requests(task: TaskRecord, prompt: str, cfg: DifficultyConfig) -> list[TeacherRequest]:
    """K requests, attempt i seeded with ``cfg.seed + i`` (independent, and cacheable)."""
    sampling = SamplingParams(temperature=cfg.temperature, max_tokens=cfg.max_attempt_tokens)
    message = [Message(role="user", content=prompt)]
    return [TeacherRequest(id=f"{task.instance_id}/attempt-{i}", messages=message,
                           sampling=sampling, seed=cfg.seed + i) for i in range(cfg.k)]


# -- grading -----------------------------------------------------------------------------
def required_tests(task: TaskRecord) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*task.FAIL_TO_PASS, *task.PASS_TO_PASS]))


def test_targets(task: TaskRecord) -> list[str]:
    """What the runner is given: the task's test files, else what its profile runs for the
    required tests (pytest: the files holding them, so a missing test does not abort the run)."""
    if task.test_files:
        return list(task.test_files)
    return get_profile(task.runner).grading_targets(list(required_tests(task)))


def test_paths(task: TaskRecord) -> list[str]:
    """Files a policy must not touch: those of the test patch and the task's tests."""
    from_patch = [c.path for c in file_changes(task.test_patch)]
    return list(dict.fromkeys([*from_patch, *task.test_files, *test_targets(task)]))


@dataclass
class Prepared:
    """A task made ready: its prompt (``prepare``) or its environment (``lay_out``), or why not."""

    task: TaskRecord
    base: Path
    scratch: Path
    env: ProfileEnv | None = None
    prompt: str = ""
    error: str | None = None


@dataclass
class Graded:
    """One task's graded attempts, or why none could be graded (its environment failed)."""

    attempts: list[AttemptResult]
    error: str | None = None


@dataclass
class DifficultyReport:
    """What ``DifficultyScorer.score`` found: every attempt and one row per task."""

    attempts: list[AttemptResult]
    tasks: list[DifficultyRow]
    policy_id: str
    run_id: str = ""

    def attempt_rows(self) -> list[AttemptRow]:
        return [a.row(self.run_id, self.policy_id) for a in self.attempts]


class DifficultyScorer:
    """Grades K policy attempts per task with one sandbox back end."""

    def __init__(self, cfg: DifficultyConfig, policy: Teacher | None, sandbox: Sandbox, *,
                 limits: SandboxLimits | None = None, env: EnvConfig | None = None,
                 policy_id: str | None = None, ro_paths: Sequence[Path] = (),
                 work_root: Path | None = None):
        """``policy`` may be None only when ``cfg.enabled`` is false. ``limits`` bound each
        test run (its timeout is ``cfg.test_timeout_s``); ``env`` builds repo envs."""
        self.cfg = cfg
        self.policy = policy
        self.sandbox = sandbox
        self.limits = (limits or SandboxLimits()).model_copy(update={"timeout_s": cfg.test_timeout_s})
        self.env_config = env or EnvConfig()
        self.policy_id = policy_id or (policy.config.cache_model_id if policy is not None else "none")
        self.ro_paths = tuple(Path(p) for p in ro_paths)
        self.work_root = work_root

    def score(self, tasks: Sequence[tuple[TaskRecord, Path]], run_id: str = "") -> DifficultyReport:
        """Attempt and grade every task; never raises for one bad task (its row says why).
        The steps a build spreads over a cluster, in one call: ``prepare``, ``ask``,
        ``grade_tasks`` and ``report``."""
        if not self.cfg.enabled:
            rows = [self._row(t, run_id, []) for t, _ in tasks]
            return DifficultyReport([], rows, self.policy_id, run_id)
        prepared = self.prepare(tasks)
        answers = self.ask(prepared)
        graded = self.grade_tasks([(p.task, p.base, answers[p.task.instance_id]) for p in prepared
                                   if p.error is None], self.workers)
        return self.report(prepared, graded, run_id)

    @property
    def workers(self) -> int:
        return self.cfg.workers or os.cpu_count() or 1

    def prepare(self, tasks: Sequence[tuple[TaskRecord, Path]]) -> list[Prepared]:
        """Each task's prompt, read from its source at the base commit (or why it has none)."""
        root = Path(tempfile.mkdtemp(prefix="datagen-difficulty-", dir=self.work_root))
        try:
            with ThreadPoolExecutor(self.workers) as pool:
                return list(pool.map(lambda n: self._prompt(*tasks[n], root / str(n)), range(len(tasks))))
        finally:
            shutil.rmtree(root, ignore_errors=True)

    def _prompt(self, task: TaskRecord, base: Path, scratch: Path) -> Prepared:
        prep = Prepared(task, base, scratch)
        src = scratch / "src"
        src.mkdir(parents=True)
        try:
            materialize(task, base, src)
            prep.prompt = attempt_prompt(task, read_context(src, context_paths(task), self.cfg.max_context_chars))
        except SkipItem as exc:
            prep.error = exc.reason
        finally:
            shutil.rmtree(src, ignore_errors=True)
        return prep

    def ask(self, prepared: list[Prepared]) -> dict[str, list[TeacherResult]]:
        """K answers per prepared task, all tasks' requests in one batch (so the policy's
        concurrency is used)."""
        if self.policy is None:
            raise ValueError("difficulty is enabled but no policy was given")
        ready = [p for p in prepared if p.error is None]
        requests = [r for p in ready for r in attempt_requests(p.task, p.prompt, self.cfg)]
        results = self.policy.generate(requests) if requests else []
        return {p.task.instance_id: results[n * self.cfg.k:(n + 1) * self.cfg.k] for n, p in enumerate(ready)}

    def grade_tasks(self, jobs: Sequence[tuple[TaskRecord, Path, list[TeacherResult]]], workers: int,
                    done: Callable[[str, Graded], None] | None = None) -> dict[str, Graded]:
        """Every answer of every task graded, ``workers`` at a time; no policy needed.
        ``done(instance_id, graded)`` is called as each task's grading completes."""
        root = Path(tempfile.mkdtemp(prefix="datagen-grading-", dir=self.work_root))
        out: dict[str, Graded] = {}
        try:
            with ThreadPoolExecutor(max(1, workers)) as pool:
                laid = list(pool.map(lambda n: self.lay_out(jobs[n][0], jobs[n][1], root / str(n)),
                                     range(len(jobs))))
                futures = [[pool.submit(self.grade, p, i, a) for i, a in enumerate(job[2])] if p.error is None
                           else [] for p, job in zip(laid, jobs)]
                for p, attempts in zip(laid, futures):
                    out[p.task.instance_id] = Graded([f.result() for f in attempts], p.error)
                    if done is not None:
                        done(p.task.instance_id, out[p.task.instance_id])
        finally:
            shutil.rmtree(root, ignore_errors=True)
        return out

    def lay_out(self, task: TaskRecord, base: Path, scratch: Path) -> Prepared:
        """The task's environment, built (or reused) from its source at the base commit.
        Built where the attempts are graded (a cluster node), after the policy was asked."""
        prep = Prepared(task, base, scratch)
        src = scratch / "src"
        src.mkdir(parents=True)
        try:
            materialize(task, base, src)
            profile = get_profile(task.runner)
            if missing := profile.missing_tool():
                raise missing
            prep.env = ensure_env(profile, src, self.env_config, self.sandbox, self.limits)
        except SkipItem as exc:
            prep.error = exc.reason
        finally:
            shutil.rmtree(src, ignore_errors=True)
        return prep

    def report(self, prepared: list[Prepared], graded: dict[str, Graded], run_id: str) -> DifficultyReport:
        """Every attempt (task order, then sample) and one row per task."""
        attempts: list[AttemptResult] = []
        rows: list[DifficultyRow] = []
        for p in prepared:
            g = graded.get(p.task.instance_id, Graded([], p.error))
            attempts += g.attempts
            rows.append(self._row(p.task, run_id, g.attempts, p.error or g.error))
        return DifficultyReport(attempts, rows, self.policy_id, run_id)

    def grade(self, prep: Prepared, sample: int, answer: TeacherResult) -> AttemptResult:
        """One attempt, graded; a failed one carries its reason and a hint."""
        started = time.monotonic()
        result = self._grade(prep, sample, answer)
        result = replace(result, duration_s=time.monotonic() - started)
        return result if result.passed else replace(result, hint=hint_for(result))

    def _grade(self, prep: Prepared, sample: int, answer: TeacherResult) -> AttemptResult:
        task = prep.task
        base = AttemptResult(task.instance_id, sample, False, None, required=required_tests(task),
                             tokens=answer.usage.completion_tokens)
        if answer.status == "error":
            return replace(base, reason="policy_error", detail=answer.error or "")
        text = answer.text or ""
        if not text.strip():
            return replace(base, reason="empty_answer")
        diff = extract_diff(text)
        if not diff:
            return replace(base, reason="no_diff")
        base = replace(base, patch=diff)
        forbidden = forbidden_operation(diff, test_paths(task)) if self.cfg.forbid_test_edits else None
        if forbidden:
            return replace(base, reason=forbidden[0], detail=forbidden[1])
        work = Path(tempfile.mkdtemp(prefix=f"attempt-{sample}-", dir=prep.scratch))
        try:
            return self._test(prep, base, diff, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def _test(self, prep: Prepared, base: AttemptResult, diff: str, work: Path) -> AttemptResult:
        """Apply the attempt then the tests (SWE-bench's order), run, and grade."""
        task = prep.task
        try:
            materialize(task, prep.base, work)
            apply_patch(work, diff, "patch")
            apply_patch(work, task.test_patch, "test_patch")
        except SkipItem as exc:
            return replace(base, reason=exc.reason, detail=exc.detail)
        run = run_tests(task.runner, self.sandbox, work, self.limits, test_targets(task),
                        env=prep.env, ro_paths=self.ro_paths)
        report = work / get_profile(task.runner).report
        base = replace(base, results=dict(run.results), workdir=str(work.resolve()),
                       report=report.read_text(errors="replace")[:REPORT_CHARS] if report.exists() else "",
                       log=(run.run.stdout + run.run.stderr)[-LOG_CHARS:])
        if not base.required:
            return replace(base, reason="no_required_tests")
        if not base.failing:
            return replace(base, passed=True)
        reason = run.run.limit_hit or ("no_report" if run.report_error else "tests_failed")
        return replace(base, reason=reason, detail=run.report_error or "")

    def _row(self, task: TaskRecord, run_id: str, attempts: list[AttemptResult],
             error: str | None = None) -> DifficultyRow:
        return self.task_row(task, run_id, attempts, error)

    def task_row(self, task: TaskRecord, run_id: str, attempts: Sequence[AttemptResult],
                 error: str | None = None) -> DifficultyRow:
        """The task's pass rate over ``attempts`` (its Wilson interval), or why it has none."""
        if not self.cfg.enabled or error is not None:
            return DifficultyRow(run_id=run_id, instance_id=task.instance_id, policy_id=self.policy_id,
                                 k=0, passes=None, pass_rate=None, wilson_low=None, wilson_high=None,
                                 pass_vector=[], error=error)
        ordered = sorted(attempts, key=lambda a: a.sample)
        vector = [a.passed for a in ordered]
        passes, k = sum(vector), len(vector)
        low, high = wilson_interval(passes, k, self.cfg.confidence)
        return DifficultyRow(run_id=run_id, instance_id=task.instance_id, policy_id=self.policy_id,
                             k=k, passes=passes, pass_rate=passes / k if k else None,
                             wilson_low=round(low, 6), wilson_high=round(high, 6), pass_vector=vector)


def changed_lines(diff: str) -> int:
    """Added plus removed lines of a unified diff (headers excluded)."""
    return sum(1 for line in diff.splitlines()
               if line[:1] in "+-" and not line.startswith(("+++ ", "--- ")))


def best_attempts(attempts: Sequence[AttemptResult]) -> dict[str, AttemptResult]:
    """The SFT pick per task (rejection sampling): among attempts that passed every test,
    the smallest diff, then the fewest tokens, then the first sample."""
    best: dict[str, AttemptResult] = {}
    for a in sorted((a for a in attempts if a.passed),
                    key=lambda a: (changed_lines(a.patch), a.tokens, a.sample)):
        best.setdefault(a.instance_id, a)
    return best
