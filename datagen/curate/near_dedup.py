"""Near-duplicate removal with MinHash + LSH, in three stages that spill to disk.

1. ``SignatureStep`` (datatrove step, one task per group of crawl parquet files): batches
   of kept files -> signatures (``sigs/<rank>.sig``, raw uint32 rows + ``.meta.parquet``)
   and one (band hash, file) record per band, written to ``bands/b<band>/p<part>/<rank>.bin``
   where ``part`` is a hash range, so a later task holds only one slice in memory.
2. ``BucketStep`` (datatrove step, one task per band): sort each slice by hash; files that
   share a hash become candidate pairs (each member with the smallest one) ->
   ``pairs/b<band>.npy``.
3. ``cluster`` (main process): unique candidate pairs, keep those whose estimated Jaccard
   reaches ``threshold`` (precision), connected components, then each component split
   into stars: the first file by the representative rule takes every file within
   ``rep_threshold`` of it, the next unassigned file starts the next star, and so on:
   every dropped file has estimated Jaccard >= ``rep_threshold`` with the file kept for it.

Representative rule: ``dedup.keep`` (``datagen.curate.keep``); by default the longest
file (bytes), then the smallest (repo, path, file_id).
``cluster_id`` is the representative's ``file_id``.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.base import PipelineStep

from datagen.config.curate import NearDedupConfig
from datagen.curate.keep import KeepRule
from datagen.curate.minhash import band_hashes, estimated_jaccard, signatures
from datagen.runtime.atomic import atomic_path, publish, temp_path
from datagen.runtime.memory import release_memory
from datagen.runtime.rank_progress import RankProgress, progress_sum

_READ_ROWS = 64  # rows per parquet read of the signature stage
_RANK_SHIFT = 40  # global id = rank << 40 | row within the rank's signature file
_BAND_REC = np.dtype([("h", "<u8"), ("g", "<u8")])
META_COLUMNS = ["file_id", "repo", "path", "bytes"]
CLUSTER_SCHEMA = pa.schema(
    [
        ("file_id", pa.string()),
        ("cluster_id", pa.string()),
        ("cluster_size", pa.int64()),
        ("duplicate_of", pa.string()),
    ]
)


def _arrow(values) -> pa.Array:
    """Python or numpy values as an Arrow array, converted by polars: pyarrow's own
    conversion (``pa.array``, ``pa.scalar``, a Python scalar operand of ``pc.equal``)
    imports pandas on first use, which the signature workers otherwise never load
    (some 40 MB of memory in each)."""
    return pl.Series(values).to_arrow()


def _read_ids(path: Path | None) -> pa.Array | None:
    """The ``file_id`` column of ``path`` as one Arrow array (compact, no Python strings).

    Read with ``ParquetFile``: ``pq.read_table`` goes through ``pyarrow.dataset``, whose
    import pulls in pandas (see ``_arrow``)."""
    if path is None:
        return None
    return pq.ParquetFile(path).read(columns=["file_id"]).column("file_id").combine_chunks()


class SignatureStep(PipelineStep):
    """Stage 1: MinHash signatures and band records of the kept rows of crawl parquets.

    Rank ``r`` of ``world_size`` reads the input files ``i`` with ``i % world_size == r``.
    Rows with ``decision != 'kept'`` or whose ``file_id`` is listed in ``exclude`` (a
    parquet with a ``file_id`` column, e.g. exact duplicates) are skipped.
    """

    type = "dedup"
    name = "near-dedup signatures"

    def __init__(self, inputs: list[Path], out: Path, cfg: NearDedupConfig, exclude: Path | None,
                 progress_total: int | None = None):
        super().__init__()
        self.inputs = [str(p) for p in inputs]
        self.out = str(out)
        self.cfg = cfg
        self.exclude = str(exclude) if exclude else None
        self.progress_total = progress_total  # files to sign, when known: the bar counts files, not ranks

    def progress_bar(self) -> dict | None:
        """What a progress bar of this stage follows (``StageRunner``): files signed so far,
        as each rank counts them in ``<out>/progress`` (``RankProgress``)."""
        if self.progress_total is None:
            return None
        return {"files_per_task": 1, "total_files": self.progress_total,
                "count": functools.partial(progress_sum, Path(self.out) / "progress")}

    def _batches(self, rank: int, world_size: int):
        excluded = _read_ids(Path(self.exclude) if self.exclude else None)
        cols = ["text", "decision", *META_COLUMNS]
        kept = _arrow(["kept"]).cast(pa.string())
        for i, path in enumerate(self.inputs):
            if i % world_size != rank:
                continue
            pf = pq.ParquetFile(path)
            # Small reads (a group overshoots ``batch_bytes`` by at most one read), on one
            # thread: decoding columns in parallel buys little here and leaves freed
            # memory in every pool thread's heap.
            for batch in pf.iter_batches(batch_size=_READ_ROWS, columns=cols, use_threads=False):
                table = pa.Table.from_batches([batch])
                del batch
                keep = pc.is_in(table["decision"], value_set=kept)
                if excluded is not None and len(excluded):
                    keep = pc.and_(keep, pc.invert(pc.is_in(table["file_id"], value_set=excluded)))
                table = table.filter(keep)
                if table.num_rows:
                    yield table

    def run(self, data=None, rank: int = 0, world_size: int = 1):
        cfg = self.cfg
        out = Path(self.out)
        (out / "sigs").mkdir(parents=True, exist_ok=True)
        band_files = {}
        for b in range(cfg.bands):
            for p in range(cfg.partitions):
                d = out / "bands" / f"b{b:03d}" / f"p{p:03d}"
                d.mkdir(parents=True, exist_ok=True)
                band_files[b, p] = open(d / f"{rank:05d}.bin", "wb")  # noqa: SIM115
        n_rows = 0
        # metadata rows go to disk batch by batch: a rank's table would grow with the corpus
        meta_path = out / "sigs" / f"{rank:05d}.meta.parquet"
        meta_tmp = temp_path(meta_path)
        counter = (RankProgress(out / "progress", rank, keep=True) if self.progress_total is not None
                   else contextlib.nullcontext())
        try:
            with (
                counter as progress,
                open(out / "sigs" / f"{rank:05d}.sig", "wb") as sig_file,
                pq.ParquetWriter(meta_tmp, _META_SCHEMA) as metas,
            ):
                for table in self._group(self._batches(rank, world_size)):
                    with self.track_time():
                        sigs, has = signatures(table["text"], cfg.ngram, cfg.num_perm, cfg.seed)
                    table, sigs = table.filter(_arrow(has)), sigs[has]
                    if progress is not None:
                        progress.add(int(has.size))
                    self.stat_update("files", value=int(has.size))
                    self.stat_update("no_shingles", value=int((~has).sum()))
                    gids = (np.uint64(rank) << np.uint64(_RANK_SHIFT)) + np.arange(
                        n_rows, n_rows + len(sigs), dtype=np.uint64
                    )
                    n_rows += len(sigs)
                    sig_file.write(np.ascontiguousarray(sigs).tobytes())
                    metas.write_table(table.select(META_COLUMNS).cast(_META_SCHEMA))
                    bh = band_hashes(sigs, cfg.bands, cfg.rows)
                    part = bh % np.uint64(cfg.partitions)
                    for b in range(cfg.bands):
                        for p in range(cfg.partitions):
                            sel = part[:, b] == p
                            rec = np.empty(int(sel.sum()), _BAND_REC)
                            rec["h"], rec["g"] = bh[sel, b], gids[sel]
                            band_files[b, p].write(rec.tobytes())
                    del table, sigs, bh
                    release_memory()  # the batch's buffers, not kept for the next one
        finally:
            for f in band_files.values():
                f.close()
        publish(meta_tmp, meta_path)
        return iter(())

    def _group(self, tables):
        """Regroup reader batches into batches of about ``batch_bytes`` of text."""
        pending: list[pa.Table] = []
        size = 0
        for t in tables:
            pending.append(t)
            size += pc.sum(pc.binary_length(t["text"])).as_py() or 0
            if size >= self.cfg.batch_bytes:
                group = pa.concat_tables(pending)
                pending, size = [], 0  # not held while the group is hashed
                yield group
        if pending:
            yield pa.concat_tables(pending)


_META_TYPES = [pa.string(), pa.string(), pa.string(), pa.int64()]
_META_SCHEMA = pa.schema(list(zip(META_COLUMNS, _META_TYPES, strict=True)))


class BucketStep(PipelineStep):
    """Stage 2: one task per band; files sharing a band hash become candidate pairs."""

    type = "dedup"
    name = "near-dedup buckets"

    def __init__(self, out: Path, cfg: NearDedupConfig):
        super().__init__()
        self.out = str(out)
        self.cfg = cfg

    def run(self, data=None, rank: int = 0, world_size: int = 1):
        out = Path(self.out)
        (out / "pairs").mkdir(parents=True, exist_ok=True)
        for band in range(rank, self.cfg.bands, world_size):
            found = []
            for part in range(self.cfg.partitions):
                d = out / "bands" / f"b{band:03d}" / f"p{part:03d}"
                chunks = [np.fromfile(f, _BAND_REC) for f in sorted(d.glob("*.bin"))]
                rec = np.concatenate(chunks) if chunks else np.empty(0, _BAND_REC)
                found.append(candidate_pairs(rec))
            pairs = np.concatenate(found) if found else np.empty((0, 2), np.uint64)
            self.stat_update("pairs", value=len(pairs))
            np.save(out / "pairs" / f"b{band:03d}.npy", pairs)
        return iter(())


def candidate_pairs(rec: np.ndarray) -> np.ndarray:
    """(first, other) pairs for every run of equal hashes; ``rec`` has fields h, g."""
    if len(rec) < 2:
        return np.empty((0, 2), np.uint64)
    rec = np.sort(rec, order=["h", "g"])
    h, g = rec["h"], rec["g"]
    same = h[1:] == h[:-1]
    if not same.any():
        return np.empty((0, 2), np.uint64)
    starts = np.r_[True, ~same]  # first row of each run of equal hashes
    first = g[np.maximum.accumulate(np.where(starts, np.arange(len(g)), 0))]
    member = ~starts
    return np.stack([first[member], g[member]], axis=1)


def _components(pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Connected components of an edge list: (nodes, label per node)."""
    nodes, inv = np.unique(pairs, return_inverse=True)
    inv = inv.reshape(-1, 2)
    label = np.arange(len(nodes))
    while True:  # min-label propagation with pointer jumping
        lo = np.minimum(label[inv[:, 0]], label[inv[:, 1]])
        new = label.copy()
        np.minimum.at(new, inv[:, 0], lo)
        np.minimum.at(new, inv[:, 1], lo)
        new = new[new]
        if np.array_equal(new, label):
            return nodes, label
        label = new


