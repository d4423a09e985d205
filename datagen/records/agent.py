"""Records of agent rollouts (``difficulty.mode: agent``): every run, every task's totals,
and the segments of self-summarized runs.

Lineage: ``agent_runs.trajectory_id`` -> ``instance_id`` (a task: ``tasks`` / ``pool.task_id``)
-> ``repo``; ``trajectory_segments`` chain back to segment 0 through ``continues``.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from datagen.records.base import Record

ExitStatus = Literal["submitted", "step_limit", "time_limit", "token_limit", "context_limit",
                     "format_error", "model_error", "sandbox_error"]


class AgentRunRow(Record):
    """One agent run at a task: how it ended, what it cost, and how its diff was graded."""

    __table__ = "agent_runs"
    __primary_key__: ClassVar[tuple[str, ...]] = ("run_id", "trajectory_id")

    run_id: str
    trajectory_id: str = Field(description="<instance_id>/<sample>.<rerun>: names the run's trajectory files")
    instance_id: str
    repo: str
    policy_id: str
    sample: int = Field(description="0 .. K-1; its model calls are seeded with difficulty.seed + sample")
    rerun: int = Field(description="0 for the first run of a sample, n for its n-th re-run")
    exit_status: ExitStatus
    masked: bool = Field(description="an infrastructure failure: neither a pass nor a failure")
    passed: bool | None = Field(description="the graded diff passed every required test (null: masked)")
    reason: str | None = Field(None, description="why it failed or was masked (grading reason or exit detail)")
    steps: int = Field(description="model calls (mini-swe-agent's n_calls)")
    segments: int = Field(description="1 + summaries written")
    tokens_in: int = Field(description="prompt tokens of every call (summaries included)")
    tokens_out: int = Field(description="completion tokens of every call")
    cached_calls: int = Field(description="calls answered from the teacher cache (not paid again)")
    wall_s: float = Field(description="wall time of the run (grading excluded)")
    grade_s: float = Field(description="wall time of grading its diff")
    diff: str = Field(description="the working copy's final diff against the base ('' if none)")


class AgentTaskRow(Record):
    """One task's agent difficulty: pass@1 and pass@K over its unmasked runs, and its cost."""

    __table__ = "agent_tasks"
    __primary_key__: ClassVar[tuple[str, ...]] = ("run_id", "instance_id", "policy_id")

    run_id: str
    instance_id: str
    policy_id: str
    runs: int = Field(description="runs made, re-runs included")
    masked: int = Field(description="runs masked (infrastructure failures)")
    measured: int = Field(description="unmasked runs: the K of pass@1")
    passes: int
    pass_at_1: float | None = Field(description="passes / measured (null: none measured)")
    pass_at_k: float | None = Field(description="1.0 when some measured run passed (null: none measured)")
    tokens_in: int
    tokens_out: int
    seconds: float = Field(description="wall time of every run and its grading")
    error: str | None = Field(None, description="why no run could be made (e.g. the env failed)")


class TrajectorySegmentRow(Record):
    """One segment of a run: the whole run when it never summarized, else the part before a
    summary (segment 0) or the part that continues from one. Each is a training row that
    carries the run's final reward."""

    __table__ = "trajectory_segments"
    __primary_key__: ClassVar[tuple[str, ...]] = ("run_id", "trajectory_id", "segment")

    run_id: str
    trajectory_id: str
    segment: int = Field(description="0, 1, ... in the order the run wrote them")
    continues: int | None = Field(description="the segment this one continues from (null for segment 0)")
    summary: str | None = Field(description="the summary this segment starts from (null for segment 0)")
    messages: int = Field(description="chat messages in the segment")
    prompt_tokens: int = Field(description="prompt tokens of the segment's last call")
    reward: float | None = Field(description="the run's final reward (null: masked)")
