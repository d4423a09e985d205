"""A slim site-packages for the sandboxed pytest runs of the small repos the tests write.

Those repos' envs inherit their test tools (``env.inherit_site_packages``) instead of
installing them from PyPI. Inheriting this venv's whole site-packages makes every sandboxed
``pytest`` autoload every plugin of the test venv (xdist, hypothesis, benchmark, anyio, ...):
about 2.2 s a run where pytest alone starts in 0.5 s. ``slim_site()`` is a folder holding
copies (not links: the sandbox mounts only that folder, read-only) of just what those runs
use: pytest with the packages it requires, and coverage where this venv has it, each with its
``.dist-info`` so entry points and versions resolve, and compiled bytecode (the sandbox cannot
write any).

Made once per venv and package set under ``~/.cache/datagen-tests/`` (``DATAGEN_TEST_CACHE``
moves it), safely beside other pytest-xdist workers and sessions: a file lock, a build into
a temporary folder, then a rename. Product code keeps its autoloading: real repos need their
plugins; only the tests' own repos are run on the slim site.
"""

from __future__ import annotations

import compileall
import fcntl
import functools
import hashlib
import importlib.metadata as metadata
import os
import shutil
import sys
import tempfile
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

# What every sandboxed run of the tests' repos needs: pytest (with pluggy, iniconfig, packaging).
BASE = ("pytest",)
# Taken where this venv has them, so an env on the slim site finds the same test tools as one
# on the whole site (EnvManager skips installing env.test_requirements it can import):
# coverage, the tasks build's second test requirement (the pytest profile's per-test map).
WHERE_PRESENT = ("coverage",)


def _closure(names: tuple[str, ...]) -> list[metadata.Distribution]:
    """The distributions ``names`` name and those they require (extras left out), sorted."""
    seen: dict[str, metadata.Distribution] = {}
    todo = [canonicalize_name(n) for n in names]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        dist = metadata.distribution(name)
        seen[name] = dist
        for line in dist.requires or []:
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(canonicalize_name(req.name))
    return [seen[n] for n in sorted(seen)]


def _copy_dist(dist: metadata.Distribution, out: Path) -> None:
    """The files ``dist`` installed into site-packages (its RECORD), top-level packages as
    whole folders (their ``__pycache__`` too); scripts outside site-packages are left out."""
    site = Path(dist.locate_file(""))
    if dist.files is None:
        raise RuntimeError(f"{dist.metadata['Name']} has no RECORD: its files cannot be copied")
    done: set[str] = set()
    for rel in dist.files:
        parts = Path(rel).parts
        if not parts or parts[0] == ".." or Path(rel).is_absolute():
            continue
        top = site / parts[0]
        if top.is_dir() and parts[0] != "__pycache__":
            if parts[0] not in done:
                shutil.copytree(top, out / parts[0], dirs_exist_ok=True)
                done.add(parts[0])
        elif (site / rel).is_file():  # a top-level module, or its bytecode in __pycache__
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(site / rel, out / rel)


def _installed(name: str) -> bool:
    try:
        metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return False
    return True


def _root() -> Path:
    return Path(os.environ.get("DATAGEN_TEST_CACHE") or Path.home() / ".cache" / "datagen-tests")


@functools.cache
def slim_site(*extra: str) -> str:
    """The path of the slim site-packages: ``BASE`` plus ``extra`` distributions (and what
    they require), made now if this venv has not made that set yet."""
    present = {n for n in WHERE_PRESENT if _installed(n)}
    dists = _closure(tuple(sorted({*BASE, *present, *extra})))
    pins = sorted(f"{canonicalize_name(d.metadata['Name'])}=={d.version}" for d in dists)
    key = hashlib.sha256("\n".join([str(Path(sys.prefix).resolve()), sys.version, *pins]).encode()).hexdigest()
    root = _root()
    final = root / f"site-{key[:16]}"
    if (final / ".complete").is_file():
        return str(final)
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f"site-{key[:16]}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (final / ".complete").is_file():  # another worker made it while this one waited
            return str(final)
        shutil.rmtree(final, ignore_errors=True)  # a half-made one, from a killed session
        tmp = Path(tempfile.mkdtemp(prefix=f".site-{key[:16]}-", dir=root))
        try:
            for dist in dists:
                _copy_dist(dist, tmp)
            compileall.compile_dir(tmp, quiet=2, workers=1)
            (tmp / ".complete").write_text("\n".join(pins) + "\n", encoding="utf-8")
            tmp.chmod(0o755)  # mkdtemp's 0700 would shut out the sandbox's user: every env would install pytest
            os.rename(tmp, final)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return str(final)


# The folder the tests inherit: pytest (and coverage where the venv has it), nothing else.
SITE = slim_site()
