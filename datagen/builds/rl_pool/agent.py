"""The rl-pool build's difficulty step in ``difficulty.mode: agent``: K mini-swe-agent runs per
task (``score.agent``), run in the build's process (each run is an HTTP client of the policy and
a series of sandboxed commands, ``difficulty.agent.workers`` at once), each stored under
``<work>/difficulty/agent/`` as it ends, so a resumed build pays for no run twice.

What it adds to the pool's output: ``trajectories/<run>.traj.json`` (mini-swe-agent's own format,
every run), ``trajectories/atif/<run>.<segment>.atif.json`` (Harbor's ATIF), ``sft/agent.jsonl``
(resolved runs as OpenAI chat rows with tool calls, one per segment, each with its reward), and
the manifest tables ``agent_runs``, ``agent_tasks`` and ``trajectory_segments``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from datagen.config.rl_pool import RlPoolRecipe
from datagen.records.agent import AgentRunRow, AgentTaskRow, TrajectorySegmentRow
from datagen.runtime.atomic import atomic_write
from datagen.runtime.progress import progress_bar
from datagen.runtime.run import BuildRun
from datagen.score.agent import AgentReport, AgentScorer
from datagen.score.agent.trajectories import atif, atif_name, segment_rows, sft_rows

OUTPUTS = ("trajectories/*.traj.json", "trajectories/atif/*.atif.json", "sft/agent.jsonl")


@dataclass
class AgentOutputs:
    """The agent step's rows and files, written by the build with the rest of the pool."""

    report: AgentReport
    runs: list[AgentRunRow] = field(default_factory=list)
    totals: list[AgentTaskRow] = field(default_factory=list)
    segments: list[TrajectorySegmentRow] = field(default_factory=list)
    write_trajectories: bool = True

    def tables(self) -> dict[type, list]:
        return {AgentRunRow: self.runs, AgentTaskRow: self.totals, TrajectorySegmentRow: self.segments}

    def write(self, stage: Path) -> None:
        """Trajectory files and SFT rows into the build's staging folder."""
        report = self.report
        rows = sft_rows(report.runs, report.policy_id)
        if rows:
            atomic_write(stage / "sft" / "agent.jsonl", "".join(json.dumps(r, ensure_ascii=False, sort_keys=True)
                                                                 + "\n" for r in rows), mkdir=True)
        if not self.write_trajectories:
            return
        for run in report.runs:
            name = re.sub(r"[^\w.-]", "_", run.trajectory_id)
            atomic_write(stage / "trajectories" / f"{name}.traj.json", json.dumps(run.trajectory, indent=1), mkdir=True)
            for n, doc in enumerate(atif(run, report.policy_id)):
                atomic_write(stage / "trajectories" / "atif" / atif_name(run, n), json.dumps(doc, indent=1), mkdir=True)


def agent_difficulty(cfg: RlPoolRecipe, tasks, policy, run: BuildRun, console: Console) -> AgentOutputs:
    """K agent runs per task against ``policy``; prints tokens and seconds per task."""
    from datagen.sandbox.isolation.select import untrusted_sandbox

    scorer = AgentScorer(cfg.difficulty, policy, untrusted_sandbox(cfg.sandbox.backend), limits=cfg.sandbox.limits,
                         env=cfg.env, ro_paths=[Path(p) for p in cfg.sandbox.ro_paths], work_root=run.work,
                         store=run.work / "difficulty" / "agent")
    with progress_bar(console, f"agent ({cfg.difficulty.k} runs per task)", None):
        report = scorer.score(tasks, run.run_id)
    for t in report.totals:
        rate = "n/a" if t.pass_at_1 is None else f"{t.pass_at_1:.2f}"
        console.print(f"  {t.instance_id}: pass@1 {rate} over {t.measured} runs ({t.masked} masked), "
                      f"{t.tokens_in} tokens in, {t.tokens_out} out, {t.seconds:.1f} s")
    return AgentOutputs(report, [r.row(run.run_id, report.policy_id) for r in report.runs], report.totals,
                        segment_rows(report.runs, run.run_id), cfg.difficulty.agent.trajectories)
