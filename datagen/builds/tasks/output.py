"""What ``datagen build tasks`` leaves in its output folder, besides ``repos/``:
``tasks.jsonl``, ``data/train-*.parquet`` with a dataset card, and the manifest tables.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from datagen.config.tasks import TasksRecipe
from datagen.manifest import Manifest
from datagen.records import ShardRow
from datagen.records.env import RepoEnvRow
from datagen.records.hub import size_category
from datagen.records.tasks import CandidateRow, RepoBaselineRow, TaskRecord, TaskRow
from datagen.runtime.atomic import atomic_open, atomic_path, atomic_write
from datagen.synth.emit import Emitted, seal_task
from datagen.synth.gitrepo import TaskRepo
from datagen.synth.spread import family_markdown, hunks, spread_markdown

# Published task sizes (changed lines of the fix) to read ours against.
REFERENCES = {"SWE-bench": "7-10 changed lines (median)", "CursorBench": "181 changed lines (median)"}


def write_outputs(cfg: TasksRecipe, out: Path, run_id: str, states, rows: list[CandidateRow],
                  emitted: list[Emitted], work: Path | None = None, *, stage: Path | None = None,
                  publish=None) -> list[RepoBaselineRow]:
    """Write everything; returns the ``repo_baselines`` rows written (each with why it
    yields nothing, where it does not). The files go to ``stage`` (default ``out``) and the
    manifest transaction runs as ``publish(commit)`` (the build's output switch: the
    staged files move into ``out`` around it); without ``publish`` it runs as is."""
    files = stage if stage is not None else out
    records = sorted((e.record for e in emitted), key=lambda r: r.instance_id)
    write_envs(files, {s.repo.name: s.git for s in states if s.git is not None}, records)
    _write_jsonl(files / "tasks.jsonl", records)
    shard = _write_parquet(files / "data" / "train-00000-of-00001.parquet", records)
    by_id = {e.record.instance_id: e for e in emitted}
    entities = {i: e.candidate.entity for i, e in by_id.items()}
    families = {i: e.candidate.family for i, e in by_id.items()}
    _write_card(files, cfg, records, language_table([s.row for s in states], rows, records), entities, families)
    task_rows = [TaskRow(run_id=run_id, instance_id=r.instance_id,
                         candidate_id=by_id[r.instance_id].candidate.candidate_id,
                         statement_note=by_id[r.instance_id].statement_note,
                         repo=r.repo, strategy=r.strategy, family=by_id[r.instance_id].candidate.family,
                         base_commit=r.base_commit,
                         fail_to_pass=len(r.FAIL_TO_PASS), pass_to_pass=len(r.PASS_TO_PASS),
                         changed_files=r.changed_files, changed_lines=r.changed_lines,
                         hunks=hunks(r.patch), entity=entities[r.instance_id], env_path=r.repo_path,
                         entities=len([x for x in entities[r.instance_id].split(";") if x]),
                         statement_style=r.statement_style, statement_chars=len(r.problem_statement),
                         long_horizon=r.long_horizon) for r in records]
    counts: dict[str, int] = {}
    for r in records:
        counts[r.repo] = counts.get(r.repo, 0) + 1
    by_repo: dict[str, list[CandidateRow]] = {}
    for c in rows:
        by_repo.setdefault(c.repo, []).append(c)
    baselines = [why_no_tasks(s.row.model_copy(update={"run_id": run_id}), by_repo.get(s.row.repo, []),
                              counts.get(s.row.repo, 0)) for s in states]
    envs = [repo_env_row(run_id, b, counts.get(b.repo, 0), work) for b in baselines]

    def commit(mark) -> None:
        with Manifest(out) as m:
            m.execute("BEGIN TRANSACTION")
            for table in ("candidates", "tasks", "repo_baselines", "shards", "repo_envs"):
                m.execute(f"DELETE FROM {table}")
            m.insert(RepoBaselineRow, baselines)
            m.insert(RepoEnvRow, envs)
            m.insert(CandidateRow, rows)
            m.insert(TaskRow, task_rows)
            m.insert(ShardRow, [shard.model_copy(update={"run_id": run_id})])
            mark(m)
            m.execute("COMMIT")

    if publish is not None:
        publish(commit)
    else:
        commit(lambda m: None)
    return baselines


def write_envs(out: Path, stores: dict[str, TaskRepo], records: list[TaskRecord]) -> None:
    """Every task's sealed environment (``envs/<env_id>.git``), built beside the old ones and
    swapped in whole. The pre-seal layout (``repos/<repo>.git``: clean source and every
    task as branches, every answer readable) is removed from the output folder."""
    new, old = out / ".envs-new", out / ".envs-old"
    for stale in (new, old, out / "repos"):
        shutil.rmtree(stale, ignore_errors=True)
    new.mkdir(parents=True)
    for r in records:
        seal_task(stores[r.repo], r, new)
    if (out / "envs").exists():
        (out / "envs").rename(old)
    new.rename(out / "envs")
    shutil.rmtree(old, ignore_errors=True)


def why_no_tasks(row: RepoBaselineRow, rows: list[CandidateRow], tasks: int) -> RepoBaselineRow:
    """A repo whose suite ran fine but gave no task gets the reason too: no candidate
    (``no_candidates``: how many entities its passing tests reach) or none that proved
    itself (``no_valid_candidates``: the candidates' drop reasons, most frequent first)."""
    if tasks or row.status != "ok" or row.reason:
        return row
    mine = [r for r in rows if r.repo == row.repo]
    failing = f"; {row.failing_tests} tests fail in every run" if row.failing_tests else ""
    if failing and row.toolchain_mismatch:  # the likely cause, where the repo asks another toolchain
        failing += f" ({row.toolchain_mismatch})"
    if not mine:
        detail = f"{row.entities} entities, {row.covered_entities} reached by its {row.tests} passing tests{failing}"
        return row.model_copy(update={"reason": "no_candidates", "detail": detail})
    reasons: dict[str, int] = {}
    for r in mine:
        reasons[r.reason or r.status] = reasons.get(r.reason or r.status, 0) + 1
    top = ", ".join(f"{k} {n}" for k, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])))
    return row.model_copy(update={"reason": "no_valid_candidates", "detail": f"{len(mine)} candidates: {top}{failing}"})


