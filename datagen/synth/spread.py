"""How a build's tasks spread over the code, and how large their fixes are.

A set of tasks is worth more when its bugs are spread over many functions and files (a
policy cannot learn one function's answer) and when some fixes span several places, as
real fixes do. These are the figures the summary, the dataset card and the benchmarks
report: per repo, tasks per changed function and per file; over all tasks, the share whose
fix changes two or more places (hunks) or files; and the size distribution of the fixes
next to SWE-bench's.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from datagen.records.tasks import TaskRecord

# Published sizes of SWE-bench-style fixes to read ours against (changed lines: median over
# the benchmark's gold patches; files: mean files per Multilingual-style fix).
SWE_BENCH = {"changed lines (median)": "7-10", "files (mean)": "~1.7"}


def hunks(patch: str) -> int:
    """Places a unified diff changes (its ``@@`` hunks)."""
    return sum(1 for line in patch.splitlines() if line.startswith("@@ "))


def functions_of(entity: str, record: TaskRecord) -> list[str]:
    """The functions a task's fix changes: its candidate's entities (``;``-joined for a
    combined task), or the changed files where no entity is known (a mined commit)."""
    named = [e for e in entity.split(";") if e]
    if named:
        return named
    return sorted({line.split(" b/", 1)[1] for line in record.patch.splitlines()
                   if line.startswith("diff --git ") and " b/" in line})


@dataclass(frozen=True)
class RepoSpread:
    repo: str
    tasks: int
    functions: int  # distinct functions the repo's tasks change
    files: int  # distinct files they change
    max_per_function: int

    @property
    def per_function(self) -> float:
        return self.tasks / self.functions if self.functions else 0.0


def repo_spread(records: Iterable[TaskRecord], entities: Mapping[str, str]) -> list[RepoSpread]:
    """Per repo, from its tasks and each task's entity (instance id -> entity)."""
    per: dict[str, list[TaskRecord]] = {}
    for r in records:
        per.setdefault(r.repo, []).append(r)
    out = []
    for repo, mine in sorted(per.items()):
        counts: dict[str, int] = {}
        files: set[str] = set()
        for r in mine:
            for f in functions_of(entities.get(r.instance_id, ""), r):
                counts[f] = counts.get(f, 0) + 1
            files |= {line.split(" b/", 1)[1] for line in r.patch.splitlines()
                      if line.startswith("diff --git ") and " b/" in line}
        out.append(RepoSpread(repo, len(mine), len(counts), len(files), max(counts.values(), default=0)))
    return out


@dataclass(frozen=True)
class SizeStats:
    tasks: int
    lines_median: float
    lines_p90: int
    hunks_median: float
    files_mean: float
    multi_place: float  # share of tasks whose fix has 2+ hunks
    multi_file: float  # share of tasks whose fix changes 2+ files


def size_stats(records: list[TaskRecord]) -> SizeStats:
    if not records:
        return SizeStats(0, 0, 0, 0, 0.0, 0.0, 0.0)
    lines = sorted(r.changed_lines for r in records)
    places = [hunks(r.patch) for r in records]
    n = len(records)
    return SizeStats(n, statistics.median(lines), lines[int(0.9 * (n - 1))], statistics.median(places),
                     round(sum(r.changed_files for r in records) / n, 2),
                     round(sum(p >= 2 for p in places) / n, 3),
                     round(sum(r.changed_files >= 2 for r in records) / n, 3))


def spread_markdown(records: list[TaskRecord], entities: Mapping[str, str]) -> list[str]:
    """The card's "spread and size" section as markdown lines."""
    s = size_stats(records)
    spread = repo_spread(records, entities)
    per_fn = [r.per_function for r in spread]
    out = ["## Spread and size", "",
           f"- tasks per changed function: median repo {statistics.median(per_fn):.2f}" if per_fn else "- no tasks",
           f"- fixes changing 2+ places (hunks): {s.multi_place:.0%}; 2+ files: {s.multi_file:.0%}",
           f"- changed lines: median {s.lines_median}, p90 {s.lines_p90}; hunks: median {s.hunks_median}; "
           f"files: mean {s.files_mean}",
           *(f"- SWE-bench, {k}: {v}" for k, v in SWE_BENCH.items()), "",
           "| repo | tasks | functions | files | tasks per function | most tasks on one function |",
           "|---|---:|---:|---:|---:|---:|"]
    out += [f"| {r.repo} | {r.tasks} | {r.functions} | {r.files} | {r.per_function:.2f} | {r.max_per_function} |"
            for r in spread]
    return out


# Published sizes of the gold changes of agent benchmarks, what a build's sizes are read against.
AGENT_REFERENCES = [
    ("SWE-bench Verified", "mean 11.6 lines, 86% in one file"),
    ("SWE-bench Pro", "mean 107 lines over 4.1 files (1-10-line edits excluded)"),
    ("CursorBench (Composer 2 report)", "median 181 lines"),
    ("SWE-Dev (feature tasks)", "mean 190 lines over 3 files"),
]
LARGE_FIX = 50  # changed lines from which a fix counts as large


def family_markdown(records: list[TaskRecord], families: Mapping[str, str]) -> list[str]:
    """The card's "size by family" section: per family (instance id -> family), its tasks'
    changed lines (median, p90), mean files, the share in 2+ files and of 50+ lines; then
    the same over all tasks, beside the agent benchmarks' published sizes."""
    by: dict[str, list[TaskRecord]] = {}
    for r in records:
        by.setdefault(families.get(r.instance_id, "") or "unknown", []).append(r)
    out = ["## Size by family", "",
           "| family | tasks | changed lines (median) | p90 | files (mean) | 2+ files | 50+ lines |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    for name, mine in [*sorted(by.items()), ("all", records)]:
        if not mine:
            continue
        s = size_stats(mine)
        large = sum(r.changed_lines >= LARGE_FIX for r in mine) / len(mine)
        out.append(f"| {name} | {s.tasks} | {s.lines_median} | {s.lines_p90} | {s.files_mean} | "
                   f"{s.multi_file:.0%} | {large:.0%} |")
    out += ["", "| reference | size of the gold change |", "|---|---|",
            *(f"| {k} | {v} |" for k, v in AGENT_REFERENCES)]
    return out
