"""Stand-in ``vllm.sampling_params``: ``SamplingParams`` refuses unknown fields (vLLM's is
a msgspec struct), and takes ``structured_outputs`` when this module has
``StructuredOutputsParams`` (vLLM >= 0.12), else ``guided_decoding`` (older vLLM); a test
deletes ``StructuredOutputsParams`` to play an older vLLM."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

FIELDS: dict[str, Any] = {
    "n": 1, "temperature": 1.0, "top_p": 1.0, "top_k": 0, "seed": None, "stop": None,
    "max_tokens": 16, "logprobs": None, "prompt_logprobs": None,
}


@dataclass
class StructuredOutputsParams:
    json: dict | str | None = None
    regex: str | None = None
    choice: list[str] | None = None


@dataclass
class GuidedDecodingParams:
    json: dict | str | None = None
    regex: str | None = None
    choice: list[str] | None = None


class SamplingParams:
    def __init__(self, **kwargs: Any):
        new_api = hasattr(sys.modules[__name__], "StructuredOutputsParams")
        allowed = {**FIELDS, ("structured_outputs" if new_api else "guided_decoding"): None}
        unknown = set(kwargs) - set(allowed)
        if unknown:
            raise TypeError(f"Unexpected keyword argument(s) {sorted(unknown)}")
        for name, default in allowed.items():
            setattr(self, name, kwargs.get(name, default))
        self.stop = [self.stop] if isinstance(self.stop, str) else list(self.stop or [])
        if self.n < 1 or self.temperature < 0 or not 0 < self.top_p <= 1 or self.max_tokens < 1:
            raise ValueError("invalid sampling parameters")
