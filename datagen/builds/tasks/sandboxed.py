"""The sandboxed stages of ``datagen build tasks``, as ``RepoStage``s (``runtime/repo_stage.py``).

- ``BaselineStage``: per repo, its environment and the baseline (the suite three times,
  once under coverage), stored in ``<work>/baselines/<repo>.json``;
- ``ValidateStage``: every candidate of one wave (``<work>/waves/<wave>.jsonl``, written
  by the main process) checked in the sandbox, each verdict stored in
  ``<work>/verdicts/<candidate id>.json``.

A rank rebuilds what it needs from the work folder (the clean source in
``<work>/src/<repo>``, the stored baselines), so it runs the same in the build process, a
Ray worker or a Slurm array task. The teacher never runs here: proposing, growing and
statements stay in the main process.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from datagen.config.sandbox import SandboxLimits
from datagen.config.tasks import TasksRecipe
from datagen.errors import SkipItem
from datagen.runtime.atomic import atomic_write
from datagen.runtime.repo_stage import RepoStage, store_json
from datagen.sandbox.envs.cache import load_plan, write_generated
from datagen.sandbox.harness.profiles.base import ProfileEnv
from datagen.sandbox.harness.profiles.registry import get_profile
from datagen.sandbox.harness.runners import ensure_env
from datagen.sandbox.isolation.base import Sandbox
from datagen.synth.baseline import Baseline, SuiteRunner, measure_baseline
from datagen.synth.candidates import Candidate
from datagen.synth.check import Verdict, check_changes


def run_limits(cfg: TasksRecipe) -> SandboxLimits:
    """The sandbox limits of one test run (the recipe's, with the validation timeout)."""
    return cfg.sandbox.limits.model_copy(update={"timeout_s": cfg.validation.test_timeout_s})


def baseline_path(work: Path, repo: str) -> Path:
    return work / "baselines" / f"{repo}.json"


def read_baseline(work: Path, repo: str) -> Baseline:
    data = json.loads(baseline_path(work, repo).read_text())
    data["line_tests"] = {p: {int(n): t for n, t in lines.items()} for p, lines in data["line_tests"].items()}
    return Baseline(**data)


def verdict_path(work: Path, candidate_id: str) -> Path:
    return work / "verdicts" / f"{candidate_id}.json"


def read_verdict(work: Path, candidate_id: str) -> Verdict:
    return Verdict(**json.loads(verdict_path(work, candidate_id).read_text()))


def write_wave(path: Path, candidates: list[Candidate]) -> None:
    """The candidates a ``ValidateStage`` checks, one JSON line each (written whole)."""
    atomic_write(path, "".join(json.dumps(asdict(c), sort_keys=True) + "\n" for c in candidates), mkdir=True)


def read_wave(path: Path) -> list[Candidate]:
    return [Candidate(**json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines()]


class _TasksStage(RepoStage):
    """What both stages know: the recipe, the work folder and each repo's test runner."""

    def __init__(self, cfg: TasksRecipe, work: Path, runners: dict[str, str], threads: int):
        super().__init__(list(runners), threads)
        self.cfg = cfg
        self.work = str(work.resolve())  # a Ray worker does not start in the build's folder
        self.runners = dict(runners)

    def sandbox(self) -> Sandbox:
        from datagen.sandbox.isolation.select import untrusted_sandbox

        return untrusted_sandbox(self.cfg.sandbox.backend)

    def suite(self, repo: str, sandbox: Sandbox) -> SuiteRunner:
        """The repo's suite on its clean source; builds (or reuses) its environment with the
        repo's profile. Raises ``SkipItem`` when the environment cannot be built."""
        work = Path(self.work)
        src, runner = work / "src" / repo, self.runners[repo]
        env = self._env(repo, src, sandbox)
        scratch = work / "scratch"
        scratch.mkdir(parents=True, exist_ok=True)
        ro = tuple(Path(p) for p in self.cfg.sandbox.ro_paths)
        return SuiteRunner(runner, src, sandbox, run_limits(self.cfg), env, scratch, ro)

    def _env(self, repo: str, src: Path, sandbox: Sandbox) -> ProfileEnv:
        """The repo's env from its plan: a repaired one in ``<work>/env-plans/<repo>.json``
        (written by the teacher's repair), else the recipe's (``Profile.configured_plan``);
        what happened is kept in ``<work>/envs/<repo>.json`` for the ``repo_envs`` table."""
        work = Path(self.work)
        profile = get_profile(self.runners[repo])
        repaired = work / "env-plans" / f"{repo}.json"
        plan = load_plan(repaired, "keep") if repaired.is_file() else profile.configured_plan(src, self.cfg.env, repo)
        env = ensure_env(profile, src, self.cfg.env, sandbox, self.cfg.sandbox.limits, plan=plan,
                         record=work / "envs" / f"{repo}.json")
        write_generated(src, plan)
        return env


class BaselineStage(_TasksStage):
    """Environment and baseline of each repo of the rank's share (stored; a stored one is kept).
    A repo whose environment cannot be built gets a baseline that says why."""

    name = "baselines"

    def work_on(self, repos: list[str]) -> None:
        work = Path(self.work)
        sandbox = self.sandbox()

        def one(repo: str) -> None:
            if baseline_path(work, repo).exists():
                return
            try:
                suite = self.suite(repo, sandbox)
            except SkipItem as exc:
                profile, src = get_profile(self.runners[repo]), work / "src" / repo
                plan = profile.plan(src).model_dump(mode="json")
                base = Baseline(self.runners[repo], reason=exc.reason, detail=str(exc),
                                plan=plan, language=profile.task_language(src))
            else:
                base = measure_baseline(suite, self.cfg.baseline.runs, self.cfg.baseline.coverage)
            store_json(baseline_path(work, repo), asdict(base))

        self.each(one, repos)


class ValidateStage(_TasksStage):
    """Every candidate of the wave whose repo is in the rank's share, checked in the sandbox."""

    name = "validation"

    def __init__(self, cfg: TasksRecipe, work: Path, runners: dict[str, str], threads: int, wave: Path):
        super().__init__(cfg, work, runners, threads)
        self.wave = str(wave.resolve())

    def work_on(self, repos: list[str]) -> None:
        work = Path(self.work)
        mine = set(repos)
        todo = [c for c in read_wave(Path(self.wave))
                if c.repo in mine and not verdict_path(work, c.candidate_id).exists()]
        if not todo:
            return
        sandbox = self.sandbox()
        suites = {r: (self.suite(r, sandbox), read_baseline(work, r)) for r in sorted({c.repo for c in todo})}
        for suite, baseline in suites.values():
            suite.subset = list(baseline.subset)  # a suite over its budget: the files the baseline ran
            suite.use_budget(baseline.budget)  # and the lighter run's variables

        def one(c: Candidate) -> None:
            suite, baseline = suites[c.repo]
            v = check_changes(suite, baseline, c.changes, c.covering, self.cfg.validation.full_runs)
            store_json(verdict_path(work, c.candidate_id), asdict(v))

        self.each(one, todo)


__all__ = ["BaselineStage", "ValidateStage", "read_baseline", "read_verdict", "run_limits", "write_wave"]
