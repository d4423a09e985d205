"""The summary table printed at the end of a build."""

from __future__ import annotations

import os

import humanize
from rich.console import Console
from rich.table import Table

from datagen.synth.spread import repo_spread, size_stats


def _console() -> Console:
    """stdout, silent under ``datagen -q`` (warnings and errors go to stderr either way)."""
    return Console(quiet=os.environ.get("DATAGEN_QUIET") == "1")


def _human(n: float) -> str:
    return humanize.naturalsize(n, binary=True, format="%.1f")


def print_build_summary(result, console: Console | None = None) -> None:
    console = console or _console()
    table = Table(title=f"cpt-corpus → {result.output}", show_header=True)
    table.add_column("files")
    table.add_column("count", justify="right")
    table.add_column("", justify="right")
    table.add_row("seen", str(result.seen), "")
    table.add_row("kept", str(result.kept), _human(result.kept_bytes))
    dropped = sum(result.dropped_by_reason.values())
    table.add_row("dropped", str(dropped), "")
    for reason, n in result.dropped_by_reason.items():
        table.add_row(f"  {reason}", str(n), "")
    console.print(table)
    mb = result.kept_bytes / 1e6
    console.print(
        f"{len(result.shards)} shard(s) in {result.output / 'data'}; manifest "
        f"{result.output / 'manifest.duckdb'}; {result.seconds:.1f} s "
        f"({result.seen / max(result.seconds, 1e-9):.0f} files/s, {mb / max(result.seconds, 1e-9):.1f} MB/s kept)"
    )
    if result.stage_seconds:
        console.print("time per stage: " + ", ".join(f"{k} {v:.1f} s" for k, v in result.stage_seconds.items()))
    for p in getattr(result, "packed", []):
        waste = p.padding_tokens / max(p.tokens, 1)
        console.print(
            f"tokens/{p.seq_len}: {p.split} {p.sequences} sequences x {p.seq_len} = {p.tokens} tokens "
            f"from {p.documents} repo documents ({waste:.2%} padding)"
        )
        if waste > 0.005:
            console.print(f"  [yellow]padding over 0.5%:[/] the last of only {p.sequences} sequence(s) is "
                          "padded; a larger corpus, or --set pack.remainder=drop, avoids it")
    console.print(f"charts of this build: datagen report {result.output}")


FUNNEL = ("generated", "applied", "broke_tests", "valid", "kept")
_STAGE_RANK = {s: i for i, s in enumerate(FUNNEL)}


def print_tasks_summary(result, console: Console | None = None) -> None:
    """Per repo and per strategy: how candidates fared, and what a kept task cost."""
    console = console or _console()
    repos = Table(title=f"tasks → {result.output}", show_header=True)
    for col in ("repo", "runner", "language", "tests", "flaky", "entities (covered)", "status"):
        repos.add_column(col)
    for r in result.repos:
        repos.add_row(r.repo, r.runner or "-", r.language or "-", str(r.tests), str(len(r.flaky_tests)),
                      f"{r.entities} ({r.covered_entities})", r.status + (f": {r.reason}" if r.reason else ""))
    console.print(repos)
    _print_languages(result, console)
    _print_repo_outcomes(result, console)
    funnel = Table(title="candidates per strategy (funnel)", show_header=True)
    funnel.add_column("strategy")
    for stage in FUNNEL:
        funnel.add_column(stage.replace("_", " "), justify="right")
    by: dict[str, list[int]] = {}
    for c in result.candidates:
        counts = by.setdefault(c.strategy, [0] * len(FUNNEL))
        for i in range(_STAGE_RANK.get(c.stage, 0) + 1):
            counts[i] += 1
    for name, counts in sorted(by.items()):
        funnel.add_row(name, *map(str, counts))
    console.print(funnel)
    kept = max(len(result.tasks), 1)
    sandbox_s = sum(c.sandbox_s for c in result.candidates)
    tokens = sum(c.teacher_tokens for c in result.candidates)
    lines = sorted(t.changed_lines for t in result.tasks) or [0]
    console.print(f"{len(result.tasks)} tasks in {result.output / 'tasks.jsonl'}; {result.seconds:.1f} s; "
                  f"per kept task: {sandbox_s / kept:.1f} sandbox s, {tokens / kept:.0f} teacher tokens")
    console.print(f"fix size: median {lines[len(lines) // 2]} changed lines (SWE-bench ~7-10, CursorBench ~181)")
    _print_spread(result, console)
    for note in result.notes:
        console.print(f"[yellow]note:[/] {note}")
    console.print(f"replay them: datagen validate {result.output / 'tasks.jsonl'}")


