"""``datagen env plan|build|dockerfile REPO``: a repo's environment plan by hand, for a repo
of any profile (pytest, node, go, cargo, maven, ctest, rspec, phpunit, ...).

The profile is the one ``datagen build tasks`` detects (``--runner`` names another), and the
plan the one it would use (``Profile.configured_plan`` of the tasks recipe's ``env`` section,
``--set`` overrides included): for Python, a user's plan file (``env.plan`` /
``env.overrides``) else the rules'; save ``plan``'s output, edit it, and pass it back with
``--set env.plan=FILE``. Other profiles' plans are their rules'.

``datagen env check TASKS`` scans every task's env for its answer (a fixed file, or a block
of the fix's lines): no env may hold the repo's own code (docs/environments.md).
"""

from __future__ import annotations

from pathlib import Path

import typer

from datagen.cli.base import DatagenTyper

app = DatagenTyper(help="Environment plans: print, build and test, or render one as a Dockerfile.",
                  no_args_is_help=True)

_SET = typer.Option(None, "--set", help="Override: --set env.plan=plan.json --set 'env.pythons=[python3.12]'")
_RECIPE = typer.Option(None, "--recipe", "-r", help="a tasks recipe (default: the bundled tasks.yaml)")
_RUNNER = typer.Option(None, "--runner", help="the repo's profile (default: the one the tasks build detects)")


def _recipe(recipe: Path | None, set_: list[str] | None, sandbox_needed: bool = True):
    """The tasks recipe (``--set`` applied) and, when asked, its sandbox."""
    from datagen.builds.tasks.build import load_tasks_recipe
    from datagen.sandbox.isolation.select import untrusted_sandbox

    cfg = load_tasks_recipe(recipe, list(set_ or ()), None, None, None)
    return cfg, untrusted_sandbox(cfg.sandbox.backend) if sandbox_needed else None


def _repo(path: Path) -> Path:
    from datagen.errors import UserError

    if not path.is_dir():
        raise UserError(f"{path}: not a folder")
    return path.resolve()


def _profile(src: Path, runner: str | None):
    """The named profile, else the first that claims the repo (the tasks build's detection
    over the working copy's files, ``.git`` left out); UserError when none does."""
    from datagen.errors import UserError
    from datagen.sandbox.harness.profiles.registry import detect_profile, get_profile

    if runner:
        return get_profile(runner)
    paths = sorted(p.relative_to(src).as_posix() for p in src.rglob("*")
                   if p.is_file() and ".git" not in p.relative_to(src).parts)
    profile = detect_profile(src, paths)
    if profile is None:
        raise UserError(f"{src}: no profile runs this repo's tests (name one with --runner)")
    return profile


def _plan(profile, cfg, src: Path):
    """The plan the tasks build uses for the repo (``BaselineStage``'s choice)."""
    return profile.configured_plan(src, cfg.env, src.name)


@app.command("plan")
def plan_command(repo: Path = typer.Argument(..., help="the repo's working copy"), recipe: Path = _RECIPE,
                 set_: list[str] = _SET, runner: str = _RUNNER) -> None:
    """Print the plan (JSON) the tasks build would use for REPO.

    Examples:

      datagen env plan ~/src/attrs > plan.json

      datagen env plan ~/src/attrs --set 'env.pythons=[python3.12,python3.11]'

      datagen env plan sample_data/kvstore-go
    """
    src = _repo(repo)
    profile = _profile(src, runner)
    cfg, _ = _recipe(recipe, set_, sandbox_needed=False)
    typer.echo(_plan(profile, cfg, src).model_dump_json(indent=2))


@app.command("build")
def build_command(repo: Path = typer.Argument(..., help="the repo's working copy"), recipe: Path = _RECIPE,
                  set_: list[str] = _SET, runner: str = _RUNNER) -> None:
    """Build REPO's env from its plan (in the sandbox, network on), run its suite once and
    print what happened: each step, then the test counts. Exits 1 when the env fails or no
    test passes.

    Examples:

      datagen env build ~/src/attrs

      datagen env build ~/src/attrs --set env.plan=plan.json

      datagen env build sample_data/ringbuf-rs --set env.cache_dir=/tmp/envs
    """
    from datagen.builds.tasks.sandboxed import run_limits
    from datagen.sandbox.envs.cache import EnvSetupError
    from datagen.sandbox.harness.runners import ensure_env, env_context
    from datagen.synth.baseline import SuiteRunner

    src = _repo(repo)
    profile = _profile(src, runner)
    if missing := profile.missing_tool():
        typer.secho(f"{profile.name}: {missing}", fg="red")
        raise typer.Exit(1)
    cfg, sandbox = _recipe(recipe, set_)
    plan = _plan(profile, cfg, src)
    cache_dir = env_context(cfg.env, sandbox, cfg.sandbox.limits).cache_dir
    try:
        env = ensure_env(profile, src, cfg.env, sandbox, cfg.sandbox.limits, retry_failed=True, plan=plan)
    except EnvSetupError as exc:
        _print_attempt(cache_dir / profile.env_name(src, plan, cfg.env), plan)
        typer.secho(f"env failed at {exc.step or 'a step'}: {exc}", fg="red")
        typer.echo(exc.log_tail[-2000:])
        raise typer.Exit(1) from None
    _print_attempt(cache_dir / profile.env_name(src, plan, cfg.env), plan)
    scratch = cache_dir / "scratch"
    scratch.mkdir(parents=True, exist_ok=True)
    run = SuiteRunner(profile.name, src, sandbox, run_limits(cfg), env, scratch).run()
    counts: dict[str, int] = {}
    for status in run.results.values():
        counts[status] = counts.get(status, 0) + 1
    typer.echo(f"env {env.path}\ntests: {dict(sorted(counts.items())) or 'none'} ({run.run.duration_s:.1f} s)")
    if not counts.get("pass"):
        typer.echo((run.report_error or "") + "\n" + (run.run.stdout + run.run.stderr)[-1500:])
        raise typer.Exit(1)