def outcome_of(row: RepoBaselineRow, tasks: int) -> str:
    """The repo's outcome in the ``repo_envs`` sense (what the report groups repos by)."""
    if tasks:
        return "yielded"
    reason = row.reason or ""
    if reason in ("env_setup_failed", "env_holds_source") or reason.startswith("registry_unreachable"):
        return "env_failed"
    if reason in ("no_tests", "no_passing_tests", "no_test_runner"):
        return reason
    if reason.startswith("suite_"):
        return "suite_failed"
    return "no_tasks" if row.status == "ok" else "skipped"  # no_candidates / no_valid_candidates


def repo_env_row(run_id: str, row: RepoBaselineRow, tasks: int, work: Path | None) -> RepoEnvRow:
    """The repo's ``repo_envs`` row from its baseline row and the env record its baseline
    stage left in ``<work>/envs/<repo>.json`` (none when no env was built)."""
    rec_path = work / "envs" / f"{row.repo}.json" if work is not None else None
    rec = json.loads(rec_path.read_text()) if rec_path is not None and rec_path.is_file() else {}
    rep_path = work / "env-repairs" / f"{row.repo}.json" if work is not None else None
    rep = json.loads(rep_path.read_text()) if rep_path is not None and rep_path.is_file() else {}
    tried = sum(1 for r in rep.get("rounds", []) if r.get("outcome") not in ("no usable answer", "changed nothing"))
    plan = rec.get("plan") or {}
    steps = plan.get("install") or []
    sources = sorted({st.get("source", "rule") for st in steps}) or [""]
    source = "user" if "user" in sources else "teacher" if "teacher" in sources else sources[0]
    return RepoEnvRow(
        run_id=run_id, repo=row.repo, env_key=rec.get("env_key", ""), profile=plan.get("profile", row.runner or ""),
        plan=json.dumps(plan, sort_keys=True) if plan else "", plan_source=source if plan else "",
        step_sources=json.dumps([{k: st.get(k, "") for k in ("name", "origin", "source")} for st in steps]),
        toolchain=plan.get("toolchain", ""), toolchain_mismatch=plan.get("toolchain_mismatch"),
        installer=rec.get("installer", ""), attempts=(1 if rec else 0) + tried,
        seconds=round(float(rec.get("seconds", 0.0)) + float(rep.get("seconds", 0.0)), 2),
        outcome=outcome_of(row, tasks), reason=row.reason,
        failed_step=rec.get("failed_step", "") if rec.get("outcome") == "failed" else "",
        log_tail=rec.get("log_tail", "") if rec.get("outcome") == "failed" else "", tasks=tasks,
        notes=[*(plan.get("notes") or []),
               *(f"repair round {r['round']}: {r['outcome']}" for r in rep.get("rounds", []))])


