"""The soundness stage of ``datagen build rl-pool``: the static checks on every clean task,
the teacher judge when ``soundness.judge.enabled``, then the policy (``pool/soundness``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.console import Console

from datagen.builds.base import accounted_teacher
from datagen.config.rl_pool import RlPoolRecipe
from datagen.pool.judge import judge_tasks
from datagen.pool.soundness import apply_policy, judge_flags, removed_by_flag, static_rows, task_view
from datagen.records import JudgeRow, PoolDropRow, PoolRow, SoundnessRow
from datagen.runtime.progress import progress_bar
from datagen.runtime.run import BuildRun


@dataclass
class Soundness:
    rows: list[PoolRow]
    drops: list[PoolDropRow] = field(default_factory=list)
    checks: list[SoundnessRow] = field(default_factory=list)
    judgements: list[JudgeRow] = field(default_factory=list)
    removed: dict[str, int] | None = None  # flag -> tasks it removed (None: no check ran)


def check_soundness(cfg: RlPoolRecipe, rows: list[PoolRow], inputs, run: BuildRun, console: Console) -> Soundness:
    """Flag every task of ``rows`` (static checks, and the judge's verdicts), then keep or
    drop the flagged ones as the recipe says."""
    c = cfg.soundness
    if not c.enabled and not c.judge.enabled:
        return Soundness(rows)
    wanted = {r.task_id for r in rows}
    tasks = [(t, b) for t, b in inputs if t.instance_id in wanted]
    with progress_bar(console, "soundness", None):
        checks = static_rows(run.run_id, tasks, wanted) if c.enabled else []
        judged: list[JudgeRow] = []
        if c.judge.enabled:
            teacher = accounted_teacher(run, c.judge.teacher)
            judged = judge_tasks(run.run_id, [(t, task_view(t, b)) for t, b in tasks], c.judge, teacher)
            checks += judge_flags(run.run_id, judged, c, {t.instance_id: t.repo for t, _ in tasks},
                                  {t.instance_id: t.strategy for t, _ in tasks})
    kept, drops, checks = apply_policy(c, rows, checks)
    return Soundness(kept, drops, checks, judged, removed_by_flag(checks))
