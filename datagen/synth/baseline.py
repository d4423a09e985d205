"""A repo's test suite before any change: which tests pass reliably, and which source
lines each of them reaches.

The whole suite runs ``runs`` times in the sandbox, by the repo's ecosystem profile; a test
whose result is not the same in every run is flaky and is left out of every task. Where the
profile has per-test coverage (pytest: coverage.py with each node id as the context), one
more run maps every source line to the tests that execute it, so a candidate is first
checked with only the tests that can see its change; elsewhere the whole suite checks it.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from datagen.config.sandbox import SandboxLimits
from datagen.sandbox.envs.leaks import held_files
from datagen.sandbox.harness.grading import flaky_tests
from datagen.sandbox.harness.profiles.base import ProfileEnv
from datagen.sandbox.harness.profiles.pytest import parse_coverage_json
from datagen.sandbox.harness.profiles.registry import get_profile
from datagen.sandbox.harness.runners import TestRun, as_profile_env, run_profile
from datagen.sandbox.isolation.base import Sandbox

__all__ = ["Baseline", "SuiteRunner", "measure_baseline", "parse_coverage_json"]

HALVINGS = 3  # times a subset over the budget is cut to its first half before the repo is suite_timeout
COVERAGE_SLACK = 4  # the coverage run's time and CPU limits, in test runs' limits


@dataclass
class Baseline:
    """What the build knows about one repo's suite."""

    runner: str
    stable: list[str] = field(default_factory=list)  # passed in every run
    flaky: list[str] = field(default_factory=list)
    failing: list[str] = field(default_factory=list)  # failed in every run: never used
    suite_s: float = 0.0
    line_tests: dict[str, dict[int, list[str]]] = field(default_factory=dict)  # path -> line -> tests
    reason: str | None = None  # why the repo gives no tasks
    detail: str = ""
    plan: dict = field(default_factory=dict)  # the EnvPlan the env was built from (JSON)
    subset: list[str] = field(default_factory=list)  # test files run instead of a suite over its budget
    budget: dict[str, str] = field(default_factory=dict)  # variables of a lighter run (``Profile.budget_vars``)
    language: str = ""  # the tasks' language label
    held: list[str] = field(default_factory=list)  # snapshot files the env holds copies of: never targets

    def tests_reaching(self, path: str, first: int, last: int) -> list[str]:
        """Stable tests that execute any of lines ``first..last`` of ``path``."""
        lines = self.line_tests.get(path, {})
        stable = set(self.stable)
        return sorted({t for n in range(first, last + 1) for t in lines.get(n, ()) if t in stable})


