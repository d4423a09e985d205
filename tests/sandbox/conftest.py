"""Fixtures for sandbox tests: the back ends, small limits, a host-side interpreter."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from datagen.config.sandbox import SandboxLimits
from datagen.sandbox.bwrap import BwrapSandbox
from datagen.sandbox.cgroups import support
from datagen.sandbox.local import SubprocessSandbox
from datagen.sandbox.select import bwrap_works

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
