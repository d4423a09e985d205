"""``datagen sandbox check|run`` and ``datagen validate``: the sandbox by hand."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from datagen.config.sandbox import BackendName
from datagen.errors import UserError

if TYPE_CHECKING:
    from datagen.config.sandbox import ValidateRecipe
    from datagen.sandbox.base import Sandbox
    from datagen.sandbox.env import PythonEnv

app = typer.Typer(help="Run commands in the test sandbox; check what it enforces.",
                  no_args_is_help=True)

# Exit codes of `sandbox run` when a limit (not the command) ended the run.
LIMIT_EXIT = {"timeout": 124, "memory": 123, "cpu": 122, "processes": 121, "file_size": 120,
              "disk": 119}


@app.command("check")
def check(
    backend: BackendName = typer.Option("auto", "--backend", "-b"),
) -> None:
    """Print the active back end, what it claims to enforce, and prove it with probes
    (network, hidden files, writes outside, fork bomb, memory, timeout, CPU, file size,
    kill the parent, fill /tmp); a probe the back end cannot run prints `skipped`.

    Exits 1 when a probe was not contained.

    Examples:

      datagen sandbox check

      datagen sandbox check --backend subprocess
    """
    from datagen.sandbox import get_sandbox
    from datagen.sandbox.cgroups import support
    from datagen.sandbox.probe import run_probes
    from datagen.sandbox.select import bwrap_works

    sandbox = get_sandbox(backend, warn=False)
    ok, reason = bwrap_works()
    typer.echo(f"back end: {sandbox.name}" + ("" if ok else f"  (bwrap unavailable: {reason})"))
    for prop, how in sandbox.claims().items():
        typer.echo(f"  {prop:<12} {how}")
    cg = support()
    typer.echo("  cgroups      " + ", ".join(f"{k}: {'yes' if v else 'no'}" for k, v in cg.items()))
    typer.echo("probes:")
    failed = 0
    for probe in run_probes(sandbox, isolating=sandbox.name == "bwrap"):
        mark = {True: "contained", False: "NOT CONTAINED", None: "skipped"}[probe.contained]
        failed += probe.contained is False
        typer.echo(f"  {probe.name:<22} {mark:<14} {probe.detail}")
    if failed:
        raise typer.Exit(1)


@app.command("run", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def run(
    ctx: typer.Context,
    workdir: Path = typer.Option(..., "--workdir", "-w", help="Working copy (read-write)."),
    env: str = typer.Option(
        "none", "--env", "-e", metavar="auto|none|PATH",
        help="auto: build or reuse the repo's cached environment exactly as validation does "
        "(its bin first on PATH, so python is the env's; PYTHONPATH the working copy); "
        "PATH: an existing env (cache entry or venv); none: system tools only."),
    timeout: float = typer.Option(None, "--timeout", help="Wall-clock seconds (default 300)."),
    memory_mb: int = typer.Option(None, "--memory-mb", help="Memory of the whole tree."),
    processes: int = typer.Option(None, "--processes", help="Processes at once."),
    backend: BackendName | None = typer.Option(None, "--backend", "-b",
                                        help="Default: the recipe's (auto)."),
    ro: list[Path] = typer.Option(None, "--ro", help="Extra host folder to show read-only."),
    recipe: str = typer.Option(None, "--recipe", "-r", help="Recipe (default pipelines/validate.yaml)."),
    set_: list[str] = typer.Option(None, "--set", help="Override: --set env.cache_dir=/data/envs"),
) -> None:
    """Run one command in the sandbox exactly as validation does (same recipe, limits and,
    with --env auto, the same cached environment); print its output and exit with its exit
    code. A command that cannot be found exits 127 with a message naming it. When a limit
    stopped it, print why and exit with 124 timeout, 123 memory, 122 cpu, 121 processes,
    120 file size, 119 disk.

    Examples:

      datagen sandbox run --workdir ./repo --env auto -- python -m pytest -q

      datagen sandbox run -w ./repo --timeout 10 --memory-mb 512 -- sh -c 'make test'
    """
    from datagen.config.base import load_recipe
    from datagen.config.sandbox import SandboxLimits, ValidateRecipe
    from datagen.sandbox import get_sandbox
    from datagen.sandbox.guard import check_workdir
    from datagen.sandbox.probe import python_for_sandbox

    cmd = list(ctx.args)
    if not cmd:
        raise UserError("give the command after --, e.g. datagen sandbox run -w DIR -- ls")
    if not workdir.is_dir():
        raise UserError(f"--workdir {workdir} is not a folder")
    workdir = workdir.resolve()
    check_workdir(workdir)
    cfg, _ = load_recipe(ValidateRecipe, recipe, "validate", set_ or [])
    update = {k: v for k, v in {"timeout_s": timeout, "memory_mb": memory_mb,
                                "processes": processes}.items() if v is not None}
    base = {**cfg.sandbox.limits.model_dump(), "timeout_s": cfg.validation.test_timeout_s}
    try:
        limits = SandboxLimits(**{**base, **update})
    except ValueError as exc:
        raise UserError(f"bad limit: {exc.errors()[0]['msg']}") from None  # type: ignore[attr-defined]
    sandbox = get_sandbox(backend or cfg.sandbox.backend)
    python_env = _python_env(env, workdir, cfg, sandbox)
    ro_paths = [*(ro or []), *map(Path, cfg.sandbox.ro_paths), *python_for_sandbox()[1]]
    run_env = None
    if python_env is not None:
        ro_paths += python_env.ro_paths
        run_env = python_env.run_env(workdir)
    result = sandbox.run(cmd, workdir, limits, env=run_env, ro_paths=ro_paths)
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    if result.limit_hit:
        typer.secho(f"sandbox: stopped by the {result.limit_hit} limit ({result.limit_evidence}) "
                    f"after {result.duration_s:.2f}s", fg="red", err=True)
        raise typer.Exit(LIMIT_EXIT[result.limit_hit])
    if python_env is None and result.stderr.startswith("sandbox: command not found"):
        typer.echo("sandbox: for the repo's python and test tools add --env auto", err=True)
    raise typer.Exit(result.exit_code)


def _python_env(choice: str, workdir: Path, cfg: ValidateRecipe, sandbox: Sandbox) -> PythonEnv | None:
    """The PythonEnv that ``--env`` names (None for 'none'), built on first use for 'auto'."""
    from datagen.sandbox.env import EnvManager, EnvSetupError, env_at
    from datagen.sandbox.guard import list_workdir

    if choice == "none":
        return None
    if choice != "auto":
        if not Path(choice).is_dir():
            raise UserError(f"--env must be auto, none or an env folder; {choice} is not a folder")
        return env_at(Path(choice), cfg.env.inherit_site_packages)
    list_workdir(workdir, cfg.sandbox.limits.max_files)  # its files are copied for pip
    manager = EnvManager(cfg.env, sandbox, cfg.sandbox.limits)
    target = manager.cache_dir / manager.key(workdir)
    if not (target / "ok.json").exists() and not (target / "failed.json").exists():
        typer.echo(f"sandbox: building the environment for {workdir} in {target} ...", err=True)
    try:
        return manager.ensure(workdir)
    except EnvSetupError as exc:
        hint = "" if "failed.json" in exc.detail else f" (log tail in {target / 'failed.json'})"
        raise UserError(f"environment setup failed: {exc.detail}{hint}; rebuild it with "
                        "`datagen validate --retry-envs` or by deleting failed.json") from None


def validate_command(
    tasks: Path = typer.Argument(..., metavar="TASK_OR_DIR", help="tasks.jsonl or a folder of them."),
    recipe: str = typer.Option(None, "--recipe", "-r", help="Recipe (default pipelines/validate.yaml)."),
    set_: list[str] = typer.Option(None, "--set", help="Override: --set validation.reruns=5"),
    output: Path = typer.Option(None, "--output", "-o", help="Write validations to OUT/manifest.duckdb."),
    only: list[str] = typer.Option(None, "--id", help="Only this instance_id (repeatable)."),
    retry_envs: bool = typer.Option(False, "--retry-envs", help="Rebuild envs whose setup failed."),
) -> None:
    """Re-run stored tasks from scratch in a fresh sandbox and report which still prove
    themselves (stored FAIL_TO_PASS flip, PASS_TO_PASS keep passing, N reruns per side).

    Exits 1 when any task is not valid.

    Examples:

      datagen validate out/tasks/tasks.jsonl

      datagen validate out/tasks --set validation.reruns=5 --set sandbox.backend=bwrap -o out/val
    """
    import uuid

    from datagen.config.base import load_recipe, recipe_hash
    from datagen.config.sandbox import ValidateRecipe
    from datagen.sandbox import get_sandbox
    from datagen.sandbox.tasks import read_tasks
    from datagen.sandbox.validate import Validator

    cfg, _ = load_recipe(ValidateRecipe, recipe, "validate", set_ or [])
    items = read_tasks(tasks)
    if only:
        items = [t for t in items if t[0].instance_id in set(only)]
        if not items:
            raise UserError(f"no task with id {', '.join(only)}")
    run_id = f"validate-{recipe_hash(cfg)}-{uuid.uuid4().hex[:8]}"
    validator = Validator(cfg, get_sandbox(cfg.sandbox.backend), retry_failed_envs=retry_envs)
    rows = validator.validate_all(items, run_id)
    for row in rows:
        extra = f" ({row.reason})" if row.reason else ""
        typer.echo(f"{row.status:<8} {row.instance_id}{extra}  f2p={len(row.fail_to_pass)} "
                   f"p2p={len(row.pass_to_pass)} flaky={len(row.flaky)} {row.duration_s:.1f}s")
        for name in row.missing_f2p:
            typer.echo(f"         no longer fails-then-passes: {name}")
        for name in row.missing_p2p:
            typer.echo(f"         no longer passes: {name}")
        for note in row.notes:
            typer.echo(f"         note: {note}")
    valid = sum(r.status == "valid" for r in rows)
    typer.echo(f"{valid}/{len(rows)} tasks still prove themselves")
    if output is not None:
        from datagen.manifest import Manifest
        from datagen.records import ValidationRow

        with Manifest(output) as m:
            m.insert(ValidationRow, rows)
    if valid != len(rows):
        raise typer.Exit(1)
