"""A repo's test suite before any change: which tests pass reliably, and which source
lines each of them reaches.

The whole suite runs ``runs`` times in the sandbox; a test whose result is not the same
in every run is flaky and is left out of every task. One more run under coverage.py, with
the pytest node id as the dynamic context of each test, maps every source line to the
tests that execute it, so a candidate is first checked with only the tests that can see
its change.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import statistics
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from datagen.config.sandbox import SandboxLimits
from datagen.sandbox.base import Sandbox
from datagen.sandbox.env import PythonEnv
from datagen.sandbox.grading import flaky_tests
from datagen.sandbox.runners import TestRun, run_tests

COVERAGE_DATA = ".datagen.coverage"
COVERAGE_JSON = ".datagen-coverage.json"
CONTEXT_PLUGIN = "datagen_test_context"
# A pytest plugin written into the working copy of the coverage run: each test's lines are
# recorded under its node id (what pytest-cov's --cov-context=test does, in four lines).
_PLUGIN_SOURCE = '''import coverage
import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    cov = coverage.Coverage.current()
    if cov is not None:
        cov.switch_context(item.nodeid)
'''


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

    def tests_reaching(self, path: str, first: int, last: int) -> list[str]:
        """Stable tests that execute any of lines ``first..last`` of ``path``."""
        lines = self.line_tests.get(path, {})
        stable = set(self.stable)
        return sorted({t for n in range(first, last + 1) for t in lines.get(n, ()) if t in stable})


class SuiteRunner:
    """Runs a repo's suite on fresh copies of its clean source, in the sandbox."""

    def __init__(self, runner: str, src: Path, sandbox: Sandbox, limits: SandboxLimits,
                 env: PythonEnv | None, scratch: Path, ro_paths: tuple[Path, ...] = ()):
        self.runner, self.src, self.sandbox, self.limits = runner, src, sandbox, limits
        self.env, self.scratch, self.ro_paths = env, scratch, ro_paths

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
        env = self.env
        if fixed_hash and env is not None:
            env = dataclasses.replace(env, env={**env.env, "PYTHONHASHSEED": "0"})
        try:
            files = tests if tests and self.runner == "pytest" else []
            result = run_tests(self.runner, self.sandbox, work, self.limits, files, env=env,
                               ro_paths=self.ro_paths)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        # the copy's folder has a random name: outputs that show it would differ between builds
        out = {k: getattr(result.run, k).replace(str(work), ".") for k in ("stdout", "stderr")}
        result.run = result.run.model_copy(update=out)
        return result

    def coverage(self) -> dict[str, dict[int, list[str]]]:
        """path -> line -> node ids of the tests that executed it (pytest only)."""
        work = self.copy({f"{CONTEXT_PLUGIN}.py": _PLUGIN_SOURCE})
        try:
            py = self.env.python
            ro = (*self.env.ro_paths, *self.ro_paths)
            env = self.env.run_env(work)
            run = [py, "-m", "coverage", "run", f"--data-file={COVERAGE_DATA}", "--source=.",
                   "-m", "pytest", "-p", CONTEXT_PLUGIN, "-p", "no:cacheprovider", "-q"]
            self.sandbox.run(run, work, self.limits, env=env, ro_paths=ro)
            report = [py, "-m", "coverage", "json", f"--data-file={COVERAGE_DATA}", "--show-contexts",
                      "-o", COVERAGE_JSON]
            self.sandbox.run(report, work, self.limits, env=env, ro_paths=ro)
            return parse_coverage_json(work / COVERAGE_JSON)
        finally:
            shutil.rmtree(work, ignore_errors=True)


def parse_coverage_json(path: Path) -> dict[str, dict[int, list[str]]]:
    """coverage.py's ``json --show-contexts`` report -> path -> line -> test ids (the
    empty context, code run at import time, is no test's)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}
    out: dict[str, dict[int, list[str]]] = {}
    for file, info in sorted(data.get("files", {}).items()):
        lines = {int(n): sorted(c for c in ctxs if c) for n, ctxs in info.get("contexts", {}).items()}
        out[file.replace("\\", "/")] = {n: t for n, t in lines.items() if t}
    return out


def measure_baseline(suite: SuiteRunner, runs: int, with_coverage: bool) -> Baseline:
    """Run the clean suite ``runs`` times (and once under coverage) and sort its tests."""
    results = [suite.run() for _ in range(runs)]
    base = Baseline(runner=suite.runner, suite_s=statistics.median(r.run.duration_s for r in results))
    first = results[0]
    for r in results:  # any run stopped by a limit: its missing tests are not flakiness
        if r.run.limit_hit == "timeout":
            base.reason, base.detail = "suite_timeout", f"over {suite.limits.timeout_s:.0f} s"
            return base
        if r.run.limit_hit:
            base.reason, base.detail = f"suite_limit_{r.run.limit_hit}", r.run.limit_evidence or ""
            return base
    if not first.results:
        base.reason = "no_tests"
        base.detail = first.report_error or "the runner reported no tests"
        return base
    flaky = flaky_tests([r.results for r in results])
    base.flaky = sorted(flaky)
    base.stable = sorted(t for t, s in first.results.items() if s == "pass" and t not in flaky)
    base.failing = sorted(t for t, s in first.results.items() if s in ("fail", "error") and t not in flaky)
    if not base.stable:
        base.reason, base.detail = "no_passing_tests", f"{len(base.failing)} failing, {len(flaky)} flaky"
        return base
    if with_coverage and suite.runner == "pytest":
        base.line_tests = suite.coverage()
    return base
