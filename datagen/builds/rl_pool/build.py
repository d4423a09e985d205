"""``datagen build rl-pool``: verified tasks -> RL instructions that are hard but
solvable for the current policy, in a pool that hands each one out once.

Stages:
1. rows: every task of ``tasks.jsonl`` as a pool row (chat prompt, reward spec, lineage);
2. hygiene: benchmark decontamination, near-duplicate statements, split by repository;
   then soundness (``builds/rl_pool/soundness.py``): static checks on every task and the
   optional teacher judge; a flagged task is dropped (``unsound``) or kept with its flags;
3. perplexity (``perplexity.enabled``): a score per statement (and fix), the recipe's cut;
4. difficulty (a ``policy`` and ``difficulty.enabled``): K attempts per task graded in the
   sandbox, the pass-rate band kept, a hint per failed attempt, the best passing attempt
   per task as SFT data. The policy is asked here; the grading is a datatrove stage on
   the recipe's executor (local, slurm or ray; one task per repo on a cluster, see
   ``builds/rl_pool/grading.py``), resumable per task;
5. write: pool shards, exports (verl, SkyRL, SWE-bench), card, SFT JSONL, and the manifest
   (``pool``, ``pool_drops``, ``scores``, ``attempts``, ``difficulty``, ``teacher_calls``).

Every instruction dropped on the way is in ``pool_drops`` with its reason. The ledger
(``ledger/journal.jsonl``) is never touched by a build: instructions already handed out
stay handed out when the pool is rebuilt.

The run is a ``base.Build``: the files of stage 5 are written into the run's staging
folder and switch in around the manifest transaction (``switch``), so a failed or killed
build leaves the previous pool or the new one.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from rich.console import Console

from datagen.builds.base import Build, accounted_teacher
from datagen.builds.rl_pool.agent import OUTPUTS as AGENT_OUTPUTS
from datagen.builds.rl_pool.agent import AgentOutputs, agent_difficulty
from datagen.builds.rl_pool.grading import grade_all, scorer_for
from datagen.builds.rl_pool.soundness import check_soundness
from datagen.config.rl_pool import RlPoolRecipe
from datagen.errors import EmptyBuild, JobsSubmitted
from datagen.manifest import Manifest
from datagen.pool.exports import CardInfo, write_pool
from datagen.pool.hygiene import clean, drop_row
from datagen.pool.manifest import record_pool
from datagen.pool.rows import read_pool_tasks, rows_from_tasks
from datagen.records import AttemptRow, DifficultyRow, JudgeRow, PoolDropRow, PoolRow, ScoreRow, SoundnessRow
from datagen.runtime.atomic import atomic_write
from datagen.runtime.executors import StageRunner
from datagen.runtime.progress import progress_bar
from datagen.runtime.run import BuildRun
from datagen.score import DifficultyReport, band_decision, best_attempts, get_scorer

DIFFICULTY_SCORER = "difficulty_v1"


@dataclass
class PoolResult:
    output: Path
    run_id: str
    skipped: bool
    funnel: dict[str, int] = field(default_factory=dict)
    dropped_by_reason: dict[str, int] = field(default_factory=dict)
    sft: int = 0
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0
    submitted: JobsSubmitted | None = None  # --executor slurm: the stage submitted, the build's next job


@dataclass
class _Scored:
    rows: list[PoolRow]
    drops: list[PoolDropRow] = field(default_factory=list)
    scores: list[ScoreRow] = field(default_factory=list)
    attempts: list[AttemptRow] = field(default_factory=list)
    difficulty: list[DifficultyRow] = field(default_factory=list)
    sft: list[dict] = field(default_factory=list)
    agent: AgentOutputs | None = None  # difficulty.mode agent: runs, trajectories, segments


# What the build replaces in its output folder through the output switch (the ledger and
# on-demand Harbor exports are not the build's: they stay).
OWNED_OUTPUTS = ("data/*.parquet", "exports/verl/*.parquet", "exports/skyrl/*.parquet", "exports/swebench.jsonl",
                 "README.md", "sft/train.jsonl", *AGENT_OUTPUTS)


def load_pool_recipe(recipe, overrides, tasks, output, workers) -> RlPoolRecipe:
    """The recipe with its flags (``base.recipe_with_flags``: ``--workers 0`` is refused)."""
    return RlPoolBuild.load(recipe, overrides, tasks=tasks, output=output, workers=workers)


def run_rl_pool(tasks: str | Path | None = None, output: str | Path | None = None, recipe: str | Path | None = None,
                overrides: list[str] | None = None, workers: int | None = None, force: bool = False,
                console: Console | None = None, allow_empty: bool = False) -> PoolResult:
    """Run the build; see the module docstring. A pool that would hold no instruction is
    refused (``EmptyBuild``, before any output is written) unless ``allow_empty``."""
    return RlPoolBuild(load_pool_recipe(recipe, overrides, tasks, output, workers), force, console, allow_empty).run()


class RlPoolBuild(Build):
    """The pool build in the ``Build`` template: the tasks it reads name the run."""

    name = "rl-pool"
    recipe_type = RlPoolRecipe
    result_type = PoolResult
    owned = OWNED_OUTPUTS

    def fingerprint(self) -> str:
        self.inputs = read_pool_tasks(self.cfg.tasks)  # UserError when missing or malformed
        return hashlib.sha256(json.dumps([[t.model_dump(mode="json"), str(b)] for t, b in self.inputs],
                                         sort_keys=True).encode()).hexdigest()[:16]

    def build(self, run: BuildRun, runner: StageRunner) -> PoolResult:
        return _build(self.cfg, self.out, run, runner, self.inputs, self.console,
                      self.fresh_stage(run), functools.partial(self.publish, run), self.allow_empty)


def _refuse_empty(cfg: RlPoolRecipe, funnel: dict[str, int], drops: list[PoolDropRow], out: Path) -> None:
    """No instruction left: ``EmptyBuild``, one line with the funnel's largest drop reasons."""
    reasons: dict[str, int] = {}
    for d in drops:
        reasons[d.reason] = reasons.get(d.reason, 0) + 1
    why = ", ".join(f"{r} {n}" for r, n in sorted(reasons.items(), key=lambda x: (-x[1], x[0]))[:4])
    raise EmptyBuild(f"no instruction pooled of {funnel['tasks']} tasks in {cfg.tasks} ({why or 'no task in it'}); "
                     f"no shard written to {out}. Check --input (a tasks build's output), or pass "
                     "--allow-empty to write the empty pool")


