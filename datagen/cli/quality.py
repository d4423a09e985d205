"""``datagen quality annotate|train``: make the learned quality scorer of the corpus build."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from datagen.cli.base import DatagenTyper

app = DatagenTyper(help="Train the learned code-quality scorer: teacher ratings, then a linear model per language "
                         "(hashed byte n-grams).",
                  no_args_is_help=True)

Recipe = Annotated[str | None, typer.Option(
    "--recipe", "-r", help="Recipe with teacher:, annotate: and train: blocks (default: pipelines/quality.yaml).")]
Sets = Annotated[list[str] | None, typer.Option(
    "--set", help="Override a recipe field: --set annotate.per_lang=1000")]


def _recipe(recipe: str | None, sets: list[str] | None, **teacher: str | None):
    from datagen.builds.quality_commands import load_quality_recipe

    extra = [f"teacher.{k}={json.dumps(v)}" for k, v in teacher.items() if v is not None]
    return load_quality_recipe(recipe, (sets or []) + extra)


@app.command("annotate")
def annotate_command(
    corpus: Annotated[Path, typer.Argument(help="A built corpus (the output folder of datagen build cpt-corpus).")],
    out: Annotated[Path, typer.Option(
        "--output", "--out", "-o", help="Labels JSONL (one QualityLabel per rated file).")],
    base_url: Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible endpoint.")] = None,
    model: Annotated[str | None, typer.Option("--model", "-m", help="Teacher model name.")] = None,
    recipe: Recipe = None,
    set_: Sets = None,
    manifest: Annotated[Path | None, typer.Option(
        "--manifest", help="Where runs and teacher_calls go (default: manifest.duckdb beside --out).")] = None,
    progress: Annotated[bool | None, typer.Option(
        "--progress/--no-progress", help="Progress bar (default: when stderr is a terminal).")] = None,
) -> None:
    """Ask the teacher to rate a per-language sample of CORPUS's kept files (0-5 rubric, JSON schema).

    Answers are cached and every paid call lands in teacher_calls, so running the command again resumes.

    Examples:

      datagen quality annotate out/cpt-corpus -o out/quality/labels.jsonl --base-url http://gpu01:8000/v1 -m M

      datagen quality annotate /data/cpt -o labels.jsonl --set annotate.per_lang=2000 --set annotate.langs=[python,go]
    """
    from datagen.builds.quality_commands import annotate

    cfg = _recipe(recipe, set_, base_url=base_url, model=model)
    show = sys.stderr.isatty() if progress is None else progress
    counts = annotate(corpus, out, cfg, manifest, progress=show)
    per_lang = ", ".join(f"{k} {v}" for k, v in counts["labels"].items())
    status = ", ".join(f"{v} {k}" for k, v in counts["status"].items())
    typer.echo(f"wrote {out}: {counts['files']} files ({status}; {counts['cached']} from the cache); "
               f"rated per language: {per_lang}")


@app.command("train")
def train_command(
    labels: Annotated[Path, typer.Argument(help="Labels JSONL written by datagen quality annotate.")],
    out: Annotated[Path, typer.Option(
        "--output", "--out", "-o", help="The model file to write (e.g. quality_v1.zip).")],
    recipe: Recipe = None,
    set_: Sets = None,
) -> None:
    """Fit a linear model per language (hashed byte 4-/8-grams) on LABELS; print the held-out agreement
    with the teacher.

    Examples:

      datagen quality train out/quality/labels.jsonl -o out/quality/quality_v1.zip

      datagen build cpt-corpus --set quality_model.enabled=true --set quality_model.path=out/quality/quality_v1.zip
    """
    from datagen.builds.quality_commands import train

    meta = train(labels, out, _recipe(recipe, set_))
    typer.echo(f"wrote {out} ({meta['version']}, models: {', '.join(meta['models'])})")
    for lang, ev in meta["held_out"].items():
        agree = "n/a" if ev["agreement"] is None else f"{ev['agreement']:.3f}"
        typer.echo(f"  {lang}: trained on {ev['train']}, held out {ev['n']}: agreement {agree} "
                   f"at {meta['thresholds'][lang]}, mae {ev['mae']}")
