"""Turn validated candidates into task records: each task's buggy tree as a root commit in
the build's store, the fix and bug patches from git, the task's size labels; and, for the
tasks that are kept, their sealed environments (``OUT/envs/<env_id>.git``, see ``gitrepo``).
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from datagen.errors import SkipItem
from datagen.records.env import EnvPlan
from datagen.records.tasks import TaskRecord
from datagen.sandbox.harness.profiles.registry import get_profile
from datagen.sandbox.harness.protect import is_test_file
from datagen.synth.baseline import Baseline
from datagen.synth.candidates import Candidate
from datagen.synth.check import Verdict
from datagen.synth.gitrepo import TaskRepo

LONG_HORIZON_FILES = 5
_UNSAFE_REF = re.compile(r"[^A-Za-z0-9._-]+")


def instance_id(c: Candidate) -> str:
    """``<repo>.<strategy>.<hash12>`` (the strategy's versioned name, as SWE-smith's ids; 48
    bits of the change hash keep ids of one repo and strategy apart at millions of tasks)."""
    return f"{_UNSAFE_REF.sub('_', c.repo)}.{c.strategy}.{c.candidate_id[:12]}"


def patch_size(patch: str) -> tuple[int, int]:
    """(files, added + removed lines) of a unified diff."""
    files = sum(1 for line in patch.splitlines() if line.startswith("diff --git "))
    lines = sum(1 for line in patch.splitlines()
                if line[:1] in "+-" and not line.startswith(("+++", "---")))
    return files, lines


def patch_files(patch: str) -> list[str]:
    return sorted({line.split(" b/", 1)[1] for line in patch.splitlines()
                   if line.startswith("diff --git ") and " b/" in line})


@dataclass
class Emitted:
    record: TaskRecord
    candidate: Candidate
    verdict: Verdict
    statement_note: str = ""  # why a teacher statement fell back to the template


def env_id(iid: str) -> str:
    """The opaque name of a task's environment (its folder and its one branch): a hash of the
    instance id, so nothing the agent sees names the strategy, the entity or the seed."""
    return hashlib.sha256(iid.encode()).hexdigest()[:16]


def env_path(iid: str) -> str:
    """Where the task's sealed environment lies, relative to ``tasks.jsonl``."""
    return f"envs/{env_id(iid)}.git"


def replay_scripts(runner: str, plan: EnvPlan, tests: list[str], base_commit: str = "") -> tuple[str, str]:
    """(setup_script, eval_script) of a task: its env plan and its tests as plain bash (the
    eval script refuses a checkout whose test files differ from ``base_commit``'s)."""
    profile = get_profile(runner)
    return profile.setup_script(plan), profile.eval_script(plan, tests, base_commit)


def fix_in_tree(repo: TaskRepo, clean: str, tree: str, paths: list[str]) -> str:
    """A changed path whose fixed content is a file of the buggy tree (a copy elsewhere in the
    repo), '' when there is none: from such a tree the fix could be read, not found."""
    fixed = repo.blobs(clean, paths)
    present = set(repo.blobs(tree).values())
    return next((p for p in sorted(fixed) if fixed[p] in present), "")


MIN_BLOCK_LINES = 4  # a removed run of lines this long (non-blank) ...
MIN_BLOCK_CHARS = 80  # ... and this many characters is a body whose copy would give the fix away


def _normal(text: str) -> str:
    """Lines stripped, blank lines dropped, framed by newlines (a block's copy may be indented
    differently: a docs code block, an example)."""
    return "\n" + "\n".join(line.strip() for line in text.splitlines() if line.strip()) + "\n"


def removed_blocks(old: str, new: str) -> list[str]:
    """The runs of lines ``new`` lacks against ``old`` (what the fix brings back), normalized
    as ``_normal``, those of ``MIN_BLOCK_LINES`` non-blank lines and ``MIN_BLOCK_CHARS`` or more."""
    a, b = old.splitlines(), new.splitlines()
    out = []
    for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            lines = [line.strip() for line in a[i1:i2] if line.strip()]
            if len(lines) >= MIN_BLOCK_LINES and sum(map(len, lines)) >= MIN_BLOCK_CHARS:
                out.append("\n" + "\n".join(lines) + "\n")
    return out


