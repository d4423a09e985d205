"""The once-only ledger: every instruction of a pool is handed out at most once.

The source of truth is an append-only journal, ``<pool>/ledger/journal.jsonl``: one line
per instruction taken (``op: take``, consumer, run, time) or given back (``op: return``).
Every reader and writer holds an exclusive ``fcntl.flock`` on ``<pool>/ledger/lock``, so
any number of takers in separate processes (on one machine, or on a file system with
working ``flock``) see each other's takes. A take is:

1. lock; read the journal; a last line without its newline belongs to a writer killed
   mid-``write`` and is cut off (its instructions were never handed to anyone);
2. pick the first ``n`` free instructions in pool order (the shards' row order);
3. append their ``take`` lines in one ``write`` and ``fsync`` the journal;
4. unlock, and only then return the rows (the CLI prints them after this).

A taker killed at any point therefore leaves each of its instructions either free (killed
before the fsync'd write) or recorded as taken by it (killed after); ``pool return
--consumer`` frees the latter when asked. The lock dies with its holder, so a killed
taker never blocks the others. The manifest's ``ledger`` table is a mirror written by
``mirror_ledger`` (DuckDB's single-writer lock is never in the take path).

The pool server (``datagen serve pool``, see ``datagen.pool.leases``) writes to the same
journal under the same lock: a claim is ``take`` lines carrying a ``lease`` id and an
``until`` time, after which the instructions are free again unless the lease wrote its
``commit`` lines (used for good) first; a release is ``return`` lines. ``holders(entries,
now)`` applies that rule, so ``pool take`` and ``pool status`` see the server's leases.

``DATAGEN_POOL_PAUSE=<stage>:<seconds>`` (stages ``locked``: lock held, nothing written;
``written``: journal written and synced, nothing returned) makes a taker sleep there,
so tests can kill it at a known point.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from datagen.errors import UserError
from datagen.records.base import arrow_schema
from datagen.records.pool import LedgerRow

LEDGER_DIR = "ledger"
JOURNAL = "journal.jsonl"
LOCK = "lock"
PAUSE_ENV = "DATAGEN_POOL_PAUSE"


@dataclass(frozen=True)
class Entry:
    """One journal line."""

    op: str  # "take", "return" or "commit"
    instruction_id: str
    consumer: str
    run: str | None
    at: str  # ISO 8601, UTC
    lease: str | None = None  # a server claim's lease id (takes and commits of a lease)
    until: str | None = None  # a lease's end (takes only): free again after it unless committed

    def line(self) -> str:
        d = {"op": self.op, "id": self.instruction_id, "consumer": self.consumer, "run": self.run, "at": self.at}
        if self.lease is not None:
            d["lease"] = self.lease
        if self.until is not None:
            d["until"] = self.until
        return json.dumps(d, separators=(",", ":")) + "\n"


def _pause(stage: str) -> None:
    spec = os.environ.get(PAUSE_ENV, "")
    if spec.partition(":")[0] == stage:
        time.sleep(float(spec.partition(":")[2] or 0))


def _now() -> str:
    return iso(time.time())


def iso(seconds: float) -> str:
    """A Unix time as the journal writes times (ISO 8601, UTC, microseconds: they sort as text)."""
    return dt.datetime.fromtimestamp(seconds, dt.UTC).replace(tzinfo=None).isoformat(timespec="microseconds")


def shard_files(pool_dir: Path) -> list[Path]:
    """The pool shards in pool order (train before validation, then by shard number)."""
    files = sorted(Path(pool_dir, "data").glob("*.parquet"), key=lambda p: (not p.name.startswith("train-"), p.name))
    if not files:
        raise UserError(f"no pool shards under {Path(pool_dir) / 'data'} (build the pool first)")
    return files


def pool_index(pool_dir: Path) -> pa.Table:
    """``instruction_id, split, difficulty_band`` of every instruction, in pool order."""
    cols = ["instruction_id", "split", "difficulty_band"]
    return pa.concat_tables([pq.read_table(f, columns=cols) for f in shard_files(pool_dir)])


@contextmanager
def locked(pool_dir: Path) -> Iterator[Path]:
    """Hold the ledger's exclusive lock; yields the journal path."""
    folder = Path(pool_dir) / LEDGER_DIR
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield folder / JOURNAL
    finally:
        os.close(fd)  # closing releases the lock


def _parse(line: str, where: str) -> Entry:
    try:
        d = json.loads(line)
        return Entry(d["op"], d["id"], d["consumer"], d.get("run"), d["at"], d.get("lease"), d.get("until"))
    except (ValueError, KeyError, TypeError):
        raise UserError(f"{where}: not a ledger entry (the journal is damaged; fix or remove that line)") from None


