"""``datagen runs OUT``: the runs recorded in a manifest, or in each stage of a ``build all``.

A build folder holds ``manifest.duckdb``; a ``datagen build all`` folder holds one build
folder per stage (``cpt-corpus/``, ``tasks/``, ``rl-pool/``), each with its own manifest.
Either way every ``runs`` row comes back with the folder it came from, oldest first.
"""

from __future__ import annotations

from pathlib import Path

from datagen.errors import UserError
from datagen.manifest.db import MANIFEST_NAME, manifest_path, open_readonly

RUNS_COLUMNS = ["stage", "run_id", "command", "status", "started_at", "finished_at", "seconds", "recipe_hash"]
BUILD_ORDER = ["cpt-corpus", "tasks", "rl-pool"]  # the stages of `build all`
_SELECT = ("SELECT run_id, command, status, started_at, finished_at, "
           "round(epoch(finished_at - started_at), 1) AS seconds, recipe_hash FROM runs "
           "ORDER BY started_at, run_id")


def stage_manifests(out: str | Path) -> list[tuple[str, Path]]:
    """(stage, folder) for ``out`` itself when it holds a manifest, else for each sub-folder
    that does (the stages of ``build all``, in build order, then others by name)."""
    out = Path(out)
    if manifest_path(out).is_file():
        return [(out.name if out.suffix != ".duckdb" else out.parent.name, out)]
    found = sorted((p.parent for p in out.glob(f"*/{MANIFEST_NAME}")), key=_stage_order) if out.is_dir() else []
    if not found:
        raise UserError(f"no manifest at {manifest_path(out)} nor in its sub-folders (run a build first)")
    return [(p.name, p) for p in found]


def _stage_order(folder: Path) -> tuple[int, str]:
    return (BUILD_ORDER.index(folder.name) if folder.name in BUILD_ORDER else len(BUILD_ORDER), folder.name)


def list_runs(out: str | Path) -> list[tuple]:
    """Every ``runs`` row under ``out`` as ``RUNS_COLUMNS`` (see the module docstring)."""
    rows: list[tuple] = []
    for stage, folder in stage_manifests(out):
        con = open_readonly(folder)
        try:
            has_runs = con.execute("SELECT count(*) FROM information_schema.tables "
                                   "WHERE table_schema = 'main' AND table_name = 'runs'").fetchone()[0]
            rows += [(stage, *r) for r in con.execute(_SELECT).fetchall()] if has_runs else []
        finally:
            con.close()
    return sorted(rows, key=lambda r: (r[4], r[1]))


__all__ = ["list_runs", "stage_manifests", "RUNS_COLUMNS"]