class SuiteRunner:
    """Runs a repo's suite on fresh copies of its clean source, in the sandbox."""

    def __init__(self, runner: str, src: Path, sandbox: Sandbox, limits: SandboxLimits,
                 env: ProfileEnv | object, scratch: Path, ro_paths: tuple[Path, ...] = ()):
        self.runner, self.src, self.sandbox, self.limits = runner, src, sandbox, limits
        self.profile = get_profile(runner)
        self.env, self.scratch, self.ro_paths = as_profile_env(runner, env), scratch, ro_paths
        self.subset: list[str] = []  # what "the whole suite" means when it did not fit (``Baseline.subset``)
        self.budget: dict[str, str] = {}  # the lighter run's variables (``Baseline.budget``)

    def use_budget(self, variables: dict[str, str]) -> None:
        """Every later run (and the plan the tasks' scripts are written from) gets ``variables``."""
        if not variables:
            return
        self.budget = dict(variables)
        plan = self.env.plan.model_copy(update={"env": {**self.env.plan.env, **variables}})
        self.env = replace(self.env, plan=plan, env={**self.env.env, **variables})

    def copy(self, changes: dict[str, str] | None = None) -> Path:
        """A fresh working copy of the clean source with ``changes`` (path -> text) written."""
        work = Path(tempfile.mkdtemp(prefix="run-", dir=self.scratch))
        shutil.copytree(self.src, work, dirs_exist_ok=True, symlinks=True)
        for path, text in (changes or {}).items():
            target = work / path
            if text is None:
                target.unlink(missing_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8", newline="")
        return work

    def run(self, changes: dict[str, str] | None = None, tests: list[str] | None = None,
            fixed_hash: bool = False) -> TestRun:
        """One run of ``tests`` (or the whole suite) on a fresh copy with ``changes``;
        ``fixed_hash``: with ``PYTHONHASHSEED=0``, so set orders in its output repeat."""
        work = self.copy(changes)
        try:
            result = run_profile(self.profile, self.env, self.sandbox, work, self.limits, tests or self.subset or None,
                                 self.ro_paths, {"PYTHONHASHSEED": "0"} if fixed_hash else None)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        # the copy's folder has a random name: outputs that show it would differ between builds
        out = {k: getattr(result.run, k).replace(str(work), ".") for k in ("stdout", "stderr")}
        result.run = result.run.model_copy(update=out)
        if any(str(work) in t for t in result.results):  # node's id of a test file that failed to load
            result.results = {t.replace(f"{work}/", "").replace(str(work), "."): s for t, s in result.results.items()}
        result.why = result.why.replace(str(work), ".")
        result.report_error = result.report_error and result.report_error.replace(str(work), ".")
        return result

    def coverage(self) -> dict[str, dict[int, list[str]]]:
        """path -> line -> ids of the tests that executed it ({} where the profile has none).

        The one coverage run gets ``COVERAGE_SLACK`` times a test run's time and CPU: per-test
        tracing is several times slower than a plain run, and a map cut off by the limit is
        empty, which leaves every candidate of the repo to be checked with its whole suite."""
        work = self.copy()
        limits = self.limits.model_copy(update={"timeout_s": self.limits.timeout_s * COVERAGE_SLACK,
                                                "cpu_s": self.limits.cpu_s * COVERAGE_SLACK})
        try:
            return self.profile.coverage(self.env, self.sandbox, work, limits, self.ro_paths)
        finally:
            shutil.rmtree(work, ignore_errors=True)


def unnameable(tests) -> set[str]:
    """Tests a replay script cannot name: a NUL byte in the name (unjs/ufo's vitest titles
    hold ``\\0https://``) cannot stand in a bash script. Like flaky tests, they join no task."""
    return {t for t in tests if "\x00" in t}


def no_passing_detail(base: Baseline, first: TestRun, shown: int = 3) -> str:
    """Why no test passed: the counts, the first failing ids and the runner's own words
    (a collection error, a missing module, a file that failed to load)."""
    detail = f"{len(base.failing)} failing, {len(base.flaky)} flaky"
    if base.failing:
        detail += ": " + ", ".join(base.failing[:shown]) + (", ..." if len(base.failing) > shown else "")
    return detail + (f"; the runner: {first.why}" if first.why else "")


def measure_baseline(suite: SuiteRunner, runs: int, with_coverage: bool) -> Baseline:
    """Run the clean suite ``runs`` times (and once under coverage) and sort its tests.

    A suite that does not finish within its budget (the run's time limit; in a build
    ``validation.test_timeout_s``) is not a wall: where the runner's output tells which test
    files the cut-off run had finished (pytest), those files become the repo's suite
    (``Baseline.subset``, said in ``detail``) and are measured again (when they too run over
    it, their first half, up to ``HALVINGS`` times); only when not one file fits is the repo
    ``suite_timeout``. Before that, a profile that knows a lighter way to
    run the same tests (``Profile.budget_vars``: pytest's fewer Hypothesis examples) tries it."""
    results = [suite.run()]
    notes = []
    over = f"the whole suite took over {suite.limits.timeout_s:.0f} s"
    if results[0].run.limit_hit == "timeout" and not suite.subset and not suite.budget:
        budget = suite.profile.budget_vars(suite.env)
        if budget:
            suite.use_budget(budget)
            notes.append(f"{over}: it runs with {' '.join(f'{k}={v}' for k, v in sorted(budget.items()))}")
            results = [suite.run()]
    if results[0].run.limit_hit == "timeout" and not suite.subset:
        finished = suite.profile.finished_files(results[0].run)
        if finished:
            suite.subset = finished
            notes.append(f"{'still over it' if notes else over}: its first {len(finished)} test files (those "
                         "finished within it) are the suite")
            results = [suite.run()]
        for _ in range(HALVINGS):  # the same files again over it (a busy machine): half of them
            if results[0].run.limit_hit != "timeout" or len(suite.subset) < 2:
                break
            suite.subset = suite.subset[:len(suite.subset) // 2]
            notes.append(f"they too: the first {len(suite.subset)}")
            results = [suite.run()]
    held = held_files(suite.env.path)
    if held:
        notes.append(f"the env holds copies of {', '.join(held)} (a dependency vendors them): no task "
                     "changes them")
    note = "; ".join(notes)
    results += [suite.run() for _ in range(runs - 1)]
    base = Baseline(runner=suite.runner, suite_s=statistics.median(r.run.duration_s for r in results),
                    plan=suite.env.plan.model_dump(mode="json"), language=suite.profile.task_language(suite.src),
                    subset=list(suite.subset), budget=dict(suite.budget), detail=note, held=held)
    first = results[0]
    for r in results:  # any run stopped by a limit: its missing tests are not flakiness
        if r.run.limit_hit == "timeout":
            base.reason = "suite_timeout"
            base.detail = f"over {suite.limits.timeout_s:.0f} s" + (f" ({note}; they too)" if note else "")
            return base
        if r.run.limit_hit:
            base.reason = f"suite_limit_{r.run.limit_hit}"
            base.detail = r.run.limit_evidence or (f"the sandbox stopped the suite at its {r.run.limit_hit} limit "
                                                    "(sandbox.limits)")
            return base
    if not first.results:
        base.reason = "no_tests"
        base.detail = first.report_error or "the runner reported no tests"
        return base
    flaky = (flaky_tests([r.results for r in results]) | suite.profile.marked_flaky(suite.src, sorted(first.results))
             | unnameable(first.results))
    base.flaky = sorted(flaky)
    base.stable = sorted(t for t, s in first.results.items() if s == "pass" and t not in flaky)
    base.failing = sorted(t for t, s in first.results.items() if s in ("fail", "error") and t not in flaky)
    if not base.stable:
        base.reason = "no_passing_tests"
        base.detail = no_passing_detail(base, first)
        return base
    if with_coverage and suite.profile.covers_lines and not suite.subset:  # a subset: checked whole
        base.line_tests = suite.coverage()
    return base
