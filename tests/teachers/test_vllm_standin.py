"""The vllm back end's own code, driven through the stand-in ``vllm`` module (tests/standin:
vLLM's offline API in its documented shapes, answered by the tiny model trained here)."""

from __future__ import annotations

import pytest

from datagen.config.teacher import TeacherConfig
from datagen.teachers import TeacherRequest, make_teacher

pytest.importorskip("torch")

TEMPLATE = "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}assistant:"


def vconfig(model, tmp_path, cache: bool = False, **kw) -> TeacherConfig:
    template = tmp_path / "chat.jinja"
    template.write_text(TEMPLATE)
    return TeacherConfig(backend="vllm", model=str(model),
                         cache_dir=str(tmp_path / "c") if cache else None,
                         vllm={"tensor_parallel_size": 2, "max_model_len": 256, "dtype": "bfloat16",
                               "gpu_memory_utilization": 0.5, "chat_template": str(template)}, **kw)


def ask(text: str, **kw) -> TeacherRequest:
    return TeacherRequest(messages=[{"role": "user", "content": text}], **kw)


def run(vllm, cfg, reqs):
    """(results, the stand-in engine that answered them)."""
    results = make_teacher(cfg).generate(reqs)
    return results, vllm.LLM.instances[-1]


def test_engine_options_sampling_usage_and_finish_reasons(tiny_model, tmp_path, standin_vllm):
    reqs = [ask("def add(a, b):", sampling={"max_tokens": 8}),
            TeacherRequest(prompt="class Stack:", n=2, seed=5, sampling={
                "max_tokens": 12, "stop": ["\n"], "temperature": 0.7, "top_p": 0.9})]
    results, llm = run(standin_vllm, vconfig(tiny_model, tmp_path, cache=True), reqs)
    assert llm.engine_kwargs == {
        "tensor_parallel_size": 2, "max_model_len": 256, "gpu_memory_utilization": 0.5,
        "enable_prefix_caching": True, "dtype": "bfloat16", "trust_remote_code": False}
    chat, raw = llm.params  # chats go through LLM.chat first, then raw prompts
    assert (chat.n, chat.temperature, chat.top_p, chat.max_tokens, chat.stop, chat.seed) == (
        1, 0.0, 1.0, 8, [], None)
    assert (raw.n, raw.temperature, raw.top_p, raw.max_tokens, raw.stop, raw.seed) == (
        2, 0.7, 0.9, 12, ["\n"], 5)
    assert all(p.logprobs is None and p.prompt_logprobs is None and p.structured_outputs is None
               for p in llm.params)
    tok = llm.get_tokenizer()
    prompt = "user: def add(a, b):\nassistant:"
    assert results[0].usage.prompt_tokens == len(tok.encode(prompt))
    assert results[1].usage.prompt_tokens == len(tok.encode("class Stack:"))
    assert len(results[1].texts) == 2 and all("\n" not in t for t in results[1].texts)
    for res, limit in zip(results, (8, 24), strict=True):
        assert 0 < res.usage.completion_tokens <= limit and res.attempts == 1
        assert set(res.finish_reasons) <= {"stop", "length"}
        assert res.status == ("truncated" if "length" in res.finish_reasons else "ok")
    # a re-run is answered from the cache: no engine at all
    before = len(standin_vllm.LLM.instances)
    again = make_teacher(vconfig(tiny_model, tmp_path, cache=True)).generate(reqs)
    assert all(r.cached for r in again) and len(standin_vllm.LLM.instances) == before
    assert [r.texts for r in again] == [r.texts for r in results]


def test_seeds_repeat_and_n_gives_n_choices(tiny_model, tmp_path, standin_vllm):
    def sample(seed):
        req = TeacherRequest(prompt="def", n=3, seed=seed,
                             sampling={"max_tokens": 8, "temperature": 1.0})
        return run(standin_vllm, vconfig(tiny_model, tmp_path), [req])[0][0].texts

    first = sample(11)
    assert len(first) == 3 and sample(11) == first and sample(12) != first


def test_greedy_answers_match_the_transformers_backend(tiny_model, tmp_path, standin_vllm):
    reqs = [TeacherRequest(prompt=p, sampling={"max_tokens": 10, "stop": ["return"]})
            for p in ("def add(a, b):", "class Stack:\n    def", "def")]
    vl, _ = run(standin_vllm, vconfig(tiny_model, tmp_path), reqs)
    hf = make_teacher(TeacherConfig(backend="transformers", model=str(tiny_model), cache_dir=None,
                                    transformers={"device": "cpu"})).generate(reqs)
    assert [(r.texts, r.finish_reasons) for r in vl] == [(r.texts, r.finish_reasons) for r in hf]
    assert {r.finish_reasons[0] for r in vl} == {"stop", "length"}  # a stop string and a cut


def test_json_schema_goes_out_as_structured_outputs(tiny_model, tmp_path, standin_vllm, monkeypatch):
    schema = {"type": "object", "required": ["name"]}
    req = ask("class Stack:", json_schema=schema, sampling={"max_tokens": 64, "stop": ["\n"]})
    [res], llm = run(standin_vllm, vconfig(tiny_model, tmp_path, max_reasks=1), [req])
    assert [p.structured_outputs.json for p in llm.params] == [schema, schema]
    # the stand-in does not constrain decoding: the tiny model's code fails the schema, the
    # shared plumbing asks once more, then gives up
    assert (res.status, res.attempts, res.parsed) == ("invalid", 2, [None])
    monkeypatch.delattr(standin_vllm.sampling_params, "StructuredOutputsParams")  # vLLM < 0.12
    _, llm = run(standin_vllm, vconfig(tiny_model, tmp_path, max_reasks=0), [req])
    assert llm.params[0].guided_decoding.json == schema


def test_prompt_logprobs_for_scoring(tiny_model, tmp_path, standin_vllm):
    from tests.score.lm import ReferenceLM

    text = "def add(a, b):\n    return a + b\n"
    greedy = {"max_tokens": 1, "temperature": 0.0}
    reqs = [TeacherRequest(prompt=text, sampling={**greedy, "logprobs": 1, "echo": True}),
            TeacherRequest(prompt=text, sampling={**greedy, "logprobs": 2})]
    (echo, plain), llm = run(standin_vllm, vconfig(tiny_model, tmp_path), reqs)
    assert [(p.logprobs, p.prompt_logprobs, p.max_tokens) for p in llm.params] == [(1, 1, 1), (2, None, 1)]
    ref = ReferenceLM(tiny_model)
    expected, _, next_logprob = ref.prompt_logprobs(ref.tokenizer.encode(text))
    assert echo.token_logprobs[0][0] is None
    assert echo.token_logprobs[0][1:] == pytest.approx(expected[1:] + [next_logprob], abs=1e-5)
    assert plain.token_logprobs == [[pytest.approx(next_logprob, abs=1e-5)]]
    assert echo.usage.prompt_tokens == len(expected) and echo.usage.completion_tokens == 1