def _write_jsonl(path: Path, records: list[TaskRecord]) -> None:
    with atomic_open(path, "w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r.model_dump(mode="json"), ensure_ascii=False, sort_keys=False) + "\n")


def _write_parquet(path: Path, records: list[TaskRecord]) -> ShardRow:
    path.parent.mkdir(parents=True, exist_ok=True)
    for stale in path.parent.glob("*.parquet"):
        stale.unlink()
    fields = list(TaskRecord.model_fields)
    rows = [r.model_dump(mode="json") for r in records]
    table = pa.Table.from_pylist(rows) if rows else pa.table({f: pa.array([], pa.string()) for f in fields})
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd")
    data = path.read_bytes()
    return ShardRow(run_id="", path=str(path.relative_to(path.parent.parent)), rows=len(records),
                    bytes=len(data), sha256=hashlib.sha256(data).hexdigest())


def language_table(repos: list[RepoBaselineRow], rows: list[CandidateRow], records: list[TaskRecord]) -> list[str]:
    """Markdown rows: per task language, its repos, candidates, tasks and the yield."""
    lang_of = {r.repo: r.language or "-" for r in repos}
    per: dict[str, list[int]] = {}
    for r in repos:
        per.setdefault(lang_of[r.repo], [0, 0, 0])[0] += 1
    for c in rows:
        per.setdefault(lang_of.get(c.repo, "-"), [0, 0, 0])[1] += 1
    for t in records:
        per.setdefault(t.language or lang_of.get(t.repo, "-"), [0, 0, 0])[2] += 1
    out = ["| language | repos | candidates | tasks | yield |", "|---|---:|---:|---:|---:|"]
    for lang, (n_repos, n_cand, n_tasks) in sorted(per.items()):
        out.append(f"| {lang} | {n_repos} | {n_cand} | {n_tasks} | {f'{n_tasks / n_cand:.0%}' if n_cand else '-'} |")
    return out


def _write_card(out: Path, cfg: TasksRecipe, records: list[TaskRecord], languages: list[str] = (),
                entities: dict[str, str] | None = None, families: dict[str, str] | None = None) -> None:
    header = {
        "license": "other", "pretty_name": "datagen agent tasks",
        "tags": ["code", "agents", "swe-bench", "datagen"], "task_categories": ["text-generation"],
        "size_categories": [size_category(len(records))],
        "configs": [{"config_name": "default", "default": True,
                     "data_files": [{"split": "train", "path": "data/train-*.parquet"}]}],
    }
    by_strategy: dict[str, int] = {}
    for r in records:
        by_strategy[r.strategy] = by_strategy.get(r.strategy, 0) + 1
    lines = ["---", yaml.safe_dump(header, sort_keys=False).rstrip(), "---", "",
             "# datagen agent tasks", "",
             "Software-engineering tasks proven by execution, built by `datagen build tasks`: each",
             "task's FAIL_TO_PASS tests fail at `base_commit` and pass, with every PASS_TO_PASS test,",
             "after `git apply` of `patch` (the fix). `bug_patch` is its reverse. A task's environment",
             "is `repo_path` (`envs/<env_id>.git`): one root commit holding the buggy tree and nothing",
             "else (`git clone envs/<env_id>.git work`). Every candidate, kept or not, is in",
             "`manifest.duckdb`.", "",
             "## Load", "", "```python", "import datasets",
             'ds = datasets.load_dataset("parquet", data_dir="data", split="train")', "```", "",
             "## Statistics", "", f"- tasks: {len(records)}",
             f"- long-horizon tasks (fix spans 5+ files): {sum(r.long_horizon for r in records)}",
             *(f"- reference, {k}: {v}" for k, v in REFERENCES.items()), "",
             *spread_markdown(records, entities or {}), "", *family_markdown(records, families or {}), "",
             "| strategy | tasks |", "|---|---:|",
             *(f"| {k} | {v} |" for k, v in sorted(by_strategy.items())), "", *languages, ""]
    atomic_write(out / "README.md", "\n".join(lines))
