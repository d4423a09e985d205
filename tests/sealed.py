"""Shared checks of a task's sealed environment and of its eval script's test-file guard,
used by every profile's replay test (so each language's real task output is checked)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from datagen.records.tasks import TaskRecord
from datagen.synth.candidates import Candidate
from datagen.synth.check import Verdict
from datagen.synth.emit import commit_task, seal_task
from datagen.synth.gitrepo import TaskRepo


def emit_sealed(root: Path, src: Path, c: Candidate, verdict: Verdict, runner: str, base) -> TaskRecord:
    """Commit and seal one task as ``datagen build tasks`` does: the store in ``root/work``,
    the sealed environment in ``root/out/envs`` (the record's ``repo_path`` is relative to ``root/out``)."""
    store = TaskRepo(root / "work" / "git" / f"{src.name}.git")
    clean = store.commit_folder(src, "clean source")
    record = commit_task(store, clean, c, verdict, runner, base).record
    seal_task(store, record, root / "out" / "envs")
    return record


def _git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-c", "core.quotepath=off", *args], cwd=cwd, capture_output=True, text=True,
                          check=check)


def assert_sealed(env: Path, task: TaskRecord, scratch: Path, words: tuple[str, ...] = ()) -> None:
    """Clone ``env`` as the docs say; the clone holds one commit (``base_commit``, no parent,
    a neutral message), one branch whose name is opaque, and no object of the fixed files:
    each file the fix changes, hashed after ``git apply`` of the patch, is not in the clone.
    The strategy and the instance id appear in no ref, commit, script or statement of the
    task, and ``words`` (the entity names) in no ref or commit."""
    clone = scratch / "sealed-clone"
    subprocess.run(["git", "clone", "-q", str(env), str(clone)], check=True)
    commits = _git(clone, "rev-list", "--all").stdout.split()
    assert commits == [task.base_commit], commits
    raw = _git(clone, "cat-file", "-p", task.base_commit).stdout
    assert "\nparent " not in raw and raw.rstrip().endswith("Initial commit"), raw
    refs = _git(clone, "for-each-ref", "--format=%(refname)").stdout.split()
    for word in (task.strategy, task.instance_id, *words):
        assert word and not any(word in r for r in refs) and word not in raw, (word, refs)
    for word in (task.strategy, task.instance_id):  # entity names may be in test ids, by nature
        assert word not in task.setup_script + task.eval_script + task.problem_statement, word
    every = set(_git(clone, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)").stdout.split())
    subprocess.run(["git", "apply", "-"], cwd=clone, input=task.patch, text=True, check=True)
    changed = _git(clone, "diff", "--name-only", "HEAD").stdout.split()
    changed += _git(clone, "ls-files", "--others", "--exclude-standard").stdout.split()
    assert changed, "the fix changed no file"
    for path in changed:
        if (clone / path).is_file():
            oid = _git(clone, "hash-object", path).stdout.strip()
            assert oid not in every, f"the fixed {path} ({oid}) is an object of the environment"


def assert_test_edits_fail(clone: Path, task: TaskRecord, test_file: str, bash) -> None:
    """With the fix applied (eval passes), editing or deleting ``test_file`` makes the eval
    script fail (exit 3); ``bash(script)`` runs a script in ``clone``."""
    path = clone / test_file
    original = path.read_bytes()
    path.write_bytes(original + b"\n")
    edited = bash(task.eval_script)
    assert edited.returncode == 3 and test_file in edited.stderr, edited.stdout[-1000:] + edited.stderr[-1000:]
    path.unlink()
    deleted = bash(task.eval_script)
    assert deleted.returncode == 3 and test_file in deleted.stderr, deleted.stderr[-1000:]
    path.write_bytes(original)
    again = bash(task.eval_script)
    assert again.returncode == 0, again.stdout[-2000:] + again.stderr[-2000:]


def envs_digest(out: Path) -> dict[str, str]:
    """Relative path -> sha256 of every file of a build's ``envs/`` (what must be byte-identical
    between two builds of the same input and recipe); raises when there is none."""
    import hashlib

    envs = out / "envs"
    files = {p.relative_to(envs).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
             for p in sorted(envs.rglob("*")) if p.is_file()}
    assert files, f"no sealed environment under {envs}"
    return files
