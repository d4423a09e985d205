"""The transformers backend running a real (tiny, trained-here) GPT-2 through the teacher path."""

from __future__ import annotations

import json

import pytest

from datagen.config.teacher import TeacherConfig
from datagen.errors import UserError
from datagen.teachers import TeacherRequest, make_teacher

pytest.importorskip("torch")


def config(path, tmp_path, **kw) -> TeacherConfig:
    opts = {"cache_dir": str(tmp_path / "c"), **kw}
    return TeacherConfig(backend="transformers", model=str(path),
                         transformers={"device": "cpu", "batch_size": 4}, **opts)


def ask(text: str, **kw) -> TeacherRequest:
    return TeacherRequest(messages=[{"role": "user", "content": text}], **kw)


@pytest.mark.slow
def test_generates_batched_and_deterministic(tiny_model, tmp_path):
    reqs = [ask("def add(a, b):", sampling={"max_tokens": 12}),
            ask("class Stack:", sampling={"max_tokens": 12}),
            ask("def sub(a, b):", sampling={"max_tokens": 12, "temperature": 0.8}, seed=3, n=2)]
    teacher = make_teacher(config(tiny_model, tmp_path))
    first = teacher.generate(reqs)
    assert all(r.status in ("ok", "truncated") for r in first)
    for r in first:
        assert r.attempts == 1 and r.usage.prompt_tokens > 0
        assert 0 < r.usage.completion_tokens <= 12 * len(r.texts)
        assert all(reason in ("stop", "length") for reason in r.finish_reasons)
    assert len(first[2].texts) == 2
    # a fresh teacher without the cache repeats the answers (greedy, and seeded sampling)
    again = make_teacher(config(tiny_model, tmp_path, cache_dir=None)).generate(reqs)
    assert [r.texts for r in again] == [r.texts for r in first]
    # with the cache: no model call at all
    cached = make_teacher(config(tiny_model, tmp_path))
    cached.load = lambda: pytest.fail("the model must not be needed")  # type: ignore[method-assign]
    assert all(r.cached for r in cached.generate(reqs))


def test_max_tokens_reports_truncation(tiny_model, tmp_path):
    teacher = make_teacher(config(tiny_model, tmp_path))
    [res] = teacher.generate([TeacherRequest(prompt="def", sampling={"max_tokens": 2})])
    if res.finish_reasons == ["length"]:
        assert res.status == "truncated" and res.usage.completion_tokens == 2
    else:  # the model chose to stop within two tokens
        assert res.status == "ok"


def test_schema_answers_are_validated_locally(tiny_model, tmp_path):
    teacher = make_teacher(config(tiny_model, tmp_path, max_reasks=1))
    schema = {"type": "object", "required": ["name"]}
    [res] = teacher.generate([ask("class Stack:", json_schema=schema,
                                  sampling={"max_tokens": 64})])
    # a code model this small does not write JSON: invalid (or truncated), never parsed
    assert res.status in ("invalid", "truncated")
    assert res.parsed == [None]
    if res.status == "invalid":
        assert res.attempts == 2 and "not JSON" in res.error


def test_missing_model_is_a_user_error(tmp_path):
    teacher = make_teacher(config(tmp_path / "nope", tmp_path))
    with pytest.raises(UserError, match="cannot load teacher model"):
        teacher.generate([ask("x")])


def test_cli_run_with_the_local_model(tiny_model, tmp_path):
    from typer.testing import CliRunner

    from datagen.cli.app import app

    src = tmp_path / "in.jsonl"
    src.write_text('{"id": "a", "prompt": "def add(a, b):", "max_tokens": 6}\n'
                   '{"id": "b", "messages": [{"role": "user", "content": "class"}], "max_tokens": 6}\n')
    out = tmp_path / "o" / "out.jsonl"
    res = CliRunner().invoke(app, ["teacher", "run", str(src), "-o", str(out), "--backend", "transformers",
                                   "--model", str(tiny_model), "--set", f"teacher.cache_dir={tmp_path / 'c'}",
                                   "--set", "teacher.transformers.device=cpu"])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["a", "b"]
    assert all(r["status"] in ("ok", "truncated") and r["usage"]["completion_tokens"] <= 6 for r in rows)


