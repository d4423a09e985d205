"""Does any task's environment hold its answer? (``datagen env check TASKS``)

For every task of a tasks output: its environment as the grader, ``datagen validate`` and
the difficulty scorer get it (the profile's env for the task's checkout, built once per
repo + plan key: with the build's ``env.cache_dir`` it is the very env the build
validated with), its fixed files (the task's checkout with the gold ``patch`` applied),
and a scan of the env folder (``leaks.revealed``): a file equal to a fixed file is a leak,
and so is a text file that holds a block of the fix's added lines.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from datagen.config.sandbox import EnvConfig, SandboxLimits
from datagen.errors import SkipItem
from datagen.records.tasks import TaskRecord
from datagen.sandbox.envs.leaks import added_blocks, revealed
from datagen.sandbox.harness.profiles.registry import get_profile, profile_names
from datagen.sandbox.harness.runners import ensure_env
from datagen.sandbox.harness.task_store import apply_patch, materialize
from datagen.sandbox.isolation.base import Sandbox

_TARGET = re.compile(r"^\+\+\+ b/(.+?)\s*$", re.M)


@dataclass
class TaskEnvCheck:
    """One task's env against its fix."""

    task_id: str
    runner: str
    env: str = ""  # the env folder ('' : the profile needs none)
    fixed_files: list[str] = field(default_factory=list)
    equal: list[str] = field(default_factory=list)  # "env file equals fixed file"
    blocks: list[str] = field(default_factory=list)  # env files holding an added block of the fix
    skipped: str = ""  # why the task could not be checked (its env failed, its runner is unknown)

    @property
    def leaks(self) -> bool:
        return bool(self.equal or self.blocks)


def fixed_files(task: TaskRecord, base: Path, scratch: Path) -> dict[str, bytes]:
    """path -> content of every file the gold patch changes, as the fix leaves it."""
    work = Path(tempfile.mkdtemp(prefix="fixed-", dir=scratch))
    try:
        materialize(task, base, work)
        apply_patch(work, task.patch, "patch")
        out = {}
        for rel in sorted(set(_TARGET.findall(task.patch))):
            path = work / rel
            if path.is_file() and not path.is_symlink():
                out[rel] = path.read_bytes()
        return out
    finally:
        shutil.rmtree(work, ignore_errors=True)


def check_task_envs(tasks: list[tuple[TaskRecord, Path]], config: EnvConfig, sandbox: Sandbox,
                    limits: SandboxLimits, scratch: Path) -> list[TaskEnvCheck]:
    """Each task's env scanned for its fix (envs built where the cache lacks them)."""
    out: list[TaskEnvCheck] = []
    envs: dict[tuple[str, str], object] = {}
    for task, base in tasks:
        row = TaskEnvCheck(task.instance_id, task.runner)
        out.append(row)
        if task.runner not in profile_names():
            row.skipped = f"unknown_runner: {task.runner}"
            continue
        profile = get_profile(task.runner)
        src = Path(tempfile.mkdtemp(prefix="env-src-", dir=scratch))
        try:
            materialize(task, base, src)
            key = (task.runner, str(task.repo_path))
            if key not in envs:
                envs[key] = ensure_env(profile, src, config, sandbox, limits)
            env = envs[key]
            fixed = fixed_files(task, base, scratch)
        except SkipItem as exc:
            row.skipped = str(exc)[:300]
            continue
        finally:
            shutil.rmtree(src, ignore_errors=True)
        row.fixed_files = sorted(fixed)
        if env.path is None:
            continue
        row.env = str(env.path)
        for hit in revealed(Path(env.path), fixed, added_blocks(task.patch)):
            (row.equal if hit.what.startswith("equals") else row.blocks).append(f"{hit.env_file} ({hit.what})")
    return out
