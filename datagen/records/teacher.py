"""Accounting of teacher calls: one ``teacher_calls`` row per request a build made."""

from __future__ import annotations

import datetime as dt
import uuid
from typing import ClassVar, Literal

from pydantic import Field

from datagen.records.base import Record


class TeacherCall(Record):
    """One request to a teacher and what it cost. Cached rows carry 0 tokens and 0 attempts,
    so ``sum(prompt_tokens)`` and ``sum(completion_tokens)`` are what was paid."""

    __table__ = "teacher_calls"
    __primary_key__: ClassVar[tuple[str, ...]] = ("call_id",)

    call_id: str = Field(default_factory=lambda: uuid.uuid4().hex,
                         description="unique id of this row (journal rows fold in once)")
    run_id: str | None = Field(None, description="the build run that made the request")
    custom_id: str | None = Field(None, description="the caller's id of the request")
    request_hash: str = Field(description="sha256 cache key of the request")
    model: str = Field(description="model name as sent to the backend")
    model_id: str = Field(description="backend-independent model id (part of the cache key)")
    backend: str
    n: int = Field(description="samples requested")
    prompt_tokens: int = Field(description="summed over every paid call, re-asks included")
    completion_tokens: int
    latency_s: float = Field(description="wall time from first attempt to final answer")
    attempts: int = Field(description="calls made (retries and re-asks included); 0 if cached")
    status: Literal["ok", "truncated", "invalid", "error"]
    error: str | None = None
    cached: bool = Field(description="answered from the request cache, nothing paid")
    created_at: dt.datetime
