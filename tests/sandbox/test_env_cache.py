"""The env cache every profile shares (``datagen/sandbox/envs/cache.py``): the key records the
tools that built an env, every profile's build leaves the same record, and a failure is kept
and not retried unless asked."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from datagen.config.sandbox import EnvConfig, SandboxLimits
from datagen.records.env import EnvPlan
from datagen.sandbox.envs.cache import EnvSetupError, ensure_cached
from datagen.sandbox.envs.tools import tool_version
from datagen.sandbox.harness.profiles._env import cached_env
from datagen.sandbox.harness.profiles.base import Profile, ProfileEnv
from datagen.sandbox.harness.runners import ensure_env

TOOL = "datagen-toy-tool"


class _ToyProfile(Profile):
    """A profile whose env is one folder made by one sandboxed step (``make`` in the plan's env)."""

    name = "toy-test"
    env_tools = (TOOL,)

    def plan(self, src: Path) -> EnvPlan:
        return EnvPlan(profile=self.name, env={"MAKE": "touch built"})

    def ensure_env(self, src: Path, plan: EnvPlan, ctx) -> ProfileEnv:
        def build(target: Path, step) -> None:
            step("make", ["sh", "-c", plan.env["MAKE"]], target)

        return ProfileEnv(self.name, plan, path=cached_env(self, src, plan, ctx, build))


def _install_tool(bin_dir: Path, version: str) -> None:
    bin_dir.mkdir(exist_ok=True)
    tool = bin_dir / TOOL
    tool.write_text(f"#!/bin/sh\necho '{TOOL} {version}'\n")
    tool.chmod(0o755)
    stamp = tool.stat().st_mtime_ns + {"1.0": 0, "2.0": 10**9}[version]
    os.utime(tool, ns=(stamp, stamp))  # an upgrade is a new file, whatever the clock says


def test_the_key_records_each_tool_and_its_version(tmp_path, monkeypatch):
    src, bin_dir = tmp_path / "repo", tmp_path / "bin"
    src.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    profile, config = _ToyProfile(), EnvConfig(cache_dir=str(tmp_path / "envs"))
    plan = profile.plan(src)
    before = profile.env_name(src, plan, config)
    assert tool_version(TOOL) == "absent"
    _install_tool(bin_dir, "1.0")
    installed = profile.env_name(src, plan, config)
    assert tool_version(TOOL) == f"{TOOL} 1.0" and installed != before
    _install_tool(bin_dir, "2.0")
    assert profile.env_name(src, plan, config) not in (before, installed)
    assert profile.env_name(src, plan, config) == profile.env_name(src, plan, config)


def test_an_env_built_before_a_tool_was_installed_is_not_reused_after(tmp_path, monkeypatch):
    """issue 48's PHP repo: an env made without Composer, cached as ok, was reused after
    Composer was installed; now the second build gets a folder of its own."""
    src, bin_dir = tmp_path / "repo", tmp_path / "bin"
    src.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    profile, config = _ToyProfile(), EnvConfig(cache_dir=str(tmp_path / "envs"))
    plan = profile.plan(src)
    builds: list[str] = []

    def build(target: Path, attempt) -> dict:
        builds.append(tool_version(TOOL))
        return {}

    def ensure() -> Path:
        return ensure_cached(tmp_path / "envs", profile.env_name(src, plan, config), src, plan, build)

    first = ensure()
    assert ensure() == first and builds == ["absent"]  # reused while the tools stay
    _install_tool(bin_dir, "1.0")
    assert ensure() != first and builds == ["absent", f"{TOOL} 1.0"]


def test_every_profiles_build_leaves_the_same_record(bwrap, tmp_path):
    src = tmp_path / "repo"
    src.mkdir()
    config = EnvConfig(cache_dir=str(tmp_path / "envs"))
    limits = SandboxLimits(timeout_s=60, memory_mb=512, processes=64)
    record = tmp_path / "work" / "envs" / "repo.json"
    env = ensure_env(_ToyProfile(), src, config, bwrap, limits, record=record)
    assert (Path(env.path) / "built").is_file() and (Path(env.path) / "ok.json").is_file()
    rec = json.loads(record.read_text())
    assert rec["env_key"] == Path(env.path).name and rec["outcome"] == "ok"
    assert [(s["name"], s["ok"]) for s in rec["steps"]] == [("make", True)]

    failing = _ToyProfile().plan(src).model_copy(update={"env": {"MAKE": "echo 'no compiler' >&2; exit 3"}})
    with pytest.raises(EnvSetupError) as err:
        ensure_env(_ToyProfile(), src, config, bwrap, limits, plan=failing, record=record)
    assert err.value.step == "make" and "make failed (exit 3)" in str(err.value)
    rec = json.loads(record.read_text())
    assert rec["outcome"] == "failed" and rec["failed_step"] == "make" and "no compiler" in rec["log_tail"]
    assert rec["env_key"] and (Path(config.cache_dir) / rec["env_key"] / "failed.json").is_file()
    with pytest.raises(EnvSetupError, match="not retried"):  # recorded, not built again
        ensure_env(_ToyProfile(), src, config, bwrap, limits, plan=failing)
    fixed = failing.model_copy(update={"env": {"MAKE": "touch built"}})
    assert ensure_env(_ToyProfile(), src, config, bwrap, limits, plan=fixed).path == env.path
