"""The ``vllm`` backend: offline batch inference with ``vllm.LLM`` on this node's GPUs.

Deliberately thin over vLLM's public API: engine options come from ``teacher.vllm``,
chat requests go through ``LLM.chat`` (the model's chat template), raw prompts through
``LLM.generate``. JSON schemas become structured outputs: ``StructuredOutputsParams``
(vLLM >= 0.12) or ``GuidedDecodingParams`` (older). Retries do not apply in-process; the
shared plumbing still validates answers, caches and accounts.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from datagen.errors import UserError, install_hint
from datagen.teachers.base import BaseTeacher, Call, Done
from datagen.teachers.types import TeacherResult, Usage


def structured_kwargs(vllm_sampling: Any, schema: dict) -> dict[str, Any]:
    """``SamplingParams`` kwargs asking for ``schema``, for whichever API this vLLM has."""
    if hasattr(vllm_sampling, "StructuredOutputsParams"):
        return {"structured_outputs": vllm_sampling.StructuredOutputsParams(json=schema)}
    return {"guided_decoding": vllm_sampling.GuidedDecodingParams(json=schema)}


class VllmTeacher(BaseTeacher):
    backend = "vllm"

    def load(self) -> None:
        try:
            import vllm
            import vllm.sampling_params as vllm_sampling
        except ImportError as exc:
            raise UserError(install_hint("vllm", "vllm")) from exc
        o = self.config.vllm
        self._vllm, self._sp = vllm, vllm_sampling
        self._chat_template = Path(o.chat_template).read_text() if o.chat_template else None
        self.llm = vllm.LLM(
            model=self.config.model, tensor_parallel_size=o.tensor_parallel_size,
            max_model_len=o.max_model_len, gpu_memory_utilization=o.gpu_memory_utilization,
            enable_prefix_caching=o.enable_prefix_caching, dtype=o.dtype,
            trust_remote_code=o.trust_remote_code,
        )

    def sampling_params(self, call: Call) -> Any:
        s = call.sampling
        kwargs: dict[str, Any] = {
            "n": call.request.n, "temperature": s["temperature"], "top_p": s["top_p"],
            "max_tokens": s["max_tokens"], "stop": s["stop"] or None, "seed": call.request.seed,
        }
        if "logprobs" in s:
            kwargs["logprobs"] = s["logprobs"]
            if s.get("echo"):
                kwargs["prompt_logprobs"] = s["logprobs"]
        if call.request.json_schema is not None:
            kwargs.update(structured_kwargs(self._sp, call.request.json_schema))
        return self._vllm.SamplingParams(**kwargs)

    async def _call_many(self, calls: list[Call], done: Done) -> None:
        chats = [i for i, c in enumerate(calls) if c.messages is not None]
        prompts = [i for i, c in enumerate(calls) if c.messages is None]
        for idx, is_chat in ((chats, True), (prompts, False)):
            if not idx:
                continue
            started = time.monotonic()
            params = [self.sampling_params(calls[i]) for i in idx]
            if is_chat:
                outputs = self.llm.chat([calls[i].messages for i in idx], params, use_tqdm=False,
                                        chat_template=self._chat_template)
            else:
                outputs = self.llm.generate([calls[i].request.prompt for i in idx], params,
                                            use_tqdm=False)
            elapsed = time.monotonic() - started
            for i, out in zip(idx, outputs, strict=True):
                done(i, self._result(calls[i], out, elapsed))

    def _result(self, call: Call, out: Any, elapsed: float) -> TeacherResult:
        choices = sorted(out.outputs, key=lambda c: c.index)
        logprobs = None
        if "logprobs" in call.sampling:
            logprobs = [[_chosen_logprob(step, tid) for step, tid in
                         zip(c.logprobs or [], c.token_ids, strict=False)] for c in choices]
            if call.sampling.get("echo"):  # prompt logprobs first (the first one is None)
                prompt = [_chosen_logprob(step, tid) for step, tid in
                          zip(out.prompt_logprobs or [], out.prompt_token_ids, strict=False)]
                logprobs = [prompt + lp for lp in logprobs]
        return TeacherResult(
            key=call.key, status="ok", texts=[c.text for c in choices],
            finish_reasons=[c.finish_reason for c in choices], token_logprobs=logprobs,
            usage=Usage(prompt_tokens=len(out.prompt_token_ids or []),
                        completion_tokens=sum(len(c.token_ids) for c in choices)),
            attempts=1, latency_s=elapsed, created=int(time.time()),
        )


def _chosen_logprob(step: dict | None, token_id: int) -> float | None:
    if not step or token_id not in step:
        return None
    return float(step[token_id].logprob)
