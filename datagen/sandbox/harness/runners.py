"""Test runs: a repo's tests run in the sandbox by its ecosystem profile, per-test results read.

A profile (``datagen/sandbox/harness/profiles/``) gives the command, which writes a machine-readable
report into the working copy, and the pure parser of that report.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from datagen.config.sandbox import EnvConfig, SandboxLimits
from datagen.records.env import EnvPlan
from datagen.records.tasks import RunResult
from datagen.resources import env_cache_dir
from datagen.sandbox.envs.cache import EnvSetupError, read_attempt, write_record
from datagen.sandbox.harness.parsers import ReportError, TestResults, runner_words
from datagen.sandbox.harness.profiles.base import EnvContext, Profile, ProfileEnv, links_into
from datagen.sandbox.harness.profiles.pytest import pytest_command
from datagen.sandbox.harness.profiles.registry import get_profile
from datagen.sandbox.isolation.base import Sandbox

REPORT = ".datagen-report.xml"  # pytest's and node's report (other profiles: ``Profile.report``)
LOG_CHARS = 200_000  # of a report's human-readable output added to a run's stdout


@dataclass
class TestRun:
    """One run of a test suite: the process result and the per-test results."""

    run: RunResult
    results: TestResults
    report_error: str | None = None
    # where no test passed: why, in the runner's own words (its error lines, then its last
    # lines: ``runner_words``), for a baseline that has nothing to build on
    why: str = ""


def node_command(report: str, test_files: list[str]) -> list[str]:
    return ["node", "--test", "--test-reporter=junit",
            f"--test-reporter-destination={report}", *test_files]


def env_context(config: EnvConfig, sandbox: Sandbox, limits: SandboxLimits, retry_failed: bool = False) -> EnvContext:
    """What a profile's ``ensure_env`` gets: the setup limits have the network on."""
    setup = limits.model_copy(update={"network": True, "timeout_s": config.setup_timeout_s})
    cache = Path(config.cache_dir) if config.cache_dir else env_cache_dir()
    return EnvContext(sandbox, setup, config, cache, retry_failed)


def ensure_env(profile: Profile, src: Path, config: EnvConfig, sandbox: Sandbox, limits: SandboxLimits,
               retry_failed: bool = False, plan: EnvPlan | None = None, record: Path | None = None) -> ProfileEnv:
    """The profile's environment for the repo at ``src`` (built once per repo + plan key);
    with ``record``, what happened is written there (``envs/cache.py``'s ``write_record``): the
    plan as built, with the fallback it took (``EnvPlan.fallback``, ``pins``), for ``repo_envs``."""
    plan = plan or profile.configured_plan(src, config)
    ctx = env_context(config, sandbox, limits, retry_failed)
    try:
        env = profile.ensure_env(src, plan, ctx)
    except EnvSetupError as exc:
        if record is not None:
            _record(record, ctx.cache_dir / profile.env_name(src, plan, config), plan, exc)
        raise
    if record is not None and env.path is not None:
        _record(record, Path(env.path), env.plan, None)
    return env


def _record(record: Path, folder: Path, plan: EnvPlan, exc: EnvSetupError | None) -> None:
    """The env's build record (its key: the folder, where a build left its attempt there)."""
    write_record(record, folder.name if read_attempt(folder) is not None else "", folder, plan, exc)


def as_profile_env(runner: str, env: object, plan: EnvPlan | None = None) -> ProfileEnv:
    """A ``ProfileEnv`` for ``runner`` from what older callers hold (an env its profile's
    builder made from ``plan``, such as a ``PythonEnv``, or nothing)."""
    if isinstance(env, ProfileEnv):
        return env
    if env is not None:
        return get_profile(runner).wrap_env(env, plan or EnvPlan(profile=runner))
    if get_profile(runner).needs_built_env:
        raise ValueError(f"{runner} needs the env its profile builds")
    return ProfileEnv(runner, EnvPlan(profile=runner))


def run_profile(profile: Profile, env: ProfileEnv, sandbox: Sandbox, workdir: Path, limits: SandboxLimits,
                tests: list[str] | None = None, ro_paths: tuple[Path, ...] = (),
                extra_env: dict[str, str] | None = None) -> TestRun:
    """Run ``tests`` (ids; None or empty: the whole suite) in ``workdir`` and parse the report."""
    report = workdir / profile.report
    report.unlink(missing_ok=True)
    links_into(workdir, env.links)
    cmd = profile.test_command(env, workdir, tests or None)
    run_env = {**profile.run_env(env, workdir), **(extra_env or {})}
    result = sandbox.run(cmd, workdir, limits, env=run_env, ro_paths=(*env.ro_paths, *ro_paths))
    text = profile.read_report(workdir, result)
    if text is None:
        words = _words(result)
        return TestRun(result, {}, _said("no report written", words), words)
    log = profile.log_text(text)
    if log:
        result = result.model_copy(update={"stdout": result.stdout + log[-LOG_CHARS:]})
    try:
        results = profile.parse(text)
    except ReportError as exc:
        words = _words(result, "" if log else text)
        return TestRun(result, {}, f"{exc}" + (f"; the run: {words}" if words else ""), words)
    if any(status == "pass" for status in results.values()):
        return TestRun(result, results)
    words = _words(result, "" if log else text)  # a report that is the runner's log (minitest's)
    if not results and not tests:  # the whole suite, and nothing collected: the runner says why
        return TestRun(result, {}, _said("the runner reported no tests", words), words)
    return TestRun(result, results, why=words)


def _words(result: RunResult, report: str = "") -> str:
    """The runner's own words (``runner_words``) from the run's output and, where the runner
    wrote its log into the report rather than to stdout, from the report."""
    return runner_words(f"{result.stdout}\n{result.stderr}") or runner_words(report)


def _said(what: str, words: str) -> str:
    """``what`` and the runner's own words (``ERROR: file or directory not found: tests``,
    ``TypeError: required field "lineno" missing from alias``, ``no tests ran in 0.01s``)."""
    return f"{what}: {words}" if words else what


def run_tests(
    runner: str,
    sandbox: Sandbox,
    workdir: Path,
    limits: SandboxLimits,
    test_files: list[str],
    env: object = None,
    ro_paths: tuple[Path, ...] = (),
) -> TestRun:
    """Run the registered profile ``runner`` on ``workdir`` (``test_files``: ids or files to
    run, empty for the whole suite) and parse its report."""
    return run_profile(get_profile(runner), as_profile_env(runner, env), sandbox, workdir, limits,
                       list(test_files), tuple(ro_paths))


__all__ = ["REPORT", "TestRun", "ensure_env", "node_command", "pytest_command", "run_profile", "run_tests"]
