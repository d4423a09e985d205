"""`datagen serve pool` as a real process: 8 clients drain a pool while the server is
SIGKILLed and restarted; a client that dies gets its lease ended; `pool take` beside it;
who may call."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from datagen.pool import ledger
from datagen.serve.clients import PoolClient, PoolIndexSampler, ServeError
from tests.pool.conftest import build_pool
from tests.serve.conftest import ROOT, Server, env, request

pytestmark = pytest.mark.slow  # real servers and sandboxes: seconds each

CLIENTS = 8
POOL_SIZE = 160
LEASE_S = 4.0


def journal(pool: Path) -> list[ledger.Entry]:
    return ledger.read_journal(pool / "ledger" / "journal.jsonl")


def drain(client: PoolClient, name: str, used: list[str], errors: list[str], stop_at: float) -> None:
    """Claim 5, commit, until the pool is dry and no lease is left to end."""
    try:
        _drain(client, name, used, errors, stop_at)
    except Exception as exc:  # noqa: BLE001 - a thread's error must fail the test, not vanish
        errors.append(f"{name}: {exc!r}")


def _drain(client: PoolClient, name: str, used: list[str], errors: list[str], stop_at: float) -> None:
    while time.monotonic() < stop_at:
        answer = client.claim(name, 5, lease_s=LEASE_S)
        ids = [r["instruction_id"] for r in answer["instructions"]]
        if not ids:
            st = client.status()
            if st["free"] == 0 and st["leased"] == 0:
                return
            time.sleep(0.3)  # leases of a claim whose answer was lost in a kill: wait them out
            continue
        try:
            client.commit(answer["lease_id"])
            used.extend(ids)
        except ServeError as exc:  # the lease ended before a commit got through: not ours any more
            if exc.status != 409:
                raise
    errors.append(f"{name}: did not finish in time")


def test_clients_drain_the_pool_across_a_sigkill(tmp_path):
    pool = build_pool(tmp_path, POOL_SIZE)
    server = Server("pool", str(pool)).start()
    try:
        used: list[list[str]] = [[] for _ in range(CLIENTS)]
        errors: list[str] = []
        stop_at = time.monotonic() + 150  # bounded; ends in seconds unless the machine is starved
        threads = [threading.Thread(target=drain, args=(PoolClient(f"http://127.0.0.1:{server.port}"), f"c{i}",
                                                        used[i], errors, stop_at)) for i in range(CLIENTS)]
        for t in threads:
            t.start()
        while sum(map(len, used)) < POOL_SIZE // 3 and time.monotonic() < stop_at:
            time.sleep(0.02)
        server.kill()  # mid-traffic: claims and commits in flight are cut
        server.start()
        for t in threads:
            t.join(160)
        assert not errors and not any(t.is_alive() for t in threads), (errors, server.output()[-3000:])
    finally:
        server.stop()
    committed = Counter(e.instruction_id for e in journal(pool) if e.op == "commit")
    all_ids = {i for f in ledger.shard_files(pool) for i in pq.read_table(f)["instruction_id"].to_pylist()}
    assert set(committed) == all_ids and set(committed.values()) == {1}  # each exactly once
    by_clients = Counter(i for ids in used for i in ids)
    assert by_clients == committed  # what the clients were told they own is what the journal says
    st = ledger.status(pool)
    assert st.left == 0 and st.taken == POOL_SIZE


DIES = """
import os, signal, sys
from datagen.serve.clients import PoolClient
c = PoolClient(sys.argv[1])
a = c.claim("doomed", 6, lease_s=float(sys.argv[2]))
print(",".join(r["instruction_id"] for r in a["instructions"]), a["expires_at"], flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


def take_cli(pool: Path, n: int, consumer: str) -> list[str]:
    proc = subprocess.run([sys.executable, "-m", "datagen.cli.app", "pool", "take", str(pool), "--n", str(n),
                           "--consumer", consumer], capture_output=True, text=True, env=env(), cwd=ROOT, check=True)
    return [json.loads(line)["instruction_id"] for line in proc.stdout.splitlines()]


def pool_status(pool: Path) -> dict:
    """What `datagen pool status --format json` prints (the same library call, in process)."""
    st = ledger.status(pool)
    return {"taken": st.taken, "left": st.left}


def test_dead_client_take_beside_and_tokens(tmp_path):
    pool = build_pool(tmp_path, 30)
    token = "t0ken-for-tests"
    with Server("pool", str(pool), "--max-body-kb", "1", extra_env={"DATAGEN_SERVE_TOKEN": token}) as server:
        url = f"http://127.0.0.1:{server.port}"
        # who may call: /health is open, the rest needs the token; big bodies are 413
        assert request(server.port, "/health")[0] == 200
        assert request(server.port, "/v1/status")[0] == 401
        assert request(server.port, "/v1/status", token="wrong")[0] == 401
        assert request(server.port, "/v1/claim", raw=b"{" + b" " * 4096 + b"}", token=token)[0] == 413
        assert request(server.port, "/v1/claim", {"n": 1}, token=token)[0] == 400  # no consumer
        assert request(server.port, "/v1/commit", {"lease_id": "nope"}, token=token)[0] == 404
        client = PoolClient(url, token=token)

        # a client that claims and dies: its instructions come back when the lease ends
        dead = subprocess.run([sys.executable, "-c", DIES, url, "3"], capture_output=True, text=True,
                              env=env(DATAGEN_SERVE_TOKEN=token), cwd=ROOT)
        ids, expires_at = dead.stdout.split()
        lost = ids.split(",")
        assert dead.returncode == -9 and len(lost) == 6
        assert [e.instruction_id for e in journal(pool) if e.consumer == "doomed" and e.until] == lost
        time.sleep(max(0.0, (dt.datetime.fromisoformat(expires_at) - utcnow()).total_seconds()) + 0.1)
        heir = client.claim("heir", 6, lease_s=300)
        assert [r["instruction_id"] for r in heir["instructions"]] == lost  # first free in pool order again
        # `pool take` beside the server skips the live lease; both count the same
        taken = take_cli(pool, 10, "cli")
        assert len(taken) == 10 and not set(taken) & set(lost)
        both = pool_status(pool), client.status()
        assert both[0]["taken"] == both[1]["used"] + both[1]["leased"] == 16 and both[0]["left"] == both[1]["free"]
        client.release(heir["lease_id"])
        client.release(heir["lease_id"])  # idempotent
        st = client.status()
        assert (st["used"], st["leased"], st["free"]) == (10, 0, 20)
        assert pool_status(pool)["left"] == 20
        # commit is idempotent; a commit after the lease went to someone else is 409
        first = client.claim("a", 3, lease_s=0.5)
        time.sleep(0.7)
        second = client.claim("b", 3, lease_s=60)
        assert [r["instruction_id"] for r in second["instructions"]] == \
            [r["instruction_id"] for r in first["instructions"]]
        with pytest.raises(ServeError) as conflict:
            client.commit(first["lease_id"])
        assert conflict.value.status == 409
        assert client.commit(second["lease_id"])["committed"] and client.commit(second["lease_id"])["committed"]
        # the trainer-side sampler (verl's data.sampler): dataset indices in claim order, commits on update
        verl = pq.read_table(pool / "exports" / "verl" / "train.parquet").to_pylist()
        dataset_ids = [r["extra_info"]["instruction_id"] for r in verl]
        sampler = PoolIndexSampler(dataset_ids, "verl-run", batch_size=4, url=url, token=token, drop_last=False)
        order = list(sampler)
        assert len(order) == 17 and len(set(order)) == 17  # the 17 left: 30 - 10 taken - 3 committed
        sampler.update()
        assert client.status()["used"] == 30 and not sampler.handed
    # anything but loopback without a token is refused with one line
    refused = subprocess.run([sys.executable, "-m", "datagen.cli.app", "serve", "pool", str(pool), "--host",
                              "0.0.0.0"], capture_output=True, text=True, env=env(DATAGEN_SERVE_TOKEN=""), cwd=ROOT)
    assert refused.returncode == 2 and "without a token" in refused.stderr and len(refused.stderr.splitlines()) == 1
