"""Write kept files into size-capped parquet shards in Hugging Face layout.

Files stream out of DuckDB sorted by (repo, path), a window of repos at a time
(``iter_repos``), so memory does not grow with the corpus; within a repo an ordering
function may reorder them (repo-level ordering). Shards are written under temporary names
and moved into ``data/`` as ``<split>-00000-of-000NN.parquet`` once their count is known;
which shard each file went to is appended to a parquet file and loaded into DuckDB.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Iterator
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from rich.console import Console

from datagen.config.cpt import ShardsConfig
from datagen.records import CodeFile, ShardRow
from datagen.records.base import arrow_schema
from datagen.runtime.atomic import publish
from datagen.runtime.memory import release_memory
from datagen.runtime.progress import progress_bar

OrderFn = Callable[[list[dict]], list[dict]]
ASSIGN_SCHEMA = pa.schema([("file_id", pa.string()), ("part", pa.int32())])


def by_path(rows: list[dict]) -> list[dict]:
    """Default in-repo order: as sorted (by path)."""
    return rows


def repo_windows(con: duckdb.DuckDBPyConnection, window_bytes: int,
                 repos: list[str] | None = None) -> Iterator[tuple[str, str]]:
    """(first, last) repo of consecutive runs of repos with kept files (or those in
    ``repos``), each run holding about ``window_bytes`` of kept text (at least one repo)."""
    only = "" if repos is None else "AND repo IN (SELECT unnest(?::VARCHAR[]))"
    sizes = con.cursor().execute(
        f"SELECT repo, sum(bytes) FROM files WHERE decision = 'kept' {only} GROUP BY repo ORDER BY repo",
        [] if repos is None else [repos],
    )
    first: str | None = None
    last, size = "", 0
    while batch := sizes.fetchmany(1024):
        for repo, n in batch:
            if first is not None and size + n > window_bytes:
                yield first, last
                first, size = None, 0
            first = repo if first is None else first
            last, size = repo, size + n
    if first is not None:
        yield first, last


def iter_repos(con: duckdb.DuckDBPyConnection, crawl_files: list[str], batch_rows: int = 2048,
               repos: list[str] | None = None, window_bytes: int = 32 << 20):
    """Yield (repo, rows) for every repo with kept files (or those in ``repos``), rows sorted by path.

    One DuckDB query per window of consecutive repos (``repo_windows``): the filter on
    ``repo`` reads only the crawl row groups of those repos, and the window is sorted
    here, in Arrow (a sort of text in DuckDB needs several times the text in memory).
    So memory holds one window, or one repo where a repo is larger, whatever the corpus
    size."""
    only = "" if repos is None else "AND c.repo IN (SELECT unnest(?::VARCHAR[]))"
    cursor = con.cursor()
    has_repeats = "mix_repeats" in {d[0] for d in cursor.execute("SELECT * FROM files LIMIT 0").description}
    repeats = "coalesce(f.mix_repeats, 1)" if has_repeats else "1"
    # rows are sorted below: DuckDB need not buffer them to keep the scan's order
    cursor.execute("SET SESSION preserve_insertion_order = false")
    for first, last in repo_windows(con, window_bytes, repos):
        rel = cursor.sql(
            f"""
            SELECT c.file_id AS id, c.repo, c.path, c.lang, c.license, c.imports, c.text,
                   {repeats} AS repeats
            FROM read_parquet(?) c JOIN files f USING (file_id)
            WHERE f.decision = 'kept' AND c.repo BETWEEN ? AND ? AND f.repo BETWEEN ? AND ? {only}
            """,
            params=[crawl_files, first, last, first, last] + ([] if repos is None else [repos]),
        )
        # sorted as Arrow (compact UTF-8, byte order like DuckDB's); Python rows per repo only
        window = rel.to_arrow_reader(batch_rows).read_all()
        order = pc.sort_indices(window, sort_keys=[("repo", "ascending"), ("path", "ascending")])
        start = 0
        for repo, group in itertools.groupby(window.column("repo").take(order).to_pylist()):
            n = sum(1 for _ in group)
            yield repo, window.take(order.slice(start, n)).to_pylist()
            start += n
        del window, order
        release_memory()  # the window's buffers, before the next window is read


def with_repeats(rows: list[dict]) -> Iterator[tuple[dict, bool]]:
    """(row, first copy?) of one ordered repo: the repo's files, then again those the
    language mix repeats (``repeats`` >= 2, then >= 3, ...), each pass in the same order."""
    top = max((r.get("repeats", 1) for r in rows), default=1)
    for k in range(1, top + 1):
        for row in rows:
            if row.get("repeats", 1) >= k:
                yield row, k == 1


def _ordered(repos, order: OrderFn):
    """Each repo's rows in ``order``; an order with a ``stream`` method gets them all at once
    (e.g. to order repos in parallel)."""
    stream = getattr(order, "stream", None)
    if stream is not None:
        yield from stream(repos)
    else:
        for _repo, rows in repos:
            yield order(rows)


class _Parts:
    """The size-capped part files of one split being written, and which part each file
    went to: appended to ``assign.parquet`` as rows go out, never held as a list."""

    def __init__(self, tmp_dir: Path, cfg: ShardsConfig):
        self.tmp_dir, self.cfg = tmp_dir, cfg
        self.schema = arrow_schema(CodeFile)
        self.rows: list[int] = []  # rows per closed part
        self.writer: pq.ParquetWriter | None = None
        self.pending: list[dict] = []
        self.firsts: list[bool] = []
        self.size = self.count = 0  # text bytes and rows of the open part
        self.assign = pq.ParquetWriter(tmp_dir / "assign.parquet", ASSIGN_SCHEMA)

    def add(self, row: dict, first: bool = True) -> None:
        """Append ``row``; only a file's ``first`` copy records its part (``shard_of``)."""
        if self.writer is None:
            compression = None if self.cfg.compression == "none" else self.cfg.compression
            level = self.cfg.compression_level if self.cfg.compression in ("zstd", "gzip") else None
            self.writer = pq.ParquetWriter(self.path(len(self.rows)), self.schema,
                                           compression=compression, compression_level=level)
            self.count = 0
        self.pending.append(row)
        self.firsts.append(first)
        self.count += 1
        self.size += len(row["text"].encode("utf-8", "surrogatepass"))
        if len(self.pending) >= self.cfg.row_group_rows:
            self._flush()
        if self.size >= self.cfg.max_bytes:
            self.close_part()

    def path(self, i: int) -> Path:
        return self.tmp_dir / f"part-{i:05d}.parquet"

    def _flush(self) -> None:
        if self.pending and self.writer is not None:
            self.writer.write_table(pa.Table.from_pylist(self.pending, schema=self.schema))
            firsts = [r["id"] for r, first in zip(self.pending, self.firsts, strict=True) if first]
            ids = pa.array(firsts, pa.string())
            part = pa.array([len(self.rows)] * len(firsts), pa.int32())
            self.assign.write_table(pa.table([ids, part], schema=ASSIGN_SCHEMA))
            self.pending, self.firsts = [], []

    def close_part(self) -> None:
        if self.writer is not None:
            self._flush()
            self.writer.close()
            self.rows.append(self.count)
        self.writer, self.size = None, 0

    def close(self) -> None:
        self.close_part()
        self.assign.close()


