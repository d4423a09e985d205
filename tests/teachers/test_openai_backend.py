"""The openai backend against a real HTTP server on 127.0.0.1, one fault path at a time."""

from __future__ import annotations

import time

import pytest

from datagen.errors import UserError
from datagen.teachers import TeacherRequest, make_teacher
from tests.teachers.helpers import MODEL, fast_config


def ask(text: str, **kw) -> TeacherRequest:
    return TeacherRequest(messages=[{"role": "user", "content": text}], **kw)


def run(base_url, tmp_path, requests, **kw):
    teacher = make_teacher(fast_config(base_url, tmp_path / "cache", **kw))
    return teacher, teacher.generate(requests)


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["500", "503", "429", "hang", "malformed", "empty", "drop"])
def test_transient_fault_is_retried_and_paid_once(server, tmp_path, fault):
    with server(faults={"q": [fault, fault]}, hang_s=5) as s:
        _, [res] = run(s.base_url, tmp_path, [ask("q")], timeout_s=0.3 if fault == "hang" else 3)
        assert res.status == "ok"
        assert res.text == "answer to: q"
        assert res.attempts == 3 == s.total_calls
        assert list(s.paid.values()) == [1]


@pytest.mark.parametrize("fault, reason", [
    ("500", "http 500"), ("429", "http 429"), ("hang", "timeout"),
    ("malformed", "malformed response"), ("empty", "expected 1 choice(s), got no"),
    ("drop", "connection error"),
])
@pytest.mark.slow
def test_retry_budget_exhausted_records_the_error(server, tmp_path, fault, reason):
    with server(faults={"q": [fault] * 10}, hang_s=5) as s:
        teacher, [res] = run(s.base_url, tmp_path, [ask("q")], max_retries=2,
                             timeout_s=0.3 if fault == "hang" else 3)
        assert res.status == "error"
        assert reason in res.error and "after 3 attempts" in res.error
        assert res.attempts == 3 == s.total_calls
        assert sum(s.paid.values()) == 0
        [row] = teacher.take_calls()
        assert (row.status, row.attempts, row.cached) == ("error", 3, False)
        assert reason in row.error


def test_client_error_is_not_retried(server, tmp_path):
    with server(faults={"q": ["400"]}) as s:
        _, [res] = run(s.base_url, tmp_path, [ask("q")])
        assert res.status == "error" and "http 400" in res.error
        assert res.attempts == 1 == s.total_calls


def test_retry_after_is_honoured(server, tmp_path):
    with server(faults={"q": ["429"]}, retry_after="0.6") as s:
        started = time.monotonic()
        _, [res] = run(s.base_url, tmp_path, [ask("q")], backoff_max_s=5)
        assert res.status == "ok" and res.attempts == 2
        assert time.monotonic() - started >= 0.6


def test_backoff_grows_and_is_capped(tmp_path):
    teacher = make_teacher(fast_config("http://127.0.0.1:9/v1", None, backoff_base_s=1.0,
                                       backoff_max_s=8.0))
    waits = [teacher.backoff_s(a, None) for a in range(1, 8)]
    assert 0.5 <= waits[0] <= 1.0 and 1.0 <= waits[1] <= 2.0 and 2.0 <= waits[2] <= 4.0
    assert all(w <= 8.0 for w in waits) and waits[-1] >= 4.0
    assert teacher.backoff_s(1, 3.0) == 3.0 and teacher.backoff_s(1, 99.0) == 8.0


def test_truncated_answer_is_reported_not_parsed(server, tmp_path):
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    with server(faults={"q": ["truncate"]}, script={"q": '{"a": 1, "b": "long tail"}'}) as s:
        teacher, [res] = run(s.base_url, tmp_path, [ask("q", json_schema=schema)])
        assert res.status == "truncated"
        assert res.finish_reasons == ["length"] and res.parsed == [None]
        assert res.attempts == 1 == s.total_calls  # no re-ask for a cut-off answer
        assert teacher.cache.get(res.key) is not None  # a paid answer is kept


def test_schema_is_sent_as_response_format_and_parsed(server, tmp_path):
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    with server(script={"q": '```json\n{"a": 7}\n```'}) as s:
        _, [res] = run(s.base_url, tmp_path, [ask("q", json_schema=schema)])
        assert res.status == "ok" and res.parsed == [{"a": 7}]
        fmt = s.bodies[0]["response_format"]
        assert fmt["type"] == "json_schema" and fmt["json_schema"]["schema"] == schema


def test_invalid_answer_is_reasked_with_the_error(server, tmp_path):
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    with server(script={"q": ['{"a": "x"}', '{"a": 3}']}) as s:
        teacher, [res] = run(s.base_url, tmp_path, [ask("q", json_schema=schema)])
        assert res.status == "ok" and res.parsed == [{"a": 3}]
        assert res.attempts == 2 and res.usage.completion_tokens == 4
        reask = s.bodies[1]["messages"]
        assert reask[1] == {"role": "assistant", "content": '{"a": "x"}'}
        assert "schema violation at a" in reask[2]["content"]
        [row] = teacher.take_calls()
        assert row.attempts == 2 and row.completion_tokens == 4


