"""Records of the soundness checks of ``datagen build rl-pool``: can an honest agent pass a
task's tests from what it is told? One row per task and static check (flagged or not, with
the evidence), one row per task the teacher judged (or why its answer was skipped)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from datagen.records.base import Record

TimeBucket = Literal["<15m", "15m-1h", ">1h"]


class SoundnessRow(Record):
    """One check of one task (manifest table ``soundness``)."""

    __table__ = "soundness"
    __primary_key__: ClassVar[tuple[str, ...]] = ("run_id", "task_id", "flag")

    run_id: str
    task_id: str
    repo: str
    strategy: str = Field("", description="the strategy that made the task ('feature_v1', ...; '' when unknown)")
    flag: str = Field(description="b2_implicit_naming, b10_text_files, statement_names_test, "
                       "statement_line_number, exact_output, or judge:<issue> for the teacher's verdicts")
    flagged: bool
    evidence: str = Field("", description="what shows the defect (names, files, the quoted words)")
    action: Literal["dropped", "kept", "none"] = Field(
        "none", description="what the policy did with the task for this flag (none: not flagged)")


class JudgeRow(Record):
    """The teacher's verdict on one task (manifest table ``judgements``); a malformed or
    failed answer is a row with ``status`` 'skipped' and no verdict, never a pass."""

    __table__ = "judgements"
    __primary_key__: ClassVar[tuple[str, ...]] = ("run_id", "task_id")

    run_id: str
    task_id: str
    teacher: str = Field(description="the judge's model id")
    status: Literal["ok", "skipped"]
    reason: str = Field("", description="why skipped (the teacher's status and error)")
    solvable: bool | None = None
    issues: list[str] = Field(default_factory=list, description="detected defects, B1..B11")
    intent_completeness: int | None = Field(None, description="0 (no intent) .. 3 (fully specified)")
    time_bucket: TimeBucket | None = None
    confidence: float | None = Field(None, description="0..1")
    reasoning: str = ""
    cached: bool = Field(False, description="answered from the request cache (paid for before)")
