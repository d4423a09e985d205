"""``teacher_calls`` survives a killed run: paid rows are journaled as answers arrive and
folded into the manifest exactly once."""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
import time

import duckdb
import pytest

from datagen.manifest import Manifest
from datagen.records import TeacherCall
from datagen.teachers import RequestCache
from datagen.teachers.accounting import CallJournal, journal_path
from tests.teachers.helpers import MODEL
from tests.teachers.test_cli import cli, teacher_flags, write_jsonl


@pytest.mark.slow
def test_killed_run_keeps_what_it_paid(server, tmp_path):
    fast = [f"fast {i}" for i in range(8)]
    slow = [f"slow {i}" for i in range(4)]
    src = write_jsonl(tmp_path / "k.jsonl", [
        {"id": t, "messages": [{"role": "user", "content": t}]} for t in fast + slow])
    out = tmp_path / "kout" / "r.jsonl"
    with server(faults={t: ["hang"] for t in slow}, hang_s=60) as s:
        args = ["teacher", "run", str(src), "-o", str(out), *teacher_flags(s, tmp_path),
                "--set", "teacher.timeout_s=60", "--no-progress"]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        proc = subprocess.Popen([sys.executable, "-m", "datagen.cli.app", *args], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        cache = RequestCache(tmp_path / "cache")
        deadline = time.monotonic() + 60
        while cache.count() < len(fast) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert cache.count() == len(fast), proc.stderr.read() if proc.poll() is not None else ""
        assert sum(s.paid.values()) == len(fast)  # the slow ones hang unpaid
        os.kill(proc.pid, signal.SIGKILL)  # mid-batch: 8 answered, 4 in flight
        proc.wait(timeout=30)
        proc.stderr.close()
        assert not out.exists()

        res = cli(*args)  # the re-run: cached answers at 0 tokens, the slow four paid now
        assert res.exit_code == 0, res.output
        assert sum(s.paid.values()) == len(fast) + len(slow)
        served = s.served_completion_tokens
    con = duckdb.connect(str(out.parent / "manifest.duckdb"), read_only=True)
    paid = con.execute("SELECT sum(completion_tokens), count(*), count(DISTINCT request_hash) "
                       "FROM teacher_calls WHERE NOT cached").fetchone()
    assert paid == (served, 12, 12)  # every paid request recorded, once
    assert con.execute("SELECT count(*), sum(completion_tokens) FROM teacher_calls WHERE cached"
                       ).fetchone() == (8, 0)
    assert con.execute("SELECT status FROM runs").fetchall() == [("finished",)]
    assert not journal_path(out.parent).exists()


def _row(i: int) -> TeacherCall:
    return TeacherCall(request_hash=f"h{i}", model=MODEL, model_id=MODEL, backend="openai", n=1,
                       prompt_tokens=3, completion_tokens=10 + i, latency_s=0.1, attempts=1,
                       status="ok", cached=False, created_at=dt.datetime(2026, 1, 1))


def test_fold_is_exactly_once_and_skips_a_torn_line(tmp_path):
    journal = CallJournal(journal_path(tmp_path))
    journal.append([_row(1), _row(2)])
    journal.append(journal.read()[:1])  # a line written twice is still one row
    with journal.path.open("a") as f:
        f.write('{"call_id": "torn", "request_ha')  # a write cut short
    saved = journal.path.read_bytes()
    with Manifest(tmp_path, tables=[TeacherCall]) as db:
        assert journal.fold(db) == 2
        assert not journal.path.exists()
        journal.path.write_bytes(saved)  # a crash after the insert, before the removal
        assert journal.fold(db) == 0
        assert journal.fold(db) == 0  # no journal at all
        rows = db.execute("SELECT request_hash, completion_tokens FROM teacher_calls "
                          "ORDER BY 1").fetchall()
    assert rows == [("h1", 11), ("h2", 12)]


def test_journal_holds_paid_rows_take_calls_the_rest(server, tmp_path):
    from datagen.teachers import TeacherRequest, make_teacher
    from tests.teachers.helpers import fast_config

    reqs = [TeacherRequest(id=i, messages=[{"role": "user", "content": t}])
            for i, t in (("a", "x"), ("b", "y"), ("c", "x"))]
    with server() as s:
        journal = CallJournal(tmp_path / "j.jsonl")
        teacher = make_teacher(fast_config(s.base_url, tmp_path / "c"), journal=journal)
        teacher.generate(reqs)
    assert [(r.custom_id, r.cached) for r in journal.read()] in (
        [("a", False), ("b", False)], [("b", False), ("a", False)])
    assert [(r.custom_id, r.cached, r.completion_tokens) for r in teacher.take_calls()] == [
        ("c", True, 0)]
