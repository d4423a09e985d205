"""A run whose datagen was SIGKILLed inside bwrap's start-up goes on without a parent;
the next run's cgroup set-up finds it by its group's name and kills it."""

from __future__ import annotations

import subprocess
import time

import pytest

from datagen.sandbox.isolation import cgroups
from datagen.sandbox.isolation.cgroups import RunCgroup, reap_orphans


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def _orphan_group(name: str) -> tuple[RunCgroup, subprocess.Popen]:
    pids = cgroups._make("pids", name)
    if pids is None:
        pytest.skip("no writable pids cgroup here")
    group = RunCgroup(pids, None)
    proc = subprocess.Popen(["sleep", "30"], preexec_fn=group.attach_current)
    return group, proc


def test_the_group_of_a_dead_datagen_is_killed_and_removed():
    group, orphan = _orphan_group(f"datagen-{_dead_pid()}-0")
    try:
        reap_orphans()
        assert orphan.wait(timeout=10) == -9
        assert not group.pids.exists()
    finally:
        orphan.kill()
        group.remove()


def test_the_group_of_a_live_datagen_is_left_alone():
    group, run = _orphan_group("datagen-1-0")  # pid 1 lives as long as the machine
    try:
        reap_orphans()
        time.sleep(0.2)
        assert run.poll() is None and group.pids.exists()
    finally:
        run.kill()
        run.wait()
        group.remove()