def _print_spread(result, console: Console) -> None:
    """Per repo: tasks per changed function and file; overall: multi-place and multi-file shares."""
    if not result.tasks:
        return
    entities = {c.instance_id: c.entity for c in result.candidates if c.instance_id}
    table = Table(title="spread over the code", show_header=True)
    for col in ("repo", "tasks", "functions", "files", "tasks / function", "most on one function"):
        table.add_column(col, justify="left" if col == "repo" else "right")
    for r in repo_spread(result.tasks, entities):
        table.add_row(r.repo, str(r.tasks), str(r.functions), str(r.files), f"{r.per_function:.2f}",
                      str(r.max_per_function))
    console.print(table)
    s = size_stats(result.tasks)
    console.print(f"fixes: {s.multi_place:.0%} change 2+ places, {s.multi_file:.0%} 2+ files; median "
                  f"{s.hunks_median} hunks, {s.lines_median} lines, {s.files_mean} files (SWE-bench: median "
                  f"7-10 lines, ~1.7 files)")


def _print_languages(result, console: Console) -> None:
    """Per task language: repos, candidates, tasks and the yield (tasks per candidate)."""
    lang_of = {r.repo: r.language or "-" for r in result.repos}
    per: dict[str, list[int]] = {}
    for r in result.repos:
        per.setdefault(lang_of[r.repo], [0, 0, 0])[0] += 1
    for c in result.candidates:
        per.setdefault(lang_of.get(c.repo, "-"), [0, 0, 0])[1] += 1
    for t in result.tasks:
        per.setdefault(lang_of.get(t.repo, "-"), [0, 0, 0])[2] += 1
    table = Table(title="tasks per language", show_header=True)
    for col in ("language", "repos", "candidates", "tasks", "yield"):
        table.add_column(col, justify="left" if col == "language" else "right")
    for lang, (n_repos, n_cand, n_tasks) in sorted(per.items()):
        table.add_row(lang, str(n_repos), str(n_cand), str(n_tasks), f"{n_tasks / n_cand:.0%}" if n_cand else "-")
    console.print(table)


def _print_repo_outcomes(result, console: Console) -> None:
    """Repos grouped by what became of them (yielded, env failed, no tests, ...)."""
    yielded = {t.repo for t in result.tasks}
    groups: dict[str, list[str]] = {}
    for r in result.repos:
        key = "yielded" if r.repo in yielded else (r.reason or "no tasks")
        groups.setdefault(key, []).append(r.repo)
    line = "; ".join(f"{k}: {len(v)}" + ("" if k == "yielded" else f" ({', '.join(v[:4])})")
                     for k, v in sorted(groups.items(), key=lambda kv: (kv[0] != "yielded", kv[0])))
    console.print(f"repos by outcome: {line}")
    for r in result.repos:  # a repo that gives nothing: why, in its runner's or installer's words
        if r.reason and getattr(r, "detail", ""):
            console.print(f"  {r.repo}: {r.reason}: {_one_line(r.detail, WHY_CHARS)}", markup=False,
                          highlight=False, soft_wrap=True)


WHY_CHARS = 400  # of a repo's detail in the summary (the manifest's repo_baselines.detail holds it whole)


def _one_line(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[:width - 3] + "..."


def print_pool_summary(result, console: Console | None = None) -> None:
    """The funnel tasks -> clean -> sound -> scored -> in band -> pooled, and the drop reasons."""
    console = console or _console()
    table = Table(title=f"rl-pool → {result.output}", show_header=True)
    table.add_column("stage")
    table.add_column("instructions", justify="right")
    for stage, n in result.funnel.items():
        table.add_row(stage, str(n))
    for reason, n in result.dropped_by_reason.items():
        table.add_row(f"  dropped: {reason}", str(n))
    console.print(table)
    console.print(f"{result.funnel.get('pooled', 0)} instructions in {result.output / 'data'}; exports in "
                  f"{result.output / 'exports'}; {result.sft} SFT examples; {result.seconds:.1f} s")
    for note in result.notes:
        console.print(f"[yellow]note:[/] {note}")
    console.print(f"hand them out once: datagen pool take {result.output} --n 256 --consumer RUN")


def print_all_summary(result, console: Console | None = None) -> None:
    """One row per stage of ``build all``: what happened, its run and its counts."""
    console = console or _console()
    table = Table(title=f"all → {result.output}", show_header=True)
    for col in ("stage", "status", "run", "counts", "seconds"):
        table.add_column(col, justify="right" if col == "seconds" else "left")
    for s in result.stages:
        counts = ", ".join(f"{n} {label}" for label, n in s.counts.items())
        table.add_row(s.stage, s.status, s.run_id or "-", counts, f"{s.seconds:.1f}")
    console.print(table)
    console.print(f"{result.seconds:.1f} s; runs of every stage: datagen runs {result.output}; "
                  f"charts: datagen report {result.output}/<stage>")


def print_submitted(result, console: Console | None = None) -> None:
    """What ``--executor slurm`` left queued: the stage's array job and the build's next job."""
    console = console or _console()
    sub = result.submitted
    console.print(f"submitted {sub.stage}: {sub.tasks} of {sub.total} task(s) as Slurm job {sub.job_id}; the build "
                  f"resumes in job {sub.continuation} when it ends (run {result.run_id}).")
    console.print(f"follow it: squeue -u $USER; datagen runs {result.output} (finished when the status says so); "
                  f"build logs in {result.output / 'logs' / 'slurm'}")
