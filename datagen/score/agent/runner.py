"""K agent runs per task, each graded like any attempt, infrastructure failures masked.

Grading is ``score.grading.TaskGrader``, the core of ``datagen serve grader``: it lays each
task's environment out once (``environment``), which every run's shell then uses too; each run
gets a fresh working copy (``env.working_copy``), mini-swe-agent's loop (``agent.make_agent``)
with our sandboxed environment and our teacher-backed model, and ends with the working copy's
diff graded by ``TaskGrader.grade`` (forbidden test edits refused, then the task's tests).

A run that failed for the infrastructure's sake (the model server did not answer, the sandbox
could not run a command, the grader answered ``infra_error``) is masked: neither a pass nor a
failure, and run again up to ``agent.max_reruns`` times. Each run is stored as JSON as soon as
it ends (``store``), so a resumed build never runs it again; its model calls are also in the
teacher cache.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from datagen.config.sandbox import EnvConfig, SandboxLimits
from datagen.config.score import DifficultyConfig
from datagen.errors import SkipItem
from datagen.records.agent import AgentRunRow, AgentTaskRow
from datagen.records.score import DifficultyRow
from datagen.records.tasks import TaskRecord
from datagen.runtime.atomic import atomic_write
from datagen.sandbox.harness.profiles.registry import get_profile
from datagen.sandbox.isolation.base import Sandbox
from datagen.score.agent.agent import make_agent, template
from datagen.score.agent.env import SandboxEnvironment, SandboxFailure, final_diff, working_copy
from datagen.score.agent.model import TeacherModel, TeacherModelConfig
from datagen.score.attempt import AttemptResult
from datagen.score.difficulty import DifficultyScorer, Prepared
from datagen.score.grading import TaskGrader
from datagen.teachers.base import Teacher

EXIT_STATUS = {"Submitted": "submitted", "LimitsExceeded": "step_limit", "TimeExceeded": "time_limit",
               "TokenLimitExceeded": "token_limit", "ContextLimitExceeded": "context_limit",
               "RepeatedFormatError": "format_error", "ModelError": "model_error"}
INFRA = {"model_error", "sandbox_error"}
LIMITS = {"step_limit", "time_limit", "token_limit", "context_limit"}


@dataclass
class AgentRun:
    """One run: how it ended, what it cost, its diff and its grade (or why it is masked)."""

    instance_id: str
    repo: str
    sample: int
    rerun: int
    exit_status: str
    detail: str = ""
    steps: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cached_calls: int = 0
    wall_s: float = 0.0
    grade_s: float = 0.0
    diff: str = ""
    masked: bool = False
    passed: bool | None = None
    reason: str | None = None
    trajectory: dict = field(default_factory=dict)  # mini-swe-agent's .traj.json content

    @property
    def trajectory_id(self) -> str:
        return f"{self.instance_id}/{self.sample}.{self.rerun}"

    @property
    def segments(self) -> list[dict]:
        return self.trajectory.get("info", {}).get("segments") or [
            {"start": 0, "messages": len(self.trajectory.get("messages", [])), "summary": None}]

    @property
    def reward(self) -> float | None:
        return None if self.masked else float(bool(self.passed))

    def row(self, run_id: str, policy_id: str) -> AgentRunRow:
        return AgentRunRow(run_id=run_id, trajectory_id=self.trajectory_id, instance_id=self.instance_id,
                           repo=self.repo, policy_id=policy_id, sample=self.sample, rerun=self.rerun,
                           exit_status=self.exit_status, masked=self.masked, passed=self.passed,
                           reason=self.reason, steps=self.steps, segments=len(self.segments),
                           tokens_in=self.tokens_in, tokens_out=self.tokens_out, cached_calls=self.cached_calls,
                           wall_s=round(self.wall_s, 3), grade_s=round(self.grade_s, 3), diff=self.diff)

    def attempt(self, required: tuple[str, ...]) -> AttemptResult:
        """The run as an attempt of the difficulty step (unmasked runs only)."""
        return AttemptResult(self.instance_id, self.sample, bool(self.passed), self.reason, patch=self.diff,
                             required=required, duration_s=self.wall_s + self.grade_s, tokens=self.tokens_out)


@dataclass
class AgentReport:
    """Every run of every task, one difficulty row and one totals row per task."""

    runs: list[AgentRun]
    tasks: list[DifficultyRow]
    totals: list[AgentTaskRow]
    attempts: list[AttemptResult]
    policy_id: str
    run_id: str = ""


def _safe(name: str) -> str:
    return re.sub(r"[^\w.-]", "_", name)


class AgentScorer:
    """K runs of mini-swe-agent per task against ``policy``, graded in ``sandbox``."""

    def __init__(self, cfg: DifficultyConfig, policy: Teacher, sandbox: Sandbox, *,
                 limits: SandboxLimits | None = None, env: EnvConfig | None = None, policy_id: str | None = None,
                 ro_paths: Sequence[Path] = (), work_root: Path | None = None, store: Path | None = None):
        """``store``: the folder each finished run is kept in (a resumed build reads it)."""
        self.cfg = cfg
        self.agent_cfg = cfg.agent
        self.policy = policy
        self.sandbox = sandbox
        self.limits, self.env_config = limits, env
        self.rows = DifficultyScorer(cfg, None, sandbox)  # pass rates and their Wilson band, as in mode single
        self.command_limits = (limits or SandboxLimits()).model_copy(
            update={"timeout_s": cfg.agent.command_timeout_s, "network": False})
        self.ro_paths = tuple(Path(p) for p in ro_paths)
        self.policy_id = policy_id or policy.config.cache_model_id
        self.work_root = work_root
        self.store = Path(store) if store else None

    @property
    def workers(self) -> int:
        return self.agent_cfg.workers or self.cfg.workers or os.cpu_count() or 1

    def score(self, tasks: Sequence[tuple[TaskRecord, Path]], run_id: str = "") -> AgentReport:
        """Lay out every task, run its K samples (``workers`` runs at once), and report."""
        if self.work_root is not None:
            self.work_root.mkdir(parents=True, exist_ok=True)
        grader = TaskGrader({t.instance_id: (t, b) for t, b in tasks}, self.sandbox, timeout_s=self.cfg.test_timeout_s,
                            limits=self.limits, env=self.env_config, ro_paths=self.ro_paths, work_root=self.work_root,
                            workers=self.workers)
        try:
            with ThreadPoolExecutor(self.workers) as pool:
                laid = list(pool.map(lambda t: grader.environment(t[0].instance_id), tasks))
                jobs = [(p, s) for p in laid if p.error is None for s in range(self.cfg.k)]
                done = list(pool.map(lambda job: self.run_sample(grader, *job), jobs))
        finally:
            grader.close()
        runs: dict[str, list[AgentRun]] = {}
        for (prep, _), sample_runs in zip(jobs, done, strict=True):
            runs.setdefault(prep.task.instance_id, []).extend(sample_runs)
        return self.report(laid, runs, run_id)

    def report(self, laid, runs: dict[str, list[AgentRun]], run_id: str) -> AgentReport:
        out = AgentReport([], [], [], [], self.policy_id, run_id)
        for prep in laid:
            task = prep.task
            mine = runs.get(task.instance_id, [])
            measured = [r for r in mine if not r.masked]
            attempts = [r.attempt(tuple(dict.fromkeys([*task.FAIL_TO_PASS, *task.PASS_TO_PASS]))) for r in measured]
            error = prep.error or (None if measured else "every run masked")
            out.runs += mine
            out.attempts += attempts
            out.tasks.append(self.rows.task_row(task, run_id, attempts, error))
            out.totals.append(self._totals(task, run_id, mine, prep.error))
        return out

    def _totals(self, task: TaskRecord, run_id: str, runs: list[AgentRun], error: str | None) -> AgentTaskRow:
        measured = [r for r in runs if not r.masked]
        passes = sum(1 for r in measured if r.passed)
        return AgentTaskRow(
            run_id=run_id, instance_id=task.instance_id, policy_id=self.policy_id, runs=len(runs),
            masked=len(runs) - len(measured), measured=len(measured), passes=passes,
            pass_at_1=passes / len(measured) if measured else None,
            pass_at_k=float(passes > 0) if measured else None,
            tokens_in=sum(r.tokens_in for r in runs), tokens_out=sum(r.tokens_out for r in runs),
            seconds=round(sum(r.wall_s + r.grade_s for r in runs), 3), error=error)

    # -- one sample: its runs until one is not masked ---------------------------------------
    def run_sample(self, grader: TaskGrader, prep: Prepared, sample: int) -> list[AgentRun]:
        runs = []
        for rerun in range(self.agent_cfg.max_reruns + 1):
            run = self._stored(prep.task, sample, rerun) or self._store(self.run_once(grader, prep, sample, rerun))
            runs.append(run)
            if not run.masked:
                break
        return runs

    def _path(self, instance_id: str, sample: int, rerun: int) -> Path | None:
        return self.store / _safe(instance_id) / f"{sample}.{rerun}.json" if self.store else None

    def _stored(self, task: TaskRecord, sample: int, rerun: int) -> AgentRun | None:
        path = self._path(task.instance_id, sample, rerun)
        if path is None or not path.is_file():
            return None
        return AgentRun(**json.loads(path.read_text(encoding="utf-8")))

    def _store(self, run: AgentRun) -> AgentRun:
        path = self._path(run.instance_id, run.sample, run.rerun)
        if path is not None:
            atomic_write(path, json.dumps(asdict(run), sort_keys=True), mkdir=True)
        return run

    def run_once(self, grader: TaskGrader, prep: Prepared, sample: int, rerun: int) -> AgentRun:
        """One run in a fresh working copy, then its diff graded (unless masked)."""
        task = prep.task
        scratch = Path(tempfile.mkdtemp(prefix=f"run-{sample}.{rerun}-", dir=prep.scratch))
        run = AgentRun(task.instance_id, task.repo, sample, rerun, "sandbox_error")
        try:
            work, pristine = scratch / "work", scratch / "base.git"
            try:
                working_copy(task, prep.base, prep.env, work, pristine)
            except SkipItem as exc:
                run.detail = f"{exc.reason}: {exc.detail}"
                return self._masked(run, exc.reason)
            self._roll_out(run, prep, work, sample)
            if run.exit_status in INFRA or (self.agent_cfg.mask_limits and run.exit_status in LIMITS):
                return self._masked(run, run.exit_status)
            run.diff = final_diff(work, pristine)
            return self._grade(run, grader)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    @staticmethod
    def _masked(run: AgentRun, reason: str) -> AgentRun:
        run.masked, run.passed, run.reason = True, None, reason
        return run

    def _roll_out(self, run: AgentRun, prep: Prepared, work: Path, sample: int) -> None:
        """mini-swe-agent's loop on the working copy; the run's status, cost and trajectory."""
        a = self.agent_cfg
        env = SandboxEnvironment(workdir=work, sandbox=self.sandbox, limits=self.command_limits,
                                 run_env=get_profile(prep.task.runner).run_env(prep.env, work),
                                 ro_paths=(*prep.env.ro_paths, *self.ro_paths),
                                 max_output_chars=a.max_observation_chars)
        model = TeacherModel(self.policy, TeacherModelConfig(
            model_name=self.policy_id, seed=self.cfg.seed + sample, temperature=self.cfg.temperature,
            max_tokens=a.max_tokens, format_error_template=template("format_error"),
            observation_template=template("observation")),
            request_id=f"{prep.task.instance_id}/agent-{sample}.{run.rerun}", token_limit=a.token_limit,
            context_limit=a.context_limit)
        agent = make_agent(model, env, system_template=template("system"), instance_template=template("instance"),
                           step_limit=a.step_limit, cost_limit=0.0, wall_time_limit_seconds=math.ceil(a.wall_time_s),
                           context_budget=a.context_budget, summary_max_tokens=a.summary_max_tokens,
                           max_segments=a.max_segments)
        started = time.monotonic()
        try:
            info = agent.run(task=prep.task.problem_statement.strip())
            run.exit_status = EXIT_STATUS.get(info.get("exit_status", ""), "format_error")
            run.detail = str(agent.messages[-1].get("content", ""))[:2000] if run.exit_status != "submitted" else ""
        except SandboxFailure as exc:
            run.exit_status, run.detail = "sandbox_error", str(exc)
        finally:
            try:
                env.close()  # the session's writes reach the working copy before its diff is read
            except (OSError, RuntimeError) as exc:
                run.exit_status, run.detail = "sandbox_error", f"closing the sandbox session: {exc}"
        run.wall_s = time.monotonic() - started
        run.steps, run.trajectory = agent.n_calls, agent.serialize()
        u = model.usage
        run.tokens_in, run.tokens_out, run.cached_calls = u.tokens_in, u.tokens_out, u.cached

    @staticmethod
    def _grade(run: AgentRun, grader: TaskGrader) -> AgentRun:
        """The diff graded by the grader; a grade that could not be made is masked."""
        graded = grader.grade(run.instance_id, run.diff)
        run.grade_s = graded.seconds
        if graded.status == "infra_error":
            return AgentScorer._masked(run, graded.reason or "infra_error")
        run.passed, run.reason = graded.resolved, graded.reason
        return run
