"""Soundness of the pool's tasks: the static checks (``synth/soundness``) run on every
task's buggy tree, the teacher's verdicts (``pool/judge``, optional), and the policy that
drops a flagged task (or keeps it with its flags, ``soundness.action: keep``).

Every check of every task is a ``SoundnessRow`` (flagged or not, with its evidence and
what the policy did), so ``datagen sql`` can list what each flag removed.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from datagen.config.rl_pool import SoundnessConfig
from datagen.crawl.sources import read_git_blobs
from datagen.errors import SkipItem, UserError
from datagen.records.pool import PoolDropRow, PoolRow, PoolTaskInput
from datagen.records.soundness import JudgeRow, SoundnessRow
from datagen.records.tasks import interface_text
from datagen.sandbox.harness.profiles.registry import get_profile
from datagen.sandbox.harness.task_store import apply_patch, materialize, source_dir
from datagen.synth.snapshot import is_test_file
from datagen.synth.soundness import CHECKS, TaskView, check_task

MAX_FILE_BYTES = 1 << 20  # larger files are data, not code an agent reads


def _git_tree(repo: Path, commit: str) -> dict[str, str]:
    proc = subprocess.run(["git", "-C", str(repo), "ls-tree", "-r", "-z", commit], capture_output=True)
    if proc.returncode != 0:
        return {}
    entries = []
    for item in proc.stdout.split(b"\0"):
        meta, _, path = item.partition(b"\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == b"blob":
            entries.append((path.decode("utf-8", "replace"), parts[2].decode()))
    blobs = read_git_blobs(str(repo), [oid for _, oid in entries])
    return _decoded((path, blobs.get(oid, b"")) for path, oid in entries)


def _decoded(files: Iterable[tuple[str, bytes]]) -> dict[str, str]:
    out = {}
    for path, data in files:
        if len(data) <= MAX_FILE_BYTES and b"\0" not in data[:8192]:
            out[path] = data.decode("utf-8", "replace")
    return out


def _folder(src: Path) -> dict[str, str]:
    files = sorted(p for p in src.rglob("*") if p.is_file() and ".git" not in p.parts)
    return _decoded((p.relative_to(src).as_posix(), p.read_bytes()) for p in files)


def tree_texts(task: PoolTaskInput, base: Path) -> dict[str, str]:
    """The text files the agent's checkout holds at grading time: the task's tree at
    ``base_commit`` (a git repo, or a folder), with its ``test_patch`` applied (a task from
    elsewhere may bring its tests that way; one that cannot be read or applied has none)."""
    src = source_dir(task, base)
    if not task.test_patch.strip():
        if (src / "objects").is_dir() or (src / ".git").exists():
            return _git_tree(src, task.base_commit or "HEAD")
        return _folder(src) if src.is_dir() else {}
    with tempfile.TemporaryDirectory(prefix="soundness-") as tmp:
        try:
            materialize(task, base, Path(tmp))
            apply_patch(Path(tmp), task.test_patch, "test_patch")
        except SkipItem:
            return {}
        return _folder(Path(tmp))


def test_paths(task: PoolTaskInput, tree: dict[str, str]) -> list[str]:
    """The files the failing tests live in: the runner's reading of their ids, a path before
    ``::``, else every test file of the tree."""
    try:
        found = set(get_profile(task.runner).test_files(task.FAIL_TO_PASS))
    except UserError:
        found = set()
    found |= {t.split("::", 1)[0] for t in task.FAIL_TO_PASS if "::" in t}
    found = {p for p in found if p in tree}
    return sorted(found) or sorted(p for p in tree if is_test_file(p))


def task_view(task: PoolTaskInput, base: Path) -> TaskView:
    tree = tree_texts(task, base)
    tests = test_paths(task, tree)
    changed = sorted({line.split(" b/", 1)[1] for line in task.patch.splitlines()
                      if line.startswith("diff --git ") and " b/" in line})
    return TaskView(statement=task.problem_statement, interface=interface_text(task.interface), patch=task.patch,
                    failing=task.FAIL_TO_PASS, tests={p: tree[p] for p in tests},
                    code={p: t for p, t in tree.items() if not is_test_file(p)},
                    names=[*task.FAIL_TO_PASS, *task.PASS_TO_PASS], changed=changed)


def static_rows(run_id: str, inputs: list[tuple[PoolTaskInput, Path]], wanted: set[str]) -> list[SoundnessRow]:
    """One row per task of ``wanted`` and static check, flagged or not."""
    out = []
    for task, base in inputs:
        if task.instance_id not in wanted:
            continue
        flags = {f.check: f.evidence for f in check_task(task_view(task, base))}
        out += [SoundnessRow(run_id=run_id, task_id=task.instance_id, repo=task.repo, strategy=task.strategy,
                             flag=c, flagged=c in flags, evidence=flags.get(c, "")) for c in CHECKS]
    return out


def judge_flags(run_id: str, rows: list[JudgeRow], cfg: SoundnessConfig, repos: dict[str, str],
                strategies: dict[str, str]) -> list[SoundnessRow]:
    """The teacher's verdicts as flags: ``judge:unsolvable`` and ``judge:<issue>`` for each
    defect the recipe counts, from answers at or above ``judge.min_confidence``."""
    out = []
    for j in rows:
        if j.status != "ok" or (j.confidence or 0.0) < cfg.judge.min_confidence:
            continue
        found = ([("judge:unsolvable", j.reasoning)] if j.solvable is False else []) + \
            [(f"judge:{i}", j.reasoning) for i in j.issues if i in cfg.judge.drop_issues]
        out += [SoundnessRow(run_id=run_id, task_id=j.task_id, repo=repos[j.task_id],
                             strategy=strategies[j.task_id], flag=c, flagged=True, evidence=e) for c, e in found]
    return out


def apply_policy(cfg: SoundnessConfig, rows: list[PoolRow], checks: list[SoundnessRow]
                 ) -> tuple[list[PoolRow], list[PoolDropRow], list[SoundnessRow]]:
    """(kept rows, drops, the checks with what was done): a task with a flag the recipe
    counts (``soundness.checks``, the judge's) is dropped (``unsound``, every flag and its
    evidence in the detail) or, with ``action: keep``, kept with ``soundness_flags``."""
    counted = [c for c in checks if c.flagged and (c.flag in cfg.checks or c.flag.startswith("judge:"))]
    by_task: dict[str, list[SoundnessRow]] = {}
    for c in counted:
        by_task.setdefault(c.task_id, []).append(c)
    kept, drops = [], []
    for r in rows:
        mine = by_task.get(r.task_id)
        if not mine:
            kept.append(r)
        elif cfg.action == "keep":
            kept.append(r.model_copy(update={"soundness_flags": [c.flag for c in mine]}))
        else:
            detail = "; ".join(f"{c.flag}: {c.evidence}" for c in mine)
            drops.append(PoolDropRow(instruction_id=r.instruction_id, task_id=r.task_id, repo=r.repo,
                                     reason="unsound", detail=detail[:2000]))
    action = "kept" if cfg.action == "keep" else "dropped"
    pooled = {r.task_id for r in rows}
    done = [c.model_copy(update={"action": action}) if c in counted and c.task_id in pooled else c for c in checks]
    return kept, drops, done


def removed_by_flag(checks: list[SoundnessRow]) -> dict[str, int]:
    """flag -> tasks it removed (a task with two flags counts for each)."""
    return dict(sorted(Counter(c.flag for c in checks if c.action == "dropped").items()))
