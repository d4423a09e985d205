"""The clean source of an input repo: which files it holds, which are tests, and how its
suite runs.

A snapshot is what a task's ``repos/<repo>.git`` starts from: every listed file except
those that are not repository content (git-ignored, tool caches, symlinks, special files).
Vendored, binary and generated files stay, since the tests may need them.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from datagen.crawl.sources import ListedFile, Repo, read_git_blobs
from datagen.sandbox.harness.profiles import registry
from datagen.sandbox.harness.profiles.base import Profile
from datagen.sandbox.harness.protect import is_protected, is_test_file
from datagen.synth.languages import LANGS

# Listing skips that mean "not part of the repo's content" (the others are only CPT choices).
NOT_CONTENT = frozenset({"gitignored", "skipped_dir", "symlink", "not_regular_file", "unreadable",
                         "submodule"})
SOURCE_LANGS = {lang: lang for lang in sorted(LANGS)}  # the languages strategies read (their specs)
# Rust's benchmarks (``benches/``): no tests, but no strategy's target either
_NOT_TARGETS = re.compile(r"(^|/)benches/.*\.rs$")


def snapshot_files(files: list[ListedFile]) -> list[ListedFile]:
    """The files a snapshot holds, in path order. A file of a git input's HEAD that a
    ``.gitignore`` pattern matches is still tracked content (libyaml's ``cmake/config.h.in``
    under ``config.h*``): git ignores only untracked files, and the build may need it."""
    def content(f: ListedFile) -> bool:
        return f.skip not in NOT_CONTENT or f.skip == "gitignored" and f.git_oid is not None

    return sorted((f for f in files if content(f) and f.path != "."), key=lambda f: f.path)


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


def detect_profile(src: Path, paths: list[str]) -> Profile | None:
    """The ecosystem profile that runs the repo's suite (the registry's detection order);
    None when datagen knows no way to run it."""
    return registry.detect_profile(src, paths)


def no_runner_detail(paths: list[str], langs: dict[str, str | None]) -> str:
    """Why no profile claims a repo, in one line: what the profiles of its languages look for
    (every profile's, when none is of its languages) and what the repo holds (its languages,
    its test-like files)."""
    counts: dict[str, int] = {}
    for path in paths:
        lang = SOURCE_LANGS.get(langs.get(path) or "", "")
        if lang:
            counts[lang] = counts.get(lang, 0) + 1
    everyone = registry.profiles()
    mine = [p for p in everyone if set(p.source_langs) & set(counts)] or everyone
    wanted = "; ".join(dict.fromkeys(f"{p.name}: {p.looks_for()}" for p in mine))
    held = ", ".join(f"{n} {lang}" for lang, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:4])
    tests = [p for p in paths if is_test_file(p) or is_protected(p)]
    shown = ", ".join(tests[:5]) + (f" and {len(tests) - 5} more" if len(tests) > 5 else "")
    return (f"no test runner claims it: looked for {wanted}; found {len(paths)} files"
            + (f" ({held} source files)" if held else " (no source file of a known language)")
            + (f", test-like files: {shown}" if tests else ", no test-like file"))


def detect_runner(src: Path, paths: list[str]) -> str | None:
    """The name of the profile that runs the repo's suite ('pytest', 'node', 'jest', 'go',
    'cargo', ...); None when datagen knows no way to run it."""
    profile = detect_profile(src, paths)
    return profile.name if profile else None


def source_files(paths: list[str], langs: dict[str, str | None], profile: Profile | None = None
                 ) -> list[tuple[str, str]]:
    """(path, lang) of the non-test files whose entities strategies may target: the
    profile's source languages and test conventions (Python / JS / TS without one). Nothing
    every eval path protects as test code (``sandbox.protect``) is a target: its fix would be
    rejected as a test edit (``is_protected`` holds ``is_test_file``, which the profile's may
    only narrow: a profile's own rule is asked too, for what it adds)."""
    targets = set(profile.source_langs) if profile else set(SOURCE_LANGS)
    test = profile.is_test_file if profile else is_test_file
    out = []
    for path in paths:
        lang = langs.get(path) or ""
        lang = SOURCE_LANGS.get(lang, lang)
        if lang in targets and not test(path) and not is_protected(path) and not _NOT_TARGETS.search(path) \
                and not path.endswith((".d.ts", ".min.js")):
            out.append((path, lang))
    return out


def non_blank_lines(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.strip())
