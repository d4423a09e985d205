"""Candidates made from what already exists: a git input's history, and validated bugs
merged together.

- ``history``: a commit that changes source and tests together is a real, human-made
  task (as SWE-bench mines them). Its source change, reverted on the clean snapshot, is
  the bug; the tests of the snapshot (which include the commit's tests) must then fail.
  Mining is language-agnostic (git diffs plus ``is_test_file``); the one language whose
  tests may live inside a source file is Rust: a ``#[cfg(test)]`` module the commit changed
  counts as its tests, and the revert keeps the snapshot's version of it.
- ``combine``: 2-4 validated bugs of one repo, each in its own function (the closest ones:
  another file sharing a failing test, else a folder, else another function of the same
  file whose edit touches other lines), merged into one task whose fix spans several places.
"""

from __future__ import annotations

import difflib
import os
import random
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from datagen.sandbox.harness.protect import is_test_file
from datagen.synth.candidates import Candidate, derive_seed
from datagen.synth.entities import inline_test_spans

HISTORY = "history_revert_v1"
COMBINE = "combine_files_v1"


def _git(root: str, *args: str, input: bytes | None = None) -> subprocess.CompletedProcess:
    """git on an input repo with no user or system config: same diffs on every machine, and
    no diff driver or textconv command of the input repo runs on the host."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    safe = ["-c", "diff.noprefix=false", "-c", "diff.mnemonicPrefix=false", "-c", "core.quotePath=false"]
    return subprocess.run(["git", "-C", root, *safe, *args], capture_output=True, input=input, env=env)


def _commit_files(root: str, commit: str) -> list[str]:
    proc = _git(root, "diff-tree", "--no-commit-id", "-r", "--name-only", "-z", f"{commit}^", commit)
    return [p for p in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if p]


def reverse_apply(texts: Mapping[str, str], diff: str) -> dict[str, str | None] | None:
    """The files of ``diff`` after applying it in reverse to ``texts``; None if it does not
    apply (the code moved on since the commit)."""
    with tempfile.TemporaryDirectory() as tmp:
        paths = [p for p in texts if f"a/{p}" in diff or f"b/{p}" in diff]
        for path in paths:
            target = Path(tmp, path)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(texts[path], encoding="utf-8", newline="")
        env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(Path(tmp).parent)}
        proc = subprocess.run(["git", "apply", "-R", "--whitespace=nowarn", "-"], cwd=tmp,
                              input=diff.encode(), capture_output=True, env=env)
        if proc.returncode != 0:
            return None
        out: dict[str, str | None] = {}
        for path in paths:
            target = Path(tmp, path)
            out[path] = target.read_bytes().decode("utf-8") if target.exists() else None
        return {p: t for p, t in out.items() if t != texts[p]} or None


def history_candidates(repo: str, root: str, texts: Mapping[str, str], source_paths: set[str],
                       max_commits: int, limit: int | None = None) -> list[Candidate]:
    """One candidate per recent commit that touches both source and test files (a Rust
    file's own ``#[cfg(test)]`` items count as test files), newest first; at most ``limit``
    (the older commits are then not read)."""
    log = _git(root, "log", "--no-merges", "--format=%H", f"-n{max_commits}", "HEAD")
    if log.returncode != 0:
        return []
    found = []
    for commit in log.stdout.decode().split():
        if limit is not None and len(found) >= limit:
            break
        files = _commit_files(root, commit)
        source = [f for f in files if f in source_paths]
        tests = any(is_test_file(f) for f in files)
        if not source or not (tests or any(f.endswith(".rs") for f in source)):
            continue
        parts, plain = [], []
        for path in source:
            inline = _code_diff(root, commit, path) if path.endswith(".rs") else None
            if inline is None:
                plain.append(path)
            else:
                parts.append(inline[0])
                tests = tests or inline[1]
        if not tests:
            continue
        if plain:
            diff = _git(root, "diff", "--no-color", "--no-renames", "--no-ext-diff", "--no-textconv",
                        f"{commit}^", commit, "--", *plain)
            parts.insert(0, diff.stdout.decode("utf-8", "surrogateescape"))
        changes = reverse_apply(texts, "".join(parts))
        if changes:
            found.append(Candidate(repo, HISTORY, "history", f"commit:{commit[:12]}", 0, changes))
    return found


def _show(root: str, rev: str, path: str) -> str | None:
    proc = _git(root, "show", f"{rev}:{path}")
    try:
        return proc.stdout.decode("utf-8") if proc.returncode == 0 else None
    except UnicodeDecodeError:
        return None


def _code_diff(root: str, commit: str, path: str) -> tuple[str, bool] | None:
    """The commit's diff of Rust file ``path`` without its inline test items, and whether
    those changed; None when neither side holds inline tests (the plain diff then serves)."""
    new, old = _show(root, commit, path), _show(root, f"{commit}^", path)
    if new is None or (not inline_test_spans(new, "rust", path)
                       and (old is None or not inline_test_spans(old, "rust", path))):
        return None
    base = _with_tests_of(new, old or "", path)  # the parent's code with the commit's tests
    with tempfile.TemporaryDirectory() as tmp:
        for side, text in (("a", base), ("b", new)):
            target = Path(tmp, side, path)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8", newline="")
        env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
        proc = subprocess.run(["git", "diff", "--no-index", "--no-prefix", "--no-color", "--no-ext-diff",
                               f"a/{path}", f"b/{path}"], cwd=tmp, capture_output=True, env=env)
    return proc.stdout.decode("utf-8", "surrogateescape"), base != (old or "")


def _with_tests_of(current: str, reverted: str, path: str) -> str:
    """``reverted`` whose inline test items are replaced by those of ``current`` (where its
    first one stood, else appended)."""
    cur, old = current.encode("utf-8"), reverted.encode("utf-8")
    tests = [cur[a:b] for a, b in inline_test_spans(current, "rust", path)]
    spans = inline_test_spans(reverted, "rust", path)
    if [old[a:b] for a, b in spans] == tests:
        return reverted
    kept, pos = [], 0
    for a, b in spans:
        kept.append(old[pos:a])
        pos = b
    kept.append(old[pos:])
    at = spans[0][0] if spans else len(old)
    body = b"".join(kept)
    block = b"\n\n".join(tests)
    if not spans and block:
        block = (b"" if body.endswith(b"\n\n") or not body else b"\n" if body.endswith(b"\n") else b"\n\n") \
            + block + b"\n"
    return (body[:at] + block + body[at:]).decode("utf-8")


def combine_candidates(repo: str, kept: list[Candidate], n_tasks: int, sizes: tuple[int, int],
                       seed: int, ids: Mapping[str, str],
                       breaks: Mapping[str, set[str]] | None = None,
                       texts: Mapping[str, str] | None = None) -> list[Candidate]:
    """Up to ``n_tasks`` merges of 2-4 validated single-file bugs, each in its own function.
    A function joins one merge at most (merges that share members would pile tasks onto a
    few functions: ``synth.max_tasks_per_entity`` counts every task a function is in).
    Leads are drawn in a seeded order, and each next member is the one closest to the
    group: in another file and sharing a failing test with it (``breaks``: candidate id ->
    its FAIL_TO_PASS), else another file of the same folder, else any other file, else
    (given the clean ``texts``) another function of a file the group changes, when the two
    edits do not touch the same lines; ties broken by a seeded draw. ``ids`` maps a
    member's candidate id to its task id (the combined task's parents)."""
    breaks = breaks or {}
    by_entity: dict[str, Candidate] = {}
    for c in kept:
        single = len(c.changes) == 1 and next(iter(c.changes.values())) is not None
        if single and c.family not in ("combine", "feature"):
            by_entity.setdefault(c.entity or c.candidate_id, c)
    singles = list(by_entity.values())
    lo, hi = sizes
    if len(singles) < lo:
        return []
    rng = random.Random(derive_seed(seed, repo, COMBINE))
    leads = sorted(singles, key=lambda c: c.candidate_id)
    rng.shuffle(leads)
    out: dict[str, Candidate] = {}
    used: set[str] = set()  # entities already in a merge
    for k in range(len(leads)):
        if len(out) >= n_tasks:
            break
        if leads[k].entity in used:
            continue
        group = [leads[k]]
        changes = dict(group[0].changes)
        want = rng.randint(lo, hi)
        while len(group) < want:
            free = [c for c in singles if c.entity not in used]
            nxt = _closest(group, changes, free, breaks, rng, texts or {})
            if nxt is None:
                break
            group.append(nxt[0])
            changes = nxt[1]
        if len(group) < lo:
            continue
        members = sorted(group, key=lambda m: (next(iter(m.changes)), m.entity))
        c = Candidate(repo, COMBINE, "combine", ";".join(m.entity for m in members), k, changes,
                      parent_ids=[ids[m.candidate_id] for m in members])
        out.setdefault(c.candidate_id, c)
        used |= {m.entity for m in members}
    return [out[key] for key in sorted(out)]


def _closest(group: list[Candidate], changes: dict[str, str | None], singles: list[Candidate],
             breaks: Mapping[str, set[str]], rng: random.Random, texts: Mapping[str, str]
             ) -> tuple[Candidate, dict[str, str | None]] | None:
    """The single bug that best joins ``group`` and the group's changes with it, or None."""
    files = set(changes)
    folders = {os.path.dirname(f) for f in files}
    tests = set().union(*(breaks.get(m.candidate_id, set()) for m in group))
    entities = {m.entity for m in group}

    def rank(c: Candidate) -> tuple[int, float]:
        path = next(iter(c.changes))
        shared = bool(tests & breaks.get(c.candidate_id, set()))
        if path in files:
            return (4, rng.random())
        return (0 if shared else 1 if os.path.dirname(path) in folders else 2, rng.random())

    options = sorted((c for c in singles if c.entity not in entities), key=lambda c: c.candidate_id)
    for c in sorted(options, key=rank):
        path, text = next(iter(c.changes.items()))
        if path not in files:
            return c, {**changes, path: text}
        if path in texts and (merged := merge_edits(texts[path], changes[path] or "", text or "")) is not None:
            return c, {**changes, path: merged}
    return None


def merge_edits(clean: str, a: str, b: str) -> str | None:
    """``clean`` with both the edit that made ``a`` and the edit that made ``b`` (each a
    version of ``clean``), or None when the two touch the same or adjacent lines."""
    base = clean.splitlines(keepends=True)
    spans = []
    for version in (a, b):
        ops = [op for op in difflib.SequenceMatcher(None, base, version.splitlines(keepends=True),
                                                   autojunk=False).get_opcodes() if op[0] != "equal"]
        spans.append([(i1, i2, version.splitlines(keepends=True)[j1:j2]) for _, i1, i2, j1, j2 in ops])
    for i1, i2, _ in spans[0]:
        for k1, k2, _ in spans[1]:
            if i1 <= k2 and k1 <= i2:  # overlapping or touching: no safe merge
                return None
    out, at = [], 0
    for i1, i2, lines in sorted(spans[0] + spans[1], key=lambda s: (s[0], s[1])):
        out += base[at:i1] + lines
        at = i2
    return "".join(out + base[at:])