def cluster(out: Path, cfg: NearDedupConfig, ranks: int, rule: KeepRule | None = None) -> Path:
    """Stage 3: verify candidates, union them, pick representatives (``rule``) ->
    ``clusters<rule>.parquet``."""
    rule = rule or KeepRule()
    sig_mm: dict[int, np.ndarray] = {}
    for r in range(ranks):
        path = out / "sigs" / f"{r:05d}.sig"
        if path.stat().st_size:
            sig_mm[r] = np.memmap(path, np.uint32, "r").reshape(-1, cfg.num_perm)
    files = sorted((out / "pairs").glob("b*.npy"))
    pairs = np.concatenate([np.load(f) for f in files]) if files else np.empty((0, 2), np.uint64)
    pairs = np.unique(pairs, axis=0) if len(pairs) else pairs
    keep = np.zeros(len(pairs), bool)
    for start in range(0, len(pairs), 1 << 18):
        chunk = pairs[start : start + (1 << 18)]
        keep[start : start + len(chunk)] = (
            estimated_jaccard(_gather(sig_mm, chunk[:, 0]), _gather(sig_mm, chunk[:, 1])) >= cfg.threshold
        )
    pairs = pairs[keep]
    target = out / f"clusters{rule.cache_key}.parquet"
    if not len(pairs):
        pq.write_table(CLUSTER_SCHEMA.empty_table(), target)
        return target
    nodes, label = _components(pairs)
    rank_of = (nodes >> np.uint64(_RANK_SHIFT)).astype(np.int64)
    local = (nodes & np.uint64((1 << _RANK_SHIFT) - 1)).astype(np.int64)
    parts = []
    for r in np.unique(rank_of):
        meta = pq.read_table(out / "sigs" / f"{r:05d}.meta.parquet")
        sel = np.nonzero(rank_of == r)[0]
        parts.append(
            meta.take(pa.array(local[sel]))
            .append_column("label", pa.array(label[sel]))
            .append_column("gid", pa.array(nodes[sel]))
        )
    members = rule.sort_members(pl.from_arrow(pa.concat_tables(parts)))
    rep = _stars(members["label"].to_numpy(), _gather(sig_mm, members["gid"].to_numpy()), cfg.rep_threshold)
    return _write_clusters(members.with_columns(pl.Series("rep", rep)), target)