def _build(cfg: RlPoolRecipe, out: Path, run: BuildRun, runner: StageRunner, inputs,
           console: Console, stage: Path, publish, allow_empty: bool = False) -> PoolResult:
    rows = rows_from_tasks(cfg.tasks, group_size=cfg.difficulty.k, lint_command=cfg.pool.lint_command)
    funnel = {"tasks": len(rows)}
    h = cfg.hygiene
    rows, drops = clean(rows, h.decontam if h.decontam.enabled else None, h.near_dedup, h.eval_fraction,
                        h.eval_repos, cfg.seed)
    funnel["clean"] = len(rows)
    sound = check_soundness(cfg, rows, inputs, run, console)
    funnel["sound"] = len(sound.rows)
    s = _Scored(sound.rows, [*drops, *sound.drops])
    _perplexity(cfg, s, run.run_id, console)
    funnel["scored"] = len(s.rows)
    notes = _difficulty(cfg, s, inputs, run, runner, console)
    funnel["in band"] = len(s.rows)
    if not s.rows and not allow_empty:
        _refuse_empty(cfg, funnel, s.drops, out)
    info = CardInfo(pretty_name=cfg.pool.pretty_name, data_source=cfg.pool.data_source,
                    description=_description(cfg, notes), soundness=sound.removed)
    shards = write_pool(s.rows, s.drops, stage, info)  # staged: switched in around the manifest
    _write_sft(stage, s.sft)
    if s.agent is not None:
        s.agent.write(stage)

    def commit(mark) -> None:
        with Manifest(out) as m:
            record_pool(m, run.run_id, s.rows, s.drops, shards, out,
                        also={ScoreRow: s.scores, AttemptRow: s.attempts, DifficultyRow: s.difficulty,
                              SoundnessRow: sound.checks, JudgeRow: sound.judgements,
                              **(s.agent.tables() if s.agent else {})}, mark=mark)

    publish(commit)
    funnel["pooled"] = len(s.rows)
    reasons: dict[str, int] = {}
    for d in s.drops:
        reasons[d.reason] = reasons.get(d.reason, 0) + 1
    return PoolResult(out, run.run_id, False, funnel, dict(sorted(reasons.items())), len(s.sft), notes)


def _description(cfg: RlPoolRecipe, notes: list[str]) -> str:
    text = "RL instructions for coding agents, built by `datagen build rl-pool`."
    return text + ("".join(f" {n}." for n in notes) if notes else "")


# perplexity ------------------------------------------------------------------------------
def _perplexity(cfg: RlPoolRecipe, s: _Scored, run_id: str, console: Console) -> None:
    """Score every statement (and fix), then apply the recipe's cut."""
    if not cfg.perplexity.enabled or not s.rows:
        return
    scorer = get_scorer(cfg.perplexity)
    with progress_bar(console, "perplexity", None):
        scorer.load()
        values = scorer.score([r.problem_statement for r in s.rows])
        fixes = scorer.score([r.patch for r in s.rows]) if cfg.perplexity.score_fix else []
    for kind, vals in (("perplexity_statement", values), ("perplexity_fix", fixes)):
        s.scores += [ScoreRow(run_id=run_id, item_id=r.instruction_id, scorer=scorer.name, kind=kind,
                              value=None if math.isnan(v) else float(v)) for r, v in zip(s.rows, vals)]
    s.rows = [r.model_copy(update={"perplexity": None if math.isnan(v) else float(v),
                                   "perplexity_scorer": scorer.name}) for r, v in zip(s.rows, values)]
    low, high = _bounds(cfg, [r.perplexity for r in s.rows if r.perplexity is not None])
    kept = []
    for r in s.rows:
        p = r.perplexity
        reason = None if p is None else "perplexity_too_low" if p < low else "perplexity_too_high" if p > high else None
        if reason:
            s.drops.append(drop_row(r, reason, f"{p:.3f} outside [{low:.3f}, {high:.3f}]"))
        else:
            kept.append(r)
    s.rows = kept


