"""``datagen teacher ping|run``: check an endpoint; run an ad-hoc batch through the teacher."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from datagen.cli.base import DatagenTyper

app = DatagenTyper(help="Call a teacher model: check an endpoint, run JSONL batches.",
                  no_args_is_help=True)

Recipe = Annotated[str | None, typer.Option(
    "--recipe", "-r", help="Recipe with a teacher: block (default: pipelines/teacher.yaml).")]
Sets = Annotated[list[str] | None, typer.Option(
    "--set", help="Override a recipe field: --set teacher.max_concurrency=128")]
BaseUrl = Annotated[str | None, typer.Option(
    "--base-url", help="OpenAI-compatible endpoint, e.g. http://host:8000/v1.")]
Model = Annotated[str | None, typer.Option("--model", "-m", help="Model name (or local path).")]


def _config(recipe: str | None, sets: list[str] | None, **flags: str | int | None):
    """The teacher config: recipe, then --set, then the explicit flags."""
    from datagen.config.teacher import load_teacher_block

    extra = [f"teacher.{k}={json.dumps(v)}" for k, v in flags.items() if v is not None]
    return load_teacher_block(recipe, (sets or []) + extra)


@app.command("ping")
def ping_command(
    base_url: BaseUrl = None,
    model: Model = None,
    recipe: Recipe = None,
    set_: Sets = None,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds to wait.")] = 30.0,
) -> None:
    """Check that an endpoint serves the model and answers (exit 0), or say why not (exit 1).

    Examples:

      datagen teacher ping --base-url http://127.0.0.1:8000/v1 --model Qwen/Qwen2.5-Coder-7B-Instruct

      OPENAI_API_KEY=... datagen teacher ping --base-url https://api.openai.com/v1 --model gpt-4.1-mini
    """
    from datagen.teachers.openai_backend import ping

    config, _ = _config(recipe, set_, base_url=base_url, model=model, timeout_s=timeout)
    try:
        typer.echo(asyncio.run(ping(config)))
    except RuntimeError as exc:
        typer.secho(f"error: {exc}", fg="red", err=True)
        raise typer.Exit(1) from None


@app.command("run")
def run_command(
    prompts: Annotated[Path, typer.Argument(
        help="JSONL: one request per line (native or Batch API).")],
    out: Annotated[Path, typer.Option("--output", "--out", "-o", help="JSONL results, one per input line.")],
    base_url: BaseUrl = None,
    model: Model = None,
    backend: Annotated[str | None, typer.Option(
        "--backend", help="openai, vllm or transformers (default: the recipe's).")] = None,
    recipe: Recipe = None,
    set_: Sets = None,
    manifest: Annotated[Path | None, typer.Option(
        "--manifest", help="Where teacher_calls go (default: manifest.duckdb beside --out).")
    ] = None,
    progress: Annotated[bool | None, typer.Option(
        "--progress/--no-progress", help="Progress bar (default: when stderr is a terminal).")
    ] = None,
) -> None:
    """Answer every line of PROMPTS.jsonl into --out, in input order, through the cache.

    Native lines: {"id": "q1", "messages": [...], "max_tokens": 256, "n": 4, "seed": 1, "json_schema": {...}}.

    OpenAI Batch API lines ({"custom_id", "method", "url", "body"}) get Batch API output lines back.

    A request that finally fails gets its error inline; the command then exits 1 (0 when every line was answered).

    Identical requests (same messages, sampling, seed, n, json_schema) are answered once and share one answer.

    Except: a line with no seed and temperature > 0 is keyed by its id/custom_id too, so ids keep samples independent.

    Calls go to the manifest's teacher_calls as they finish, so a killed run's spending is kept.

    To resume a killed run, run the same command again: what was paid comes from the cache.

    Examples:

      datagen teacher run prompts.jsonl --out out/results.jsonl --base-url http://127.0.0.1:8000/v1 -m M

      datagen teacher run batch.jsonl -o out/answers.jsonl --set teacher.max_concurrency=128

      datagen sql out "SELECT status, count(*), sum(completion_tokens) FROM teacher_calls GROUP BY ALL"
    """
    from datagen.builds.commands import teacher_run

    config, _ = _config(recipe, set_, base_url=base_url, model=model, backend=backend)
    show = sys.stderr.isatty() if progress is None else progress
    counts = teacher_run(config, prompts, out, manifest, progress=show)
    if not counts["lines"]:
        typer.echo(f"{prompts} has no request lines: wrote an empty {out}")
        return
    failed = counts.get("error", 0) + counts.get("invalid", 0)
    summary = ", ".join(f"{v} {k}" for k, v in counts.items() if v)
    typer.echo(f"wrote {out} ({summary})")
    if failed:
        typer.secho(f"{failed} of {counts['lines']} lines failed (see their 'error')",
                    fg="red", err=True)
        raise typer.Exit(1)
