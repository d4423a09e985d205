"""Write kept files into size-capped parquet shards in Hugging Face layout.

Files stream out of DuckDB sorted by (repo, path); within a repo an ordering function
may reorder them (repo-level ordering). Shards are written under temporary names and
moved into ``data/`` as ``<split>-00000-of-000NN.parquet`` once their count is known.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
from rich.console import Console

from datagen.builds.progress import progress_bar
from datagen.config.cpt import ShardsConfig
from datagen.records import CodeFile, ShardRow
from datagen.records.base import arrow_schema

OrderFn = Callable[[list[dict]], list[dict]]


def by_path(rows: list[dict]) -> list[dict]:
    """Default in-repo order: as sorted (by path)."""
    return rows


def iter_repos(con: duckdb.DuckDBPyConnection, crawl_files: list[str], batch_rows: int = 2048,
               repos: list[str] | None = None):
    """Yield (repo, rows) for every repo with kept files (or those in ``repos``), rows sorted by path."""
    only = "" if repos is None else "AND c.repo IN (SELECT unnest(?::VARCHAR[]))"
    rel = con.cursor().sql(
        f"""
        SELECT c.file_id AS id, c.repo, c.path, c.lang, c.license, c.imports, c.text
        FROM read_parquet(?) c JOIN files f USING (file_id)
        WHERE f.decision = 'kept' {only} ORDER BY c.repo, c.path
        """,
        params=[crawl_files] if repos is None else [crawl_files, repos],
    )
    reader = rel.to_arrow_reader(batch_rows)
    current: str | None = None
    rows: list[dict] = []
    for batch in reader:
        for row in batch.to_pylist():
            if row["repo"] != current and rows:
                yield current, rows
                rows = []
            current = row["repo"]
            rows.append(row)
    if rows:
        yield current, rows


def _ordered(repos, order: OrderFn):
    """Each repo's rows in ``order``; an order with a ``stream`` method gets them all at once
    (e.g. to order repos in parallel)."""
    stream = getattr(order, "stream", None)
    if stream is not None:
        yield from stream(repos)
    else:
        for _repo, rows in repos:
            yield order(rows)


def write_text_shards(
    con: duckdb.DuckDBPyConnection, crawl_files: list[str], data_dir: Path, tmp_dir: Path,
    cfg: ShardsConfig, console: Console, order: OrderFn = by_path,
    split: str | None = None, repos: list[str] | None = None,
) -> list[ShardRow]:
    """Write the shards of one split (default ``cfg.split``), optionally only ``repos``;
    fills table ``shard_of(file_id, shard)``; returns shard rows."""
    split = split or cfg.split
    schema = arrow_schema(CodeFile)
    compression = None if cfg.compression == "none" else cfg.compression
    level = cfg.compression_level if cfg.compression in ("zstd", "gzip") else None
    tmp_dir.mkdir(parents=True, exist_ok=True)
    for old in tmp_dir.glob("*"):
        old.unlink()
    if repos is None:
        (total,) = con.execute("SELECT count(*) FROM files WHERE decision='kept'").fetchone()
    else:
        (total,) = con.execute("SELECT count(*) FROM files WHERE decision='kept' "
                               "AND repo IN (SELECT unnest(?::VARCHAR[]))", [repos]).fetchone()
    parts: list[tuple[Path, list[str]]] = []
    writer: pq.ParquetWriter | None = None
    ids: list[str] = []
    size = 0
    pending: list[dict] = []

    def flush() -> None:
        nonlocal pending
        if pending and writer is not None:
            writer.write_table(pa.Table.from_pylist(pending, schema=schema))
            pending = []

    def close() -> None:
        nonlocal writer, ids, size
        if writer is not None:
            flush()
            writer.close()
            parts.append((path, ids))
        writer, ids, size = None, [], 0

    label = "writing shards" if split == cfg.split else f"writing {split}"
    with progress_bar(console, label, total) as advance:
        for rows in _ordered(iter_repos(con, crawl_files, repos=repos), order):
            for row in rows:
                if writer is None:
                    path = tmp_dir / f"part-{len(parts):05d}.parquet"
                    writer = pq.ParquetWriter(path, schema, compression=compression,
                                              compression_level=level)
                pending.append(row)
                ids.append(row["id"])
                size += len(row["text"].encode("utf-8", "surrogatepass"))
                if len(pending) >= cfg.row_group_rows:
                    flush()
                if size >= cfg.max_bytes:
                    close()
                advance(1)
        close()

    data_dir.mkdir(parents=True, exist_ok=True)
    for stale in data_dir.glob(f"{split}-*.parquet"):
        stale.unlink()
    n = len(parts)
    shard_rows: list[ShardRow] = []
    assignments: list[dict] = []
    for i, (tmp_path, file_ids) in enumerate(parts):
        rel = f"data/{split}-{i:05d}-of-{n:05d}.parquet"
        final = data_dir.parent / rel
        os.replace(tmp_path, final)
        shard_rows.append(ShardRow(run_id="", path=rel, rows=len(file_ids),
                                   bytes=final.stat().st_size, sha256=_sha256(final)))
        assignments.extend({"file_id": f, "shard": rel} for f in file_ids)
    con.execute("CREATE TABLE IF NOT EXISTS shard_of (file_id VARCHAR, shard VARCHAR)")
    if assignments:
        tbl = pa.Table.from_pylist(assignments)
        con.register("_assign", tbl)
        con.execute("INSERT INTO shard_of SELECT * FROM _assign")
        con.unregister("_assign")
    return shard_rows


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
