"""Put a build's new outputs in place without the manifest ever naming a missing file.

A build writes its outputs into a staging folder inside its work folder (same file
system, same layout as the output folder). ``switch_outputs`` then:

1. hard-links every output file the new set will replace into ``backup`` (no space used);
2. moves the new files into place (``rename``: each path always exists);
3. calls ``commit()`` (the manifest transaction that lists the new files);
4. only then deletes the old outputs the new set does not have, and the backups.

Until ``commit`` returns, the manifest lists the old files, which all still exist; after,
it lists the new ones, which all exist. If a move or the commit fails (a full disk), the
old files are put back, so the previous good output stays whole. A kill in between leaves
the run 'running', which the next build treats as stale and rebuilds.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path


def _files(root: Path) -> list[str]:
    if not root.is_dir():
        return []
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() or p.is_symlink())


def owned_files(out: Path, patterns: Iterable[str]) -> set[str]:
    """The files under ``out`` that a build owns (globs relative to ``out``; ``**`` allowed)."""
    return {str(p.relative_to(out)) for pat in patterns for p in out.glob(pat) if p.is_file()}


def switch_outputs(stage: Path, out: Path, backup: Path, owned: Iterable[str],
                   commit: Callable[[], None]) -> None:
    """Move ``stage``'s files into ``out``, commit, then drop the ``owned`` old files
    that were not replaced (see the module docstring)."""
    new = _files(stage)
    old = owned_files(out, owned)
    shutil.rmtree(backup, ignore_errors=True)  # a killed run's backups: their files are in place
    moved: list[str] = []
    try:
        for rel in new:
            target = out / rel
            if target.is_file():
                (backup / rel).parent.mkdir(parents=True, exist_ok=True)
                os.link(target, backup / rel)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(stage / rel, target)
            moved.append(rel)
        commit()
    except BaseException:
        _roll_back(out, backup, moved)
        raise
    for rel in sorted(old - set(new)):
        (out / rel).unlink(missing_ok=True)
    for folder in sorted({(out / rel).parent for rel in old - set(new)}, reverse=True):
        _rmdir_empty(folder, out)
    shutil.rmtree(backup, ignore_errors=True)


def _roll_back(out: Path, backup: Path, moved: list[str]) -> None:
    for rel in reversed(moved):
        if (backup / rel).exists():
            os.replace(backup / rel, out / rel)
        else:
            (out / rel).unlink(missing_ok=True)


def _rmdir_empty(folder: Path, stop: Path) -> None:
    while folder != stop and stop in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


__all__ = ["switch_outputs", "owned_files"]
