"""``datagen sandbox check|run`` and ``datagen validate``: the sandbox by hand."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from datagen.cli.base import DatagenTyper
from datagen.config.sandbox import BackendName

app = DatagenTyper(help="Run commands in the test sandbox; check what it enforces.",
                  no_args_is_help=True)

# Exit codes of `sandbox run` when a limit (not the command) ended the run.
LIMIT_EXIT = {"timeout": 124, "memory": 123, "cpu": 122, "processes": 121, "file_size": 120,
              "disk": 119}


@app.command("check")
def check(
    backend: BackendName = typer.Option("auto", "--backend", "-b"),
) -> None:
    """Print the active back end, whether untrusted code (validate, the task and pool
    builds) would run in bwrap or be refused here, what the back end claims to enforce,
    and prove it with probes
    (network, hidden files, writes outside, fork bomb, memory, timeout, CPU, file size,
    kill the parent, fill /tmp, fill the working copy past disk_mb); a probe the back end
    cannot run prints `skipped`.

    Exits 1 when a probe was not contained.

    Examples:

      datagen sandbox check

      datagen sandbox check --backend subprocess
    """
    from datagen.sandbox import get_sandbox
    from datagen.sandbox.isolation.cgroups import support
    from datagen.sandbox.isolation.probe import run_probes
    from datagen.sandbox.isolation.select import bwrap_works, untrusted_policy

    sandbox = get_sandbox(backend, warn=False)
    ok, reason = bwrap_works()
    typer.echo(f"back end: {sandbox.name}" + ("" if ok else f"  (bwrap unavailable: {reason})"))
    typer.echo(untrusted_policy())
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
    workdir: Path = typer.Option(..., "--workdir", "-C", help="Working copy (read-write), like git -C."),
    env: str = typer.Option(
        "none", "--env", metavar="auto|none|PATH",
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
    output: Path = typer.Option(None, "--output", "-o", help="Record the run in OUT/manifest.duckdb."),
) -> None:
    """Run one command in the sandbox exactly as validation does (same recipe, limits and,
    with --env auto, the same cached environment); print its output and exit with its exit
    code. Like validation it refuses to run without bubblewrap unless the back end is named
    (--backend subprocess: resource limits only, unsafe). A command that cannot be found
    exits 127 with a message naming it. When a limit stopped it, print why and exit with
    124 timeout, 123 memory, 122 cpu, 121 processes, 120 file size, 119 disk.

    Examples:

      datagen sandbox run --workdir ./repo --env auto -- python -m pytest -q

      datagen sandbox run -C ./repo --timeout 10 --memory-mb 512 -- sh -c 'make test'
    """
    from datagen.builds.commands import SandboxRun, sandbox_run

    limits = {k: v for k, v in {"timeout_s": timeout, "memory_mb": memory_mb,
                                "processes": processes}.items() if v is not None}
    opts = SandboxRun(workdir=workdir, env=env, limits=limits, backend=backend, ro=tuple(ro or ()),
                      recipe=recipe, overrides=tuple(set_ or ()), output=output)
    result, with_env = sandbox_run(list(ctx.args), opts, notice=lambda text: typer.echo(text, err=True))
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    if result.limit_hit:
        typer.secho(f"sandbox: stopped by the {result.limit_hit} limit ({result.limit_evidence}) "
                    f"after {result.duration_s:.2f}s", fg="red", err=True)
        raise typer.Exit(LIMIT_EXIT[result.limit_hit])
    if not with_env and result.stderr.startswith("sandbox: command not found"):
        typer.echo("sandbox: for the repo's python and test tools add --env auto", err=True)
    raise typer.Exit(result.exit_code)


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
    Without a working bubblewrap it refuses to run unless the recipe names the back end
    (--set sandbox.backend=subprocess: resource limits only, unsafe).

    Exits 1 when any task is not valid.

    Examples:

      datagen validate out/tasks/tasks.jsonl

      datagen validate out/tasks --set validation.reruns=5 --set sandbox.backend=bwrap -o out/val
    """
    from datagen.builds.commands import validate_tasks

    rows = validate_tasks(tasks, recipe, set_, output, only, retry_envs)
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
    if valid != len(rows):
        raise typer.Exit(1)
