"""Fixtures for sandbox tests: the back ends, small limits, a host-side interpreter."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from datagen.config.sandbox import SandboxLimits
from datagen.sandbox.isolation.bwrap import BwrapSandbox
from datagen.sandbox.isolation.cgroups import support
from datagen.sandbox.isolation.select import bwrap_works
from datagen.sandbox.isolation.subprocess_backend import SubprocessSandbox

# Always small: a limit that fails must not be able to hurt the machine.
SMALL = SandboxLimits(timeout_s=20, cpu_s=20, memory_mb=128, processes=32, file_size_mb=4,
                      tmp_size_mb=8, output_bytes=20_000)


def _bwrap_or_skip() -> BwrapSandbox:
    ok, reason = bwrap_works()
    if not ok:
        pytest.skip(f"bwrap unavailable: {reason}")
    return BwrapSandbox()


@pytest.fixture
def bwrap() -> BwrapSandbox:
    return _bwrap_or_skip()


@pytest.fixture(params=["bwrap", "subprocess"])
def any_sandbox(request):
    """Each back end in turn (bwrap skipped where it cannot run)."""
    if request.param == "bwrap":
        return _bwrap_or_skip()
    return SubprocessSandbox(warn=False)


@pytest.fixture
def limits() -> SandboxLimits:
    return SMALL


@pytest.fixture
def py() -> tuple[str, tuple[Path, ...]]:
    """An interpreter that starts inside the sandbox, and the folder it needs to see."""
    return sys._base_executable, (Path(sys.base_prefix),)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    return work


@pytest.fixture
def fallback_bounds_processes() -> bool:
    """Whether the fallback can bound processes here (root ignores RLIMIT_NPROC)."""
    return os.geteuid() != 0 or support()["pids"]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout


def make_task_repo(root: Path) -> dict:
    """A repo whose add() is broken; returns the task fields (test_patch, patch, commit)."""
    repo = root / "calc"
    (repo / "tests").mkdir(parents=True)
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "t")
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n"
                                  "    return a * b\n")
    (repo / "tests" / "test_mul.py").write_text(
        "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    base = git(repo, "rev-parse", "HEAD").strip()
    (repo / "tests" / "test_add.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "tests")
    test_patch = git(repo, "diff", base, "HEAD")
    (repo / "calc.py").write_text((repo / "calc.py").read_text().replace("a - b", "a + b"))
    patch = git(repo, "diff")
    git(repo, "checkout", "-q", ".")
    return {"repo_path": "calc", "base_commit": base, "test_patch": test_patch, "patch": patch}



@pytest.fixture
def calc_task(tmp_path: Path) -> dict:
    """A git repo ``tmp_path/calc`` with a broken add(), and its task's fields."""
    return make_task_repo(tmp_path)
