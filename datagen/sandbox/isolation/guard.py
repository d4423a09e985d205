"""Which folders may be a sandbox working copy.

A working copy is bound read-write into the sandbox and, with bwrap as root, every file in
it is handed to the sandbox uid for the run. A slip of ``--workdir`` (``/usr/lib``,
``~/.ssh``, a parent of the current folder) must therefore be refused before anything is
touched, not discovered after a recursive chown.
"""

from __future__ import annotations

import os
from pathlib import Path

from datagen.errors import UserError
from datagen.resources import env_cache_dir

# A working copy may not be one of these or lie inside one.
SYSTEM_TREES = ("/usr", "/etc", "/bin", "/sbin", "/boot", "/proc", "/sys", "/dev", "/run", "/var")
# /var/tmp is for scratch files: its subfolders are fine, the folder itself is not.
SCRATCH_IN_SYSTEM = ("/var/tmp",)
# Shared roots that may hold working copies but are never one themselves.
EXACT = ("/", "/home", "/root", "/tmp", "/var/tmp", "/opt", "/srv", "/mnt", "/media")


def _inside(path: Path, root: Path) -> bool:
    """``path`` is ``root`` or below it."""
    return path == root or root in path.parents


def _homes() -> list[Path]:
    """The caller's home and every folder directly under /home (other users' homes)."""
    homes = {Path.home().resolve(), Path("/root")}
    try:
        homes |= {p.resolve() for p in Path("/home").iterdir() if p.is_dir()}
    except OSError:
        pass
    return sorted(homes)


def _env_cache_root() -> Path:
    return env_cache_dir().resolve()


def workdir_problem(workdir: Path) -> str | None:
    """Why ``workdir`` (already resolved) may not be a working copy, or None when it may."""
    if str(workdir) in EXACT:
        return "it is a shared system folder"
    top = Path(*workdir.parts[:2])
    if top.name.startswith("lib"):
        return f"it is inside the system folder {top}"
    for tree in map(Path, SYSTEM_TREES):
        scratch = any(Path(s) in workdir.parents for s in SCRATCH_IN_SYSTEM)
        if _inside(workdir, tree) and not scratch:
            return f"it is inside the system folder {tree}"
    cache = _env_cache_root()
    for home in _homes():
        if workdir == home:
            return "it is a home folder"
        if home in workdir.parents:
            first = workdir.relative_to(home).parts[0]
            if first.startswith(".") and cache not in workdir.parents:
                return f"it is inside the home dot-folder {home / first}"
        elif workdir in home.parents:
            return f"it contains the home folder {home}"
    cwd = Path.cwd().resolve()
    if workdir in cwd.parents:
        return f"it contains the current folder {cwd}"
    return None


def check_workdir(workdir: Path) -> None:
    """Refuse a working copy whose hand-over to the sandbox would touch the system."""
    why = workdir_problem(Path(os.path.abspath(workdir)).resolve())
    if why is not None:
        raise UserError(f"refusing to use {workdir} as a sandbox working copy: {why}")


def list_workdir(workdir: Path, max_files: int) -> list[str]:
    """Every path in the working copy (itself first); refuses more than ``max_files``."""
    paths = [str(workdir)]
    for dirpath, dirnames, filenames in os.walk(workdir):
        paths.extend(os.path.join(dirpath, name) for name in dirnames + filenames)
        if len(paths) > max_files + 1:
            raise UserError(
                f"refusing to use {workdir} as a sandbox working copy: more than {max_files} "
                "files (sandbox.limits.max_files); is --workdir the folder you meant?")
    return paths
