"""The commands that are not builds but record a run like one: ``teacher run``,
``validate`` and ``sandbox run``. Each is a ``BuildRun.command_run`` (a ``runs`` row from
running to finished/failed, no work folder); the CLI only parses flags and prints.

``validate`` and ``sandbox run`` execute code datagen did not write, so they take their
back end from ``untrusted_sandbox``: bubblewrap, or a one-line refusal unless the recipe
or flag names ``subprocess`` explicitly (unsafe: resource limits only).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from datagen.builds.base import accounted_teacher
from datagen.config.base import load_recipe, recipe_hash
from datagen.config.sandbox import SandboxLimits, ValidateRecipe
from datagen.config.teacher import TeacherConfig
from datagen.errors import UserError
from datagen.manifest import Manifest
from datagen.records import RunRow, TeacherCall, ValidationRow
from datagen.records.tasks import RunResult
from datagen.runtime.run import BuildRun
from datagen.sandbox.envs.cache import EnvSetupError
from datagen.sandbox.envs.python.manager import EnvManager, PythonEnv, env_at
from datagen.sandbox.isolation.base import Sandbox
from datagen.sandbox.isolation.guard import check_workdir, list_workdir
from datagen.sandbox.isolation.probe import python_for_sandbox
from datagen.sandbox.isolation.select import untrusted_sandbox


def teacher_run(config: TeacherConfig, prompts: Path, out: Path, manifest: Path | None = None,
                progress: bool = False) -> dict[str, int]:
    """Answer every line of ``prompts`` into ``out`` through the cached teacher; calls and
    the run go to ``manifest`` (default: beside ``out``). Returns counts by status."""
    from datagen.teachers.batchio import run_file

    if not prompts.is_file():
        raise UserError(f"no such file: {prompts}")
    if out.resolve() == prompts.resolve():
        raise UserError(f"--out {out} is the input file: write the results elsewhere")
    digest = hashlib.sha256(prompts.read_bytes()).hexdigest()
    run_id = hashlib.sha256(f"{recipe_hash(config)}:{digest}".encode()).hexdigest()[:16]
    run = BuildRun.command_run(manifest or out.parent, "teacher run", config, run_id=run_id,
                               tables=[RunRow, TeacherCall])
    with run:  # interrupted or broken: the run row says so, paid calls are kept
        # the builds' accounting: paid calls journaled as they arrive, in teacher_calls (each
        # once, a killed earlier run's too) whenever the run's row is written
        teacher = accounted_teacher(run, config)
        return run_file(teacher, prompts, out, progress=progress)


def validate_tasks(tasks: Path, recipe: str | None, overrides: list[str] | None, output: Path | None,
                   only: list[str] | None = None, retry_envs: bool = False) -> list[ValidationRow]:
    """Replay stored tasks in fresh sandboxes; with ``output``, the run and its
    ``validations`` rows go to ``output/manifest.duckdb``."""
    from datagen.sandbox.harness.task_store import read_tasks
    from datagen.sandbox.harness.validate import Validator

    cfg, _ = load_recipe(ValidateRecipe, recipe, "validate", overrides or [])
    items = read_tasks(tasks)
    if not items:  # an empty tasks.jsonl: "0/0 valid" would read as a pass
        raise UserError(f"no task in {tasks}: nothing to validate (is it the tasks.jsonl of a tasks build "
                        "that emitted tasks?)")
    if only:
        items = [t for t in items if t[0].instance_id in set(only)]
        if not items:
            raise UserError(f"no task with id {', '.join(only)}")
    validator = Validator(cfg, untrusted_sandbox(cfg.sandbox.backend), retry_failed_envs=retry_envs)
    with BuildRun.command_run(output, "validate", cfg) as run:
        rows = validator.validate_all(items, run.run_id)
        if output is not None:
            with Manifest(output) as m:
                m.insert(ValidationRow, rows)
    return rows


@dataclass
class SandboxRun:
    """What ``sandbox run`` needs besides the command (flags over the recipe)."""

    workdir: Path
    env: str = "none"  # auto | none | PATH of an env
    limits: dict | None = None  # timeout_s, memory_mb, processes given as flags
    backend: str | None = None
    ro: tuple[Path, ...] = ()
    recipe: str | None = None
    overrides: tuple[str, ...] = ()
    output: Path | None = None  # record the run in output/manifest.duckdb


def sandbox_run(cmd: list[str], opts: SandboxRun, notice=None) -> tuple[RunResult, bool]:
    """Run ``cmd`` in the sandbox exactly as validation does. Returns the result and
    whether a Python env was used. ``notice(text)`` hears about a first env build."""
    if not cmd:
        raise UserError("give the command after --, e.g. datagen sandbox run -C DIR -- ls")
    if not opts.workdir.is_dir():
        raise UserError(f"--workdir {opts.workdir} is not a folder")
    workdir = opts.workdir.resolve()
    check_workdir(workdir)
    cfg, _ = load_recipe(ValidateRecipe, opts.recipe, "validate", list(opts.overrides))
    base = {**cfg.sandbox.limits.model_dump(), "timeout_s": cfg.validation.test_timeout_s}
    try:
        limits = SandboxLimits(**{**base, **(opts.limits or {})})
    except ValueError as exc:
        raise UserError(f"bad limit: {exc.errors()[0]['msg']}") from None  # type: ignore[attr-defined]
    sandbox = untrusted_sandbox(opts.backend or cfg.sandbox.backend)
    with BuildRun.command_run(opts.output, "sandbox run", cfg):
        python_env = _python_env(opts.env, workdir, cfg, sandbox, notice)
        ro_paths = [*opts.ro, *map(Path, cfg.sandbox.ro_paths), *python_for_sandbox()[1]]
        run_env = None
        if python_env is not None:
            ro_paths += python_env.ro_paths
            run_env = python_env.run_env(workdir)
        return sandbox.run(cmd, workdir, limits, env=run_env, ro_paths=ro_paths), python_env is not None


def _python_env(choice: str, workdir: Path, cfg: ValidateRecipe, sandbox: Sandbox, notice) -> PythonEnv | None:
    """The PythonEnv that ``--env`` names (None for 'none'), built on first use for 'auto'."""
    if choice == "none":
        return None
    if choice != "auto":
        if not Path(choice).is_dir():
            raise UserError(f"--env must be auto, none or an env folder; {choice} is not a folder")
        return env_at(Path(choice), cfg.env.inherit_site_packages)
    list_workdir(workdir, cfg.sandbox.limits.max_files)  # its files are copied for pip
    manager = EnvManager(cfg.env, sandbox, cfg.sandbox.limits)
    target = manager.cache_dir / manager.key(workdir)
    if notice and not (target / "ok.json").exists() and not (target / "failed.json").exists():
        notice(f"sandbox: building the environment for {workdir} in {target} ...")
    try:
        return manager.ensure(workdir)
    except EnvSetupError as exc:
        hint = "" if "failed.json" in exc.detail else f" (log tail in {target / 'failed.json'})"
        raise UserError(f"environment setup failed: {exc.detail}{hint}; rebuild it with "
                        "`datagen validate --retry-envs` or by deleting failed.json") from None


__all__ = ["teacher_run", "validate_tasks", "sandbox_run", "SandboxRun"]
