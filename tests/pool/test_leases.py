"""The lease index in process, on a clock the test moves: leases end by themselves,
commits are all or nothing and idempotent, a restart rebuilds every lease and commit from
the journal, torn lines are cut, and `take` / `status` see the leases."""

from __future__ import annotations

import time

import pyarrow.parquet as pq
import pytest

from datagen.errors import UserError
from datagen.pool import ledger
from datagen.pool.leases import LeaseConflict, LeaseIndex, LeaseNotFound
from tests.pool.conftest import build_pool


class Clock:
    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset


def ids(claim) -> list[str]:
    return [r["instruction_id"] for r in claim.rows]


def test_claim_commit_release_expire_and_restart(tmp_path):
    pool = build_pool(tmp_path, 20)
    clock = Clock()
    index = LeaseIndex(pool, clock)
    first = index.claim("a", 6, lease_s=30)
    assert len(first.rows) == 6 and first.rows[0]["prompt"]  # full pool rows, in pool order
    order = [i for f in ledger.shard_files(pool) for i in pq.read_table(f)["instruction_id"].to_pylist()]
    assert ids(first) == order[:6]
    second = index.claim("b", 4, lease_s=30)
    index.commit(second.lease.lease_id)
    assert index.commit(second.lease.lease_id).committed  # idempotent
    with pytest.raises(LeaseConflict):
        index.release(second.lease.lease_id)
    with pytest.raises(LeaseNotFound):
        index.commit("nope")
    assert (index.status()["used"], index.status()["leased"], index.status()["free"]) == (4, 6, 10)

    clock.offset = 31  # a's lease ended: its instructions are the first free ones again
    third = index.claim("c", 3, lease_s=30)
    assert ids(third) == ids(first)[:3]
    with pytest.raises(LeaseConflict):
        index.commit(first.lease.lease_id)  # 3 of its 6 went to c: nothing committed
    index.release(third.lease.lease_id)
    assert index.status()["free"] == 16

    restarted = LeaseIndex(pool, clock)  # the journal alone rebuilds the state
    assert restarted.status() == index.status()
    assert restarted.commit(second.lease.lease_id).committed
    (pool / "ledger" / "journal.jsonl").open("a").write('{"op":"take","id":"torn')  # a writer killed mid-line
    fourth = restarted.claim("d", 20, lease_s=30)
    assert len(fourth.rows) == 16 and not set(ids(fourth)) & set(ids(second))
    assert (ledger.status(pool).taken, ledger.status(pool).left) == (20, 0)  # `pool status` sees the lease
    assert ledger.take(pool, 5, "cli") == []


def test_pool_take_beside_the_index(tmp_path):
    pool = build_pool(tmp_path, 10)
    index = LeaseIndex(pool)
    taken = [r["instruction_id"] for r in ledger.take(pool, 4, "cli")]
    claim = index.claim("a", 10)
    assert len(claim.rows) == 6 and not set(ids(claim)) & set(taken)
    st = index.status()
    assert (st["used"], st["leased"], st["free"]) == (4, 6, 0)
    assert sorted(ledger.give_back(pool, "a")) == sorted(ids(claim))  # an operator's `pool return` frees a lease
    assert index.status()["free"] == 6 and ledger.status(pool).left == 6
    with pytest.raises(LeaseConflict):
        index.commit(claim.lease.lease_id)



def test_rows_read_from_many_threads_at_once_are_the_pool_rows(tmp_path, monkeypatch):
    """The server claims on a thread pool: cold row groups read at once from 8 threads
    (a ParquetFile is not safe for that) still give each claim its own rows."""
    import concurrent.futures

    import pyarrow as pa

    from datagen.pool import leases

    (tmp_path / "data").mkdir()
    want = [{"instruction_id": f"i{n:05d}", "prompt": f"prompt {n}\u2028\x85 " * (n % 40), "k": [n, None]}
            for n in range(6000)]  # U+2028 and U+0085: line breaks to str.splitlines, not to JSON
    pq.write_table(pa.Table.from_pylist(want), tmp_path / "data" / "train-00000.parquet", row_group_size=500)
    monkeypatch.setattr(leases, "ROW_GROUP_CACHE", 1)  # nearly every call reads a group
    rows = leases._Rows(tmp_path)
    asks = [[(k * 997 + j * 1024) % len(want) for j in range(6)] for k in range(400)]
    with concurrent.futures.ThreadPoolExecutor(8) as workers:
        got = list(workers.map(rows.get, asks))
    assert got == [[want[p] for p in ask] for ask in asks]


def test_partial_release_then_commit_the_rest_and_restart(tmp_path):
    pool = build_pool(tmp_path, 10)
    index = LeaseIndex(pool)
    claim = index.claim("verl", 5, lease_s=60)
    given, kept = ids(claim)[:2], ids(claim)[2:]
    lease = index.release(claim.lease.lease_id, given)
    assert (len(lease.ids), len(lease.returned), lease.released) == (3, 2, False)
    assert index.release(claim.lease.lease_id, given).returned == given  # idempotent
    with pytest.raises(UserError, match="does not hold"):
        index.release(claim.lease.lease_id, ["not-in-this-lease"])
    assert ids(index.claim("other", 2, lease_s=60)) == given  # free again, first in pool order
    index.commit(claim.lease.lease_id)
    restarted = LeaseIndex(pool)  # the journal alone says the same
    assert restarted.status() == index.status() and (index.status()["used"], index.status()["leased"]) == (3, 2)
    assert restarted.leases[claim.lease.lease_id].ids == kept and restarted.commit(claim.lease.lease_id).committed
    committed = [e.instruction_id for e in ledger.read_journal(pool / "ledger" / "journal.jsonl") if e.op == "commit"]
    assert committed == kept


def test_split_sets_rows_aside_until_released(tmp_path):
    pool = build_pool(tmp_path, 10)
    index = LeaseIndex(pool)
    claim = index.claim("verl", 4, lease_s=60)
    aside = index.split(claim.lease.lease_id, ids(claim)[:1])
    assert aside.ids == ids(claim)[:1] and aside.consumer == "verl" and index.leases[claim.lease.lease_id].ids == \
        ids(claim)[1:]
    assert not set(ids(index.claim("verl", 3, lease_s=60))) & set(ids(claim))  # set aside: not handed out again
    index.commit(claim.lease.lease_id)
    restarted = LeaseIndex(pool)
    assert restarted.status() == index.status() == {**index.status(), "used": 3, "leased": 4, "free": 3}
    restarted.release(aside.lease_id)
    assert restarted.status()["free"] == 4 and ids(restarted.claim("x", 1, lease_s=5)) == aside.ids
    with pytest.raises(LeaseConflict):
        restarted.split(claim.lease.lease_id, ids(claim)[1:2])  # committed
