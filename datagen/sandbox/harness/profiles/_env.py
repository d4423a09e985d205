"""The env side of a profile's ``ensure_env``: ``cached_env``, a profile's env folder in the env
cache every profile shares (``datagen/sandbox/envs/cache.py``), built by sandboxed install
steps, and ``copy_source``, the copy of the repo an installer may write into.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from datagen.records.env import EnvPlan
from datagen.sandbox.envs.cache import BuildLog, ensure_cached
from datagen.sandbox.envs.mirrors import mirror_env
from datagen.sandbox.harness.parsers import runner_words
from datagen.sandbox.harness.profiles.base import EnvContext, Profile


def cached_env(profile: Profile, src: Path, plan: EnvPlan, ctx: EnvContext,
               build: Callable[[Path, Callable[..., bool]], None]) -> Path:
    """The env folder ``<cache>/<profile>-<key>``, made by ``build(target, step)`` on first use
    in the env cache (``datagen/sandbox/envs/cache.py``: one builder per key, the build record,
    a failure not retried unless ``ctx.retry_failed``, the leak guard).
    ``step(name, argv, cwd, env=None, ro_paths=(), check=True)`` runs one install command in
    the sandbox with the network on (writable: the env folder only; ``cwd`` lies inside it)
    and raises ``EnvSetupError`` when a checked one fails.
    """
    def make(target: Path, attempt) -> dict:
        build(target, _Steps(BuildLog(ctx.sandbox, ctx.limits, target, attempt, mirror_env(ctx.config.mirrors))))
        return {"profile": profile.name, "plan": plan.model_dump(mode="json")}

    name = profile.env_name(src, plan, ctx.config)
    return ensure_cached(ctx.cache_dir, name, src, plan, make, ctx.retry_failed)


@dataclass(frozen=True)
class _Steps:
    """``step``, the install command of a ``cached_env`` build (see there)."""

    log: BuildLog

    def __call__(self, name: str, argv: list[str], cwd: Path, env: Mapping[str, str] | None = None,
                 ro_paths: tuple[Path, ...] = (), check: bool = True) -> bool:
        # the sandbox may write only its working copy: the whole env folder; the command starts in ``cwd``
        inner = ["sh", "-c", 'cd "$1" && shift && exec "$@"', "sh", str(cwd), *argv]
        result, why = self.log.run(name, inner, env, ro_paths, shown=argv)
        if why and check:
            output = result.stdout + "\n" + result.stderr
            last = runner_words(output)
            raise self.log.fail(name, f"{name} failed ({why})" + (f": {last}" if last else ""), output)
        return not why


def copy_source(src: Path, dest: Path, skip: tuple[str, ...] = (".git",)) -> Path:
    """A copy of the repo to install from (installers write into the folder they run in)."""
    shutil.copytree(src, dest, symlinks=True, ignore=shutil.ignore_patterns(*skip))
    return dest