def both_paths(path, tmp_path, reqs):
    """The same requests through static and continuous batching (fresh teachers, no cache)."""
    out = {}
    for batching in ("static", "continuous"):
        teacher = make_teacher(TeacherConfig(
            backend="transformers", model=str(path), cache_dir=None,
            transformers={"device": "cpu", "batch_size": 2, "batching": batching}))
        out[batching] = teacher.generate(reqs)
        assert teacher.batching == batching  # generate_batch runs on CPU too (transformers >= 5)
    return out["static"], out["continuous"]


@pytest.mark.slow
def test_greedy_answers_are_the_same_on_both_paths(tiny_model, tmp_path):
    pytest.importorskip("transformers", minversion="5.0")
    reqs = [ask("class Stack:\n    def push", sampling={"max_tokens": 10}),
            TeacherRequest(prompt="def add(a, b):", sampling={"max_tokens": 6}, n=2),
            TeacherRequest(prompt="def add(a, b):", sampling={"max_tokens": 10, "stop": ["return"]}),
            ask("def sub(a, b):", sampling={"max_tokens": 10}, seed=7)]
    static, continuous = both_paths(tiny_model, tmp_path, reqs)
    for a, b in zip(static, continuous, strict=True):
        assert (a.texts, a.finish_reasons, a.status) == (b.texts, b.finish_reasons, b.status)
        assert a.usage == b.usage and a.usage.prompt_tokens > 0 and a.attempts == b.attempts == 1
    assert len(static[1].texts) == 2 and static[1].usage.completion_tokens <= 12
    assert static[2].finish_reasons == ["stop"] and "return" not in static[2].text


@pytest.mark.slow
def test_sampling_repeats_per_path_with_a_seed(tiny_model, tmp_path):
    pytest.importorskip("transformers", minversion="5.0")
    reqs = [ask("def sub(a, b):", sampling={"max_tokens": 8, "temperature": 1.0}, seed=3, n=2),
            ask("class Stack:", sampling={"max_tokens": 8, "temperature": 1.0, "top_p": 0.9},
                seed=3, n=2)]
    first, again = both_paths(tiny_model, tmp_path, reqs), both_paths(tiny_model, tmp_path, reqs)
    for path in (0, 1):
        assert [r.texts for r in first[path]] == [r.texts for r in again[path]]
        assert all(len(r.texts) == 2 and r.usage.completion_tokens <= 16 for r in first[path])


def test_static_batches_group_near_equal_prompt_lengths(tmp_path):
    teacher = make_teacher(config(tmp_path, tmp_path))  # batch_size 4; not loaded: static
    prompts = [[1] * n for n in (9, 2, 7, 3, 8)]
    assert teacher._batches(prompts) == [[1, 3, 2, 4], [0]]
    teacher.batching = "continuous"
    assert teacher._batches(prompts) == [[0, 1, 2, 3, 4]]


def test_batching_follows_device_and_model(tiny_model):
    transformers = pytest.importorskip("transformers", minversion="5.0")
    from datagen.teachers.transformers_backend import pick_batching

    model = transformers.AutoModelForCausalLM.from_pretrained(tiny_model)
    assert pick_batching("auto", model, "cpu") == "static"
    assert pick_batching("auto", model, "cuda:0") == "continuous"
    assert pick_batching("continuous", model, "cpu") == "continuous"
    assert pick_batching("static", model, "cuda") == "static"
    model._supports_attention_backend = False  # a model that cannot run paged attention
    assert pick_batching("auto", model, "cuda") == "static"