def _stars(label: np.ndarray, sigs: np.ndarray, threshold: float) -> np.ndarray:
    """Split each connected component into stars around representatives, so that every
    duplicate is similar to the file it is dropped for (chains A~B~C do not make C a
    duplicate of A). Rows come in representative order within each component; the first
    unassigned row takes every unassigned row within ``threshold`` of it. Returns, per
    row, the row index of its representative."""
    rep = np.empty(len(label), np.int64)
    bounds = np.flatnonzero(np.r_[True, label[1:] != label[:-1], True])
    for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
        remaining = np.arange(lo, hi)
        while len(remaining):
            head = remaining[0]
            close = (sigs[remaining] == sigs[head]).mean(axis=1) >= threshold
            close[0] = True
            rep[remaining[close]] = head
            remaining = remaining[~close]
    return rep


def _gather(sig_mm: dict[int, np.ndarray], gids: np.ndarray) -> np.ndarray:
    rank = (gids >> np.uint64(_RANK_SHIFT)).astype(np.int64)
    local = (gids & np.uint64((1 << _RANK_SHIFT) - 1)).astype(np.int64)
    first = next(iter(sig_mm.values()))
    rows = np.empty((len(gids), first.shape[1]), np.uint32)
    for r in np.unique(rank):
        sel = rank == r
        rows[sel] = sig_mm[int(r)][local[sel]]
    return rows


