"""The issue's quality bar: 1 000 requests with 20% injected faults all end answered or
with a recorded error after the retry budget, none paid twice; a re-run makes zero calls."""

from __future__ import annotations

from collections import Counter

import pytest

from datagen.manifest import Manifest
from datagen.records import TeacherCall
from datagen.teachers import TeacherRequest, make_teacher
from tests.teachers.helpers import fast_config

FAULTS = ("500", "503", "429", "hang", "malformed", "empty", "drop", "truncate")


@pytest.mark.slow
def test_thousand_requests_with_faults(server, tmp_path):
    reqs = [TeacherRequest(messages=[{"role": "user", "content": f"task {i}"}], seed=i % 7)
            for i in range(1000)]
    with server(fault_rate=0.2, fault_kinds=FAULTS, seed=1, hang_s=20) as s:
        # The timeout must exceed a loaded server's real answer time: a client that gives up
        # on an answer the server still completes would pay for it twice. 1 s was too short
        # for 64 concurrent requests on 2 busy cores, and 4 s too short on those cores at load 6
        # (a task build beside the suite): one answer was paid twice. A hang outlasts it.
        cfg = fast_config(s.base_url, tmp_path / "cache", max_retries=2, timeout_s=10.0,
                          max_concurrency=64)
        teacher = make_teacher(cfg, run_id="qb")
        results = teacher.generate(reqs)

        statuses = Counter(r.status for r in results)
        assert set(statuses) <= {"ok", "truncated", "error"}
        assert statuses["ok"] > 900 and statuses["truncated"] > 0
        assert sum(statuses.values()) == 1000
        for r in results:
            if r.status == "error":  # only after the whole budget: 1 try + 2 retries
                assert r.attempts == 3 and "after 3 attempts" in r.error
            else:
                assert r.texts and 1 <= r.attempts <= 3
        # none paid twice, and our attempt counts match what the server saw
        assert max(s.paid.values()) == 1
        assert sum(r.attempts for r in results) == s.total_calls
        assert sum(s.paid.values()) == statuses["ok"] + statuses["truncated"]

        rows = teacher.take_calls()
        with Manifest(tmp_path / "out", tables=[TeacherCall]) as db:
            db.insert(TeacherCall, rows)
            by_status = dict(db.execute(
                "SELECT status, count(*) FROM teacher_calls GROUP BY status").fetchall())
            attempts = db.execute("SELECT sum(attempts) FROM teacher_calls").fetchone()[0]
        assert by_status == dict(statuses) and attempts == s.total_calls

        s.reset_counts()
        s.fault_rate = 0.0
        again = make_teacher(cfg).generate(reqs)
        # answers come back from the cache; only the requests that failed are asked again
        assert s.total_calls == statuses["error"]
        assert all(r.cached for r, first in zip(again, results, strict=True)
                   if first.status != "error")
        s.reset_counts()
        make_teacher(cfg).generate(reqs)
        assert s.total_calls == 0
