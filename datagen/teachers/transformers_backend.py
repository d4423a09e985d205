"""The ``transformers`` backend: a local Hugging Face causal LM, batched, on CPU or GPU.

For small teachers, and so the whole teacher path runs a real model in tests. Requests
that share sampling settings (and, when sampled, a seed) are generated together, one of
two ways (``teacher.transformers.batching``):

- continuous: ``model.generate_batch`` (transformers >= 5, paged attention), every request
  of the group at once; a finished request frees its place for the next, so nobody waits
  for the longest answer of a batch. The default on CUDA, where the model supports it.
- static: ``model.generate`` on left-padded batches of ``batch_size``, sorted by prompt
  length so a batch pads little. The default elsewhere (CPU, older transformers).

Both paths get the same prompt tokens and the same ``GenerationConfig``, seed torch with
the group's seed, and share one decoder of answers (end of text, stop strings, usage), so
greedy answers agree across paths. JSON schemas are not enforced while decoding here:
answers are validated (and re-asked) by the shared plumbing. A prompt longer than the
model's context keeps its end (where the prompts put the instruction).
"""

from __future__ import annotations

import asyncio
import copy
import time
from collections import defaultdict
from typing import Any

from datagen.errors import UserError, install_hint
from datagen.teachers.base import BaseTeacher, Call, Done
from datagen.teachers.types import TeacherResult, Usage

# KV cache for continuous batching on CPU, where transformers cannot size it from device
# memory: 64 pages of 256 tokens; a request that does not fit waits for a free page.
CPU_PAGED_CACHE = {"num_blocks": 64, "max_batch_tokens": 2048}