def read_journal(journal: Path, repair: bool = False) -> list[Entry]:
    """The journal's entries. A torn last line (no newline: its writer was killed) is
    ignored, and cut off when ``repair`` (only under the lock). Any other bad line is an
    error: skipping it could hand an instruction out twice."""
    try:
        data = journal.read_bytes()
    except FileNotFoundError:
        return []
    whole = data[: data.rfind(b"\n") + 1]
    if repair and len(whole) != len(data):
        with open(journal, "r+b") as fh:
            fh.truncate(len(whole))
            os.fsync(fh.fileno())
    text = whole.decode("utf-8")
    return [_parse(line, f"{journal}:{n}") for n, line in enumerate(text.splitlines(), 1) if line]


def holders(entries: list[Entry], now: str | None = None) -> dict[str, Entry]:
    """Instruction id -> the entry that holds it now: a take, or the commit of a leased
    take. Returned ones are free again, and so (when ``now`` is given) are leased takes
    whose lease ended before ``now`` without a commit."""
    held: dict[str, Entry] = {}
    for e in entries:
        if e.op in ("take", "commit"):
            held[e.instruction_id] = e
        elif e.op == "return":
            held.pop(e.instruction_id, None)
    if now is not None:
        held = {i: e for i, e in held.items() if not expired(e, now)}
    return held


def expired(entry: Entry, now: str) -> bool:
    """A leased take whose lease ended (a commit, or a plain take, never expires)."""
    return entry.op == "take" and entry.until is not None and entry.until <= now


def _lines(entries: list[Entry]) -> str:
    """``Entry.line`` of each entry, the fields they share encoded once (a claim's 256
    lines differ only in the id): byte-identical to joining ``e.line()``."""
    out, shared, tail = [], None, ""
    for e in entries:
        key = (e.consumer, e.run, e.at, e.lease, e.until)
        if key != shared:
            shared, tail = key, Entry(e.op, "", *key).line().split(',"consumer":', 1)[1]
        out.append(f'{{"op":{json.dumps(e.op)},"id":{json.dumps(e.instruction_id)},"consumer":{tail}')
    return "".join(out)


