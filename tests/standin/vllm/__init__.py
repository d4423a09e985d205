"""A stand-in for the few parts of vLLM's offline API the perplexity scorer uses, written
for datagen's tests (vLLM cannot run without a GPU). It is NOT vLLM: ``LLM`` answers with
the tiny test model through ``tests.score.lm.ReferenceLM``, in the documented shapes:

- ``LLM(model=..., **engine_kwargs)``, ``LLM.get_tokenizer()``;
- ``LLM.generate(prompts, sampling_params, use_tqdm=...)`` with prompts as strings or
  ``{"prompt_token_ids": [...]}`` (a ``TokensPrompt``), returning ``RequestOutput``s whose
  ``prompt_logprobs`` is a list with one entry per prompt token: the first ``None``, each
  other ``{token_id: Logprob}`` holding the top ``prompt_logprobs`` tokens and always the
  actual prompt token.

The test puts this folder on ``sys.path`` for its own duration only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tests.score.lm import ReferenceLM

STANDIN = True  # lets a test check it is talking to the stand-in


@dataclass
class Logprob:
    logprob: float
    rank: int | None = None
    decoded_token: str | None = None


@dataclass
class CompletionOutput:
    index: int
    text: str
    token_ids: list[int]
    cumulative_logprob: float | None
    logprobs: Any
    finish_reason: str | None = "length"


@dataclass
class RequestOutput:
    request_id: str
    prompt: str | None
    prompt_token_ids: list[int]
    prompt_logprobs: list[dict[int, Logprob] | None]
    outputs: list[CompletionOutput] = field(default_factory=list)
    finished: bool = True


class SamplingParams:
    def __init__(self, n: int = 1, temperature: float = 1.0, max_tokens: int | None = 16,
                 prompt_logprobs: int | None = None, logprobs: int | None = None, **other: Any):
        self.n, self.temperature, self.max_tokens = n, temperature, max_tokens
        self.prompt_logprobs, self.logprobs, self.other = prompt_logprobs, logprobs, other


class LLM:
    instances: list[LLM] = []

    def __init__(self, model: str, **engine_kwargs: Any):
        self.lm = ReferenceLM(model)
        self.engine_kwargs = engine_kwargs
        LLM.instances.append(self)

    def get_tokenizer(self) -> Any:
        return self.lm.tokenizer

    def generate(self, prompts: Any, sampling_params: SamplingParams | None = None,
                 use_tqdm: bool = True) -> list[RequestOutput]:
        params = sampling_params or SamplingParams()
        items = prompts if isinstance(prompts, list) else [prompts]
        return [self._one(str(n), p, params) for n, p in enumerate(items)]

    def _one(self, request_id: str, prompt: Any, params: SamplingParams) -> RequestOutput:
        if isinstance(prompt, str):
            text, ids = prompt, self.lm.tokenizer.encode(prompt)
        else:
            text, ids = prompt.get("prompt"), list(prompt["prompt_token_ids"])
        table, _ = self.lm.logprobs(ids)
        entries: list[dict[int, Logprob] | None] = [None]
        for i in range(1, len(ids)):
            entries.append(self._entry(table[i - 1], ids[i], params.prompt_logprobs or 0))
        nxt = int(table[-1].argmax())
        out = CompletionOutput(0, self.lm.tokenizer.decode([nxt]), [nxt], float(table[-1, nxt]), None)
        return RequestOutput(request_id, text, ids, entries if params.prompt_logprobs is not None
                             else None, [out])

    @staticmethod
    def _entry(row: Any, actual: int, k: int) -> dict[int, Logprob]:
        """Top-k tokens plus the actual one, with 1-based ranks, as vLLM reports them."""
        order = row.argsort(descending=True).tolist()
        entry = {t: Logprob(float(row[t]), order.index(t) + 1) for t in order[:k]}
        entry.setdefault(actual, Logprob(float(row[actual]), order.index(actual) + 1))
        return entry
