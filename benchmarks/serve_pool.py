"""Latency of a claim of 256 from `datagen serve pool` at 1 k and 1 M instructions
(goal: <= 50 ms p99 at 1 M), against `datagen pool take` of 256 on the same pool and
journal (the baseline: it reads the whole journal per take).

Each pool is written straight as parquet (one template row, ids made unique), the
journal is pre-filled with takes of a quarter of the pool (the case the issue names:
a take from a 300 k pool once 250 k are taken), the server runs as a real process, and
the client times each claim over HTTP on 127.0.0.1 (the answer holds 256 full rows).
Claims alternate with a commit (a trainer's cycle); the commit's latency is reported too,
and so is the same cycle in process (``LeaseIndex``: index and synced journal, no HTTP).
The claim is timed until its answer is read; the client's parse of it is reported apart.

Run by hand:  PYTHONPATH=. python benchmarks/serve_pool.py [--sizes 1000 1000000] [--claims 200]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from datagen.pool.leases import LeaseIndex
from datagen.pool.ledger import Entry, iso, take
from datagen.records.base import arrow_schema
from datagen.records.pool import PoolRow
from datagen.serve.clients import PoolClient
from datagen.serve.pool import claim_answer

SHARD_ROWS = 100_000
CHUNK = 1024
BANDS = ("in_band", "too_easy", "unknown")


def template() -> dict:
    prompt = [{"role": "system", "content": "You are a coding agent. " * 20},
              {"role": "user", "content": "Fix the bug in parser.py: tokens are dropped. " * 10}]
    return PoolRow(instruction_id="x", task_id="org__lib-1", prompt=prompt, repo="org/lib", base_commit="0" * 40,
                   repo_path="/data/repos/lib", problem_statement="Tokens are dropped. " * 10,
                   patch="diff --git a/p.py b/p.py\n" * 5, test_patch="diff --git a/t.py b/t.py\n" * 5,
                   fail_to_pass=["tests/test_p.py::test_a"], pass_to_pass=["tests/test_p.py::test_b"] * 5,
                   group_size=8).model_dump()


def make_pool(folder: Path, n: int) -> Path:
    """``folder/data/train-*.parquet`` with ``n`` rows (ids ``i%012d``), row groups of 1024."""
    schema = arrow_schema(PoolRow)
    base = pa.Table.from_pylist([template()] * CHUNK, schema=schema)
    shards = max(1, -(-n // SHARD_ROWS))
    (folder / "data").mkdir(parents=True)
    at = 0
    for s in range(shards):
        rows = min(SHARD_ROWS, n - at)
        with pq.ParquetWriter(folder / "data" / f"train-{s:05d}-of-{shards:05d}.parquet", schema) as w:
            for start in range(0, rows, CHUNK):
                k = min(CHUNK, rows - start)
                t = base.slice(0, k)
                ids = pa.array([f"i{at + start + j:015d}" for j in range(k)])
                bands = pa.array([BANDS[(at + start + j) % 3] for j in range(k)])
                t = t.set_column(schema.get_field_index("instruction_id"), schema.field("instruction_id"), ids)
                t = t.set_column(schema.get_field_index("difficulty_band"), schema.field("difficulty_band"), bands)
                w.write_table(t, row_group_size=CHUNK)
        at += rows
    return folder


def prefill(pool: Path, n: int) -> None:
    """A journal with ``n`` takes (the first ``n`` instructions, consumer 'earlier')."""
    (pool / "ledger").mkdir(exist_ok=True)
    at = iso(time.time())
    with open(pool / "ledger" / "journal.jsonl", "w") as fh:
        for i in range(n):
            fh.write(Entry("take", f"i{i:015d}", "earlier", None, at).line())


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def start_server(pool: Path, port: int) -> tuple[subprocess.Popen, float]:
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "datagen.cli.app", "serve", "pool", str(pool), "--port", str(port)],
                            stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": os.getcwd()})
    client = PoolClient(f"http://127.0.0.1:{port}")
    while True:
        try:
            client.status()
            return proc, time.monotonic() - t0
        except Exception:  # noqa: BLE001 - not up yet
            if proc.poll() is not None:
                raise SystemExit("server exited") from None
            time.sleep(0.1)


def _post(port: int, path: str, body: dict) -> bytes:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as answer:
        return answer.read()


def over_http(pool: Path, n: int, claims: int, port: int) -> dict:
    """Claims of 256 from a real server process, timed by the client: until the whole answer
    is read (the claim), and the client's own ``json.loads`` of it apart (570 KB, 256 rows:
    its tail is the client's garbage collector walking the client's heap, whatever the
    server does; ``gc.freeze()`` after start-up keeps the objects already there out of it)."""
    proc, startup = start_server(pool, port)
    claim_ms, parse_ms, commit_ms = [], [], []
    gc.collect()
    gc.freeze()
    try:
        for k in range(claims):
            t0 = time.perf_counter()
            raw = _post(port, "/v1/claim", {"consumer": "bench", "n": 256, "lease_s": 600})
            t1 = time.perf_counter()
            answer = json.loads(raw)
            parse_ms.append((time.perf_counter() - t1) * 1000)
            claim_ms.append((t1 - t0) * 1000)
            assert len(answer["instructions"]) == 256 or n <= 4096
            t0 = time.perf_counter()
            # a small pool is not drained: every other lease goes back
            route = "/v1/release" if k % 2 or n <= 4096 else "/v1/commit"
            _post(port, route, {"lease_id": answer["lease_id"]})
            commit_ms.append((time.perf_counter() - t0) * 1000)
    finally:
        gc.unfreeze()
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    both = [c + p for c, p in zip(claim_ms, parse_ms)]
    return {"server_start_s": round(startup, 2), "answer_kb": round(len(raw) / 1024),
            "claim_p50_ms": round(statistics.median(claim_ms), 1), "claim_p99_ms": round(pct(claim_ms, 0.99), 1),
            "client_parse_p50_ms": round(statistics.median(parse_ms), 1),
            "client_parse_p99_ms": round(pct(parse_ms, 0.99), 1),
            "claim_and_parse_p99_ms": round(pct(both, 0.99), 1),
            "commit_or_release_p50_ms": round(statistics.median(commit_ms), 1)}


def in_process(pool: Path, n: int, claims: int) -> dict:
    """The same cycle on ``LeaseIndex`` (index + synced journal + the answer's JSON, no HTTP):
    wall time, and the thread's CPU time (what the claim costs, whatever the load)."""
    t0 = time.perf_counter()
    index = LeaseIndex(pool)
    start = time.perf_counter() - t0
    wall, cpu = [], []
    for k in range(claims):
        t0, c0 = time.perf_counter(), time.thread_time()
        claim = index.claim("direct", 256, lease_s=600)
        claim_answer(claim)  # the answer's bytes, as the server sends them
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.thread_time() - c0) * 1000)
        if k % 2 or n <= 4096:
            index.release(claim.lease.lease_id)
        else:
            index.commit(claim.lease.lease_id)
    return {"index_build_s": round(start, 2), "in_process_claim_p50_ms": round(statistics.median(wall), 1),
            "in_process_claim_p99_ms": round(pct(wall, 0.99), 1),
            "in_process_claim_cpu_p50_ms": round(statistics.median(cpu), 1),
            "in_process_claim_cpu_p99_ms": round(pct(cpu, 0.99), 1)}


