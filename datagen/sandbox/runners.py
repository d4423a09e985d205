"""Test runners: how to run a repo's tests in the sandbox and read per-test results.

A runner writes a machine-readable report into the working copy; the parser for it is a
pure function in ``parsers.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from datagen.config.sandbox import SandboxLimits
from datagen.records.tasks import RunResult
from datagen.sandbox.base import Sandbox
from datagen.sandbox.env import PythonEnv
from datagen.sandbox.parsers import PARSERS, ReportError, TestResults

REPORT = ".datagen-report.xml"


@dataclass
class TestRun:
    """One run of a test suite: the process result and the per-test results."""

    run: RunResult
    results: TestResults
    report_error: str | None = None


def pytest_command(python: str, report: str, test_files: list[str]) -> list[str]:
    return [python, "-m", "pytest", "-p", "no:cacheprovider", "-o", "junit_family=xunit1",
            f"--junitxml={report}", "--continue-on-collection-errors", "-q", "-rN", *test_files]


def node_command(report: str, test_files: list[str]) -> list[str]:
    return ["node", "--test", "--test-reporter=junit",
            f"--test-reporter-destination={report}", *test_files]


def run_tests(
    runner: str,
    sandbox: Sandbox,
    workdir: Path,
    limits: SandboxLimits,
    test_files: list[str],
    env: PythonEnv | None = None,
    ro_paths: tuple[Path, ...] = (),
) -> TestRun:
    """Run ``runner`` ('pytest' or 'node') on ``workdir`` and parse its report."""
    report = workdir / REPORT
    report.unlink(missing_ok=True)
    if runner == "pytest":
        if env is None:
            raise ValueError("pytest needs a PythonEnv")
        cmd = pytest_command(env.python, REPORT, test_files)
        run_env, ro = env.run_env(workdir), (*env.ro_paths, *ro_paths)
    elif runner == "node":
        cmd, run_env, ro = node_command(REPORT, test_files), {}, tuple(ro_paths)
    else:
        raise ValueError(f"unknown test runner {runner!r}")
    result = sandbox.run(cmd, workdir, limits, env=run_env, ro_paths=ro)
    try:
        text = report.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return TestRun(result, {}, "no report written")
    try:
        return TestRun(result, PARSERS[runner](text))
    except ReportError as exc:
        return TestRun(result, {}, str(exc))
