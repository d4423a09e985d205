"""The ``Teacher`` protocol and the plumbing every backend shares.

A backend implements one hook, ``_call_many(calls, done)``: send each ``Call`` to the
model and report a raw ``TeacherResult`` per call. ``BaseTeacher`` does the rest, the
same for every backend: cache look-ups (and in-batch de-duplication), JSON-schema
validation with bounded re-asks, truncation, cache writes as answers arrive (so a crashed
run resumes), ``teacher_calls`` accounting (journaled as answers arrive when a journal is
given, so a crashed run's spending is kept) and the progress bar.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import re
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

import jsonschema

from datagen.config.teacher import TeacherConfig
from datagen.records.teacher import TeacherCall
from datagen.teachers.accounting import CallJournal
from datagen.teachers.cache import RequestCache
from datagen.teachers.progress import TeacherProgress
from datagen.teachers.types import (
    TeacherRequest,
    TeacherResult,
    Usage,
    request_key,
    resolved_sampling,
)

Done = Callable[[int, TeacherResult], None]


@runtime_checkable
class Teacher(Protocol):
    """A batch of requests in, one result per request out, in the same order."""

    config: TeacherConfig

    def generate(
        self, requests: Sequence[TeacherRequest], *, progress: bool = False
    ) -> list[TeacherResult]: ...

    async def agenerate(
        self, requests: Sequence[TeacherRequest], *, progress: bool = False
    ) -> list[TeacherResult]: ...

    def take_calls(self) -> list[TeacherCall]: ...


@dataclass
class Call:
    """One model call: the request (with re-ask turns appended) and its resolved sampling."""

    key: str
    request: TeacherRequest
    sampling: dict[str, Any]
    messages: list[dict[str, str]] | None = None

    def __post_init__(self) -> None:
        if self.request.messages is not None and self.messages is None:
            self.messages = [m.model_dump() for m in self.request.messages]


@dataclass
class _Pending:
    """A unique request on its way to a final result, across re-ask rounds."""

    call: Call
    reasks: int = 0
    usage: Usage = field(default_factory=Usage)
    attempts: int = 0
    latency_s: float = 0.0


def parse_json_answer(text: str, schema: dict[str, Any]) -> tuple[Any, str | None]:
    """Parse ``text`` as JSON (a fenced ```json block is accepted) and validate it."""
    stripped = text.strip()
    fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", stripped, flags=re.S)
    if fenced:
        stripped = fenced.group(1)
    try:
        value = json.loads(stripped)
    except ValueError as exc:
        return None, f"not JSON: {exc}"
    try:
        jsonschema.validate(value, schema)
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "<root>"
        return None, f"schema violation at {where}: {exc.message}"
    return value, None


class BaseTeacher:
    """Shared plumbing; subclasses set ``backend`` and implement ``_call_many``."""

    backend: ClassVar[str] = ""

    def __init__(self, config: TeacherConfig, *, run_id: str | None = None,
                 cache: RequestCache | None | bool = True,
                 journal: CallJournal | None = None):
        """``journal``: where each paid call's ``teacher_calls`` row is appended as its
        answer arrives (then ``take_calls`` returns only the other, unpaid rows)."""
        self.config = config
        self.run_id = run_id
        self.journal = journal
        if cache is True:
            cache = RequestCache(config.cache_dir) if config.cache_dir else None
        self.cache = cache if isinstance(cache, RequestCache) else None
        self._calls: list[TeacherCall] = []
        self._loaded = False

    # -- the hook --------------------------------------------------------------------------
    def load(self) -> None:
        """Acquire heavy resources (models, clients); called once, before the first call."""

    async def _call_many(self, calls: list[Call], done: Done) -> None:
        raise NotImplementedError

    # -- the plumbing ----------------------------------------------------------------------
    def generate(
        self, requests: Sequence[TeacherRequest], *, progress: bool = False
    ) -> list[TeacherResult]:
        """Synchronous ``agenerate`` (not from inside a running event loop)."""
        return asyncio.run(self.agenerate(requests, progress=progress))

    def take_calls(self) -> list[TeacherCall]:
        """The ``teacher_calls`` rows since the last take (for the build's manifest)."""
        rows, self._calls = self._calls, []
        return rows

    def key(self, request: TeacherRequest) -> str:
        return request_key(request, self.config.cache_model_id, self.config.sampling)

    async def agenerate(
        self, requests: Sequence[TeacherRequest], *, progress: bool = False
    ) -> list[TeacherResult]:
        keys = [self.key(r) for r in requests]
        finals: dict[str, TeacherResult] = {}
        first_index: dict[str, int] = {}
        with TeacherProgress(len(requests), enabled=progress) as bar:
            for i, key in enumerate(keys):
                if key in first_index:
                    continue
                first_index[key] = i
                hit = self.cache.get(key) if self.cache is not None else None
                if hit is not None:
                    finals[key] = hit
                    bar.update(hit)
            defaults = self.config.sampling
            todo = [
                _Pending(Call(key, requests[i], resolved_sampling(requests[i], defaults)))
                for key, i in first_index.items() if key not in finals
            ]

            # Cache writes go to one helper thread so file I/O overlaps the network waits;
            # each answer is written as it arrives, so a crashed run resumes from there.
            writer = ThreadPoolExecutor(1, "teacher-cache") if self.cache is not None else None
            writes: list[Future] = []
            journaled: set[str] = set()

            def finish(result: TeacherResult) -> None:
                finals[result.key] = result
                if self.journal is not None:  # the cost is durable before the answer is
                    req = requests[first_index[result.key]]
                    self.journal.append([self._row(req, result)])
                    journaled.add(result.key)
                if writer is not None:
                    writes.append(writer.submit(self.cache.put, result))
                bar.update(result)

            try:
                if todo and not self._loaded:  # a fully cached batch needs no model at all
                    self.load()
                    self._loaded = True
                while todo:
                    todo = await self._round(todo, finish)
            finally:
                if writer is not None:
                    writer.shutdown(wait=True)
            for write in writes:
                write.result()  # a failed cache write (disk full...) is not silent

            out = []
            for i, (req, key) in enumerate(zip(requests, keys, strict=True)):
                result = finals[key]
                if i != first_index[key]:  # a duplicate inside the batch: answered once
                    result = result.model_copy(update={"cached": True})
                    bar.update(result)
                out.append(result.model_copy(update={"id": req.id}))
        self._account(requests, out, {first_index[k] for k in journaled})
        return out

    async def _round(self, todo: list[_Pending], finish: Callable[[TeacherResult], None]
                     ) -> list[_Pending]:
        """Send one round of calls; returns the re-asks that go to the next round."""
        again: list[_Pending] = []

        def done(i: int, raw: TeacherResult) -> None:
            p = todo[i]
            p.usage = p.usage + raw.usage
            p.attempts += raw.attempts
            p.latency_s += raw.latency_s
            result = self._judge(p, raw)
            if result is None:
                again.append(p)
            else:
                finish(result)

        await self._call_many([p.call for p in todo], done)
        return again

    def _judge(self, p: _Pending, raw: TeacherResult) -> TeacherResult | None:
        """Final result for a raw answer, or None after queueing a re-ask on ``p``."""
        update: dict[str, Any] = {
            "key": p.call.key, "usage": p.usage, "attempts": p.attempts,
            "latency_s": round(p.latency_s, 6), "cached": False,
            "created": raw.created or (None if raw.status == "error" else int(time.time())),
        }
        if raw.status == "error":
            return raw.model_copy(update={**update, "texts": [], "finish_reasons": []})
        truncated = any(r == "length" for r in raw.finish_reasons)
        schema = p.call.request.json_schema
        parsed, errors = None, []
        if schema is not None:
            parsed = []
            for text, reason in zip(raw.texts, raw.finish_reasons, strict=True):
                value, err = (None, None) if reason == "length" else parse_json_answer(text, schema)
                parsed.append(value)
                if err:
                    errors.append(err)
            if errors and not truncated and raw.texts and len(raw.texts) == 1 \
                    and p.reasks < self.config.max_reasks:
                p.reasks += 1
                p.call = self._reask_call(p.call, raw.texts[0], errors[0])
                return None
        status = "truncated" if truncated else ("invalid" if errors else "ok")
        error = f"{len(errors)} answer(s) failed the schema: {errors[0]}" if errors else None
        return raw.model_copy(update={**update, "status": status, "parsed": parsed,
                                      "error": error})

    def _reask_call(self, call: Call, answer: str, error: str) -> Call:
        turns = [
            {"role": "assistant", "content": answer},
            {"role": "user", "content": self.config.reask_template.replace("{error}", error)},
        ]
        return Call(call.key, call.request, call.sampling, (call.messages or []) + turns)

    def _account(self, requests: Sequence[TeacherRequest], results: list[TeacherResult],
                 journaled: set[int]) -> None:
        """Rows for every request except those already in the journal (by index)."""
        for i, (req, res) in enumerate(zip(requests, results, strict=True)):
            if i not in journaled:
                self._calls.append(self._row(req, res))

    def _row(self, req: TeacherRequest, res: TeacherResult) -> TeacherCall:
        return TeacherCall(
            run_id=self.run_id, custom_id=req.id, request_hash=res.key,
            model=self.config.model, model_id=self.config.cache_model_id,
            backend=self.backend, n=req.n,
            prompt_tokens=0 if res.cached else res.usage.prompt_tokens,
            completion_tokens=0 if res.cached else res.usage.completion_tokens,
            latency_s=0.0 if res.cached else res.latency_s,
            attempts=0 if res.cached else res.attempts,
            status=res.status, error=res.error, cached=res.cached,
            created_at=dt.datetime.now(dt.UTC).replace(tzinfo=None),
        )

