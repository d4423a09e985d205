"""Perplexity with a local Hugging Face causal LM (CPU or GPU).

Throughput comes from batching by length: texts are sorted by token count and cut into
buckets whose padded size (rows x longest row) fits ``batch_tokens``, so padding stays
within a bucket of near-equal lengths. Padding goes on the right and no attention mask is
passed: causal attention never lets a real token see a pad on its right, and without a
mask the attention runs its fused causal kernel. Only real positions reach the loss.
Weights are bfloat16 on CUDA ('auto'); the log-softmax is always computed in float32.
Scores come back in input order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from datagen.config.score import PerplexityConfig
from datagen.errors import UserError, install_hint
from datagen.score.perplexity import scorer_name


def length_buckets(lengths: Sequence[int], batch_tokens: int) -> list[list[int]]:
    """Indices grouped into batches of near-equal length, longest first (so an
    out-of-memory shows at once); each batch's rows x longest length <= ``batch_tokens``
    unless a single text is longer than that alone."""
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    buckets: list[list[int]] = []
    for i in order:
        if buckets and (len(buckets[-1]) + 1) * lengths[buckets[-1][0]] <= batch_tokens:
            buckets[-1].append(i)
        else:
            buckets.append([i])
    return buckets


class TransformersScorer:
    """``PerplexityScorer`` over ``transformers.AutoModelForCausalLM``."""

    def __init__(self, cfg: PerplexityConfig):
        self.cfg = cfg
        self.name = scorer_name(cfg)
        self.model: Any = None
        self.tokenizer: Any = None
        self.device = "cpu"
        self.max_length: int | None = cfg.max_length

    def load(self) -> None:
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as exc:
            raise UserError(install_hint("torch and transformers", "ppl")) from exc
        device = self.cfg.device
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(self.cfg.model)
            self.model = AutoModelForCausalLM.from_pretrained(
                self.cfg.model, **{_dtype_kwarg(): _dtype(torch, self.cfg.dtype, device)})
        except OSError as exc:
            raise UserError(f"cannot load scorer model {self.cfg.model}: {exc}") from exc
        self.model.to(device).eval()
        self.device = device
        positions = getattr(self.model.config, "max_position_embeddings", None)
        if positions:  # a longer text would index past the position table
            self.max_length = min(self.max_length or positions, positions)

    def encode(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of each text, cut to ``max_length`` (the shared convention)."""
        ids = self.tokenizer(list(texts), add_special_tokens=True)["input_ids"]
        return [row[: self.max_length] if self.max_length else row for row in ids]

    def score(self, texts: Sequence[str]) -> list[float]:
        if self.model is None:
            self.load()
        ids = self.encode(texts)
        out = [math.nan] * len(ids)
        scorable = [i for i, row in enumerate(ids) if len(row) >= 2]
        budget = self.cfg.batch_tokens or (16384 if self.device.startswith("cuda") else 2048)
        for bucket in length_buckets([len(ids[i]) for i in scorable], budget):
            rows = [scorable[j] for j in bucket]
            for i, value in zip(rows, self._batch([ids[i] for i in rows]), strict=True):
                out[i] = value
        return out

    def _batch(self, rows: list[list[int]]) -> list[float]:
        """Perplexities of one bucket: one forward pass, right padding, masked NLL."""
        import torch
        import torch.nn.functional as F

        width = max(len(r) for r in rows)
        ids = torch.zeros((len(rows), width), dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for n, row in enumerate(rows):
            ids[n, : len(row)] = torch.tensor(row)
            mask[n, : len(row)] = 1
        ids, mask = ids.to(self.device), mask.to(self.device)
        with torch.inference_mode():
            # No attention mask: with right padding and causal attention no real token sees a
            # pad, and without a mask the attention takes its fused causal path (much faster).
            logits = self.model(input_ids=ids).logits[:, :-1]
            valid = mask[:, 1:].bool()  # positions that predict a real token
            picked, targets = logits[valid], ids[:, 1:][valid]  # (tokens, vocab), row-major
            rows_of = torch.arange(len(rows), device=ids.device).unsqueeze(1).expand_as(valid)[valid]
            totals = torch.zeros(len(rows), dtype=torch.float64, device=ids.device)
            # the float32 copy of the logits is made a slice at a time (~1 GiB at most)
            step = max(1, (1 << 28) // picked.shape[-1])
            for start in range(0, picked.shape[0], step):
                nll = F.cross_entropy(picked[start: start + step].float(), targets[start: start + step],
                                      reduction="none")
                totals.index_add_(0, rows_of[start: start + step], nll.double())
        return [math.exp(total / (len(row) - 1)) for total, row in zip(totals.tolist(), rows, strict=True)]

def _dtype(torch: Any, name: str, device: str) -> Any:
    if name == "auto":
        return torch.bfloat16 if device.startswith("cuda") else torch.float32
    return getattr(torch, name)


def _dtype_kwarg() -> str:
    """transformers renamed ``torch_dtype`` to ``dtype`` in 4.56."""
    import transformers

    major, minor = (int(p) for p in transformers.__version__.split(".")[:2])
    return "dtype" if (major, minor) >= (4, 56) else "torch_dtype"
