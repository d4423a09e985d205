"""Typed requests to and results from a teacher, the same for every backend."""

from __future__ import annotations

import hashlib
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from datagen.config.base import canonical_json

Status = Literal["ok", "truncated", "invalid", "error"]


class Message(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    role: Literal["system", "user", "assistant", "tool", "developer"]
    content: str


class SamplingParams(BaseModel):
    """Per-request sampling; ``None`` fields take the recipe's ``teacher.sampling`` default."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float | None = Field(None, ge=0.0)
    top_p: float | None = Field(None, gt=0.0, le=1.0)
    max_tokens: int | None = Field(None, ge=1)
    stop: list[str] | None = None
    logprobs: int | None = Field(None, ge=0, description="completions only: top-k logprobs")
    echo: bool = Field(False, description="completions only: score the prompt too")


class TeacherRequest(BaseModel):
    """One request: chat ``messages`` (or a raw ``prompt`` for completions) and how to sample.

    ``id`` is the caller's name for it (e.g. a Batch API ``custom_id``). Identical requests
    (same messages, sampling, seed, n, schema) are answered once and share the answer,
    whatever their ids, except an unseeded request sampled at temperature > 0: its ``id``
    is part of its key too, so independent samples stay independent (and a re-run still
    finds each in the cache).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str | None = None
    messages: list[Message] | None = None
    prompt: str | None = None
    sampling: SamplingParams = Field(default_factory=SamplingParams)
    n: int = Field(1, ge=1)
    seed: int | None = None
    json_schema: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _one_input(self) -> TeacherRequest:
        if (self.messages is None) == (self.prompt is None):
            raise ValueError("a request needs exactly one of 'messages' or 'prompt'")
        if self.messages is not None and not self.messages:
            raise ValueError("'messages' is empty")
        if self.prompt is not None and self.json_schema is not None:
            raise ValueError("'json_schema' needs chat 'messages', not a raw 'prompt'")
        if self.messages is not None and (self.sampling.logprobs is not None or self.sampling.echo):
            raise ValueError("'logprobs' and 'echo' apply to a raw 'prompt' (completions) only")
        return self


class Usage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
        )


class TeacherResult(BaseModel):
    """The answer to one request, or why there is none.

    ``status``: ``ok``; ``truncated`` (a choice hit ``max_tokens``: its text is kept but not
    parsed); ``invalid`` (an answer still failed its JSON schema after the re-asks);
    ``error`` (no answer after the retry budget, see ``error``). ``usage`` and ``attempts``
    count every call made for the request, re-asks included.
    """

    model_config = ConfigDict(extra="forbid")

    id: str | None = None
    key: str
    status: Status
    texts: list[str] = Field(default_factory=list)
    finish_reasons: list[str | None] = Field(default_factory=list)
    parsed: list[Any] | None = None
    token_logprobs: list[list[float | None]] | None = None
    tokens: list[list[str]] | None = None
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    attempts: int = 0
    cached: bool = False
    error: str | None = None
    request_id: str | None = Field(None, description="the server's id of the answering call")
    created: int | None = Field(None, description="unix time the answer was first produced")

    @property
    def text(self) -> str | None:
        return self.texts[0] if self.texts else None


def resolved_sampling(req: TeacherRequest, defaults: Any) -> dict[str, Any]:
    """The request's sampling with recipe defaults filled in (what is sent and hashed)."""
    s = req.sampling
    out: dict[str, Any] = {
        "temperature": s.temperature if s.temperature is not None else defaults.temperature,
        "top_p": s.top_p if s.top_p is not None else defaults.top_p,
        "max_tokens": s.max_tokens if s.max_tokens is not None else defaults.max_tokens,
        "stop": list(s.stop if s.stop is not None else defaults.stop),
    }
    if s.logprobs is not None:
        out["logprobs"] = s.logprobs
    if s.echo:
        out["echo"] = True
    return out


def request_key(req: TeacherRequest, model_id: str, defaults: Any) -> str:
    """sha256 of everything that decides the answer: model, input, sampling, seed, n, schema;
    plus the request's id when it is an unseeded sample at temperature > 0."""
    sampling = resolved_sampling(req, defaults)
    payload = {
        "model": model_id,
        "messages": [m.model_dump() for m in req.messages] if req.messages is not None else None,
        "prompt": req.prompt,
        "sampling": sampling,
        "seed": req.seed,
        "n": req.n,
        "schema": req.json_schema,
    }
    if req.seed is None and sampling["temperature"] > 0 and req.id is not None:
        payload["sample_of"] = req.id
    return hashlib.sha256(canonical_json(payload).encode()).hexdigest()
