"""The one error formatter of the CLI: an exception the user can act on -> one line.

``error_line(exc)`` returns the line (without the ``error:`` prefix) or ``None`` for an
exception that is a bug (it keeps its traceback). What it knows:

- ``UserError`` (bad recipe, flag or input; ``datagen.errors``): its message as is.
- ``OSError`` with a path (an output folder that is a file, a read-only or missing path,
  ``--dest`` on an existing file, ...): the path, what is wrong with it, what to do.
- ``duckdb.IOException`` (a manifest that cannot be opened): its first line.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from datagen.errors import UserError


def _blocking_file(path: Path) -> Path | None:
    """The first part of ``path`` that exists and is not a folder (why a mkdir failed)."""
    for part in [*reversed(path.parents), path]:
        if part.exists() and not part.is_dir():
            return part
    return None


def _missing_folder(path: Path) -> Path | None:
    """The first folder above ``path`` that does not exist."""
    for part in reversed(path.parents):
        if not part.exists():
            return part
    return None


def os_error_line(exc: OSError) -> str:
    """One line for an ``OSError``: the path, what is wrong, what to do."""
    if exc.filename is None:
        what = exc.strerror or str(exc)
        return f"{what} (run with --debug for the traceback)"
    path = Path(os.fsdecode(exc.filename))
    code = exc.errno
    if code in (errno.ENOTDIR, errno.EEXIST):
        blocker = _blocking_file(path)
        if blocker is not None:
            where = "" if blocker == path else f" ({path} would be inside it)"
            return (f"{blocker} is a file, not a folder{where}; give a folder path "
                    "(or move the file away)")
        if code == errno.EEXIST:
            return f"{path} already exists; remove it or give another path"
    if code == errno.EISDIR:
        return f"{path} is a folder, not a file; give a file path"
    if code == errno.ENOENT:
        missing = _missing_folder(path)
        if missing is not None and missing != path:
            return f"{path}: folder {missing} does not exist; check the path"
        return f"{path} does not exist; check the path"
    if code in (errno.EACCES, errno.EPERM):
        return f"permission denied: {path}; give a path you may read and write, or fix its permissions"
    if code == errno.EROFS:
        return f"{path} is on a read-only file system; give a path on a writable disk"
    if code in (errno.ENOSPC, errno.EDQUOT):
        return f"no space left writing {path}; free some space or give a path on another disk"
    if code == errno.ENAMETOOLONG:
        return f"file name too long: {path}"
    if code == errno.ELOOP:
        return f"{path}: too many levels of symbolic links; check the links on this path"
    if code == errno.ENOTEMPTY:
        return f"{path} is a folder that is not empty; remove it or give another path"
    return f"{path}: {exc.strerror or exc} (run with --debug for the traceback)"


def error_line(exc: BaseException) -> str | None:
    """The one line for an exception the user can act on, else ``None`` (a bug)."""
    if isinstance(exc, UserError):
        return str(exc)
    if isinstance(exc, BrokenPipeError):  # `datagen ... | head`: typer ends it quietly
        return None
    if isinstance(exc, OSError):
        return os_error_line(exc)
    try:
        import duckdb
    except ImportError:  # pragma: no cover - duckdb is a core dependency
        return None
    if isinstance(exc, duckdb.IOException):
        return str(exc).splitlines()[0]
    return None


__all__ = ["error_line", "os_error_line"]
