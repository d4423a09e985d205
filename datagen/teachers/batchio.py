"""Ad-hoc batches from JSONL files, in datagen's own line format or OpenAI's Batch API format.

Native input lines: ``{"id"?, "messages" | "prompt", "temperature"?, "top_p"?, "max_tokens"?,
"stop"?, "n"?, "seed"?, "json_schema"?, "logprobs"?, "echo"?, "metadata"?}``; native output
lines are ``TeacherResult``s (plus ``line`` and ``metadata``).

Batch API input lines: ``{"custom_id", "method": "POST", "url": "/v1/chat/completions" or
"/v1/completions", "body": {...}}``; their output lines are Batch API output lines
``{"id", "custom_id", "response": {"status_code", "request_id", "body"} | null, "error"}``,
as OpenAI's Batch API and vLLM's ``run_batch`` write them. The teacher's model answers,
whatever ``body.model`` says. Every input line gets one output line, in input order;
a line that cannot be read gets an output line with the error, nothing is dropped.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from datagen.errors import UserError
from datagen.runtime.atomic import atomic_open
from datagen.teachers.base import BaseTeacher
from datagen.teachers.types import TeacherRequest, TeacherResult

SAMPLING_KEYS = ("temperature", "top_p", "max_tokens", "stop", "logprobs", "echo")
TOP_KEYS = ("n", "seed", "json_schema")
NATIVE_KEYS = {"id", "messages", "prompt", "metadata", *SAMPLING_KEYS, *TOP_KEYS}
BODY_KEYS = {"model", "messages", "prompt", "max_completion_tokens", "response_format",
             *SAMPLING_KEYS, "n", "seed"}
URLS = {"/v1/chat/completions": "chat.completion", "/v1/completions": "text_completion"}


@dataclass
class Line:
    """One input line: its request, or why it has none, and the format to answer in."""

    number: int
    batch: bool
    request: TeacherRequest | None = None
    id: str | None = None
    custom_id: str | None = None
    url: str = "/v1/chat/completions"
    metadata: Any = None
    error: str | None = None


def _request(data: dict, allowed: set[str], where: str, rid: str | None) -> TeacherRequest:
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise ValueError(f"unsupported field(s) in {where}: {', '.join(unknown)}")
    data = dict(data)
    if "max_completion_tokens" in data:
        data.setdefault("max_tokens", data.pop("max_completion_tokens"))
    fmt = data.pop("response_format", None)
    if fmt is not None:
        if not isinstance(fmt, dict) or fmt.get("type") != "json_schema":
            raise ValueError("response_format: only {type: json_schema} is supported")
        data["json_schema"] = (fmt.get("json_schema") or {}).get("schema")
    sampling = {k: data.pop(k) for k in SAMPLING_KEYS if k in data}
    top = {k: data.pop(k) for k in TOP_KEYS if k in data and data[k] is not None}
    return TeacherRequest(id=rid, messages=data.get("messages"), prompt=data.get("prompt"),
                          sampling=sampling, **top)


def parse_line(number: int, text: str) -> Line:
    try:
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("a line must be a JSON object")
    except ValueError as exc:
        return Line(number, batch=False, error=f"bad input line {number}: {exc}")
    if "custom_id" in data or "body" in data:
        line = Line(number, batch=True, custom_id=data.get("custom_id"),
                    url=data.get("url") or "/v1/chat/completions")
        try:
            if line.url not in URLS:
                raise ValueError(f"url {line.url!r} is not served (use one of {sorted(URLS)})")
            if str(data.get("method", "POST")).upper() != "POST":
                raise ValueError("method must be POST")
            body = data.get("body")
            if not isinstance(body, dict):
                raise ValueError("'body' must be an object")
            if line.url == "/v1/chat/completions" and "prompt" in body:
                raise ValueError("/v1/chat/completions takes 'messages', not 'prompt'")
            cid = data.get("custom_id")
            line.request = _request(body, BODY_KEYS, "body", None if cid is None else str(cid))
        except (ValueError, ValidationError) as exc:
            line.error = _short(exc)
        return line
    rid = data.get("id")
    line = Line(number, batch=False, metadata=data.get("metadata"),
                id=None if rid is None else str(rid))
    try:
        line.request = _request(data, NATIVE_KEYS, "line", line.id)
    except (ValueError, ValidationError) as exc:
        line.error = _short(exc)
    return line


def _short(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"]) or "<request>"
        return f"bad request: {loc}: {err['msg']}"
    return f"bad request: {exc}"


def read_lines(path: Path) -> Iterator[Line]:
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror}") from exc
    with handle:
        for number, text in enumerate(handle, start=1):
            if text.strip():
                yield parse_line(number, text)


def native_output(line: Line, result: TeacherResult | None) -> dict[str, Any]:
    if result is None:
        out = {"line": line.number, "id": line.id, "status": "error", "error": line.error}
    else:
        out = {"line": line.number, **result.model_dump(mode="json", exclude_none=True)}
    if line.metadata is not None:
        out["metadata"] = line.metadata
    return out


def batch_output(line: Line, result: TeacherResult | None, model: str) -> dict[str, Any]:
    key = result.key if result is not None else f"line{line.number}"
    line_id = hashlib.sha256(f"{line.custom_id}:{key}".encode()).hexdigest()[:24]
    out: dict[str, Any] = {"id": f"batch_req_{line_id}", "custom_id": line.custom_id,
                           "response": None, "error": None}
    if result is None or result.status == "error":
        code = "invalid_request" if result is None else "teacher_error"
        out["error"] = {"code": code, "message": line.error if result is None else result.error}
        return out
    usage = {"prompt_tokens": result.usage.prompt_tokens,
             "completion_tokens": result.usage.completion_tokens,
             "total_tokens": result.usage.prompt_tokens + result.usage.completion_tokens}
    if line.url == "/v1/chat/completions":
        choices = [{"index": i, "message": {"role": "assistant", "content": t},
                    "finish_reason": r, "logprobs": None}
                   for i, (t, r) in enumerate(zip(result.texts, result.finish_reasons,
                                                  strict=True))]
    else:
        choices = [{"index": i, "text": t, "finish_reason": r, "logprobs": None}
                   for i, (t, r) in enumerate(zip(result.texts, result.finish_reasons,
                                                  strict=True))]
        for i, choice in enumerate(choices):
            if result.token_logprobs is not None:
                choice["logprobs"] = {"tokens": (result.tokens or [[]] * len(choices))[i],
                                      "token_logprobs": result.token_logprobs[i]}
    body = {"id": f"cmpl-{result.key[:24]}", "object": URLS[line.url],
            "created": result.created or 0, "model": model, "choices": choices, "usage": usage}
    out["response"] = {"status_code": 200, "request_id": result.request_id, "body": body}
    if result.status == "invalid":
        out["error"] = {"code": "invalid_json", "message": result.error}
    return out


def run_file(teacher: BaseTeacher, src: Path, dst: Path, *, progress: bool = False
             ) -> dict[str, int]:
    """Answer every line of ``src`` into ``dst`` (same order); returns counts by status
    (``lines``, ``cached``, ``ok``, ``truncated``, ``invalid``, ``error``)."""
    lines = list(read_lines(src))
    asked = [ln for ln in lines if ln.request is not None]
    results = teacher.generate([ln.request for ln in asked], progress=progress)
    by_line = {ln.number: r for ln, r in zip(asked, results, strict=True)}
    counts: dict[str, int] = {"lines": len(lines), "cached": 0}
    with atomic_open(dst, "w", encoding="utf-8", mkdir=True) as out:
        for ln in lines:
            result = by_line.get(ln.number)
            status = result.status if result is not None else "error"
            counts[status] = counts.get(status, 0) + 1
            counts["cached"] += bool(result is not None and result.cached)
            row = (batch_output(ln, result, teacher.config.model) if ln.batch
                   else native_output(ln, result))
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    return counts