def bench(n: int, claims: int, port: int, takes: int, http: bool) -> dict:
    with tempfile.TemporaryDirectory(prefix="serve-pool-bench-") as tmp:
        pool = make_pool(Path(tmp), n)
        prefill(pool, n // 4)
        out: dict = {"instructions": n, "journal_lines_at_start": n // 4}
        if http:
            out.update(over_http(pool, n, claims, port))
        out.update(in_process(pool, n, claims))
        take_ms = []
        for _ in range(takes):  # the baseline: `datagen pool take --n 256` on the same journal
            t0 = time.perf_counter()
            take(pool, 256, "baseline")
            take_ms.append((time.perf_counter() - t0) * 1000)
        if take_ms:
            out["pool_take_p50_ms"] = round(statistics.median(take_ms), 1)
            claim = out.get("claim_p50_ms", out["in_process_claim_p50_ms"])
            out["speedup_vs_pool_take"] = round(out["pool_take_p50_ms"] / claim, 1)
    return {**out, "load_average": round(os.getloadavg()[0], 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 1_000_000])
    ap.add_argument("--claims", type=int, default=200)
    ap.add_argument("--takes", type=int, default=5, help="baseline `pool take` calls per size")
    ap.add_argument("--port", type=int, default=18766)
    ap.add_argument("--no-http", dest="http", action="store_false", help="only the in-process cycle")
    args = ap.parse_args()
    for n in args.sizes:
        print(json.dumps(bench(n, args.claims, args.port, args.takes, args.http)), flush=True)


if __name__ == "__main__":
    main()
