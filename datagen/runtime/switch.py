"""Put a build's new outputs in place so that the folder holds the old set or the new one.

A build writes its outputs into a staging folder inside its work folder (same file
system, same layout as the output folder). ``switch_outputs`` then:

1. notes a fresh token in the manifest (table ``output_switch``, committed) and writes
   the journal ``<out>/.work/switch.json`` (token, the new files, the old ones; atomic);
2. hard-links every output file the new set will replace into ``backup`` (no space used)
   and moves the new files into place (``rename``: each path always exists);
3. calls ``commit(mark)``: the build's manifest transaction, which lists the new files and
   runs ``mark(manifest)`` before its ``COMMIT`` (dropping ``output_switch``), so the
   token's absence says, atomically with the manifest rows, that the new set is the one;
4. only then deletes the old outputs the new set does not have, the backups and the
   journal.

If a move or the commit fails (a full disk), the old files are put back and the previous
good output stays whole. If the process is killed (SIGKILL, a power cut) while the files
move, the journal is left: the next build on the folder (``BuildRun``, with the output
lock held, before anything else) calls ``recover``, which puts the old files back when the
manifest still holds the token, or finishes the switch when it does not. Either way the
folder then holds one set, the one its manifest lists, never a mix.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path

import duckdb

from datagen.manifest import Manifest
from datagen.manifest.db import connect, manifest_path
from datagen.runtime.atomic import atomic_write
from datagen.runtime.faults import fault_point

MARK_TABLE = "output_switch"
Mark = Callable[[Manifest], None]


def journal_path(out: Path) -> Path:
    return Path(out) / ".work" / "switch.json"


def _entries(root: Path) -> tuple[list[str], list[str]]:
    """The files (and links) under ``root`` and its empty folders, relative, sorted."""
    if not root.is_dir():
        return [], []
    files, empty = [], []
    for p in root.rglob("*"):
        if p.is_file() or p.is_symlink():
            files.append(str(p.relative_to(root)))
        elif p.is_dir() and not any(p.iterdir()):
            empty.append(str(p.relative_to(root)))
    return sorted(files), sorted(empty)


def owned_files(out: Path, patterns: Iterable[str]) -> set[str]:
    """The files under ``out`` that a build owns (globs relative to ``out``; ``**`` allowed)."""
    return {str(p.relative_to(out)) for pat in patterns for p in out.glob(pat) if p.is_file()}


def owned_dirs(out: Path, patterns: Iterable[str]) -> set[str]:
    """The folders under ``out`` that the owned globs match (an old ``envs/<id>.git/refs``)."""
    return {str(p.relative_to(out)) for pat in patterns for p in out.glob(pat)
            if p.is_dir() and not p.is_symlink()}


def switch_outputs(stage: Path, out: Path, backup: Path, owned: Iterable[str],
                   commit: Callable[[Mark], None]) -> None:
    """Move ``stage``'s files into ``out``, commit, then drop the ``owned`` old files
    that were not replaced (see the module docstring)."""
    recover(out)  # a journal left by a killed switch (a BuildRun has already done this)
    new, empty = _entries(stage)
    patterns = list(owned)
    old, old_dirs = owned_files(out, patterns), owned_dirs(out, patterns)
    shutil.rmtree(backup, ignore_errors=True)
    token = uuid.uuid4().hex
    with Manifest(out, tables=[]) as m:
        m.execute(f"CREATE OR REPLACE TABLE {MARK_TABLE} AS SELECT ?::VARCHAR AS token", [token])
    plan = {"token": token, "stage": str(stage), "backup": str(backup), "new": new, "empty": empty,
            "old": sorted(old), "old_dirs": sorted(old_dirs)}
    journal = journal_path(out)
    atomic_write(journal, json.dumps(plan), mkdir=True)
    try:
        for rel in new:
            target = out / rel
            if target.is_file():
                (backup / rel).parent.mkdir(parents=True, exist_ok=True)
                os.link(target, backup / rel)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(stage / rel, target)
            fault_point("switch-move")
        for rel in empty:
            (out / rel).mkdir(parents=True, exist_ok=True)
        commit(_mark)
    except BaseException:
        if _committed(out, token):  # the manifest lists the new files: keep them
            _finish(out, plan)
        else:
            _roll_back(out, plan)
        raise
    fault_point("switch-commit")
    _finish(out, plan)


def _mark(m: Manifest) -> None:
    """Inside the build's manifest transaction: the new outputs are the listed ones."""
    m.execute(f"DROP TABLE IF EXISTS {MARK_TABLE}")