def test_reasks_are_bounded_and_the_invalid_answer_is_cached(server, tmp_path):
    schema = {"type": "object", "required": ["a"]}
    with server(script={"q": "not json at all"}) as s:
        teacher, [res] = run(s.base_url, tmp_path, [ask("q", json_schema=schema)], max_reasks=2)
        assert res.status == "invalid" and "not JSON" in res.error
        assert res.attempts == 3 == s.total_calls
        # a rebuild gets the same verdict without paying for the same three answers again
        s.reset_counts()
        _, [again] = run(s.base_url, tmp_path, [ask("q", json_schema=schema)], max_reasks=2)
        assert s.total_calls == 0
        assert again.cached and again.status == "invalid" and again.error == res.error
        assert again.texts == res.texts


def test_auto_falls_back_when_server_refuses_response_format(server, tmp_path):
    schema = {"type": "object", "required": ["a"]}
    with server(script={"q": '{"a": 1}', "r": '{"a": 2}'}, reject_response_format=True) as s:
        _, res = run(s.base_url, tmp_path, [ask("q", json_schema=schema),
                                            ask("r", json_schema=schema)], max_concurrency=1)
        assert [r.parsed for r in res] == [[{"a": 1}], [{"a": 2}]]
        assert s.total_calls == 3  # one refusal, then the schema stays local
        assert "response_format" not in s.bodies[-1]


def test_fallback_also_covers_calls_already_in_flight(server, tmp_path):
    schema = {"type": "object", "required": ["a"]}
    script = {f"q{i}": f'{{"a": {i}}}' for i in range(6)}
    with server(script=script, reject_response_format=True) as s:
        _, res = run(s.base_url, tmp_path, [ask(f"q{i}", json_schema=schema) for i in range(6)],
                     max_concurrency=6, max_retries=0)
        assert [r.parsed for r in res] == [[{"a": i}] for i in range(6)]
        assert 7 <= s.total_calls <= 12


def test_n_samples_seed_and_stop_are_sent(server, tmp_path):
    with server() as s:
        _, [res] = run(s.base_url, tmp_path,
                       [ask("q", n=3, seed=5, sampling={"temperature": 0.7, "stop": ["END"]})])
        assert res.texts == [f"answer to: q [seed=5] #{i}" for i in range(3)]
        body = s.bodies[0]
        assert (body["n"], body["seed"], body["temperature"], body["stop"]) == (3, 5, 0.7, ["END"])
        assert body["max_tokens"] == 1024  # the recipe's default filled in


def test_completions_with_echo_logprobs(server, tmp_path):
    with server() as s:
        req = TeacherRequest(prompt="x y z",
                             sampling={"logprobs": 1, "echo": True, "max_tokens": 1})
        _, [res] = run(s.base_url, tmp_path, [req])
        assert res.status == "truncated"  # max_tokens=1 cut the answer
        assert res.tokens[0][:3] == ["x", "y", "z"]
        assert res.token_logprobs[0][0] is None and res.token_logprobs[0][1] < 0
        assert s.bodies[0]["echo"] is True and s.bodies[0]["logprobs"] == 1


def test_concurrency_is_bounded(server, tmp_path):
    with server(delay_s=0.15) as s:
        _, res = run(s.base_url, tmp_path, [ask(f"q{i}") for i in range(12)], max_concurrency=4,
                     timeout_s=5)
        assert all(r.status == "ok" for r in res)
        assert s.max_inflight == 4


def test_api_key_comes_from_named_env_var(server, tmp_path, monkeypatch):
    monkeypatch.delenv("DATAGEN_TEST_KEY", raising=False)
    with pytest.raises(UserError, match="DATAGEN_TEST_KEY"):
        make_teacher(fast_config(None, None)).generate([ask("q")])
    monkeypatch.setenv("DATAGEN_TEST_KEY", "sk-secret-123")
    with server() as s:
        teacher, [res] = run(s.base_url, tmp_path, [ask("q")])
        assert res.status == "ok"
        stored = "".join(p.read_text() for p in (tmp_path / "cache").rglob("*.json"))
        assert "sk-secret-123" not in stored + res.model_dump_json()
        assert "sk-secret-123" not in str(teacher.take_calls())


def test_unknown_model_is_a_final_error(server, tmp_path):
    with server() as s:
        _, [res] = run(s.base_url, tmp_path, [ask("q")], model="other")
        assert res.status == "error" and "404" in res.error and res.attempts == 1
        assert MODEL not in res.error
