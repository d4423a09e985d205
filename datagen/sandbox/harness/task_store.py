"""Stored tasks: read them (JSONL of ``TaskRecord``) and lay out their source.

``repo_path`` is either a git repository (working tree or bare; the task's
``base_commit`` is exported from it) or a plain snapshot folder copied as it is.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

from pydantic import ValidationError

from datagen.errors import SkipItem, UserError
from datagen.records.tasks import TaskRecord
from datagen.runtime.archive import extract_tar


def read_tasks(path: Path, record: type[TaskRecord] = TaskRecord) -> list[tuple[TaskRecord, Path]]:
    """Tasks from a JSONL file or every ``*.jsonl`` in a folder, each with its base folder
    (relative ``repo_path`` values are resolved against it). ``record`` may be a subclass
    that accepts more keys (the pool reads ``PoolTaskInput``)."""
    path = Path(path)
    if path.is_dir():
        files = sorted(path.rglob("*.jsonl"))
        if not files:
            raise UserError(f"no *.jsonl task files under {path}")
    elif path.is_file():
        files = [path]
    else:
        raise UserError(f"no such task file or folder: {path}")
    tasks: list[tuple[TaskRecord, Path]] = []
    for file in files:
        for n, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                tasks.append((record.model_validate(json.loads(line)), file.parent))
            except (json.JSONDecodeError, ValidationError) as exc:
                first = str(exc).splitlines()[0]
                raise UserError(f"{file}:{n}: not a task record: {first}") from None
    return tasks


def source_dir(task: TaskRecord, base: Path) -> Path:
    src = Path(task.repo_path)
    return src if src.is_absolute() else (base / src).resolve()


def _is_git(path: Path) -> bool:
    return (path / ".git").exists() or ((path / "HEAD").is_file() and (path / "objects").is_dir())


def materialize(task: TaskRecord, base: Path, dest: Path) -> None:
    """Write the task's source at ``base_commit`` into the empty folder ``dest``."""
    src = source_dir(task, base)
    if not src.is_dir():
        raise SkipItem("repo_missing", str(src))
    if _is_git(src) and task.base_commit:
        proc = subprocess.run(["git", "-C", str(src), "archive", "--format=tar", task.base_commit],
                              capture_output=True)
        if proc.returncode != 0:
            raise SkipItem("bad_base_commit", proc.stderr.decode(errors="replace").strip()[:300])
        with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as tar:
            extract_tar(tar, dest)
    else:
        shutil.copytree(src, dest, symlinks=True, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns(".git"))


def apply_patch(workdir: Path, diff: str, what: str) -> None:
    """Apply a unified git diff to a working copy (which need not be a git repo)."""
    if not diff.strip():
        return
    # The ceiling stops git from treating an enclosing repository as the patch's root.
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(Path(workdir).resolve().parent)}
    proc = subprocess.run(["git", "apply", "--whitespace=nowarn", "-"], cwd=workdir,
                          input=diff.encode(), capture_output=True, env=env)
    if proc.returncode != 0:
        raise SkipItem(f"{what}_does_not_apply", proc.stderr.decode(errors="replace").strip()[:300])
