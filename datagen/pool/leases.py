"""Leases on the once-only ledger: claim, commit, release, with an index kept in memory.

``LeaseIndex`` is what ``datagen serve pool`` runs on. It reads the pool's journal once at
start (``ledger.JournalTail``) and from then on only the lines appended since its last
look, so a claim costs the same at 1 M instructions as at 1 k: under the ledger's lock it

1. reads the journal's new lines (other servers, ``pool take``, ``pool return``) and
   applies them to the index;
2. pops the first ``n`` free positions of the split from a heap (pool order; positions
   given back are pushed again, stale ones are skipped when popped);
3. appends one ``take`` line per instruction with the lease id and its end (``until``),
   ``fsync``s, and only then answers.

A lease ends by itself at ``until``: ``ledger.holders`` treats an uncommitted leased take
as free after it, so nothing needs writing when a client dies, and ``pool take`` sees the
same. A commit appends ``commit`` lines (used for good), all or nothing: when any of the
lease's instructions went to someone else after it ended, the commit is refused
(``LeaseConflict``) and nothing is written. Retrying a commit or a release is harmless.
"""

from __future__ import annotations

import heapq
import json
import threading
import time
import uuid
from bisect import bisect_right
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq

from datagen.errors import UserError
from datagen.pool.ledger import (
    JOURNAL,
    LEDGER_DIR,
    Entry,
    JournalTail,
    append,
    expired,
    iso,
    locked,
    pool_index,
    shard_files,
)

ROW_GROUP_CACHE = 16


class LeaseNotFound(UserError):
    """No lease with that id (never issued by this pool's journal)."""


class LeaseConflict(UserError):
    """The lease cannot do that any more (its instructions went elsewhere, or it was used)."""


@dataclass
class Lease:
    """One claim: who holds which instructions until when."""

    lease_id: str
    consumer: str
    run: str | None
    until: str
    ids: list[str] = field(default_factory=list)
    returned: list[str] = field(default_factory=list)  # given back one by one (a partial release)
    committed: bool = False
    released: bool = False

    def as_dict(self) -> dict:
        return {"lease_id": self.lease_id, "consumer": self.consumer, "run": self.run, "expires_at": self.until,
                "n": len(self.ids), "returned": len(self.returned), "committed": self.committed,
                "released": self.released}

    def give_back(self, iid: str) -> None:
        """``iid`` left the lease (returned): a later commit covers the rest only."""
        if iid in self.ids:
            self.ids.remove(iid)
            self.returned.append(iid)


@dataclass
class Claim:
    """A lease and its instructions, each a pool row as one JSON object (``encoded``: what
    the server sends as it is, without decoding and encoding again)."""

    lease: Lease
    encoded: list[str]

    @property
    def rows(self) -> list[dict]:
        return [json.loads(text) for text in self.encoded]


