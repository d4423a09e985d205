"""Perplexity with vLLM offline: ``SamplingParams(prompt_logprobs=1, max_tokens=1)``.

vLLM returns, per prompt, a list with one entry per prompt token: the first is None (no
context), each other is ``{token_id: Logprob}`` holding the top-k tokens and always the
actual prompt token, which is picked by its id (never by text). Texts are tokenized here
with the engine's own tokenizer and sent as token ids, so ``max_length`` cuts them exactly
as the other back ends do.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from datagen.config.score import PerplexityConfig
from datagen.errors import UserError, install_hint
from datagen.score.perplexity import perplexity, scorer_name


def actual_token_logprobs(token_ids: Sequence[int], prompt_logprobs: Sequence[Any]) -> list[float | None]:
    """The logprob of each prompt token from vLLM's ``prompt_logprobs`` (first: None)."""
    if len(prompt_logprobs) != len(token_ids):
        raise ValueError(f"{len(prompt_logprobs)} prompt logprobs for {len(token_ids)} tokens")
    out: list[float | None] = [None]
    for token, entry in zip(token_ids[1:], prompt_logprobs[1:], strict=True):
        value = entry[token]
        out.append(float(getattr(value, "logprob", value)))
    return out


class VllmScorer:
    """``PerplexityScorer`` over ``vllm.LLM`` on this node's GPUs."""

    def __init__(self, cfg: PerplexityConfig):
        self.cfg = cfg
        self.name = scorer_name(cfg)
        self.llm: Any = None

    def load(self) -> None:
        try:
            import vllm
        except ImportError as exc:
            raise UserError(install_hint("vllm", "vllm")) from exc
        o = self.cfg.vllm
        self.llm = vllm.LLM(
            model=self.cfg.model, tensor_parallel_size=o.tensor_parallel_size,
            max_model_len=o.max_model_len, gpu_memory_utilization=o.gpu_memory_utilization,
            # prompt logprobs of a prefix served from the cache would be missing
            enable_prefix_caching=False,
            dtype=self.cfg.dtype if self.cfg.dtype != "auto" else o.dtype,
            trust_remote_code=o.trust_remote_code,
        )
        self.tokenizer = self.llm.get_tokenizer()
        self.params = vllm.SamplingParams(prompt_logprobs=1, max_tokens=1, temperature=0.0)

    def encode(self, text: str) -> list[int]:
        ids = list(self.tokenizer.encode(text))  # special tokens as the engine adds them
        return ids[: self.cfg.max_length] if self.cfg.max_length else ids

    def score(self, texts: Sequence[str]) -> list[float]:
        if self.llm is None:
            self.load()
        ids = [self.encode(t) for t in texts]
        scorable = [i for i, row in enumerate(ids) if len(row) >= 2]
        outputs = self.llm.generate([{"prompt_token_ids": ids[i]} for i in scorable], self.params,
                                    use_tqdm=False)
        out = [math.nan] * len(texts)
        for i, result in zip(scorable, outputs, strict=True):
            token_ids = list(getattr(result, "prompt_token_ids", None) or ids[i])
            out[i] = perplexity(actual_token_logprobs(token_ids, result.prompt_logprobs))
        return out
