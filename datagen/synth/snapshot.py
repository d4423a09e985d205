"""The clean source of an input repo: which files it holds, which are tests, and how its
suite runs.

A snapshot is what a task's ``repos/<repo>.git`` starts from: every listed file except
those that are not repository content (git-ignored, tool caches, symlinks, special files).
Vendored, binary and generated files stay, since the tests may need them.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path, PurePosixPath

from datagen.crawl.sources import ListedFile, Repo, read_git_blobs

# Listing skips that mean "not part of the repo's content" (the others are only CPT choices).
NOT_CONTENT = frozenset({"gitignored", "skipped_dir", "symlink", "not_regular_file", "unreadable",
                         "submodule"})
PY_TEST_DIRS = frozenset({"tests", "test", "testing"})
JS_EXTS = (".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx")
SOURCE_LANGS = {lang: lang for lang in ("python", "javascript", "typescript", "go", "rust", "java", "c", "cpp",
                                         "ruby", "php")}
# test-file conventions beyond the shared test folders, per extension
_SUFFIXES = {
    ".go": ("_test.go",),
    ".java": ("Test.java", "Tests.java"),
    ".rb": ("_spec.rb", "_test.rb"),
    ".php": ("Test.php",),
    **{ext: (f"_test{ext}", f"_unittest{ext}") for ext in (".c", ".cc", ".cpp", ".cxx")},
}
_DIRS = {".rb": frozenset({"spec"}), ".go": frozenset({"testdata"}), ".rs": frozenset({"benches"})}


def snapshot_files(files: list[ListedFile]) -> list[ListedFile]:
    """The files a snapshot holds, in path order."""
    return sorted((f for f in files if f.skip not in NOT_CONTENT and f.path != "."),
                  key=lambda f: f.path)


def write_snapshot(repo: Repo, files: list[ListedFile], dest: Path) -> None:
    """Copy the snapshot's files into the empty folder ``dest`` (git inputs: from HEAD)."""
    blobs = read_git_blobs(repo.root, [f.git_oid for f in files if f.git_oid]) if repo.kind != "dir" else {}
    for f in files:
        target = dest / f.path
        target.parent.mkdir(parents=True, exist_ok=True)
        if repo.kind == "dir":
            shutil.copyfile(os.path.join(repo.root, f.path), target)
            if os.access(os.path.join(repo.root, f.path), os.X_OK):
                target.chmod(0o755)
        else:
            target.write_bytes(blobs.get(f.git_oid or "", b""))


def is_test_file(path: str) -> bool:
    """Test code by the usual conventions of each ecosystem: pytest, node's runners, ``go test``
    (``_test.go``), Cargo (``tests/``), Maven (``src/test/``), RSpec and minitest (``spec/``,
    ``*_spec.rb``, ``test/*_test.rb``), PHPUnit (``tests/*Test.php``) and C/C++ test folders."""
    p = PurePosixPath(path)
    name = p.name
    if name == "conftest.py" or name.startswith("test_") and name.endswith(".py") or name.endswith("_test.py"):
        return True
    if any(part in PY_TEST_DIRS or part == "__tests__" for part in p.parts[:-1]):
        return True
    if name.endswith(_SUFFIXES.get(p.suffix, ())) or not _DIRS.get(p.suffix, frozenset()).isdisjoint(p.parts[:-1]):
        return True
    return any(name.endswith(f".{kind}{ext}") for kind in ("test", "spec") for ext in JS_EXTS)


def detect_runner(src: Path, paths: list[str]) -> str | None:
    """'pytest' when the repo has Python tests, 'node' when its package.json runs
    ``node --test``; None when datagen knows no way to run its suite."""
    if any(p.endswith(".py") and is_test_file(p) and not p.endswith("conftest.py") for p in paths):
        return "pytest"
    package = src / "package.json"
    if package.is_file():
        try:
            script = json.loads(package.read_text(encoding="utf-8")).get("scripts", {}).get("test", "")
        except (json.JSONDecodeError, AttributeError, UnicodeDecodeError):
            return None
        if isinstance(script, str) and "node --test" in script:
            return "node"
    return None


def source_files(paths: list[str], langs: dict[str, str | None]) -> list[tuple[str, str]]:
    """(path, lang) of the non-test files whose entities strategies may target."""
    out = []
    for path in paths:
        lang = SOURCE_LANGS.get(langs.get(path) or "")
        if lang and not is_test_file(path) and not path.endswith((".d.ts", ".min.js")):
            out.append((path, lang))
    return out


def non_blank_lines(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.strip())
