"""``datagen env plan|build|dockerfile REPO``: a repo's environment plan by hand.

The plan is the one ``datagen build tasks`` would use (the tasks recipe's ``env`` section,
``--set`` overrides included): a user's plan file (``env.plan`` / ``env.overrides``), else
the rules'. Save ``plan``'s output, edit it, and pass it back with ``--set env.plan=FILE``.
"""

from __future__ import annotations

from pathlib import Path

import typer

from datagen.cli.base import DatagenTyper

app = DatagenTyper(help="Environment plans: print, build and test, or render one as a Dockerfile.",
                  no_args_is_help=True)

_SET = typer.Option(None, "--set", help="Override: --set env.plan=plan.json --set 'env.pythons=[python3.12]'")
_RECIPE = typer.Option(None, "--recipe", "-r", help="a tasks recipe (default: the bundled tasks.yaml)")


def _manager(recipe: Path | None, set_: list[str] | None, sandbox_needed: bool = True):
    from datagen.builds.tasks import load_tasks_recipe
    from datagen.sandbox.env import EnvManager
    from datagen.sandbox.select import untrusted_sandbox

    cfg = load_tasks_recipe(recipe, list(set_ or ()), None, None, None)
    sandbox = untrusted_sandbox(cfg.sandbox.backend) if sandbox_needed else None
    return cfg, EnvManager(cfg.env, sandbox, cfg.sandbox.limits)


def _repo(path: Path) -> Path:
    from datagen.errors import UserError

    if not path.is_dir():
        raise UserError(f"{path}: not a folder")
    return path.resolve()


@app.command("plan")
def plan_command(repo: Path = typer.Argument(..., help="the repo's working copy"), recipe: Path = _RECIPE,
                 set_: list[str] = _SET) -> None:
    """Print the plan (JSON) the tasks build would use for REPO.

    Examples:

      datagen env plan ~/src/attrs > plan.json

      datagen env plan ~/src/attrs --set 'env.pythons=[python3.12,python3.11]'
    """
    src = _repo(repo)
    _, manager = _manager(recipe, set_, sandbox_needed=False)
    typer.echo(manager.plan(src, src.name).model_dump_json(indent=2))


@app.command("build")
def build_command(repo: Path = typer.Argument(..., help="the repo's working copy"), recipe: Path = _RECIPE,
                  set_: list[str] = _SET) -> None:
    """Build REPO's env from its plan (in the sandbox, network on), run its suite once and
    print what happened: each step, then the test counts. Exits 1 when the env fails or no
    test passes.

    Examples:

      datagen env build ~/src/attrs

      datagen env build ~/src/attrs --set env.plan=plan.json
    """
    from datagen.builds.tasks_sandbox import run_limits
    from datagen.sandbox.env import EnvSetupError
    from datagen.synth.baseline import SuiteRunner

    src = _repo(repo)
    cfg, manager = _manager(recipe, set_)
    plan = manager.plan(src, src.name)
    try:
        env = manager.ensure(src, retry_failed=True, plan=plan, name=src.name)
    except EnvSetupError as exc:
        _print_attempt(manager, src, plan)
        typer.secho(f"env failed at {exc.step or 'a step'}: {exc}", fg="red")
        typer.echo(exc.log_tail[-2000:])
        raise typer.Exit(1) from None
    _print_attempt(manager, src, plan)
    scratch = manager.cache_dir / "scratch"
    scratch.mkdir(parents=True, exist_ok=True)
    run = SuiteRunner("pytest", src, manager.sandbox, run_limits(cfg), env, scratch).run()
    counts: dict[str, int] = {}
    for status in run.results.values():
        counts[status] = counts.get(status, 0) + 1
    typer.echo(f"env {env.path}\ntests: {dict(sorted(counts.items())) or 'none'} ({run.run.duration_s:.1f} s)")
    if not counts.get("pass"):
        typer.echo((run.report_error or "") + "\n" + (run.run.stdout + run.run.stderr)[-1500:])
        raise typer.Exit(1)


def _print_attempt(manager, src: Path, plan) -> None:
    attempt = manager.attempt_of(src, plan) or {}
    for step in attempt.get("steps", []):
        mark = "ok " if step["ok"] else "FAIL"
        typer.echo(f"  {mark} {step['seconds']:>6.1f}s  {step['name']}")
    for note in (attempt.get("plan") or {}).get("notes", []):
        typer.echo(f"  note: {note}")


@app.command("dockerfile")
def dockerfile_command(repo: Path = typer.Argument(..., help="the repo's working copy"), recipe: Path = _RECIPE,
                       set_: list[str] = _SET) -> None:
    """Print REPO's plan as a Dockerfile (build context: the repo), for container harnesses.

    Examples:

      datagen env dockerfile ~/src/attrs > Dockerfile && docker build -t attrs-env ~/src/attrs
    """
    from datagen.sandbox.profiles.python_docker import render_dockerfile

    src = _repo(repo)
    _, manager = _manager(recipe, set_, sandbox_needed=False)
    typer.echo(render_dockerfile(manager.plan(src, src.name), src.name), nl=False)