class _Rows:
    """Pool rows by position as JSON text, converted a row group at a time and kept for a
    few groups (claims walk the pool in order, so the next group is read ahead in the
    background and a claim rarely waits for one).

    A group is read and written out as JSON lines by pyarrow and polars, which run outside
    the GIL: to_pylist + json.dumps cost 50 ms a group of 1024 full rows, and paid on every
    fourth claim of 256 they were the whole tail of the claim latency.
    """

    def __init__(self, pool_dir: Path):
        self.files = [pq.ParquetFile(f) for f in shard_files(pool_dir)]
        self.starts: list[int] = []
        self.groups: list[tuple[int, int]] = []
        at = 0
        for fi, pf in enumerate(self.files):
            for g in range(pf.num_row_groups):
                self.starts.append(at)
                self.groups.append((fi, g))
                at += pf.metadata.row_group(g).num_rows
        self.total = at
        self.cache: OrderedDict[int, list[str]] = OrderedDict()
        self.lock = threading.Lock()  # the cache, held for moments only
        # Reads go one at a time: a ParquetFile is not safe to read from two threads at
        # once (the server's claims run on a thread pool; a cold cache after a restart gave
        # pyarrow errors), and a group two claims want is then read once.
        self.reading = threading.Lock()
        self.ahead: threading.Thread | None = None

    def group_of(self, position: int) -> int:
        return bisect_right(self.starts, position) - 1

    def _cached(self, k: int) -> list[str] | None:
        with self.lock:
            if k in self.cache:
                self.cache.move_to_end(k)
                return self.cache[k]
        return None

    def _group(self, k: int) -> list[str]:
        lines = self._cached(k)
        if lines is not None:
            return lines
        with self.reading:
            lines = self._cached(k)  # read by the thread we waited for
            if lines is None:
                fi, g = self.groups[k]
                lines = _json_lines(self.files[fi].read_row_group(g))
                with self.lock:
                    self.cache[k] = lines
                    while len(self.cache) > ROW_GROUP_CACHE:
                        self.cache.popitem(last=False)
        return lines

    def json(self, positions: list[int]) -> list[str]:
        """The rows at ``positions`` (in that order), each as a JSON object."""
        return [self._group(k)[p - self.starts[k]] for k, p in ((self.group_of(p), p) for p in positions)]

    def get(self, positions: list[int]) -> list[dict]:
        return [json.loads(text) for text in self.json(positions)]

    def read_ahead(self, positions: list[int]) -> None:
        """Convert the groups holding ``positions`` in a background thread (one at a time)."""
        with self.lock:
            wanted = sorted({self.group_of(p) for p in positions if 0 <= p < self.total} - set(self.cache))
        if not wanted or (self.ahead is not None and self.ahead.is_alive()):
            return
        self.ahead = threading.Thread(target=lambda: [self._group(k) for k in wanted], daemon=True,
                                      name="pool-read-ahead")
        self.ahead.start()


def _json_lines(table) -> list[str]:
    """Each row of an Arrow table as one compact JSON object, in order."""
    import polars as pl

    if table.num_rows == 0:
        return []
    # split on "\n" only: a JSON string may hold U+2028 or U+0085 as is (str.splitlines breaks there)
    return pl.from_arrow(table).write_ndjson().rstrip("\n").split("\n")