class TransformersTeacher(BaseTeacher):
    backend = "transformers"
    batching = "static"  # the path chosen by load()

    def load(self) -> None:
        try:
            import torch
            import transformers
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as exc:
            raise UserError(install_hint("torch and transformers", "ppl")) from exc
        opts = self.config.transformers
        device = opts.device
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        dtype = {"auto": "auto", "float32": torch.float32, "float16": torch.float16,
                 "bfloat16": torch.bfloat16}[opts.dtype]
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(self.config.model)
            # transformers renamed torch_dtype to dtype in 4.56
            major, minor = (int(p) for p in transformers.__version__.split(".")[:2])
            key = "dtype" if (major, minor) >= (4, 56) else "torch_dtype"
            self.model = AutoModelForCausalLM.from_pretrained(self.config.model, **{key: dtype})
        except OSError as exc:
            raise UserError(f"cannot load teacher model {self.config.model}: {exc}") from exc
        self.model.to(device).eval()
        self.device = device
        self.tokenizer.padding_side = "left"
        self.tokenizer.truncation_side = "left"
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.batching = pick_batching(opts.batching, self.model, device)
        eos = self.model.generation_config.eos_token_id  # chat models may end on several
        eos = self.tokenizer.eos_token_id if eos is None else eos
        self.eos_ids = [eos] if isinstance(eos, int) else list(eos)

    async def _call_many(self, calls: list[Call], done: Done) -> None:
        groups: dict[str, list[int]] = defaultdict(list)
        for i, call in enumerate(calls):
            if "logprobs" in call.sampling or call.sampling.get("echo"):
                done(i, TeacherResult(key=call.key, status="error", attempts=0,
                                      error="logprobs/echo are not supported by the transformers backend"))
                continue
            s = call.sampling  # a greedy answer does not depend on the seed
            seed = call.request.seed if s["temperature"] > 0 else None
            groups[repr((sorted(s.items()), call.request.n, seed))].append(i)
        for idx in groups.values():
            group = [calls[i] for i in idx]
            prompts = self._encode(group)
            for batch in self._batches(prompts):
                results = await asyncio.to_thread(
                    self._generate, [group[j] for j in batch], [prompts[j] for j in batch])
                for j, result in zip(batch, results, strict=True):
                    done(idx[j], result)

    def _batches(self, prompts: list[list[int]]) -> list[list[int]]:
        """Positions of ``prompts`` per model call: all at once (continuous) or static
        batches of near-equal prompt length."""
        if self.batching == "continuous":
            return [list(range(len(prompts)))]
        order = sorted(range(len(prompts)), key=lambda j: (len(prompts[j]), j))
        size = self.config.transformers.batch_size
        return [order[start:start + size] for start in range(0, len(order), size)]

    def _prompt_text(self, call: Call) -> str:
        if call.request.prompt is not None:
            return call.request.prompt
        if getattr(self.tokenizer, "chat_template", None):
            return self.tokenizer.apply_chat_template(
                call.messages, tokenize=False, add_generation_prompt=True)
        # Models without a chat template: a plain transcript ending in the assistant's turn.
        lines = [f"{m['role']}: {m['content']}" for m in call.messages or []]
        return "\n".join(lines) + "\nassistant:"

    def _new_tokens(self, max_tokens: int) -> tuple[int, int | None]:
        """(tokens to generate, prompt tokens that fit beside them or None if unbounded)."""
        context = getattr(self.model.config, "max_position_embeddings", None)
        if not context:
            return max_tokens, None
        new = min(max_tokens, context // 2)
        return new, context - new

    def _encode(self, calls: list[Call]) -> list[list[int]]:
        _, fit = self._new_tokens(calls[0].sampling["max_tokens"])
        texts = [self._prompt_text(c) for c in calls]
        return self.tokenizer(texts, truncation=fit is not None, max_length=fit)["input_ids"]

    def generation_config(self, call: Call) -> Any:
        """The model's generation defaults with this call's sampling (both paths use it)."""
        s = call.sampling
        config = copy.deepcopy(self.model.generation_config)
        greedy = s["temperature"] == 0  # n greedy answers are one answer n times
        config.update(max_new_tokens=self._new_tokens(s["max_tokens"])[0],
                      num_return_sequences=1 if greedy else call.request.n,
                      pad_token_id=self.tokenizer.pad_token_id,
                      eos_token_id=self.eos_ids, do_sample=not greedy,
                      top_k=None)
        if not greedy:
            config.update(temperature=s["temperature"], top_p=s["top_p"])
        else:
            config.update(temperature=None, top_p=None)
        return config

    def _generate(self, calls: list[Call], prompts: list[list[int]]) -> list[TeacherResult]:
        started = time.monotonic()
        config = self.generation_config(calls[0])
        seed = calls[0].request.seed if config.do_sample else None
        run = self._continuous if self.batching == "continuous" else self._static
        copies = calls[0].request.n // config.num_return_sequences
        rows = [r if isinstance(r, str) else r * copies for r in run(prompts, config, seed)]
        elapsed = time.monotonic() - started
        return [self._result(c, len(p), r, elapsed) for c, p, r in zip(calls, prompts, rows, strict=True)]

    def _static(self, prompts: list[list[int]], config: Any, seed: int | None) -> list[Any]:
        import torch

        if seed is not None:
            torch.manual_seed(seed)
        enc = self.tokenizer.pad({"input_ids": prompts}, return_tensors="pt").to(self.device)
        with torch.no_grad():
            out = self.model.generate(**enc, generation_config=config)
        new = out[:, enc["input_ids"].shape[1]:].tolist()
        n = config.num_return_sequences
        return [new[b * n:(b + 1) * n] for b in range(len(prompts))]

    def _continuous(self, prompts: list[list[int]], config: Any, seed: int | None) -> list[Any]:
        """Token rows per prompt, or an error message where generate_batch gave none."""
        from transformers import ContinuousBatchingConfig

        sizing = {} if self.device.startswith("cuda") else CPU_PAGED_CACHE
        outputs = self.model.generate_batch(
            inputs=prompts, generation_config=config, progress_bar=False,
            continuous_batching_config=ContinuousBatchingConfig(seed=seed, **sizing))
        rows: list[Any] = []
        for i in range(len(prompts)):  # a fresh manager's names, in generate_batch's order
            names = [f"req_{i}__child#{j}" for j in range(config.num_return_sequences - 1)] + [f"req_{i}"]
            got = [outputs.get(name) for name in names]
            failed = [o.error if o is not None else "no output" for o in got if o is None or o.error]
            rows.append(f"generate_batch: {failed[0]}" if failed else [o.generated_tokens for o in got])
        return rows

    def _result(self, call: Call, prompt_tokens: int, rows: Any, elapsed: float) -> TeacherResult:
        """One request's answer from its generated token rows (the same for both paths)."""
        if isinstance(rows, str):
            return TeacherResult(key=call.key, status="error", error=rows, attempts=1,
                                 latency_s=elapsed)
        texts, reasons, completion = [], [], 0
        for row in rows:
            end = next((k for k, t in enumerate(row) if t in self.eos_ids), None)
            ended = end is not None
            ids = row[:end] if ended else row
            text, stopped = _cut_at_stop(self.tokenizer.decode(ids, skip_special_tokens=True),
                                         call.sampling["stop"])
            texts.append(text)
            reasons.append("stop" if ended or stopped else "length")
            completion += len(ids)
        return TeacherResult(
            key=call.key, status="ok", texts=texts, finish_reasons=reasons, attempts=1,
            usage=Usage(prompt_tokens=prompt_tokens, completion_tokens=completion),
            latency_s=elapsed, created=int(time.time()),
        )


def pick_batching(wanted: str, model: Any, device: str) -> str:
    """'continuous' where asked for (or 'auto' on CUDA) and the model can: transformers >= 5
    has ``generate_batch``, and models on the attention interface can run it paged."""
    try:
        from transformers import ContinuousBatchingConfig  # noqa: F401  (transformers >= 5)
    except ImportError:
        return "static"
    able = hasattr(model, "generate_batch") and getattr(model, "_supports_attention_backend", False)
    if wanted == "continuous" or (wanted == "auto" and device.startswith("cuda")):
        return "continuous" if able else "static"
    return "static"


def _cut_at_stop(text: str, stops: list[str]) -> tuple[str, bool]:
    cuts = [text.index(s) for s in stops if s and s in text]
    return (text[:min(cuts)], True) if cuts else (text, False)
