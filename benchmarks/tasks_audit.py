"""Audit a built tasks folder the way a trainer's red team would, with plain git and bash.

For every task of ``OUT/tasks.jsonl``:

- **leaks**: ``git clone`` of its ``repo_path`` as the docs say; the clone must hold exactly
  one commit (``base_commit``, no parent), no ref or commit text naming the strategy or the
  instance id, and no object equal to a fixed file (each file the fix changes is hashed
  after ``git apply`` of ``patch`` in the work tree); ``OUT/repos/`` must not exist;
- **statements**: a template statement's count must equal ``len(FAIL_TO_PASS)``, its listed
  tests plus "and K more" must add up to it; no two tasks may share a statement;
- **spread and size**: per repo, tasks per changed function (the manifest's ``tasks.entity``;
  the changed files for a mined commit) and files; the share of fixes with 2+ hunks and 2+
  files; median changed lines;
- **replay** (``--replay N``: N tasks per repo): a fresh clone, the task's own
  ``setup_script``, ``eval_script`` (must fail); another fresh clone and setup, ``git apply``
  of the patch, ``eval_script`` (must pass); then the fix plus a deleted test file must fail
  again (exit 3).

    PYTHONPATH=. python benchmarks/tasks_audit.py /tmp/out --replay 1 --json /tmp/audit.json
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb

from datagen.sandbox.harness.protect import is_protected
from datagen.synth.spread import hunks, repo_spread, size_stats
from datagen.synth.statements import listed_tests

sys.path.insert(0, str(Path(__file__).parent))
from tasks_yield import _bash  # noqa: E402  (the same bash runner as the yield benchmark)

from datagen.records.tasks import TaskRecord  # noqa: E402

GIT = ["git", "-c", "core.quotepath=off", "-c", "advice.detachedHead=false"]


def git(cwd: Path, *args: str, input: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*GIT, *args], cwd=cwd, capture_output=True, text=True, input=input)


def leaks(out: Path, task: dict, scratch: Path) -> list[str]:
    """What of the fix (or of how the task was made) a clone of the task's environment shows."""
    clone = scratch / "leak"
    shutil.rmtree(clone, ignore_errors=True)
    if git(scratch, "clone", "-q", str(out / task["repo_path"]), str(clone)).returncode != 0:
        return ["clone_failed"]
    found = []
    commits = git(clone, "rev-list", "--all").stdout.split()
    if commits != [task["base_commit"]]:
        found.append(f"commits:{len(commits)}")
    raw = git(clone, "cat-file", "-p", task["base_commit"]).stdout
    if "\nparent " in raw:
        found.append("parent_commit")
    refs = git(clone, "for-each-ref", "--format=%(refname)").stdout
    for word in (task["strategy"], task["instance_id"]):
        if word in refs or word in raw:
            found.append(f"names:{word}")
    objects = set(git(clone, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)").stdout.split())
    if git(clone, "apply", "-", input=task["patch"]).returncode != 0:
        return [*found, "patch_does_not_apply"]
    changed = git(clone, "diff", "--name-only", "HEAD").stdout.split()
    changed += git(clone, "ls-files", "--others", "--exclude-standard").stdout.split()
    for path in changed:
        if (clone / path).is_file() and git(clone, "hash-object", path).stdout.strip() in objects:
            found.append(f"fixed_blob:{path}")
    return found


def statement_problems(task: dict) -> list[str]:
    text, f2p = task["problem_statement"], task["FAIL_TO_PASS"]
    problems = []
    counts = re.findall(r"(\d+) tests? of its suite fails?", text) or re.findall(r"These (\d+) tests? must pass", text)
    if counts and int(counts[0]) != len(f2p):
        problems.append(f"count {counts[0]} != {len(f2p)}")
    listed = listed_tests(text)
    more = sum(int(k) for k in re.findall(r"^- and (\d+) more$", text, re.M))
    if task["statement_style"] == "template" and len(listed) + more != len(f2p):
        problems.append(f"listed {len(listed)} + {more} more != {len(f2p)}")
    return problems


def _fresh(out: Path, task: dict, scratch: Path) -> Path | None:
    """A fresh clone of the task's environment with its ``setup_script`` run (None: setup failed)."""
    clone = scratch / "replay"
    shutil.rmtree(clone, ignore_errors=True)
    git(scratch, "clone", "-q", str(out / task["repo_path"]), str(clone))
    return clone if _bash(task["setup_script"], clone) == 0 else None


def replay(out: Path, task: dict, scratch: Path) -> str:
    """'pass', or the step that failed. Each eval run gets its own fresh clone and setup, as a
    trainer's attempt gets a fresh container: files one run's tests write into the checkout
    (parser tables, snapshots) must not reach the next run."""
    try:
        clone = _fresh(out, task, scratch)
        if clone is None:
            return "setup_failed"
        if _bash(task["eval_script"], clone) == 0:
            return "eval_passes_before_fix"
        clone = _fresh(out, task, scratch)
        if clone is None:
            return "setup_failed"
        if git(clone, "apply", "-", input=task["patch"]).returncode != 0:
            return "patch_does_not_apply"
        if _bash(task["eval_script"], clone) != 0:
            return "eval_fails_after_fix"
        tracked = [p for p in git(clone, "ls-files").stdout.split() if is_protected(p)]
        if tracked:
            (clone / tracked[0]).unlink()
            if _bash(task["eval_script"], clone) != 3:
                return "test_deletion_not_refused"
        return "pass"
    finally:
        shutil.rmtree(scratch / "replay", ignore_errors=True)


def audit(out: Path, replay_per_repo: int) -> dict:
    tasks = [json.loads(line) for line in (out / "tasks.jsonl").read_text().splitlines() if line.strip()]
    with duckdb.connect(str(out / "manifest.duckdb"), read_only=True) as con:
        entities = dict(con.execute("SELECT instance_id, entity FROM tasks").fetchall())
        families = dict(con.execute("SELECT instance_id, family FROM tasks").fetchall())
        repos = dict(con.execute("SELECT repo, coalesce(language, '') FROM repo_baselines").fetchall())
    report: dict = {"tasks": len(tasks), "repos_dir_present": (out / "repos").exists(), "leaks": {},
                    "statement_problems": {}, "replays": {}}
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        for t in tasks:
            if found := leaks(out, t, scratch):
                report["leaks"][t["instance_id"]] = found
            if problems := statement_problems(t):
                report["statement_problems"][t["instance_id"]] = problems
        done: dict[str, int] = {}
        # a repo's feature task first, so every repo that gives one replays one
        for t in sorted(tasks, key=lambda t: families.get(t["instance_id"]) != "feature"):
            if done.get(t["repo"], 0) < replay_per_repo:
                done[t["repo"]] = done.get(t["repo"], 0) + 1
                report["replays"][t["instance_id"]] = replay(out, t, scratch)
    texts = [" ".join(t["problem_statement"].split()) for t in tasks]
    report["duplicate_statements"] = len(texts) - len(set(texts))
    records = [TaskRecord.model_validate(t) for t in tasks]
    spread = repo_spread(records, entities)
    size = size_stats(records)
    report["repos"] = [{"repo": r.repo, "language": repos.get(r.repo, ""), "tasks": r.tasks,
                        "functions": r.functions, "files": r.files, "per_function": round(r.per_function, 2),
                        "multi_place": sum(hunks(t.patch) >= 2 for t in records if t.repo == r.repo),
                        "multi_file": sum(t.changed_files >= 2 for t in records if t.repo == r.repo)}
                       for r in spread]
    report["median_repo_per_function"] = statistics.median([r.per_function for r in spread]) if spread else 0
    report["size"] = size.__dict__
    features = [r for r in records if families.get(r.instance_id) == "feature"]
    report["feature_size"] = size_stats(features).__dict__
    report["feature_repos"] = sorted({r.repo for r in features})
    report["feature_languages"] = sorted({repos.get(r, "") for r in report["feature_repos"]})
    report["large_share"] = round(sum(r.changed_lines >= 50 for r in records) / len(records), 3) if records else 0
    report["replayed_feature"] = sorted({t["repo"] for t in tasks if t["instance_id"] in report["replays"]
                                         and families.get(t["instance_id"]) == "feature"
                                         and report["replays"][t["instance_id"]] == "pass"})
    return report


def markdown(report: dict) -> str:
    lines = ["| repo | language | tasks | functions | files | tasks / function | 2+ places | 2+ files |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in report["repos"]:
        lines.append(f"| {r['repo']} | {r['language']} | {r['tasks']} | {r['functions']} | {r['files']} | "
                     f"{r['per_function']:.2f} | {r['multi_place']} | {r['multi_file']} |")
    s = report["size"]
    replays = report["replays"]
    lines += ["", f"- tasks: {report['tasks']}; leaking tasks: {len(report['leaks'])}; `repos/` present: "
              f"{report['repos_dir_present']}",
              f"- statements whose count differs from the row: {len(report['statement_problems'])}; duplicate "
              f"statements: {report['duplicate_statements']}",
              f"- tasks per changed function, median repo: {report['median_repo_per_function']:.2f}",
              f"- fixes with 2+ places: {s['multi_place']:.0%}; 2+ files: {s['multi_file']:.0%}; changed lines "
              f"median {s['lines_median']}, hunks median {s['hunks_median']}, files mean {s['files_mean']}",
              f"- replayed outside datagen: {sum(v == 'pass' for v in replays.values())}/{len(replays)} pass"
              + ("" if all(v == "pass" for v in replays.values()) else f" ({replays})"),
              f"- fixes of 50+ changed lines: {report['large_share']:.0%}"]
    f = report["feature_size"]
    if f["tasks"]:
        lines += [f"- feature tasks: {f['tasks']} from {len(report['feature_repos'])} repos "
                  f"({', '.join(report['feature_languages'])}); changed lines median {f['lines_median']}, "
                  f"p90 {f['lines_p90']}; 2+ files: {f['multi_file']:.0%}; files mean {f['files_mean']}; "
                  f"a feature task replayed in: {', '.join(report['replayed_feature']) or 'none'}"]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path, help="a `datagen build tasks` output folder")
    ap.add_argument("--replay", type=int, default=1, help="tasks replayed per repo (0: none)")
    ap.add_argument("--json", type=Path, help="write the full report here")
    args = ap.parse_args()
    report = audit(args.out, args.replay)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, sort_keys=True))
    print(markdown(report))


if __name__ == "__main__":
    main()