def _bounds(cfg: RlPoolRecipe, values: list[float]) -> tuple[float, float]:
    """The kept perplexity range: the tighter of the absolute and the percentile bounds."""
    c = cfg.perplexity_cut
    low, high = -math.inf, math.inf
    if c.min is not None:
        low = c.min
    if c.max is not None:
        high = c.max
    if values and c.min_percentile is not None:
        low = max(low, float(np.percentile(values, c.min_percentile)))
    if values and c.max_percentile is not None:
        high = min(high, float(np.percentile(values, c.max_percentile)))
    return low, high


# difficulty ------------------------------------------------------------------------------
def _difficulty(cfg: RlPoolRecipe, s: _Scored, inputs, run: BuildRun, runner: StageRunner,
                console: Console) -> list[str]:
    """K policy attempts per remaining task (asked here, graded by a ``GradeStage`` on the
    recipe's executor); keep the band. Returns notes for the card."""
    if not cfg.difficulty.enabled:
        return ["Pass rates: unknown (difficulty.enabled is false)"]
    if not cfg.has_policy:
        return ["Pass rates: unknown (no policy; set policy.base_url to measure them)"]
    from datagen.sandbox.isolation.select import untrusted_sandbox

    sandbox = untrusted_sandbox(cfg.sandbox.backend)
    policy = accounted_teacher(run, cfg.policy)  # calls land in teacher_calls with the run's row
    wanted = {r.task_id for r in s.rows}
    tasks = [(t, b) for t, b in inputs if t.instance_id in wanted]
    if cfg.difficulty.mode == "agent":
        return _agent_difficulty(cfg, s, tasks, policy, run, console)
    scorer = scorer_for(cfg, sandbox, policy, run.work)
    with progress_bar(console, f"policy ({cfg.difficulty.k} attempts per task)", None):
        prepared = scorer.prepare(tasks)
        answers = scorer.ask(prepared)
    jobs = [(p.task, p.base, answers[p.task.instance_id]) for p in prepared if p.error is None]
    report = scorer.report(prepared, grade_all(cfg, jobs, run.work, runner), run.run_id)
    s.attempts, s.difficulty = report.attempt_rows(), report.tasks
    _apply_band(cfg, s, report)
    best = best_attempts(report.attempts)
    if cfg.pool.sft:
        s.sft = [_sft_row(r, best[r.task_id]) for r in s.rows if r.task_id in best]
    return []


def _agent_difficulty(cfg: RlPoolRecipe, s: _Scored, tasks, policy, run: BuildRun, console: Console) -> list[str]:
    """``difficulty.mode: agent``: K mini-swe-agent runs per task (``rl_pool/agent.py``), the
    band kept on pass@1 over the unmasked runs; the runs are the SFT data."""
    s.agent = agent_difficulty(cfg, tasks, policy, run, console)
    report = s.agent.report
    s.attempts = [a.row(run.run_id, report.policy_id) for a in report.attempts]
    s.difficulty = report.tasks
    _apply_band(cfg, s, report)
    return ["Pass rates: pass@1 of mini-swe-agent runs (masked runs excluded)"]


def _apply_band(cfg: RlPoolRecipe, s: _Scored, report: DifficultyReport) -> None:
    by_task = {d.instance_id: d for d in report.tasks}
    kept = []
    for r in s.rows:
        d = by_task[r.task_id]
        if d.error:
            s.drops.append(drop_row(r, "no_attempts", d.error))
            continue
        ok, reason = band_decision(d.passes, d.k, cfg.difficulty)
        update = {"pass_rate": d.pass_rate, "policy_id": report.policy_id, "scorer": DIFFICULTY_SCORER,
                  "difficulty_band": "in_band" if ok else reason}
        if ok:
            kept.append(r.model_copy(update=update))
        else:
            s.drops.append(drop_row(r, reason, f"{d.passes}/{d.k} passed"))
    s.rows = kept


def _sft_row(row: PoolRow, attempt) -> dict:
    """A chat SFT example: the instruction's prompt and the best passing answer."""
    answer = f"```diff\n{attempt.patch.rstrip()}\n```"
    messages = [m.model_dump() for m in row.prompt] + [{"role": "assistant", "content": answer}]
    return {"instruction_id": row.instruction_id, "task_id": row.task_id, "sample": attempt.sample,
            "messages": messages}


def _write_sft(out: Path, rows: list[dict]) -> None:
    path = out / "sft" / "train.jsonl"
    if not rows:
        path.unlink(missing_ok=True)
        return
    atomic_write(path, "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n"
                               for r in sorted(rows, key=lambda r: r["instruction_id"])), mkdir=True)


__all__ = ["run_rl_pool", "PoolResult", "load_pool_recipe"]
