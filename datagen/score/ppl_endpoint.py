"""Perplexity through an OpenAI-compatible ``/v1/completions`` endpoint (``vllm serve``).

Each text is one request with ``echo: true, logprobs: 1, max_tokens: 1``: the answer's
``token_logprobs`` cover the prompt (first null) followed by the one generated token,
which is dropped (the prompt's length comes from ``usage.prompt_tokens``). Requests go
through the ``openai`` teacher back end, so they get its retries, back-off, concurrency
and (with ``cache_dir``) its request cache. The server tokenizes; ``max_length`` keeps the
first N prompt logprobs, which equals scoring the text cut to N tokens (a causal model's
logprob of token i depends only on tokens before it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from datagen.config.score import PerplexityConfig
from datagen.config.teacher import Sampling, TeacherConfig
from datagen.errors import DatagenError
from datagen.score.perplexity import perplexity, scorer_name
from datagen.teachers.types import SamplingParams, TeacherRequest, TeacherResult

SCORE_SAMPLING = SamplingParams(temperature=0.0, max_tokens=1, logprobs=1, echo=True)


class ScoringError(DatagenError):
    """The endpoint gave no usable logprobs for a text after its retries (never a silent NaN)."""


def prompt_logprobs(result: TeacherResult) -> list[float | None]:
    """The prompt tokens' logprobs of an echo answer (the generated token dropped)."""
    if not result.token_logprobs:
        raise ScoringError(f"endpoint answer without logprobs: {result.error or result.status}")
    lps = result.token_logprobs[0]
    n = result.usage.prompt_tokens or len(lps) - 1
    return list(lps[:n])


class EndpointScorer:
    """``PerplexityScorer`` over an OpenAI-compatible completions endpoint."""

    def __init__(self, cfg: PerplexityConfig):
        self.cfg = cfg
        self.name = scorer_name(cfg)
        self.teacher: Any = None

    def teacher_config(self) -> TeacherConfig:
        c = self.cfg
        return TeacherConfig(
            backend="openai", model=str(c.model), model_id=c.model_id, base_url=c.base_url,
            api_key_env=c.api_key_env, max_concurrency=c.max_concurrency, timeout_s=c.timeout_s,
            max_retries=c.max_retries, cache_dir=c.cache_dir,
            sampling=Sampling(temperature=0.0, max_tokens=1),
        )

    def load(self) -> None:
        from datagen.teachers.openai_backend import OpenAITeacher

        self.teacher = OpenAITeacher(self.teacher_config())
        self.teacher.load()

    def score(self, texts: Sequence[str]) -> list[float]:
        if self.teacher is None:
            self.load()
        requests = [TeacherRequest(id=str(i), prompt=t, sampling=SCORE_SAMPLING)
                    for i, t in enumerate(texts) if t]
        results = iter(self.teacher.generate(requests))
        out = []
        for text in texts:
            if not text:  # an empty prompt has no tokens to score
                out.append(math.nan)
                continue
            result = next(results)
            if result.status not in ("ok", "truncated"):  # max_tokens=1 always truncates
                raise ScoringError(f"perplexity endpoint {self.cfg.base_url}: {result.error}")
            lps = prompt_logprobs(result)
            out.append(perplexity(lps[: self.cfg.max_length] if self.cfg.max_length else lps))
        return out
