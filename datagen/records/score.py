"""Records of the scorers: per-item scores, policy attempts and per-task difficulty.

Scores are stored per scorer (a versioned name such as ``ppl_v1/transformers/tiny``);
decisions (thresholds, bands) are made later and recorded by the build that makes them.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from datagen.records.base import Record


class ScoreRow(Record):
    """One score of one item by one scorer."""

    __table__ = "scores"
    __primary_key__: ClassVar[tuple[str, ...]] = ("run_id", "item_id", "scorer", "kind")

    run_id: str
    item_id: str = Field(description="the scored item, e.g. a task's instance_id")
    scorer: str = Field(description="versioned scorer name, e.g. 'ppl_v1/transformers/tiny'")
    kind: str = Field(description="what was scored, e.g. 'perplexity_statement', 'perplexity_fix'")
    value: float | None = Field(description="the score; null when the item cannot be scored")


class AttemptRow(Record):
    """One policy attempt at a task, graded in the sandbox."""

    __table__ = "attempts"
    __primary_key__: ClassVar[tuple[str, ...]] = ("run_id", "instance_id", "policy_id", "sample")

    run_id: str
    instance_id: str
    policy_id: str = Field(description="the policy model's id (its teacher cache model id)")
    sample: int = Field(description="0 .. K-1; sampled with seed = difficulty.seed + sample")
    passed: bool = Field(description="every FAIL_TO_PASS and PASS_TO_PASS test passed")
    reason: str | None = Field(None, description="why it failed, e.g. 'tests_failed', "
                               "'patch_does_not_apply', 'forbidden_edits_tests'")
    patch: str = Field(description="the unified diff taken from the answer ('' if none)")
    hint: str | None = Field(None, description="short location-specific feedback on a failure")
    duration_s: float = Field(description="wall time of applying and testing the patch")
    tokens: int = Field(description="completion tokens of the policy's answer")


class DifficultyRow(Record):
    """Pass rate of one task under one policy over K attempts."""

    __table__ = "difficulty"
    __primary_key__: ClassVar[tuple[str, ...]] = ("run_id", "instance_id", "policy_id")

    run_id: str
    instance_id: str
    policy_id: str
    k: int = Field(description="attempts made")
    passes: int | None = Field(description="attempts that passed; null when difficulty is off")
    pass_rate: float | None = Field(description="passes / k; null when unknown")
    wilson_low: float | None = Field(description="lower end of the Wilson score interval")
    wilson_high: float | None = Field(description="upper end of the Wilson score interval")
    pass_vector: list[bool] = Field(description="attempt i passed, in sample order")
    error: str | None = Field(None, description="why the task could not be attempted "
                              "(e.g. 'env_setup_failed'); passes is then null")


class QualityLabel(Record):
    """One teacher rating of a kept corpus file (a line of ``datagen quality annotate``'s
    labels JSONL, the training data of ``datagen quality train``)."""

    id: str = Field(description="the file's id in the corpus shards (files.file_id)")
    repo: str
    path: str
    lang: str
    text: str = Field(description="what the teacher saw: the file's first annotate.max_chars characters")
    score: int | None = Field(None, ge=0, le=5, description="the rating, 0-5 (null: the teacher gave none)")
    reason: str | None = Field(None, description="the teacher's one-line justification")
    status: str = Field(description="the teacher call's status: ok, truncated, invalid or error")
    teacher: str = Field(description="the teacher's cache model id")
