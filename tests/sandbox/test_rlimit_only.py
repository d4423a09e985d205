"""Hosts without writable cgroups: limits fall back to rlimits and are still reported."""

from __future__ import annotations

import pytest

from datagen.sandbox.isolation import base
from datagen.sandbox.isolation.cgroups import RunCgroup

FORK_BOMB = "import os, time\nfor _ in range(9):\n    os.fork()\ntime.sleep(3)"


@pytest.fixture
def no_cgroups(monkeypatch):
    monkeypatch.setattr(base.RunCgroup, "create", classmethod(lambda cls, *a: RunCgroup(None, None)))


def test_bwrap_bounds_processes_with_rlimit_on_leased_uid(bwrap, py, workdir, limits, no_cgroups):
    python, ro = py
    r = bwrap.run([python, "-c", FORK_BOMB], workdir,
                  limits.model_copy(update={"processes": 16}), ro_paths=ro)
    assert r.limit_hit == "processes", (r.exit_code, r.stderr[-300:])
    assert r.limit_evidence.startswith("stderr")


def test_memory_falls_back_to_rlimit_as(any_sandbox, py, workdir, limits, no_cgroups):
    python, ro = py
    r = any_sandbox.run([python, "-c", "x = 'a' * (10 * 128 * 2**20)"], workdir,
                        limits.model_copy(update={"memory_mb": 128}), ro_paths=ro)
    assert r.limit_hit == "memory" and "MemoryError" in r.limit_evidence
    assert r.memory_peak_mb is None
