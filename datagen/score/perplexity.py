"""Perplexity scorers: one protocol, one convention, three back ends.

The convention, shared by every back end so their scores agree:

- a text is tokenized the way the scorer model's tokenizer does by default (special
  tokens such as a BOS included, as vLLM and ``vllm serve`` do), then cut to its first
  ``max_length`` tokens;
- perplexity = exp(mean negative log-likelihood of tokens 2..n), each token predicted
  from all tokens before it; the first token has no context and is left out;
- a text with fewer than 2 tokens has no perplexity: its score is NaN.

Scorer names are versioned (``ppl_v1/<backend>/<model-id>``) so that a changed convention
or model never mixes with stored scores.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Sequence
from pathlib import PurePath
from typing import Protocol, runtime_checkable

from datagen.config.score import PerplexityConfig
from datagen.errors import UserError

# backend -> (module, class); a new back end is one line here.
BACKENDS: dict[str, tuple[str, str]] = {
    "transformers": ("datagen.score.ppl_transformers", "TransformersScorer"),
    "vllm": ("datagen.score.ppl_vllm", "VllmScorer"),
    "endpoint": ("datagen.score.ppl_endpoint", "EndpointScorer"),
}


@runtime_checkable
class PerplexityScorer(Protocol):
    """Scores texts; ``score`` returns one perplexity per text, in input order."""

    name: str

    def load(self) -> None:
        """Acquire the model or client (heavy imports happen here, not at import time)."""
        ...

    def score(self, texts: Sequence[str]) -> list[float]: ...


def perplexity(token_logprobs: Sequence[float | None]) -> float:
    """exp(-mean) of the logprobs of tokens 2..n of one text (entry 0, the first token,
    is ignored: it has no context and back ends report it as None). NaN below 2 tokens."""
    scored = token_logprobs[1:]
    if not scored:
        return math.nan
    return math.exp(-math.fsum(float(lp) for lp in scored) / len(scored))


def model_id(cfg: PerplexityConfig) -> str:
    """The model's name inside the scorer name: ``model_id``, else the path's last part."""
    if cfg.model_id:
        return cfg.model_id
    return PurePath(str(cfg.model).rstrip("/")).name or str(cfg.model)


def scorer_name(cfg: PerplexityConfig) -> str:
    """Versioned name the scores are stored under, e.g. ``ppl_v1/transformers/tiny``."""
    return f"{cfg.name_version}/{cfg.backend}/{model_id(cfg)}"


def get_scorer(cfg: PerplexityConfig) -> PerplexityScorer:
    """The back end the recipe names (not loaded yet: call ``load()`` or just ``score``)."""
    if not cfg.enabled:
        raise UserError("perplexity is disabled in this recipe (perplexity.enabled: false)")
    module, cls = BACKENDS[cfg.backend]
    return getattr(importlib.import_module(module), cls)(cfg)
