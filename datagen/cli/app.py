"""Top-level ``datagen`` app. Each command group lives in its own module and is added here."""

from __future__ import annotations

import os
import sys

import typer

from datagen import __version__
from datagen.cli import build, job, pool, quality, report, runs, sandbox, serve, sql, teacher
from datagen.cli import env as env_cli
from datagen.cli.base import DatagenTyper
from datagen.cli.errors import error_line

app = DatagenTyper(
    name="datagen",
    help=(
        "Training data for coding-agent LMs: CPT corpora, verified agent tasks, RL pools.\n\n"
        "Examples:\n\n"
        "  datagen build cpt-corpus                       # bundled sample_data -> out/cpt-corpus\n\n"
        "  datagen build cpt-corpus --input ~/src/repoA ~/src/repoB.git --output /data/cpt\n\n"
        "  datagen sql out/cpt-corpus \"SELECT decision, reason, count(*) FROM files GROUP BY ALL\""
    ),
    no_args_is_help=True,
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
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bars and no summaries: "
                               "warnings and errors only."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Also the log lines of every stage "
                                 "(datatrove's INFO lines), on stderr."),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """The switches of every command (before the command: ``datagen -q build ...``)."""
    if debug:
        os.environ["DATAGEN_DEBUG"] = "1"
    if quiet and verbose:
        raise typer.BadParameter("--quiet and --verbose exclude each other")
    if quiet:
        os.environ["DATAGEN_QUIET"] = "1"
        os.environ["DATAGEN_NO_PROGRESS"] = "1"
    if verbose:
        os.environ["DATAGEN_VERBOSE"] = "1"


def main() -> None:
    """Console-script entry: one place that turns errors into messages and exit codes.

    Click's standalone mode formats usage errors (exit 2) and ``typer.Exit`` codes itself;
    the commands' own errors are formatted in ``datagen.cli.base.DatagenGroup`` (one line,
    exit 2); what escapes it (an error in the root callback) gets the same line here, and
    ``--debug`` (``DATAGEN_DEBUG=1``) shows its traceback instead. SIGINT / SIGTERM end
    with one line and exit ``128 + signal`` (130 for Ctrl-C).
    """
    try:
        app()
    except Exception as exc:  # noqa: BLE001 - only what error_line knows is caught
        line = error_line(exc)
        if line is None or os.environ.get("DATAGEN_DEBUG"):
            raise
        typer.secho(f"error: {line}", fg="red", err=True)
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
