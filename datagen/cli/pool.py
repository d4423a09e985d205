"""``datagen pool take|status|return``: hand RL instructions out once, see what is left."""

from __future__ import annotations

import json
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from datagen.cli.base import DatagenTyper

app = DatagenTyper(help="Hand out a pool's RL instructions once each: take, status, return; export Harbor tasks.",
                  no_args_is_help=True)

PoolDir = Annotated[Path, typer.Argument(help="Pool folder (the output of `datagen build rl-pool`).")]
Consumer = Annotated[str, typer.Option("--consumer", "-c", help="Who takes them, e.g. a trainer run name.")]


class Format(str, Enum):
    table = "table"
    json = "json"


@app.command("take")
def take_command(
    pool: PoolDir,
    consumer: Consumer,
    n: Annotated[int, typer.Option("--n", "-n", help="How many instructions to take.")] = 1,
    run: Annotated[str | None, typer.Option("--run", help="Run id recorded with each take.")] = None,
    out: Annotated[Path | None, typer.Option(
        "--output", "--out", "-o", help="Write the JSONL here instead of stdout.")] = None,
    split: Annotated[str, typer.Option("--split", help="train or validation.")] = "train",
) -> None:
    """Take N instructions never handed out before, as JSONL pool rows (recorded first).

    Safe with many takers at once in separate processes. When the pool runs dry, what is
    left is handed out (possibly nothing), stderr says so, and the exit code is still 0.

    Examples:

      datagen pool take /data/pool --n 256 --consumer run-17 > batch.jsonl

      datagen pool take /data/pool --n 64 --consumer eval-3 --split validation --out eval.jsonl
    """
    from datagen.pool.ledger import take

    rows = take(pool, n, consumer, run=run, split=split)
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    if out is None:
        sys.stdout.write(data)
        sys.stdout.flush()
    else:
        out.write_text(data, encoding="utf-8")
    if len(rows) < n:
        typer.echo(f"pool dry: handed out {len(rows)} of {n} requested {split} instructions to {consumer}", err=True)


@app.command("status")
def status_command(
    pool: PoolDir,
    format: Annotated[Format, typer.Option("--format", "-f", help="table or json.")] = Format.table,
    mirror: Annotated[bool, typer.Option("--mirror/--no-mirror",
                                         help="Also copy the journal into manifest.duckdb (table ledger).")] = True,
) -> None:
    """Show how many instructions are taken and left, by split and difficulty band.

    Examples:

      datagen pool status /data/pool

      datagen pool status /data/pool --format json
    """
    from datagen.errors import UserError
    from datagen.pool.ledger import mirror_ledger, status

    st = status(pool)
    if mirror:
        try:
            mirror_ledger(pool)
        except UserError as exc:
            typer.echo(f"note: {exc}", err=True)
    if format is Format.json:
        typer.echo(json.dumps({"groups": st.groups, "consumers": st.consumers, "taken": st.taken, "left": st.left}))
        return
    typer.echo(f"{'split':<12} {'band':<16} {'total':>8} {'taken':>8} {'left':>8}")
    for g in st.groups:
        typer.echo(f"{g['split']:<12} {g['difficulty_band']:<16} {g['total']:>8} {g['taken']:>8} {g['left']:>8}")
    typer.echo(f"{'all':<12} {'':<16} {st.taken + st.left:>8} {st.taken:>8} {st.left:>8}")
    for name, count in st.consumers.items():
        typer.echo(f"held by {name}: {count}")


@app.command("return")
def return_command(
    pool: PoolDir,
    consumer: Consumer,
    run: Annotated[str | None, typer.Option("--run", help="Only what this run of the consumer took.")] = None,
) -> None:
    """Put a consumer's instructions back into the pool (only when asked: e.g. a failed run).

    Examples:

      datagen pool return /data/pool --consumer run-17

      datagen pool return /data/pool --consumer run-17 --run attempt-2
    """
    from datagen.pool.ledger import give_back

    ids = give_back(pool, consumer, run=run)
    typer.echo(f"returned {len(ids)} instructions of {consumer} to the pool", err=True)


@app.command("export-harbor")
def export_harbor_command(
    pool: PoolDir,
    out: Annotated[Path | None, typer.Option("--output", "--out", "-o", help="Default: POOL/exports/harbor.")] = None,
    base_image: Annotated[str | None, typer.Option(
        "--base-image", help="FROM of every task's Dockerfile instead of its runner's toolchain image; pin it by "
        "digest (image@sha256:...).")] = None,
    image_prefix: Annotated[str | None, typer.Option(
        "--image-prefix", help="Name each task's image REGISTRY/PATH/<repo>:env-<key> in [environment].docker_image "
        "(for trainers that pull instead of building; `datagen pool build-images` builds them).")] = None,
) -> None:
    """Write one Harbor task folder per instruction (instruction.md, task.toml,
    environment/Dockerfile, tests/test.sh, solution/solve.sh), for SkyRL, prime-rl and rLLM.

    Examples:

      datagen pool export-harbor /data/pool

      datagen pool export-harbor /data/pool --out /data/harbor-tasks

      datagen pool export-harbor /data/pool --base-image python:3.11-slim@sha256:<digest>

      datagen pool export-harbor /data/pool --image-prefix ghcr.io/org/tasks
    """
    from datagen.pool.exports import write_harbor

    if base_image and "@sha256:" not in base_image:
        typer.echo(f"note: --base-image {base_image} names no digest: Harbor's unpinned-image rule reports "
                   "every FROM (pin it: image@sha256:...)", err=True)
    written, skipped = write_harbor(pool, out, base_image=base_image, image_prefix=image_prefix)
    for name, reason in skipped.items():
        typer.echo(f"skipped {name}: {reason}", err=True)
    typer.echo(f"wrote {len(written)} Harbor task folders ({len(skipped)} skipped)", err=True)


@app.command("build-images")
def build_images_command(
    folder: Annotated[Path, typer.Argument(help="A pool folder (its exports/harbor) or a folder of Harbor tasks.",
                                           exists=True, file_okay=False)],
    tool: Annotated[str, typer.Option("--tool", help="The container tool: docker, podman (or a path).")] = "docker",
    push: Annotated[bool, typer.Option("--push", help="Push each image, then pin the tasks to its digest.")] = False,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the command lines, run nothing.")] = False,
) -> None:
    """Build the image each Harbor task names in [environment].docker_image (written by
    `export-harbor --image-prefix`), once per image, with your container tool; with --push,
    push it and pin the tasks to the pushed digest.

    Examples:

      datagen pool build-images /data/pool --dry-run

      datagen pool build-images /data/pool --tool podman --push
    """
    from datagen.errors import UserError
    from datagen.pool.exports import HARBOR_DIR
    from datagen.pool.images import build_images

    root = folder / HARBOR_DIR if (folder / HARBOR_DIR).is_dir() else folder
    results = build_images(root, tool=tool, push=push, dry_run=dry_run, echo=typer.echo)
    if not results:
        raise UserError(f"no task under {root} names an image to build (export with --image-prefix)")
    failed = [r for r in results if r["status"] == "failed"]
    for r in failed:
        typer.echo(f"failed {r['image']}: {r['command']} exited {r['exit_code']}\n{r['output']}", err=True)
    typer.echo(f"{len(results)} images, {len(failed)} failed", err=True)
    if failed:
        raise typer.Exit(1)
