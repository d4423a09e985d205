"""The wait for a sandboxed process: wakes when it exits, gives up at the timeout."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from datagen.sandbox.base import _wait_exit


def _spawn(seconds: float) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({seconds})"])


@pytest.fixture(params=["pidfd", "fallback"])
def mode(request, monkeypatch) -> str:
    if request.param == "fallback":
        def no_pidfd(pid: int) -> int:
            raise OSError("no pidfd here")

        monkeypatch.setattr(os, "pidfd_open", no_pidfd, raising=False)
    return request.param


def test_returns_true_when_the_process_exits(mode: str) -> None:
    proc = _spawn(0.05)
    try:
        assert _wait_exit(proc, timeout=30) is True
        assert proc.poll() == 0  # exited, so reaping it does not block
    finally:
        proc.kill()
        proc.wait()


def test_returns_false_at_the_timeout(mode: str) -> None:
    proc = _spawn(30)
    try:
        start = time.monotonic()
        assert _wait_exit(proc, timeout=0.2) is False
        assert 0.2 <= time.monotonic() - start < 10
        assert proc.poll() is None  # still running: the caller decides to kill it
    finally:
        proc.kill()
        proc.wait()
