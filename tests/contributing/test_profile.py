"""docs/contributing.md, "Adding a runner profile", kept true: a profile written in a test
folder (``shtest/profile.py``, its parser and its golden report) is registered by importing
it, claims a repo, runs its tests in the real sandbox, and its eval script replays them."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from datagen.config.sandbox import EnvConfig, SandboxLimits
from datagen.sandbox.harness.profiles import registry
from datagen.sandbox.harness.runners import ensure_env, run_tests
from datagen.sandbox.isolation.select import get_sandbox
from tests.sandbox.conftest import git

HERE = Path(__file__).parent
MODULE = "tests.contributing.shtest.profile"
LIMITS = SandboxLimits(timeout_s=60, cpu_s=60, memory_mb=512, processes=64, file_size_mb=16, tmp_size_mb=32,
                       output_bytes=100_000)
GREET = 'greet() { echo "hello $1"; }\nshout() { echo "HELLO $1"; }\n'


@pytest.fixture
def shtest(monkeypatch):
    """The toy profile registered (step 1), and the registry as it was after the test."""
    registry.profile_names()  # the built-in profiles loaded first
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    sys.modules.pop(MODULE, None)
    importlib.import_module(MODULE)
    yield registry.get_profile("shtest")
    sys.modules.pop(MODULE, None)


def tiny_repo(root: Path) -> Path:
    """A repo of two shell tests: greet's passes, shout's fails (its function shouts lower case)."""
    repo = root / "hello-sh"
    (repo / "lib").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "shtest.conf").write_text("")
    (repo / "lib" / "hello.sh").write_text(GREET.replace("HELLO $1", "hello $1"))
    (repo / "tests" / "greet.sh").write_text('. lib/hello.sh\n[ "$(greet world)" = "hello world" ]\n')
    (repo / "tests" / "shout.sh").write_text('. lib/hello.sh\n[ "$(shout world)" = "HELLO world" ]\n')
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "base")
    return repo


def test_the_parser_reads_its_golden_report():
    from tests.contributing.shtest.parser import parse_shtest_jsonl

    golden = (HERE / "shtest" / "golden" / "report.jsonl").read_text()
    assert parse_shtest_jsonl(golden) == {"tests/greet.sh": "pass", "tests/shout.sh": "fail"}


def test_a_profile_from_a_test_folder_runs_a_repo_in_the_sandbox(shtest, tmp_path):
    repo = tiny_repo(tmp_path)
    assert "shtest" in registry.profile_names()
    paths = sorted(p.relative_to(repo).as_posix() for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts)
    assert type(registry.detect_profile(repo, paths)) is type(shtest)

    sandbox = get_sandbox("auto", warn=False)
    env = ensure_env(shtest, repo, EnvConfig(cache_dir=str(tmp_path / "envs")), sandbox, LIMITS)
    run = run_tests("shtest", sandbox, repo, LIMITS, [], env=env)
    assert run.results == {"tests/greet.sh": "pass", "tests/shout.sh": "fail"}, run.run.stderr
    assert (repo / shtest.report).read_text() == (HERE / "shtest" / "golden" / "report.jsonl").read_text()
    assert run_tests("shtest", sandbox, repo, LIMITS, ["tests/greet.sh"], env=env).results == {
        "tests/greet.sh": "pass"}  # a subset runs only what it names


def test_its_eval_script_replays_the_tests_outside_datagen(shtest, tmp_path):
    repo = tiny_repo(tmp_path)
    base = git(repo, "rev-parse", "HEAD").strip()
    script = tmp_path / "eval.sh"
    script.write_text(shtest.eval_script(shtest.plan(repo), ["tests/greet.sh", "tests/shout.sh"], base))
    assert subprocess.run(["bash", str(script)], cwd=repo).returncode == 1  # shout fails
    (repo / "lib" / "hello.sh").write_text(GREET)  # the fix
    assert subprocess.run(["bash", str(script)], cwd=repo).returncode == 0
