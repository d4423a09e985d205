"""Top-level ``datagen`` app. Each command group lives in its own module and is added here."""

from __future__ import annotations

import os
import sys

import typer

from datagen import __version__
from datagen.cli import build, job, pool, quality, report, runs, sandbox, serve, sql, teacher
from datagen.cli import env as env_cli
from datagen.errors import UserError

app = typer.Typer(
    name="datagen",
    help=(
        "Training data for coding-agent LMs: CPT corpora, verified agent tasks, RL pools.\n\n"
        "Examples:\n\n"
        "  datagen build cpt-corpus                       # bundled sample_data -> out/cpt-corpus\n\n"
        "  datagen build cpt-corpus --input ~/src/repoA ~/src/repoB.git --output /data/cpt\n\n"
        "  datagen sql out/cpt-corpus \"SELECT decision, reason, count(*) FROM files GROUP BY ALL\""
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(build.app, name="build")
app.add_typer(teacher.app, name="teacher")
app.add_typer(quality.app, name="quality")
app.add_typer(job.app, name="job")
app.add_typer(pool.app, name="pool")
app.add_typer(serve.app, name="serve")
app.command("sql")(sql.sql_command)
app.command("runs")(runs.runs_command)
app.add_typer(sandbox.app, name="sandbox")
app.add_typer(env_cli.app, name="env")
app.command("validate")(sandbox.validate_command)
app.command("report")(report.report_command)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"datagen {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    debug: bool = typer.Option(False, "--debug", help="Show full tracebacks on errors."),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version."
    ),
) -> None:
    if debug:
        os.environ["DATAGEN_DEBUG"] = "1"


def main() -> None:
    """Console-script entry: one place that turns errors into messages and exit codes.

    Click's standalone mode formats usage errors (exit 2) and ``typer.Exit`` codes itself;
    here datagen's own ``UserError`` becomes a one-line message (exit 2), and
    ``--debug`` (``DATAGEN_DEBUG=1``) shows its traceback instead. SIGINT / SIGTERM end
    with one line and exit ``128 + signal`` (130 for Ctrl-C).
    """
    try:
        app()
    except UserError as exc:
        if os.environ.get("DATAGEN_DEBUG"):
            raise
        typer.secho(f"error: {exc}", fg="red", err=True)
        sys.exit(2)
    except (KeyboardInterrupt, SystemExit) as exc:  # typer turns Ctrl-C into exit 130
        interrupt = _interrupt_in(exc)
        if interrupt is None:
            raise
        _interrupted(interrupt)


def _interrupt_in(exc: BaseException | None) -> KeyboardInterrupt | None:
    while exc is not None and not isinstance(exc, KeyboardInterrupt):
        exc = exc.__cause__ or exc.__context__
    return exc


def _interrupted(exc: KeyboardInterrupt) -> None:
    """One line, then exit at once: the run already stopped its processes and recorded its
    status, and waiting for multiprocessing's exit handlers could hang on a killed pool."""
    name = getattr(exc, "name", "SIGINT")
    note = getattr(exc, "run_note", None)
    typer.secho(f"interrupted by {name}" + (f": {note}" if note else ""), fg="red", err=True)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(128 + getattr(exc, "signum", 2))


if __name__ == "__main__":
    main()
