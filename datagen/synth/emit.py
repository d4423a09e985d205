"""Turn validated candidates into task records: a commit per task in ``repos/<repo>.git``,
the fix and bug patches from git, the task's size labels.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from datagen.records.env import EnvPlan
from datagen.records.tasks import TaskRecord
from datagen.sandbox.profiles.registry import get_profile
from datagen.synth.baseline import Baseline
from datagen.synth.candidates import Candidate
from datagen.synth.check import Verdict
from datagen.synth.gitrepo import TaskRepo
from datagen.synth.snapshot import is_test_file

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


def replay_scripts(runner: str, plan: EnvPlan, tests: list[str]) -> tuple[str, str]:
    """(setup_script, eval_script) of a task: its env plan and its tests as plain bash."""
    profile = get_profile(runner)
    return profile.setup_script(plan), profile.eval_script(plan, tests)


def commit_task(repo: TaskRepo, clean: str, c: Candidate, v: Verdict, repo_path: str,
                runner: str, baseline: Baseline | None = None) -> Emitted:
    """Write the task's commit and branch; return its record (statement still empty) with
    its replay scripts, from the env plan of the repo's ``baseline``."""
    iid = instance_id(c)
    base = repo.commit_changes(clean, c.changes, f"{iid}\n\nThe repository as the task starts.")
    repo.set_branch(f"tasks/{iid}", base)
    patch, bug = repo.diff(base, clean), repo.diff(clean, base)
    n_files, n_lines = patch_size(patch)
    profile = get_profile(runner)
    tests = sorted(set(profile.test_files(v.fail_to_pass)) | {
        t.split("::", 1)[0] for t in v.fail_to_pass if "::" in t and is_test_file(t.split("::")[0])})
    plan = EnvPlan.model_validate(baseline.plan) if baseline and baseline.plan else profile.plan_stub()
    setup, evaluate = replay_scripts(runner, plan, [*v.fail_to_pass, *v.pass_to_pass])
    record = TaskRecord(
        instance_id=iid, repo=c.repo, base_commit=base, patch=patch, test_patch="",
        FAIL_TO_PASS=v.fail_to_pass, PASS_TO_PASS=v.pass_to_pass, repo_path=repo_path,
        runner=runner, language=(baseline.language if baseline else "") or profile.language,
        setup_script=setup, eval_script=evaluate, bug_patch=bug, strategy=c.strategy, parent_ids=c.parent_ids,
        relevant_files=sorted(set(patch_files(patch)) | set(tests)), changed_files=n_files,
        changed_lines=n_lines, long_horizon=n_files >= LONG_HORIZON_FILES,
        created_at="", version="",
    )
    return Emitted(record, c, v)