def append(journal: Path, entries: list[Entry]) -> int:
    """Append entries in one write and fsync them (the directory too, when new); returns
    the bytes written."""
    data = _lines(entries).encode()
    if not data:
        return 0
    new = not journal.exists()
    fd = os.open(journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)
    if new:
        dfd = os.open(journal.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    return len(data)


def _rows(pool_dir: Path, ids: list[str]) -> list[dict]:
    """The full pool rows of ``ids``, in the order given; only the row groups that hold
    them are read, so a small take from a large pool stays cheap."""
    wanted, by_id = set(ids), {}
    for f in shard_files(pool_dir) if ids else []:
        pf = pq.ParquetFile(f)
        for g in range(pf.num_row_groups):
            group_ids = pf.read_row_group(g, columns=["instruction_id"])["instruction_id"].to_pylist()
            if wanted.intersection(group_ids):
                group = pf.read_row_group(g)
                hit = group.filter(pc.is_in(group["instruction_id"], pa.array(sorted(wanted))))
                by_id.update((r["instruction_id"], r) for r in hit.to_pylist())
    return [by_id[i] for i in ids]


def _check_name(consumer: str) -> None:
    if not consumer.strip():
        raise UserError("a consumer name is required (e.g. --consumer run-17)")


def take(pool_dir: str | Path, n: int, consumer: str, run: str | None = None,
         split: str | None = "train") -> list[dict]:
    """Hand out up to ``n`` instructions of ``split`` (None: any) never handed out (or
    given back), recorded for ``consumer`` and ``run`` before they are returned, as pool
    row dicts in pool order. Fewer than ``n`` (possibly none) when the pool runs dry."""
    _check_name(consumer)
    if n < 0:
        raise UserError(f"--n must be 0 or more, got {n}")
    pool_dir = Path(pool_dir)
    index = pool_index(pool_dir)
    if split is not None:
        index = index.filter(pc.equal(index["split"], split))
    with locked(pool_dir) as journal:
        _pause("locked")
        held = holders(read_journal(journal, repair=True), _now())
        chosen = [i for i in index["instruction_id"].to_pylist() if i not in held][:n]
        at = _now()
        append(journal, [Entry("take", i, consumer, run, at) for i in chosen])
        _pause("written")
    return _rows(pool_dir, chosen)


def give_back(pool_dir: str | Path, consumer: str, run: str | None = None) -> list[str]:
    """Return every instruction ``consumer`` (and ``run``, when given) holds to the pool;
    returns their ids. Only done when asked: a trainer that used them must not."""
    _check_name(consumer)
    with locked(Path(pool_dir)) as journal:
        held = holders(read_journal(journal, repair=True), _now())
        mine = [e.instruction_id for e in held.values()
                if e.op == "take" and e.consumer == consumer and (run is None or e.run == run)]
        at = _now()
        append(journal, [Entry("return", i, consumer, run, at) for i in mine])
    return mine


@dataclass(frozen=True)
class PoolStatus:
    """Counts per (split, difficulty band) and instructions held per consumer."""

    groups: list[dict]  # {split, difficulty_band, total, taken, left}
    consumers: dict[str, int]

    @property
    def taken(self) -> int:
        return sum(g["taken"] for g in self.groups)

    @property
    def left(self) -> int:
        return sum(g["left"] for g in self.groups)


def status(pool_dir: str | Path) -> PoolStatus:
    """How many instructions are taken and left, by split and difficulty band."""
    index = pool_index(Path(pool_dir))
    with locked(Path(pool_dir)) as journal:
        held = holders(read_journal(journal), _now())
    total: Counter = Counter()
    taken: Counter = Counter()
    for iid, split, band in zip(*(index[c].to_pylist() for c in index.column_names)):
        total[split, band] += 1
        taken[split, band] += iid in held
    groups = [{"split": s, "difficulty_band": b, "total": total[s, b], "taken": taken[s, b],
               "left": total[s, b] - taken[s, b]} for s, b in sorted(total, key=lambda k: (k[0] != "train", k))]
    return PoolStatus(groups, dict(sorted(Counter(e.consumer for e in held.values()).items())))


def ledger_rows(pool_dir: str | Path) -> list[LedgerRow]:
    """The journal as ``ledger`` rows: one per take, with ``returned_at`` once given back
    (for a lease that ended unused and went to someone else: its end)."""
    with locked(Path(pool_dir)) as journal:
        entries = read_journal(journal)
    rows: list[LedgerRow] = []
    open_take: dict[str, int] = {}
    leased_until: dict[int, str] = {}
    for e in entries:
        at = dt.datetime.fromisoformat(e.at)
        if e.op == "take":
            if (prev := open_take.get(e.instruction_id)) is not None and rows[prev].returned_at is None \
                    and (until := leased_until.get(prev)) is not None:
                rows[prev].returned_at = dt.datetime.fromisoformat(until)  # its lease ended unused
            if e.until is not None:
                leased_until[len(rows)] = e.until
            open_take[e.instruction_id] = len(rows)
            rows.append(LedgerRow(instruction_id=e.instruction_id, consumer=e.consumer, run=e.run, taken_at=at))
        elif e.op == "commit":
            leased_until.pop(open_take.get(e.instruction_id, -1), None)
        elif e.op == "return" and e.instruction_id in open_take:
            rows[open_take.pop(e.instruction_id)].returned_at = at
    return rows


def mirror_ledger(pool_dir: str | Path) -> int:
    """Replace the manifest's ``ledger`` table with the journal's rows; returns the count.
    Raises ``UserError`` when another process (a build) holds the manifest."""
    import duckdb

    from datagen.manifest import Manifest

    rows = ledger_rows(pool_dir)
    table = pa.Table.from_pylist([r.model_dump() for r in rows], schema=arrow_schema(LedgerRow))
    try:
        with Manifest(pool_dir, tables=[LedgerRow]) as db:
            db.execute("BEGIN TRANSACTION")
            db.execute("DELETE FROM ledger")
            db.insert(LedgerRow, table)
            db.execute("COMMIT")
    except duckdb.IOException as exc:
        raise UserError(f"manifest busy, ledger table not updated: {exc}") from None
    return len(rows)


class JournalTail:
    """Reads a journal a piece at a time: each ``read`` returns the entries appended since
    the previous one, so a long-running reader never re-reads what it has seen. Call it
    under the lock (``locked``); a torn last line is cut off, as in ``read_journal``."""

    def __init__(self, journal: Path):
        self.journal = Path(journal)
        self.offset = 0

    def read(self) -> list[Entry]:
        try:
            size = self.journal.stat().st_size
        except FileNotFoundError:
            size = 0
        if size < self.offset:
            raise UserError(f"{self.journal} shrank while the pool server read it (it is append-only)")
        if size == self.offset:
            return []
        with open(self.journal, "r+b") as fh:
            fh.seek(self.offset)
            data = fh.read()
            whole = data[: data.rfind(b"\n") + 1]
            if len(whole) != len(data):  # a writer killed mid-write: its take never happened
                fh.truncate(self.offset + len(whole))
                os.fsync(fh.fileno())
        where = f"{self.journal} (byte {self.offset})"
        self.offset += len(whole)
        return [_parse(line, where) for line in whole.decode("utf-8").splitlines() if line]