def recover(out: Path) -> str | None:
    """Complete or undo the switch a killed build left in ``out`` (see the module
    docstring); returns what was done ('rolled back', 'finished') or None."""
    journal = journal_path(out)
    if not journal.is_file():
        return None
    try:
        plan = json.loads(journal.read_text(encoding="utf-8"))
    except ValueError:  # never half-written (atomic), so this is not a journal of ours
        journal.unlink()
        return None
    if _committed(out, plan["token"]):
        _finish(out, plan)
        return "finished"
    _roll_back(out, plan)
    return "rolled back"


def _committed(out: Path, token: str) -> bool:
    """Whether the manifest transaction of the switch ``token`` committed (its mark gone)."""
    path = manifest_path(out)
    if not path.exists():
        return False
    con = connect(path, read_only=True)
    try:
        rows = con.execute(f"SELECT token FROM {MARK_TABLE}").fetchall()
    except duckdb.CatalogException:
        return True
    finally:
        con.close()
    return (token,) not in rows


def _finish(out: Path, plan: dict) -> None:
    """Every new file in place (those a kill left in the stage moved now), then the old
    files the new set lacks, emptied folders, the backups and the journal removed."""
    stage = Path(plan["stage"])
    for rel in plan["new"]:
        if (stage / rel).is_file() or (stage / rel).is_symlink():
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            os.replace(stage / rel, out / rel)
    for rel in plan["empty"]:
        (out / rel).mkdir(parents=True, exist_ok=True)
    new = set(plan["new"])
    gone = sorted(set(plan["old"]) - new)
    for rel in gone:
        (out / rel).unlink(missing_ok=True)
    keep = _folders(plan["new"]) | _folders(plan["empty"]) | set(plan["empty"])
    _prune(out, (set(plan["old_dirs"]) | _folders(gone)) - keep)
    _done(out, plan)


def _roll_back(out: Path, plan: dict) -> None:
    """The old files back where new ones were moved (from their hard-linked backups), the
    new files that had no old one removed, the folders the switch made and left empty too."""
    stage, backup = Path(plan["stage"]), Path(plan["backup"])
    for rel in reversed(plan["new"]):
        if (backup / rel).is_file():
            os.replace(backup / rel, out / rel)
        elif not ((stage / rel).is_file() or (stage / rel).is_symlink()):  # moved in: it is new
            (out / rel).unlink(missing_ok=True)
    made = (_folders(plan["new"]) | set(plan["empty"]) | _folders(plan["empty"])) - set(plan["old_dirs"])
    _prune(out, made - _folders(plan["old"]))
    _done(out, plan)
    # only now, the journal gone: a mark without a journal is inert, a journal without its
    # mark would read as committed
    with Manifest(out, tables=[]) as m:
        m.execute(f"DROP TABLE IF EXISTS {MARK_TABLE}")


def _done(out: Path, plan: dict) -> None:
    shutil.rmtree(plan["backup"], ignore_errors=True)
    journal_path(out).unlink(missing_ok=True)


def _folders(rels: Iterable[str]) -> set[str]:
    """Every folder above the relative paths ``rels`` (not the root)."""
    found: set[str] = set()
    for rel in rels:
        parent = Path(rel).parent
        while str(parent) != ".":
            found.add(str(parent))
            parent = parent.parent
    return found


def _prune(out: Path, folders: Iterable[str]) -> None:
    """Remove those of ``folders`` that are empty, deepest first."""
    for rel in sorted(folders, key=lambda r: (-len(Path(r).parts), r)):
        try:
            (out / rel).rmdir()
        except OSError:
            pass


__all__ = ["switch_outputs", "owned_files", "owned_dirs", "recover", "journal_path", "MARK_TABLE"]
