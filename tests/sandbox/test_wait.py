"""The wait for a sandboxed process: wakes when it exits, gives up at the timeout."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from datagen.sandbox.isolation.base import _wait_exit


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


def test_a_cancel_scope_kills_its_runs_and_refuses_new_ones(tmp_path) -> None:
    """A run started in a thread under a ``CancelScope`` dies when another thread cancels
    the scope (the grader's hung-up client); a later run in that scope does not start."""
    import threading

    from datagen.config.sandbox import SandboxLimits
    from datagen.sandbox.isolation.base import Cancelled, CancelScope, execute

    scope, results = CancelScope(), []
    limits = SandboxLimits(timeout_s=60)
    child = [sys.executable, "-c", "import subprocess, sys, time; "
             "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); time.sleep(60)"]

    def run() -> None:
        with scope:
            results.append(execute(child, backend="test", cwd=tmp_path, env=os.environ, limits=limits,
                                   use_cgroup=False))
            try:
                execute(child, backend="test", cwd=tmp_path, env=os.environ, limits=limits, use_cgroup=False)
            except Cancelled:
                results.append("refused")

    worker = threading.Thread(target=run)
    worker.start()
    time.sleep(1.0)
    start = time.monotonic()
    scope.cancel()
    worker.join(10)
    assert not worker.is_alive() and time.monotonic() - start < 2.0
    assert results[0].exit_code == 128 + 9 and results[0].limit_hit != "timeout" and results[1] == "refused"
    assert CancelScope.current() is None  # the scope was this thread's only while it ran
