"""Write a file so that its path holds the old bytes or the new ones, never a part.

Every file datagen writes whole (a shard, a JSONL, a record, a cache entry) goes through
here: the bytes go to a temp file in the same folder (same file system, so the rename is
atomic), which is flushed to disk (``fsync``) and then renamed onto the path. A failure
removes the temp file; a killed process leaves at most ``<name>.<random>.tmp`` beside it,
which the run's cleanup removes with every other ``*.tmp`` (``faults.remove_partial``).

- ``atomic_path(path)``: a context manager yielding the temp path, for writers that take a
  path (``pyarrow.parquet.write_table``, DuckDB ``COPY``): renamed onto ``path`` on leaving.
- ``atomic_open(path, mode)``: the same around an open file (``"w"`` text, ``"wb"`` bytes).
- ``atomic_write(path, data)``: one call for text or bytes already in memory.
- ``publish(tmp, path)``: fsync and rename a temp file some other code wrote (a datatrove
  writer's part file); the same last step as the others.

The temp name holds a random part, so two processes writing the same path (two builds of
a shared cache) never write into one temp file; the last rename wins, whole.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from datagen.runtime.faults import fault_point


def temp_path(path: Path) -> Path:
    """A fresh temp name beside ``path`` (``<name>.<random>.tmp``)."""
    return path.with_name(f"{path.name}.{uuid.uuid4().hex[:8]}.tmp")


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def publish(tmp: str | os.PathLike, path: str | os.PathLike) -> None:
    """Flush ``tmp`` to disk and rename it onto ``path`` (same folder)."""
    _fsync(Path(tmp))
    fault_point(f"write:{Path(path).name}")  # a test kills here: temp whole, path not yet replaced
    os.replace(tmp, path)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, mkdir: bool = False) -> Iterator[Path]:
    """Yield a temp path beside ``path``; when the block ends without error it is
    fsync-ed and renamed onto ``path``, else removed. ``mkdir`` makes the folder first."""
    path = Path(path)
    if mkdir:
        path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path(path)
    try:
        yield tmp
        publish(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "w", encoding: str | None = "utf-8",
                mkdir: bool = False, **kwargs: Any) -> Iterator[IO[Any]]:
    """``open(temp, mode)`` as a context manager; the file replaces ``path`` when the block
    ends without error (see ``atomic_path``)."""
    if mode not in ("w", "wb", "x", "xb"):
        raise ValueError(f"atomic_open writes a new file (mode w or wb), not {mode!r}")
    with atomic_path(path, mkdir) as tmp, open(tmp, mode, encoding=None if "b" in mode else encoding,
                                               **kwargs) as fh:
        yield fh


def atomic_write(path: str | os.PathLike, data: str | bytes, encoding: str = "utf-8",
                 mkdir: bool = False) -> None:
    """Write ``data`` (text or bytes) to ``path`` atomically."""
    with atomic_open(path, "wb" if isinstance(data, bytes) else "w", encoding=encoding, mkdir=mkdir) as fh:
        fh.write(data)


__all__ = ["atomic_path", "atomic_open", "atomic_write", "publish", "temp_path"]