def write_text_shards(
    con: duckdb.DuckDBPyConnection, crawl_files: list[str], data_dir: Path, tmp_dir: Path,
    cfg: ShardsConfig, console: Console, order: OrderFn = by_path,
    split: str | None = None, repos: list[str] | None = None, window_bytes: int = 32 << 20,
) -> list[ShardRow]:
    """Write the shards of one split (default ``cfg.split``), optionally only ``repos``;
    fills table ``shard_of(file_id, shard)``; returns shard rows. Repos stream through
    (``iter_repos`` with ``window_bytes``), so memory does not grow with the split."""
    split = split or cfg.split
    tmp_dir.mkdir(parents=True, exist_ok=True)
    for old in tmp_dir.glob("*"):
        old.unlink()
    if repos is None:
        (total,) = con.execute("SELECT count(*) FROM files WHERE decision='kept'").fetchone()
    else:
        (total,) = con.execute("SELECT count(*) FROM files WHERE decision='kept' "
                               "AND repo IN (SELECT unnest(?::VARCHAR[]))", [repos]).fetchone()
    parts = _Parts(tmp_dir, cfg)
    label = "writing shards" if split == cfg.split else f"writing {split}"
    with progress_bar(console, label, total) as advance:
        for rows in _ordered(iter_repos(con, crawl_files, repos=repos, window_bytes=window_bytes), order):
            for row, first in with_repeats(rows):
                parts.add(row, first)
                advance(1 if first else 0)
        parts.close()

    data_dir.mkdir(parents=True, exist_ok=True)
    for stale in data_dir.glob(f"{split}-*.parquet"):
        stale.unlink()
    n = len(parts.rows)
    shard_rows: list[ShardRow] = []
    for i, rows in enumerate(parts.rows):
        rel = f"data/{split}-{i:05d}-of-{n:05d}.parquet"
        final = data_dir.parent / rel
        publish(parts.path(i), final)  # a finished part: fsync-ed, renamed into the stage
        shard_rows.append(ShardRow(run_id="", path=rel, rows=rows,
                                   bytes=final.stat().st_size, sha256=_sha256(final)))
    con.execute("CREATE TABLE IF NOT EXISTS shard_of (file_id VARCHAR, shard VARCHAR)")
    names = pa.table({"part": pa.array(range(n), pa.int32()), "shard": [r.path for r in shard_rows]})
    con.register("_shard_names", names)
    con.execute("INSERT INTO shard_of SELECT a.file_id, s.shard FROM read_parquet(?) a "
                "JOIN _shard_names s USING (part)", [str(tmp_dir / "assign.parquet")])
    con.unregister("_shard_names")
    return shard_rows


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
