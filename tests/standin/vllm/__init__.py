"""A stand-in for the parts of vLLM's offline API that datagen uses (the vllm teacher and
the perplexity scorer), written for datagen's tests: vLLM cannot run without a GPU. It
is NOT vLLM: ``LLM`` answers with the tiny test model through
``tests.score.lm.ReferenceLM`` (one sequence per forward pass), in vLLM's documented shapes:

- ``LLM(model=..., **engine_kwargs)``, ``LLM.get_tokenizer()``;
- ``LLM.generate(prompts, sampling_params, use_tqdm=...)``: prompts as strings or
  ``{"prompt_token_ids": [...]}`` (a ``TokensPrompt``); one ``SamplingParams`` or one per
  prompt;
- ``LLM.chat(conversations, sampling_params, use_tqdm=..., chat_template=...)``: each
  conversation rendered with the given template (else the tokenizer's; none is an error);
- ``RequestOutput(request_id, prompt, prompt_token_ids, prompt_logprobs, outputs)``:
  ``prompt_logprobs`` (when asked) has one entry per prompt token, the first ``None``, each
  other ``{token_id: Logprob}`` with the top-k tokens and always the actual one;
  ``outputs`` are ``n`` ``CompletionOutput(index, text, token_ids, cumulative_logprob,
  logprobs, finish_reason, stop_reason)``: greedy at temperature 0, else sampled (top-p)
  from one generator per request seeded with ``seed``; an end-of-text token ends a choice
  ("stop", the token is in ``token_ids``, not in ``text``), so does a stop string ("stop",
  ``stop_reason`` the string, cut from ``text``); ``max_tokens`` gives "length".

It does not constrain decoding to a structured-output schema: it only records the
``SamplingParams`` it got (``LLM.params``). Tests put this folder on ``sys.path`` for their
own duration only (the ``standin_vllm`` fixture).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tests.score.lm import ReferenceLM
from vllm.sampling_params import SamplingParams

STANDIN = True  # lets a test check it is talking to the stand-in
__all__ = ["LLM", "CompletionOutput", "Logprob", "RequestOutput", "SamplingParams"]


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
    logprobs: list[dict[int, Logprob]] | None
    finish_reason: str | None = None
    stop_reason: int | str | None = None


@dataclass
class RequestOutput:
    request_id: str
    prompt: str | None
    prompt_token_ids: list[int]
    prompt_logprobs: list[dict[int, Logprob] | None] | None
    outputs: list[CompletionOutput] = field(default_factory=list)
    finished: bool = True


class LLM:
    instances: list[LLM] = []

    def __init__(self, model: str, **engine_kwargs: Any):
        self.lm = ReferenceLM(model)
        self.engine_kwargs = engine_kwargs
        self.params: list[SamplingParams] = []  # every request's parameters, in order
        LLM.instances.append(self)

    def get_tokenizer(self) -> Any:
        return self.lm.tokenizer

    def generate(self, prompts: Any, sampling_params: Any = None,
                 use_tqdm: bool = True) -> list[RequestOutput]:
        items = prompts if isinstance(prompts, list) else [prompts]
        encoded = []
        for p in items:
            if isinstance(p, str):
                encoded.append((p, self.lm.tokenizer.encode(p)))
            else:
                encoded.append((p.get("prompt"), list(p["prompt_token_ids"])))
        return self._run(encoded, sampling_params)

    def chat(self, messages: Any, sampling_params: Any = None, use_tqdm: bool = True,
             chat_template: str | None = None, add_generation_prompt: bool = True) -> list[RequestOutput]:
        conversations = messages if messages and isinstance(messages[0], list) else [messages]
        encoded = []
        for conv in conversations:
            text = self.lm.tokenizer.apply_chat_template(
                conv, chat_template=chat_template, tokenize=False,
                add_generation_prompt=add_generation_prompt)
            encoded.append((text, self.lm.tokenizer.encode(text, add_special_tokens=False)))
        return self._run(encoded, sampling_params)

    def _run(self, encoded: list[tuple[str | None, list[int]]], params: Any) -> list[RequestOutput]:
        params = params if isinstance(params, list) else [params or SamplingParams()] * len(encoded)
        if len(params) != len(encoded):
            raise ValueError("The lengths of prompts and sampling_params must be the same.")
        self.params += params
        return [self._one(str(len(self.params) - len(encoded) + k), text, ids, p)
                for k, ((text, ids), p) in enumerate(zip(encoded, params, strict=True))]

    def _one(self, request_id: str, text: str | None, ids: list[int], params: SamplingParams) -> RequestOutput:
        import torch

        prompt_lps = None
        if params.prompt_logprobs is not None:
            table, _ = self.lm.logprobs(ids)
            prompt_lps = [None] + [self._entry(table[i - 1], ids[i], params.prompt_logprobs)
                                   for i in range(1, len(ids))]
        gen = torch.Generator()
        if params.seed is not None:
            gen.manual_seed(params.seed)
        else:
            gen.seed()
        outputs = [self._complete(k, ids, params, gen) for k in range(params.n)]
        return RequestOutput(request_id, text, ids, prompt_lps, outputs)

    def _complete(self, index: int, prompt: list[int], params: SamplingParams, gen: Any) -> CompletionOutput:
        import torch

        tok, eos = self.lm.tokenizer, self.lm.tokenizer.eos_token_id
        out: list[int] = []
        steps: list[dict[int, Logprob]] = []
        total, reason, stop_reason, text = 0.0, "length", None, ""
        while len(out) < params.max_tokens:
            row = self.lm.logprobs(prompt + out)[0][-1]
            if params.temperature == 0:
                token = int(row.argmax())
            else:
                probs = torch.softmax(row / params.temperature, dim=-1)
                order = probs.argsort(descending=True)
                keep = probs[order].cumsum(0) - probs[order] < params.top_p  # nucleus
                token = int(order[keep][torch.multinomial(probs[order][keep], 1, generator=gen)])
            out.append(token)
            total += float(row[token])
            if params.logprobs is not None:
                steps.append(self._entry(row, token, params.logprobs))
            text = tok.decode(out, skip_special_tokens=True)
            hits = [s for s in params.stop if s in text]
            if token == eos or hits:
                reason = "stop"
                if hits:
                    stop_reason = min(hits, key=text.index)
                    text = text[:text.index(stop_reason)]
                break
        return CompletionOutput(index, text, out, total if params.logprobs is not None else None,
                                steps if params.logprobs is not None else None, reason, stop_reason)

    @staticmethod
    def _entry(row: Any, actual: int, k: int) -> dict[int, Logprob]:
        """Top-k tokens plus the actual one, with 1-based ranks, as vLLM reports them."""
        order = row.argsort(descending=True).tolist()
        entry = {t: Logprob(float(row[t]), order.index(t) + 1) for t in order[:k]}
        entry.setdefault(actual, Logprob(float(row[actual]), order.index(actual) + 1))
        return entry