class CopyIndex:
    """A repo's clean text files, normalized once, to look a removed body up in."""

    def __init__(self, texts: Mapping[str, str]):
        self.texts = texts
        self.normal = {p: _normal(t) for p, t in texts.items()}

    def copy_of_removed(self, changes: Mapping[str, str | None]) -> str:
        """'<changed path> in <other path>' for the first block a change removes that stands in
        a file of the changed tree (another file, or elsewhere in its own), '' when none."""
        tree = {**self.normal, **{p: _normal(t) for p, t in changes.items() if t is not None}}
        for p in [p for p, t in changes.items() if t is None]:
            tree.pop(p, None)
        for path in sorted(changes):
            new = changes[path]
            if new is None or path not in self.texts:
                continue
            for block in removed_blocks(self.texts[path], new):
                where = next((other for other in sorted(tree) if block in tree[other]), "")
                if where:
                    return f"{path} in {where}"
        return ""


def commit_task(repo: TaskRepo, clean: str, c: Candidate, v: Verdict, runner: str,
                baseline: Baseline | None = None, copies: CopyIndex | None = None) -> Emitted:
    """The task's buggy tree as a root commit of the store (its ``base_commit``: no parent,
    neutral author and message) and its record (statement still empty) with its replay
    scripts, from the env plan of the repo's ``baseline``. Raises ``SkipItem``
    (``fix_in_environment``) when the fixed text of a changed file is in the buggy tree, or
    (given the repo's ``copies``) when a body the change removes stands in a file of it (a
    vendored copy, an example, a docs code block, a generated file), or when the change
    touches a file the env holds a copy of (``baseline.held``)."""
    iid = instance_id(c)
    if baseline is not None and (held := sorted(set(c.changes) & set(baseline.held))):
        raise SkipItem("fix_in_environment", f"the env holds a copy of {held[0]} (a dependency vendors it)")
    if copies is not None and (where := copies.copy_of_removed(c.changes)):
        raise SkipItem("fix_in_environment", f"a removed body of {where} (another copy of it)")
    tree = repo.tree_with(clean, c.changes)
    if copy := fix_in_tree(repo, clean, tree, sorted(c.changes)):
        raise SkipItem("fix_in_environment", f"the fixed {copy} is another file of the repo")
    base = repo.root_commit(tree)
    patch, bug = repo.diff(base, clean), repo.diff(clean, base)
    n_files, n_lines = patch_size(patch)
    profile = get_profile(runner)
    tests = sorted(set(profile.test_files(v.fail_to_pass)) | {
        t.split("::", 1)[0] for t in v.fail_to_pass if "::" in t and is_test_file(t.split("::")[0])})
    plan = EnvPlan.model_validate(baseline.plan) if baseline and baseline.plan else profile.plan_stub()
    setup, evaluate = replay_scripts(runner, plan, [*v.fail_to_pass, *v.pass_to_pass], base)
    record = TaskRecord(
        instance_id=iid, repo=c.repo, base_commit=base, patch=patch, test_patch="",
        FAIL_TO_PASS=v.fail_to_pass, PASS_TO_PASS=v.pass_to_pass, repo_path=env_path(iid),
        runner=runner, language=(baseline.language if baseline else "") or profile.language,
        setup_script=setup, eval_script=evaluate, bug_patch=bug, strategy=c.strategy, parent_ids=c.parent_ids,
        relevant_files=sorted(set(patch_files(patch)) | set(tests)), changed_files=n_files,
        changed_lines=n_lines, long_horizon=n_files >= LONG_HORIZON_FILES,
        created_at="", version="",
    )
    return Emitted(record, c, v)


def seal_task(repo: TaskRepo, record: TaskRecord, envs: Path) -> None:
    """Write the task's sealed environment into the folder ``envs`` (named as in its
    ``repo_path``, ``envs/<env_id>.git``)."""
    repo.seal(record.base_commit, envs / Path(record.repo_path).name, f"env-{env_id(record.instance_id)}")
