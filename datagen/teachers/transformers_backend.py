"""The ``transformers`` backend: a local Hugging Face causal LM, batched, on CPU or GPU.

For small teachers, and so the whole teacher path runs a real model in tests. Requests
that share sampling settings are generated together (left-padded batches); each batch
seeds torch with the request's seed, so answers repeat. JSON schemas are not enforced
while decoding here: answers are validated (and re-asked) by the shared plumbing. A prompt
longer than the model's context keeps its end (where the prompts put the instruction):
the model would otherwise fail the whole batch with an index error.
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from typing import Any

from datagen.errors import UserError, install_hint
from datagen.teachers.base import BaseTeacher, Call, Done
from datagen.teachers.types import TeacherResult, Usage


class TransformersTeacher(BaseTeacher):
    backend = "transformers"

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

    async def _call_many(self, calls: list[Call], done: Done) -> None:
        groups: dict[str, list[int]] = defaultdict(list)
        for i, call in enumerate(calls):
            if "logprobs" in call.sampling or call.sampling.get("echo"):
                done(i, TeacherResult(key=call.key, status="error", attempts=0,
                                      error="logprobs/echo are not supported by the transformers backend"))
                continue
            sig = repr((sorted(call.sampling.items()), call.request.n, call.request.seed))
            groups[sig].append(i)
        size = self.config.transformers.batch_size
        for idx in groups.values():
            for start in range(0, len(idx), size):
                chunk = idx[start:start + size]
                results = await asyncio.to_thread(self._generate, [calls[i] for i in chunk])
                for i, result in zip(chunk, results, strict=True):
                    done(i, result)

    def _prompt_text(self, call: Call) -> str:
        if call.request.prompt is not None:
            return call.request.prompt
        if getattr(self.tokenizer, "chat_template", None):
            return self.tokenizer.apply_chat_template(
                call.messages, tokenize=False, add_generation_prompt=True)
        # Models without a chat template: a plain transcript ending in the assistant's turn.
        lines = [f"{m['role']}: {m['content']}" for m in call.messages or []]
        return "\n".join(lines) + "\nassistant:"

    def _generate(self, calls: list[Call]) -> list[TeacherResult]:
        import torch

        started = time.monotonic()
        first = calls[0]
        s, n = first.sampling, first.request.n
        if first.request.seed is not None:
            torch.manual_seed(first.request.seed)
        new_tokens, fit = s["max_tokens"], None
        context = getattr(self.model.config, "max_position_embeddings", None)
        if context:
            new_tokens = min(new_tokens, context // 2)
            fit = context - new_tokens
        enc = self.tokenizer([self._prompt_text(c) for c in calls], return_tensors="pt", padding=True,
                             truncation=fit is not None, max_length=fit).to(self.device)
        kwargs: dict[str, Any] = {"max_new_tokens": new_tokens, "num_return_sequences": n,
                                  "pad_token_id": self.tokenizer.pad_token_id}
        if s["temperature"] > 0:
            kwargs.update(do_sample=True, temperature=s["temperature"], top_p=s["top_p"])
        else:
            kwargs.update(do_sample=False)
        with torch.no_grad():
            out = self.model.generate(**enc, **kwargs)
        new = out[:, enc["input_ids"].shape[1]:]
        prompt_lens = enc["attention_mask"].sum(dim=1).tolist()
        eos = self.tokenizer.eos_token_id
        elapsed = time.monotonic() - started
        results = []
        for b, call in enumerate(calls):
            texts, reasons, completion = [], [], 0
            for row in new[b * n:(b + 1) * n].tolist():
                ended = eos in row
                ids = row[:row.index(eos)] if ended else row
                text, stopped = _cut_at_stop(self.tokenizer.decode(ids, skip_special_tokens=True),
                                             s["stop"])
                texts.append(text)
                reasons.append("stop" if ended or stopped else "length")
                completion += len(ids)
            results.append(TeacherResult(
                key=call.key, status="ok", texts=texts, finish_reasons=reasons, attempts=1,
                usage=Usage(prompt_tokens=int(prompt_lens[b]), completion_tokens=completion),
                latency_s=elapsed, created=int(time.time()),
            ))
        return results


def _cut_at_stop(text: str, stops: list[str]) -> tuple[str, bool]:
    cuts = [text.index(s) for s in stops if s and s in text]
    return (text[:min(cuts)], True) if cuts else (text, False)
