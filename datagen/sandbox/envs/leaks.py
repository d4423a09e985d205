"""The guard that keeps the answer out of an environment.

A task's environment is built once from the repo's clean snapshot and then shared by every
task of that repo: the runs that validate a task, the grader's and the difficulty scorer's
runs of a policy's patch. Whatever the env folder holds, a patch can read (it is mounted
read-only into every run). So no env may hold a copy of the repo's own code: a Python
env's ``site-packages`` with the project installed non-editably held every module a task
breaks, and a patch that ``exec``\\ s that copy was graded resolved.

``env_leaks`` scans an env folder after it is built: every regular file whose content is
byte-identical to a code file of the clean snapshot is a leak. When the copies are the
project (half of its code files or more: a non-editable install), the env fails with the
reason ``env_holds_source`` (recorded in ``repo_envs.reason``), never a silent pass. When
they are a few files that a dependency vendors (setuptools ships zipp's ``compat/`` files
byte for byte), the env is kept and those files are *held* (``ok.json``'s ``held``): no
task targets them, and a candidate that changes one is dropped (``fix_in_environment``).
``revealed`` is the per-task check (``datagen env check``): a fixed file's content,
or a block of the fix's added lines, found anywhere in the env.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

LEAK_REASON = "env_holds_source"
# Files of these kinds are code a strategy may break (any ecosystem datagen knows); a
# LICENSE or README that equals a dependency's is no leak.
CODE_SUFFIXES = frozenset({
    ".py", ".pyx", ".pxd", ".pyi", ".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx", ".mts", ".cts", ".php",
    ".go", ".rs", ".rb", ".java", ".kt", ".scala", ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx",
    ".cs", ".swift", ".m", ".lua", ".pl", ".pm", ".sh", ".ex", ".exs", ".erl", ".clj", ".dart", ".vue", ".svelte"})
# Smaller files (an empty ``__init__.py``, a one-line re-export) equal other packages' by chance.
MIN_BYTES = 64
SKIP_DIRS = frozenset({".git", ".hg", ".svn"})
MAX_SCAN_BYTES = 8 << 20  # env files larger than this are not read for ``revealed``'s text search


@dataclass(frozen=True)
class Leak:
    """An env file (relative to the env folder) with the content of a snapshot file."""

    env_file: str
    source: str

    def __str__(self) -> str:
        return f"{self.env_file} = {self.source}"


def _files(root: Path) -> Iterator[tuple[Path, os.stat_result]]:
    """Regular files under ``root`` (symlinks not followed), with their stat."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(files):
            path = Path(folder, name)
            try:
                st = path.lstat()
            except OSError:
                continue
            if path.is_symlink() or not path.is_file():
                continue
            yield path, st


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def is_code(path: str | Path) -> bool:
    return Path(path).suffix.lower() in CODE_SUFFIXES


def source_digests(src: Path, paths: Iterable[str] | None = None) -> dict[int, dict[str, str]]:
    """size -> sha256 -> snapshot path, of the snapshot's code files of ``MIN_BYTES`` or more
    (``paths``: those relative paths only; default every code file under ``src``)."""
    out: dict[int, dict[str, str]] = {}
    if paths is None:
        items = ((p, st) for p, st in _files(src) if is_code(p))
    else:
        items = ((src / p, (src / p).lstat()) for p in sorted(paths) if (src / p).is_file()
                 and not (src / p).is_symlink())
    for path, st in items:
        if st.st_size < MIN_BYTES:
            continue
        data = path.read_bytes()
        if len(data.strip()) < MIN_BYTES:
            continue
        out.setdefault(st.st_size, {}).setdefault(hashlib.sha256(data).hexdigest(), path.relative_to(src).as_posix())
    return out


