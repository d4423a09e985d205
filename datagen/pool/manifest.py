"""The pool's manifest tables: ``pool`` (kept rows), ``pool_drops`` (with reasons),
``shards`` (files written) and ``ledger`` (a mirror of the journal)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyarrow as pa

from datagen.manifest import Manifest
from datagen.pool.ledger import ledger_rows
from datagen.records import Record, ShardRow
from datagen.records.base import arrow_schema
from datagen.records.pool import LedgerRow, PoolDropRow, PoolRow

TABLES = [PoolRow, PoolDropRow, ShardRow, LedgerRow]


def _table(record, rows) -> pa.Table:
    return pa.Table.from_pylist([r.model_dump() for r in rows], schema=arrow_schema(record))


def record_pool(db: Manifest, run_id: str, rows: list[PoolRow], dropped: list[PoolDropRow],
                shards: list[ShardRow], pool_dir: str | Path, also: dict[type[Record], list] | None = None,
                mark: Callable[[Manifest], None] | None = None) -> None:
    """Replace the pool tables in one transaction (``shards`` only for ``run_id``) and
    mirror the ledger journal of ``pool_dir`` into ``ledger``. ``db`` must have been
    opened with (at least) ``TABLES``. ``also`` (table: rows) replaces more tables in the
    same transaction (the build's scores, attempts, difficulty); ``mark`` (the output
    switch's) runs inside it, before the commit."""
    stamped = [s.model_copy(update={"run_id": run_id}) for s in shards]
    db.execute("BEGIN TRANSACTION")
    try:
        for record in (PoolRow, PoolDropRow, LedgerRow):
            db.execute(f"DELETE FROM {record.__table__}")
        db.execute("DELETE FROM shards WHERE run_id = ?", [run_id])
        db.insert(PoolRow, _table(PoolRow, sorted(rows, key=lambda r: r.instruction_id)))
        db.insert(PoolDropRow, _table(PoolDropRow, sorted(dropped, key=lambda r: r.instruction_id)))
        db.insert(ShardRow, _table(ShardRow, stamped))
        db.insert(LedgerRow, _table(LedgerRow, ledger_rows(pool_dir)))
        for record, extra in (also or {}).items():
            db.execute(f"DELETE FROM {record.__table__}")
            db.insert(record, extra)
        if mark is not None:
            mark(db)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
