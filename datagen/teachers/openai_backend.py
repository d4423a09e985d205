"""The ``openai`` backend: any OpenAI-compatible endpoint (OpenAI, ``vllm serve``, SGLang).

The ``openai`` client's own retries are off (``max_retries=0``): every retry is this
module's. A call's ``attempts`` are counted where requests leave, by a hook on the HTTP
client, not by the retry loop, so they are the requests the server was sent whatever
happened between (a re-ask without the schema, a request the SDK repeated). Retried,
with exponential backoff and jitter: 429 (honouring
``Retry-After``), 408/409/5xx, timeouts, dropped connections and unparseable bodies. Other
4xx answers are final. The API key comes from the environment variable the recipe names
and lives only in the client object.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import random
import time
from typing import Any

import openai
from pydantic import ValidationError

from datagen.config.teacher import TeacherConfig
from datagen.errors import UserError
from datagen.teachers.base import BaseTeacher, Call, Done
from datagen.teachers.types import TeacherResult, Usage

RETRY_STATUS = {408, 409, 429}


def resolve_api_key(config: TeacherConfig) -> str:
    """The key from ``api_key_env``; local servers without one get a placeholder."""
    env = config.api_key_env
    if env and os.environ.get(env):
        return os.environ[env]
    if config.base_url is None:
        raise UserError(
            f"teacher.base_url is not set, so the OpenAI API is used: set the environment "
            f"variable {env or 'OPENAI_API_KEY'} (named by teacher.api_key_env) to your key"
        )
    return "EMPTY"


# Requests sent for the call the current task is making (set by ``_with_retries``).
_SENT: contextvars.ContextVar[list[int]] = contextvars.ContextVar("datagen_teacher_sent")


async def _count_request(request: Any) -> None:
    """HTTP client hook, run as each request is handed to the connection."""
    sent = _SENT.get(None)
    if sent is not None:
        sent[0] += 1


def make_client(config: TeacherConfig, base_url: str | None = None) -> openai.AsyncOpenAI:
    http = openai.DefaultAsyncHttpxClient(event_hooks={"request": [_count_request]})
    return openai.AsyncOpenAI(
        base_url=base_url or config.base_url, api_key=resolve_api_key(config),
        max_retries=0, timeout=config.timeout_s, http_client=http,
    )


def retry_after_s(exc: openai.APIStatusError) -> float | None:
    """Seconds the server asked us to wait (``retry-after-ms`` or ``retry-after``)."""
    headers = exc.response.headers
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            return max(0.0, float(raw) * scale)
        except ValueError:
            import email.utils

            parsed = email.utils.parsedate_to_datetime(raw) if scale == 1.0 else None
            if parsed is not None:
                return max(0.0, parsed.timestamp() - time.time())
    return None


def classify(exc: BaseException) -> tuple[bool, str, float | None]:
    """(retryable, message, server-requested wait) for one failed attempt."""
    if isinstance(exc, openai.APIStatusError):
        msg = f"http {exc.status_code}: {exc.message}"
        if exc.status_code == 429:
            return True, msg, retry_after_s(exc)
        return exc.status_code in RETRY_STATUS or exc.status_code >= 500, msg, None
    if isinstance(exc, (openai.APITimeoutError, TimeoutError)):
        return True, "timeout", None
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__
        return True, f"connection error: {cause or exc}", None
    if isinstance(exc, (ValueError, ValidationError, openai.APIResponseValidationError)):
        return True, f"malformed response: {str(exc).splitlines()[0][:200]}", None
    raise exc


class OpenAITeacher(BaseTeacher):
    backend = "openai"

    def __init__(self, config: TeacherConfig, **kwargs: Any):
        super().__init__(config, **kwargs)
        self._schema_in_prompt = config.structured_output == "prompt"
        self._rng = random.Random()

    def load(self) -> None:
        resolve_api_key(self.config)  # fail early, before any request is sent

    async def _call_many(self, calls: list[Call], done: Done) -> None:
        """``max_concurrency`` workers share one queue of calls, so memory stays flat for
        any batch size; a worker backing off keeps its slot (back-pressure on 429s). With
        ``base_urls`` (replicas of one model), worker k talks to endpoint k mod n."""
        urls = [self.config.base_url, *self.config.base_urls]
        clients = [make_client(self.config, url) for url in urls]
        queue = iter(enumerate(calls))

        async def worker(client: openai.AsyncOpenAI) -> None:
            for i, call in queue:
                done(i, await self._with_retries(client, call))

        workers = min(self.config.max_concurrency, len(calls))
        try:
            await asyncio.gather(*(worker(clients[k % len(clients)]) for k in range(workers)))
        finally:
            for client in clients:
                await client.close()

    def backoff_s(self, attempt: int, requested: float | None) -> float:
        """Exponential backoff with jitter (half fixed, half random), at least ``requested``."""
        cfg = self.config
        step = min(cfg.backoff_max_s, cfg.backoff_base_s * 2 ** (attempt - 1))
        wait = step / 2 + self._rng.uniform(0, step / 2)
        if requested is not None:
            wait = max(wait, requested)
        return min(wait, cfg.backoff_max_s)

    async def _with_retries(self, client: openai.AsyncOpenAI, call: Call) -> TeacherResult:
        """Call until answered, a final error, or ``max_retries`` failed retries."""
        started = time.monotonic()
        sent = [0]
        token = _SENT.set(sent)  # this task's requests, counted by the client's hook
        try:
            result, error = await self._attempt_until_done(client, call)
        finally:
            _SENT.reset(token)
        attempts = sent[0]
        if result is not None:
            return result.model_copy(update={
                "attempts": attempts, "latency_s": time.monotonic() - started})
        return TeacherResult(
            key=call.key, status="error", attempts=attempts,
            latency_s=time.monotonic() - started,
            error=f"{error} (after {attempts} attempt{'s' if attempts != 1 else ''})",
        )

    async def _attempt_until_done(self, client: openai.AsyncOpenAI, call: Call
                                  ) -> tuple[TeacherResult | None, str]:
        """(the answer, '') or (None, the last error) once the retry budget is spent."""
        failures = 0
        while True:
            schema_out = call.request.json_schema is not None and not self._schema_in_prompt
            try:
                async with asyncio.timeout(self.config.timeout_s):
                    return await self._send(client, call, schema_out), ""
            except openai.BadRequestError as exc:
                if schema_out and self._refused_schema(exc):
                    continue  # ask again at once without response_format: not a failure
                retry, error, requested = classify(exc)
            except Exception as exc:  # noqa: BLE001 - classify re-raises what it does not know
                retry, error, requested = classify(exc)
            failures += 1
            if not retry or failures > self.config.max_retries:
                return None, error
            await asyncio.sleep(self.backoff_s(failures, requested))

    def _refused_schema(self, exc: openai.BadRequestError) -> bool:
        """In 'auto' mode, a 400 about response_format switches to prompt-only schemas.

        Calls already in flight with the schema get the same refusal; each is asked again.
        """
        text = str(exc).lower()
        if self.config.structured_output == "auto" and any(
                w in text for w in ("response_format", "json_schema", "structured")):
            self._schema_in_prompt = True
            return True
        return False

    async def _send(self, client: openai.AsyncOpenAI, call: Call, schema_out: bool) -> TeacherResult:
        s = call.sampling
        common: dict[str, Any] = {
            "model": self.config.model, "temperature": s["temperature"], "top_p": s["top_p"],
            "max_tokens": s["max_tokens"], "n": call.request.n,
        }
        if s["stop"]:
            common["stop"] = s["stop"]
        if call.request.seed is not None:
            common["seed"] = call.request.seed
        if call.request.prompt is not None:
            return await self._complete(client, call, common)
        if schema_out:
            common["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "answer", "schema": call.request.json_schema, "strict": True},
            }
        raw = await client.chat.completions.with_raw_response.create(
            messages=call.messages, **common)
        resp = raw.parse()
        choices = _choices(resp, call.request.n)
        return TeacherResult(
            key=call.key, status="ok",
            texts=[c.message.content or "" for c in choices],
            finish_reasons=[c.finish_reason for c in choices],
            usage=_usage(resp.usage), request_id=raw.headers.get("x-request-id") or resp.id,
            created=resp.created,
        )

    async def _complete(
        self, client: openai.AsyncOpenAI, call: Call, common: dict
    ) -> TeacherResult:
        s = call.sampling
        extra = {k: s[k] for k in ("logprobs", "echo") if k in s}
        raw = await client.completions.with_raw_response.create(
            prompt=call.request.prompt, **common, **extra)
        resp = raw.parse()
        choices = _choices(resp, call.request.n)
        with_lp = all(c.logprobs is not None for c in choices) and "logprobs" in s
        return TeacherResult(
            key=call.key, status="ok", texts=[c.text for c in choices],
            finish_reasons=[c.finish_reason for c in choices],
            token_logprobs=[list(c.logprobs.token_logprobs or []) for c in choices]
            if with_lp else None,
            tokens=[list(c.logprobs.tokens or []) for c in choices] if with_lp else None,
            usage=_usage(resp.usage), request_id=raw.headers.get("x-request-id") or resp.id,
            created=resp.created,
        )


def _choices(resp: Any, n: int) -> list[Any]:
    """The answer's choices in order; a 200 without all of them is a malformed response."""
    choices = getattr(resp, "choices", None)
    if not isinstance(choices, list) or len(choices) != n:
        got = len(choices) if isinstance(choices, list) else "no"
        raise ValueError(f"expected {n} choice(s), got {got}")
    return sorted(choices, key=lambda c: c.index)