def env_leaks(env_dir: Path, src: Path, limit: int = 0, digests: dict[int, dict[str, str]] | None = None
              ) -> list[Leak]:
    """Files of ``env_dir`` byte-identical to a code file of the snapshot ``src`` (only files
    of a size some snapshot file has are read); ``limit`` > 0: stop after that many."""
    digests = source_digests(src) if digests is None else digests
    found: list[Leak] = []
    if not digests:
        return found
    for path, st in _files(env_dir):
        by_hash = digests.get(st.st_size)
        if not by_hash:
            continue
        digest = _digest(path)
        if digest in by_hash:
            found.append(Leak(path.relative_to(env_dir).as_posix(), by_hash[digest]))
            if limit and len(found) >= limit:
                break
    return found


def held_copies(leaks: list[Leak], digests: dict[int, dict[str, str]]) -> list[str] | None:
    """The snapshot files ``leaks`` copies, sorted, when they are a few vendored files the
    tasks can leave alone (fewer than half of the snapshot's code files ``digests`` counts);
    None when they are the project itself, and the env must fail. Either way no task gets
    its answer from the env: held files are never changed by a task."""
    held = sorted({leak.source for leak in leaks})
    total = sum(len(by_hash) for by_hash in digests.values())
    return held if 2 * len(held) < total else None


def held_files(env_dir: Path | None) -> list[str]:
    """The snapshot files a built env holds copies of (``ok.json``'s ``held``)."""
    info = env_dir / "ok.json" if env_dir else None
    if info is None or not info.is_file():
        return []
    return list(json.loads(info.read_text()).get("held", []))


def leak_detail(leaks: list[Leak], shown: int = 5) -> str:
    """The failure's words: which env files are copies of which snapshot files."""
    more = f" (and {len(leaks) - shown} more)" if len(leaks) > shown else ""
    return ("the env holds copies of the repo's own code (a patch could read the answer from it): "
            + ", ".join(map(str, leaks[:shown])) + more)


def added_blocks(patch: str, min_chars: int = 40) -> list[str]:
    """The runs of added lines of a unified diff (the fix's new code), each joined with
    newlines and stripped of its indentation, that hold at least ``min_chars`` non-space
    characters (shorter ones, a lone ``return x``, occur anywhere by chance)."""
    blocks: list[list[str]] = []
    current: list[str] = []
    for line in patch.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            current.append(line[1:].strip())
            continue
        if current:
            blocks.append(current)
            current = []
    if current:
        blocks.append(current)
    out = []
    for block in blocks:
        lines = [x for x in block if x]
        if sum(len(x.replace(" ", "")) for x in lines) >= min_chars:
            out.append("\n".join(lines))
    return out


def _normal(text: str) -> str:
    return "\n".join(x.strip() for x in text.splitlines() if x.strip())


@dataclass(frozen=True)
class Revealed:
    """Where an env reveals a task's fix: an env file equal to a fixed file, or holding one
    of the fix's added blocks."""

    env_file: str
    what: str  # "equals <path>" or "holds an added block of the fix"


def revealed(env_dir: Path, fixed: dict[str, bytes], blocks: list[str]) -> list[Revealed]:
    """What of the fix ``env_dir`` reveals: files equal to a fixed file's content (``fixed``:
    path -> the file as the fix leaves it) and text files that hold a block of ``blocks``
    (``added_blocks`` of the fix, compared line by line without indentation)."""
    want: dict[int, dict[str, str]] = {}
    for rel, data in fixed.items():
        want.setdefault(len(data), {})[hashlib.sha256(data).hexdigest()] = rel
    needles = [_normal(b) for b in blocks if _normal(b)]
    out: list[Revealed] = []
    for path, st in _files(env_dir):
        rel = path.relative_to(env_dir).as_posix()
        by_hash = want.get(st.st_size)
        if by_hash and (digest := _digest(path)) in by_hash:
            out.append(Revealed(rel, f"equals {by_hash[digest]}"))
            continue
        if not needles or st.st_size > MAX_SCAN_BYTES or st.st_size == 0:
            continue
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if b"\0" in data[:4096]:
            continue  # a binary file: compiled code is not text a patch could copy
        text = _normal(data.decode("utf-8", errors="replace"))
        if any(n in text for n in needles):
            out.append(Revealed(rel, "holds an added block of the fix"))
    return out