def _write_clusters(members: pl.DataFrame, target: Path) -> Path:
    """One row per member of a star of two or more (``rep``: row of its representative)."""
    df = members.with_columns(pl.col("file_id").gather(pl.col("rep")).alias("cluster_id"))
    df = df.with_columns(pl.len().over("cluster_id").cast(pl.Int64).alias("cluster_size"))
    df = df.filter(pl.col("cluster_size") > 1).with_columns(
        pl.when(pl.col("file_id") == pl.col("cluster_id"))
        .then(None)
        .otherwise(pl.col("cluster_id"))
        .alias("duplicate_of")
    )
    table = df.select(CLUSTER_SCHEMA.names).sort(["cluster_id", "file_id"]).to_arrow()
    with atomic_path(target) as tmp:
        pq.write_table(table.cast(CLUSTER_SCHEMA), tmp)
    return target


def _stage_dir(crawl_parquets: list[Path], work_dir: Path, cfg: NearDedupConfig, exclude: Path | None,
               tasks: int, band_tasks: int) -> Path:
    """Name the work folder by the config, the inputs and the task split, so a re-run
    reuses finished stages and nothing stale (the exclude list is rewritten every run,
    so it is keyed by content, not mtime)."""
    key = {"cfg": cfg.model_dump(mode="json"), "inputs": [], "tasks": tasks, "band_tasks": band_tasks}
    for p in sorted(crawl_parquets):
        st = Path(p).stat()
        key["inputs"].append([str(p), st.st_size, st.st_mtime_ns])
    if exclude:
        key["exclude"] = hashlib.sha256(Path(exclude).read_bytes()).hexdigest()
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:12]
    return work_dir / f"near_dedup-{digest}"


# Crawl parquet bytes (zstd; about 4x as much text) below which one more worker process
# costs more than it saves: each stage's pool starts processes and ships them its
# pipeline, about as long as hashing this much text (on 50 MB of Python the stage took
# 2.1-2.6 s with ``-w 2`` against 1.2-1.4 s in one process).
MIN_BYTES_PER_TASK = 32 << 20


def useful_workers(crawl_parquets: list[Path], workers: int) -> int:
    """The workers worth starting for ``near_dedup``: at most ``workers``, one per crawl
    parquet, and one per ``MIN_BYTES_PER_TASK`` of input. The clusters do not depend on
    it (tested across worker counts)."""
    size = sum(Path(p).stat().st_size for p in crawl_parquets)
    return max(1, min(workers, len(crawl_parquets), -(-size // MIN_BYTES_PER_TASK)))


def near_dedup(
    crawl_parquets: list[Path],
    work_dir: Path,
    cfg: NearDedupConfig,
    workers: int = 1,
    exclude: Path | None = None,
    executor: type[LocalPipelineExecutor] = LocalPipelineExecutor,
    keep: KeepRule | None = None,
    total: int | None = None,
) -> Path:
    """Cluster near-duplicate kept files of the crawl parquets; returns a parquet of
    ``(file_id, cluster_id, cluster_size, duplicate_of)`` with one row per member of a
    cluster of two or more (``duplicate_of`` is null for the representative).

    Finished stages are skipped on a re-run (datatrove completion markers). ``executor``
    runs the two datatrove stages (any ``LocalPipelineExecutor`` subclass). ``total``: the
    files to sign, when known, for a progress bar in files (``SignatureStep.progress_bar``)."""
    tasks = max(1, min(workers, len(crawl_parquets)))
    band_tasks = max(1, min(workers, cfg.bands))
    out = _stage_dir([Path(p) for p in crawl_parquets], Path(work_dir), cfg, exclude, tasks, band_tasks)
    keep = keep or KeepRule()
    target = out / f"clusters{keep.cache_key}.parquet"
    if target.exists():
        return target

    executor(
        [SignatureStep(list(crawl_parquets), out, cfg, exclude, progress_total=total)],
        tasks=tasks,
        workers=tasks,
        logging_dir=str(out / "logs" / "signatures"),
    ).run()
    executor(
        [BucketStep(out, cfg)],
        tasks=band_tasks,
        workers=band_tasks,
        logging_dir=str(out / "logs" / "buckets"),
    ).run()
    return cluster(out, cfg, tasks, keep)
