"""The request cache: keys, re-runs with zero calls, crash resume, concurrent writers."""

from __future__ import annotations

import asyncio
import contextlib
import json
import multiprocessing as mp
import time

from datagen.config.teacher import Sampling
from datagen.teachers import RequestCache, TeacherRequest, TeacherResult, make_teacher, request_key
from tests.teachers.helpers import fast_config


def ask(text: str, **kw) -> TeacherRequest:
    return TeacherRequest(messages=[{"role": "user", "content": text}], **kw)


def test_key_covers_what_decides_the_answer():
    base = ask("q", seed=1)
    key = request_key(base, "m", Sampling())
    assert request_key(ask("q", seed=1, id="other-id"), "m", Sampling()) == key
    # defaults filled in explicitly hash the same as defaults taken from the recipe
    assert request_key(ask("q", seed=1, sampling={"max_tokens": 1024}), "m", Sampling()) == key
    variants = [
        request_key(base, "m2", Sampling()),
        request_key(ask("q2", seed=1), "m", Sampling()),
        request_key(ask("q", seed=2), "m", Sampling()),
        request_key(ask("q", seed=1, n=2), "m", Sampling()),
        request_key(ask("q", seed=1, sampling={"temperature": 0.5}), "m", Sampling()),
        request_key(ask("q", seed=1, json_schema={"type": "object"}), "m", Sampling()),
        request_key(base, "m", Sampling(max_tokens=10)),
    ]
    assert len({key, *variants}) == len(variants) + 1


def test_rerun_answers_from_cache_with_zero_calls(server, tmp_path):
    reqs = [ask(f"q{i}", id=f"r{i}") for i in range(10)] + [ask("q0", id="dup")]
    with server(faults={"q3": ["500"] * 10}) as s:
        cfg = fast_config(s.base_url, tmp_path / "c", max_retries=1)
        first = make_teacher(cfg).generate(reqs)
        assert s.total_calls == 9 + 2  # the in-batch duplicate is asked once
        assert [r.id for r in first] == [r.id for r in reqs]
        assert first[-1].cached and first[-1].texts == first[0].texts
        assert first[3].status == "error"
        s.reset_counts()
        s.faults.clear()
        teacher = make_teacher(cfg)
        again = teacher.generate(reqs)
        assert s.total_calls == 1  # only the failed request is asked again
        assert [r.cached for r in again] == [i != 3 for i in range(10)] + [True]
        assert [r.texts for r in again if r.status == "ok"][:3] == [r.texts for r in first[:3]]
        rows = teacher.take_calls()
        assert sum(r.completion_tokens for r in rows) == again[3].usage.completion_tokens
        s.reset_counts()
        make_teacher(cfg).generate(reqs)
        assert s.total_calls == 0


def test_cache_off(server, tmp_path):
    with server() as s:
        teacher = make_teacher(fast_config(s.base_url, None))
        teacher.generate([ask("q")])
        teacher.generate([ask("q")])
        assert s.total_calls == 2


def test_crashed_run_resumes_from_what_was_answered(server, tmp_path):
    reqs = [ask(f"q{i}") for i in range(8)]
    with server(faults={"q6": ["hang"], "q7": ["hang"]}, hang_s=10) as s:
        cfg = fast_config(s.base_url, tmp_path / "c", timeout_s=10)
        teacher = make_teacher(cfg)

        async def crash():
            """The run dies once the six answered requests are cached (however loaded the
            machine), while q6 and q7 still hang."""
            run = asyncio.ensure_future(teacher.agenerate(reqs))
            deadline = time.monotonic() + 60
            while teacher.cache.count() < 6 and time.monotonic() < deadline and not run.done():
                await asyncio.sleep(0.02)
            run.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await run

        asyncio.run(crash())
        assert teacher.cache.count() == 6
        s.reset_counts()
        results = make_teacher(cfg).generate(reqs)
        assert all(r.status == "ok" for r in results)
        assert s.total_calls == 2 and sum(r.cached for r in results) == 6


def test_unreadable_entry_is_a_miss(tmp_path):
    cache = RequestCache(tmp_path)
    key = "ab" + "0" * 62
    assert cache.put(TeacherResult(key=key, status="ok", texts=["x"], finish_reasons=["stop"]))
    assert cache.get(key).texts == ["x"] and cache.get(key).cached
    cache.path(key).write_text('{"key": "ab00", "stat')
    assert cache.get(key) is None
    assert not cache.put(TeacherResult(key=key, status="error", error="boom"))
    assert cache.put(TeacherResult(key=key, status="invalid", error="bad", texts=["{"]))
    assert cache.get(key).error == "bad"


def _writer(root: str, worker: int, n: int) -> None:
    cache = RequestCache(root)
    for i in range(n):
        key = f"{i % 50:02d}" + f"{i:062d}"  # every worker writes the same 50 keys, then its own
        if i >= 50:
            key = f"{worker:02d}" + f"{worker * 1000 + i:062d}"
        cache.put(TeacherResult(key=key, status="ok", texts=[f"w{worker}-{i}" * 50],
                                finish_reasons=["stop"]))


def test_concurrent_writers_leave_whole_entries(tmp_path):
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), w, 150)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
        assert p.exitcode == 0
    files = list(tmp_path.rglob("*.json"))
    assert len(files) == 50 + 4 * 100
    assert not list(tmp_path.rglob("*.tmp"))
    cache = RequestCache(tmp_path)
    for f in files:
        data = json.loads(f.read_text())
        assert cache.get(data["key"]).texts == data["texts"]
