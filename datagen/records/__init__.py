"""Typed records (source of ``schemas/``). Import record classes from here."""

from datagen.records.agent import AgentRunRow, AgentTaskRow, TrajectorySegmentRow
from datagen.records.base import Record
from datagen.records.core import DROP_REASONS, ClusterRow, CodeFile, DropReason, FileRow, RunRow, ShardRow, reason_key
from datagen.records.env import RepoEnvRow
from datagen.records.pack import (
    LanguageMixRow,
    LongBucketRow,
    PackOutputRow,
    RepoDocRow,
    RepoOrderRow,
    TokenCountRow,
)
from datagen.records.pool import AuxCheck, ChatMessage, LedgerRow, PoolDropRow, PoolRow, PoolTaskInput
from datagen.records.score import AttemptRow, DifficultyRow, QualityLabel, ScoreRow
from datagen.records.soundness import JudgeRow, SoundnessRow
from datagen.records.tasks import (
    CandidateRow,
    InterfaceItem,
    RepoBaselineRow,
    RunResult,
    TaskRecord,
    TaskRow,
    ValidationRow,
)
from datagen.records.teacher import TeacherCall

# Every manifest table, in DDL order. Later builds append their records here.
TABLES: list[type[Record]] = [
    RunRow, FileRow, ShardRow, ValidationRow, TeacherCall,
    RepoOrderRow, RepoDocRow, TokenCountRow, PackOutputRow,
    ClusterRow, LanguageMixRow, LongBucketRow,
    RepoBaselineRow, CandidateRow, TaskRow, RepoEnvRow,
    ScoreRow, AttemptRow, DifficultyRow,
    PoolRow, PoolDropRow, LedgerRow,
    SoundnessRow, JudgeRow,
    AgentRunRow, AgentTaskRow, TrajectorySegmentRow,
]
# Records that are rows of an output dataset rather than manifest tables.
DATASET_RECORDS: list[type[Record]] = [CodeFile, TaskRecord, QualityLabel]

__all__ = [
    "Record", "RunRow", "FileRow", "ShardRow", "ClusterRow", "CodeFile", "TaskRecord", "RunResult",
    "ValidationRow", "TeacherCall", "RepoOrderRow", "RepoDocRow", "TokenCountRow", "PackOutputRow",
    "CandidateRow", "TaskRow", "RepoBaselineRow", "ScoreRow", "AttemptRow", "DifficultyRow",
    "PoolRow", "PoolDropRow", "LedgerRow", "QualityLabel", "RepoEnvRow", "ChatMessage", "AuxCheck", "PoolTaskInput",
    "LanguageMixRow", "LongBucketRow", "SoundnessRow", "JudgeRow", "InterfaceItem",
    "AgentRunRow", "AgentTaskRow", "TrajectorySegmentRow",
    "TABLES", "DATASET_RECORDS", "DropReason", "DROP_REASONS", "reason_key",
]