class LeaseIndex:
    """The pool's ledger as an in-memory index: claim / commit / release / status."""

    def __init__(self, pool_dir: str | Path, clock=time.time):
        self.pool_dir = Path(pool_dir)
        self.clock = clock
        index = pool_index(self.pool_dir)
        self.ids: list[str] = index["instruction_id"].to_pylist()
        self.splits: list[str] = index["split"].to_pylist()
        self.bands: list[str] = index["difficulty_band"].to_pylist()
        self.pos = {iid: n for n, iid in enumerate(self.ids)}
        self.holder: list[Entry | None] = [None] * len(self.ids)
        self.leases: dict[str, Lease] = {}
        self.expiry: list[tuple[str, str]] = []
        self.tail = JournalTail(self.pool_dir / LEDGER_DIR / JOURNAL)
        self.rows = _Rows(self.pool_dir)
        self.lock = threading.Lock()
        self.free: dict[str, list[int]] = {}
        with locked(self.pool_dir):
            self._apply(self.tail.read())
        now = self._now()
        self.free = {}
        for n, split in enumerate(self.splits):
            if self._is_free(n, now):
                self.free.setdefault(split, []).append(n)  # already in order: a valid heap

    # -- state ---------------------------------------------------------------------
    def _now(self) -> str:
        return iso(self.clock())

    def _is_free(self, n: int, now: str) -> bool:
        h = self.holder[n]
        return h is None or expired(h, now)

    def _give_back(self, n: int) -> None:
        heapq.heappush(self.free.setdefault(self.splits[n], []), n)

    def _apply(self, entries: list[Entry]) -> None:
        """Fold journal lines into the index (ids of other builds are ignored)."""
        for e in entries:
            n = self.pos.get(e.instruction_id)
            if e.lease is not None:
                self._note_lease(e)
            if n is None:
                continue
            if e.op in ("take", "commit"):
                self.holder[n] = e
            elif e.op == "return":
                self.holder[n] = None
                self._give_back(n)

    def _note_lease(self, e: Entry) -> None:
        lease = self.leases.get(e.lease)
        if lease is None and e.op == "take":
            lease = self.leases[e.lease] = Lease(e.lease, e.consumer, e.run, e.until or e.at)
            heapq.heappush(self.expiry, (lease.until, lease.lease_id))
        if lease is None:
            return
        if e.op == "take":
            lease.ids.append(e.instruction_id)
        elif e.op == "commit":
            lease.committed = True
        elif e.op == "return":
            # a whole release returns every instruction still held: read back, the lease is
            # released once none is left (one that had lost some to others keeps those, and
            # a commit of it is refused all the same)
            lease.give_back(e.instruction_id)
            lease.released = lease.released or not lease.ids

    def _expire(self, now: str) -> None:
        """Leases that ended: their untouched instructions go back on the free heaps."""
        while self.expiry and self.expiry[0][0] <= now:
            _, lease_id = heapq.heappop(self.expiry)
            for iid in self.leases[lease_id].ids:
                n = self.pos.get(iid)
                if n is not None and self._held_by(n, lease_id) and self.holder[n].op == "take":
                    self._give_back(n)

    def _held_by(self, n: int, lease_id: str) -> bool:
        h = self.holder[n]
        return h is not None and h.lease == lease_id

    def _write(self, journal: Path, entries: list[Entry]) -> None:
        """Append and sync our own lines, and fold them in without reading them back (the
        tail was at the end of the journal and we hold the lock, so they follow it)."""
        self.tail.offset += append(journal, entries)
        self._apply(entries)

    def _sync(self) -> str:
        """Under the ledger lock: read what others appended, end due leases; returns now."""
        self._apply(self.tail.read())
        now = self._now()
        self._expire(now)
        return now

    # -- operations ----------------------------------------------------------------
    def claim(self, consumer: str, n: int, split: str = "train", lease_s: float = 3600.0,
              run: str | None = None) -> Claim:
        """Lease up to ``n`` free instructions of ``split`` (fewer, or none, when dry)."""
        if not consumer.strip():
            raise UserError("a consumer name is required")
        if n < 0 or lease_s <= 0:
            raise UserError("n must be 0 or more and lease_s above 0")
        with self.lock, locked(self.pool_dir) as journal:
            now = self._sync()
            heap, chosen, seen = self.free.get(split, []), [], set()
            while heap and len(chosen) < n:
                p = heapq.heappop(heap)
                if p not in seen and self._is_free(p, now):
                    seen.add(p)
                    chosen.append(p)
            lease_id = uuid.uuid4().hex
            until = iso(self.clock() + lease_s)
            self._write(journal, [Entry("take", self.ids[p], consumer, run, now, lease_id, until) for p in chosen])
            lease = self.leases.get(lease_id) or Lease(lease_id, consumer, run, until)
            self.leases[lease_id] = lease
            # what the next claim of this split will want: read ahead while the client works
            heap = self.free.get(split, [])
            if heap:
                self.rows.read_ahead([heap[0], heap[0] + max(n, 1)])
        return Claim(lease, self.rows.json(chosen))

    def commit(self, lease_id: str) -> Lease:
        """Mark the lease's instructions used for good; idempotent."""
        with self.lock, locked(self.pool_dir) as journal:
            self._sync()
            lease = self._lease(lease_id)
            if lease.committed:
                return lease
            if lease.released:
                raise LeaseConflict(f"lease {lease_id} was released; it cannot be committed")
            lost = [i for i in lease.ids if not self._held_by(self.pos[i], lease_id)]
            if lost:
                raise LeaseConflict(f"lease {lease_id} ended and {len(lost)} of its {len(lease.ids)} "
                                    "instructions went to another consumer; nothing committed")
            at = self._now()
            self._write(journal, [Entry("commit", i, lease.consumer, lease.run, at, lease_id) for i in lease.ids])
            lease.committed = True
        return lease

    def release(self, lease_id: str, instruction_ids: list[str] | None = None) -> Lease:
        """Give the lease's instructions back to the pool, or only ``instruction_ids`` of
        them (the rest stay leased and a commit covers those alone: a trainer whose dataset
        lacks some rows gives those back); idempotent."""
        with self.lock, locked(self.pool_dir) as journal:
            self._sync()
            lease = self._lease(lease_id)
            if lease.committed:
                raise LeaseConflict(f"lease {lease_id} was committed; its instructions are used")
            if instruction_ids is not None:
                self._release_some(journal, lease, instruction_ids)
            elif not lease.released:
                mine = [i for i in lease.ids if self._held_by(self.pos[i], lease_id)]
                at = self._now()
                self._write(journal, [Entry("return", i, lease.consumer, lease.run, at, lease_id) for i in mine])
                lease.released = True
        return lease

    def split(self, lease_id: str, instruction_ids: list[str]) -> Lease:
        """Move ``instruction_ids`` of a lease into a new lease of the same consumer and end
        (a ``return`` then a ``take`` line each, under one lock: nobody can claim them in
        between). A trainer whose dataset lacks some rows sets those aside this way, so
        committing the rest does not use them and its next claims do not get them again;
        it releases the new lease when it is done."""
        with self.lock, locked(self.pool_dir) as journal:
            now = self._sync()
            lease = self._lease(lease_id)
            if lease.committed or lease.released:
                raise LeaseConflict(f"lease {lease_id} was {'committed' if lease.committed else 'released'}")
            strangers = sorted(set(instruction_ids) - set(lease.ids))
            if strangers:
                raise UserError(f"lease {lease_id} does not hold {strangers[:3]}")
            mine = [i for i in dict.fromkeys(instruction_ids) if self._held_by(self.pos[i], lease_id)]
            aside = Lease(uuid.uuid4().hex, lease.consumer, lease.run, lease.until)
            self.leases[aside.lease_id] = aside
            heapq.heappush(self.expiry, (aside.until, aside.lease_id))
            self._write(journal, [
                *(Entry("return", i, lease.consumer, lease.run, now, lease_id) for i in mine),
                *(Entry("take", i, lease.consumer, lease.run, now, aside.lease_id, aside.until) for i in mine)])
        return aside

    def _release_some(self, journal: Path, lease: Lease, ids: list[str]) -> None:
        strangers = sorted(set(ids) - set(lease.ids) - set(lease.returned))
        if strangers:
            raise UserError(f"lease {lease.lease_id} does not hold {strangers[:3]}")
        mine = [i for i in dict.fromkeys(ids) if i in lease.ids and self._held_by(self.pos[i], lease.lease_id)]
        at = self._now()
        # folded in by _write: each leaves the lease (one lost to another consumer stays,
        # as it would when the journal is read again)
        self._write(journal, [Entry("return", i, lease.consumer, lease.run, at, lease.lease_id) for i in mine])

    def _lease(self, lease_id: str) -> Lease:
        lease = self.leases.get(lease_id)
        if lease is None:
            raise LeaseNotFound(f"no lease {lease_id!r} in this pool")
        return lease

    def status(self) -> dict:
        """``total, used, leased, free``, overall and per (split, difficulty band)."""
        with self.lock:
            with locked(self.pool_dir):
                now = self._sync()
            counts: Counter = Counter()
            for n, h in enumerate(self.holder):
                state = "free" if h is None or expired(h, now) else "leased" if h.op == "take" and h.lease else "used"
                counts[self.splits[n], self.bands[n], state] += 1
            live = sum(1 for lease in self.leases.values()
                       if lease.until > now and not (lease.committed or lease.released))
        groups = []
        for s, b in sorted({(s, b) for s, b, _ in counts}, key=lambda k: (k[0] != "train", k)):
            g = {state: counts[s, b, state] for state in ("used", "leased", "free")}
            groups.append({"split": s, "difficulty_band": b, "total": sum(g.values()), **g})
        totals = {k: sum(g[k] for g in groups) for k in ("total", "used", "leased", "free")}
        return {**totals, "live_leases": live, "groups": groups}