def _print_attempt(folder: Path, plan) -> None:
    """Each step of the env's build record (``folder/attempt.json``) with its outcome and
    time, and the plan's notes; the plan's steps where no build was recorded."""
    from datagen.sandbox.envs.cache import read_attempt

    attempt = read_attempt(folder)
    if attempt is None:
        for step in plan.install:
            typer.echo(f"  step  {step.name}: {step.origin or '-'}")
        notes = plan.notes
    else:
        for step in attempt.get("steps", []):
            mark = "ok " if step["ok"] else "FAIL"
            typer.echo(f"  {mark} {step['seconds']:>6.1f}s  {step['name']}")
        notes = (attempt.get("plan") or {}).get("notes", [])
    for note in notes:
        typer.echo(f"  note: {note}")


@app.command("dockerfile")
def dockerfile_command(repo: Path = typer.Argument(..., help="the repo's working copy"), recipe: Path = _RECIPE,
                       set_: list[str] = _SET, runner: str = _RUNNER) -> None:
    """Print REPO's plan as a Dockerfile (build context: the repo), for container harnesses:
    the ecosystem's official image, the plan's variables, and the setup the task's
    ``setup_script`` runs (Python's: pip steps one by one).

    Examples:

      datagen env dockerfile ~/src/attrs > Dockerfile && docker build -t attrs-env ~/src/attrs

      datagen env dockerfile sample_data/kvstore-go > Dockerfile
    """
    src = _repo(repo)
    profile = _profile(src, runner)
    cfg, _ = _recipe(recipe, set_, sandbox_needed=False)
    typer.echo(profile.dockerfile(_plan(profile, cfg, src), src.name), nl=False)


@app.command("check")
def check_command(tasks: Path = typer.Argument(..., help="a tasks output folder, or a tasks.jsonl"),
                  recipe: Path = _RECIPE, set_: list[str] = _SET) -> None:
    """Check that no task's environment holds its answer: for every task, the env its
    grading runs use is scanned for a file equal to one of its fixed files (the checkout
    with the gold patch applied) and for text holding a block of the fix's added lines.
    Give the build's ``env.cache_dir`` (``--set``) to check the envs the build used; envs
    missing there are built. Exits 1 when any task's env equals a fixed file.

    Examples:

      datagen env check out/tasks --set env.cache_dir=out/envs-cache
    """
    import tempfile

    from datagen.sandbox.harness.env_check import check_task_envs
    from datagen.sandbox.harness.task_store import read_tasks

    path = tasks / "tasks.jsonl" if (tasks / "tasks.jsonl").is_file() else tasks
    cfg, sandbox = _recipe(recipe, set_)
    with tempfile.TemporaryDirectory(prefix="datagen-env-check-") as scratch:
        rows = check_task_envs(read_tasks(path), cfg.env, sandbox, cfg.sandbox.limits, Path(scratch))
    for row in rows:
        state = "SKIP" if row.skipped else "LEAK" if row.equal else "block" if row.blocks else "ok"
        typer.echo(f"{state:5}  {row.task_id}  {row.runner}  fixed: {', '.join(row.fixed_files) or '-'}"
                   + (f"  ({row.skipped})" if row.skipped else ""))
        for hit in [*row.equal, *row.blocks][:5]:
            typer.echo(f"         {hit}")
    checked = [r for r in rows if not r.skipped]
    equal, blocks = sum(bool(r.equal) for r in checked), sum(bool(r.blocks) for r in checked)
    typer.echo(f"tasks: {len(rows)}, checked: {len(checked)}, env equals a fixed file: {equal}, "
               f"env holds an added block of the fix: {blocks}")
    if equal:
        raise typer.Exit(1)