def _usage(usage: Any) -> Usage:
    if usage is None:
        return Usage()
    return Usage(prompt_tokens=usage.prompt_tokens or 0,
                 completion_tokens=usage.completion_tokens or 0)


async def ping(config: TeacherConfig) -> str:
    """Check that ``config``'s endpoint serves its model and answers a one-token chat.

    Returns a one-line report; raises ``RuntimeError`` with the reason otherwise.
    """
    client = make_client(config)
    started = time.monotonic()
    try:
        try:
            models = [m.id async for m in client.models.list()]
        except openai.APIError as exc:
            raise RuntimeError(f"{config.base_url}: /models failed: {_reason(exc)}") from None
        if models and config.model not in models:
            raise RuntimeError(
                f"{config.base_url} does not serve {config.model!r}; it serves: "
                + ", ".join(models[:10]))
        try:
            await client.chat.completions.create(
                model=config.model, messages=[{"role": "user", "content": "ping"}], max_tokens=1)
        except openai.APIError as exc:
            raise RuntimeError(
                f"{config.base_url}: chat completion failed: {_reason(exc)}") from None
    finally:
        await client.close()
    ms = (time.monotonic() - started) * 1000
    return f"ok: {config.base_url} serves {config.model} (answered in {ms:.0f} ms)"


def _reason(exc: openai.APIError) -> str:
    try:
        return classify(exc)[1]
    except Exception:  # noqa: BLE001 - an unknown error still has a message
        return str(exc)
