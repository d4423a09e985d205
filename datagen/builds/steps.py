"""Pipeline plumbing shared by the builds: the per-rank parquet writer and a quiet executor."""

from __future__ import annotations

import contextlib
import io
import os
import signal
import sys
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
from datatrove.data import DocumentsPipeline
from datatrove.executor.local import LocalPipelineExecutor
from datatrove.pipeline.base import PipelineStep

from datagen.builds.procs import die_with_parent
from datagen.memory import release_memory
from datagen.records import FileRow
from datagen.records.base import arrow_schema

CRAWL_EXCLUDE = ("run_id", "shard")
# polars dtype of each Arrow type the crawl columns use (see ``RowsParquetWriter``)
_POLARS_TYPES = {pa.string(): pl.String, pa.large_string(): pl.String, pa.int64(): pl.Int64,
                 pa.float64(): pl.Float64}


def crawl_schema() -> pa.Schema:
    """Columns of the crawl stage's parquet: FileRow fields (minus run-level ones), the
    import specifiers for repo ordering (``ImportsStep``; not a manifest column) and text."""
    return arrow_schema(FileRow, exclude=CRAWL_EXCLUDE, extra={"imports": pa.string(), "text": pa.large_string()})


class UnknownField(ValueError):
    """A step wrote a metadata field that is not a ``FileRow`` column (a bug in the step)."""

    def __init__(self, fields: list[str], path: str | None):
        super().__init__(f"{', '.join(fields)} {'is' if len(fields) == 1 else 'are'} not FileRow "
                         f"field(s) (file {path}): add them to FileRow and to the step's `writes`")


class RowsParquetWriter(PipelineStep):
    """Writes every document of a rank (kept or dropped) to ``<folder>/<rank>.parquet``.

    The file is written under a temporary name and renamed when the rank finishes, so a
    killed rank leaves no half file behind and is simply run again. A metadata key that is
    not a column (a step writing a field ``FileRow`` lacks) is an error, not a silent drop.
    """

    name = "rows → parquet"
    type = "💽 - WRITER"

    def __init__(self, folder: str, batch_rows: int = 512):
        super().__init__()
        self.folder = folder
        self.batch_rows = batch_rows

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        schema = crawl_schema()
        names = [f.name for f in schema if f.name != "text"]
        columns = frozenset(names)
        os.makedirs(self.folder, exist_ok=True)
        final = Path(self.folder) / f"{rank:05d}.parquet"
        tmp = final.with_suffix(".parquet.tmp")
        batch: dict[str, list] = {f.name: [] for f in schema}
        # No dictionary for ``text``: file texts are nearly all distinct, and a dictionary
        # page holds a whole row group's text, which every reader then decodes at once.
        with pq.ParquetWriter(tmp, schema, compression="zstd", use_dictionary=names) as writer:
            for doc in data:
                if not doc.metadata.keys() <= columns:
                    raise UnknownField(sorted(doc.metadata.keys() - columns), doc.metadata.get("path"))
                for k in names:
                    batch[k].append(doc.metadata.get(k))
                batch["text"].append(doc.text)
                if len(batch["text"]) >= self.batch_rows:
                    writer.write_table(_arrow_table(batch, schema))
                    batch = {k: [] for k in batch}
                    release_memory()  # a worker runs task after task: keep only what one batch needs
                self.stat_update("rows")
            if batch["text"]:
                writer.write_table(_arrow_table(batch, schema))
        os.replace(tmp, final)
        return
        yield  # a generator that consumes the pipeline and yields nothing


def _arrow_table(batch: dict[str, list], schema: pa.Schema) -> pa.Table:
    """Columns of Python values as an Arrow table of ``schema``, built by polars: pyarrow's
    own conversion (``pa.array``, ``Table.from_pylist``) imports pandas on first use, some
    0.2 s of CPU in every crawl worker that nothing else there needs."""
    frame = pl.DataFrame(batch, schema={f.name: _POLARS_TYPES[f.type] for f in schema})
    return frame.to_arrow().cast(schema)  # a null in a non-nullable column is an error here


def _manager_init() -> None:  # runs in the manager process
    die_with_parent(signal.SIGTERM)


def _worker_init() -> None:  # runs in each pool worker
    """Die with the forkserver (which exits when the build dies); leave Ctrl-C to the build
    process, which stops every worker itself (a worker that died of SIGINT on its own
    would leave the pool waiting for its task forever). SIGTERM stays: the pool's own
    ``terminate()`` stops workers with it."""
    die_with_parent(signal.SIGKILL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextlib.contextmanager
def _children_die_with_parent():
    """datatrove's executor starts a ``multiprocess.Manager()`` server and a pool of
    workers (forkserver) that nothing stops when the build is killed with SIGKILL: they
    would wait forever as orphans. While the executor runs, both start with a parent-death
    signal instead (and workers leave signals to the build; see ``_worker_init``)."""
    import multiprocess
    import multiprocess.pool
    from multiprocess.managers import SyncManager

    def manager() -> SyncManager:
        m = SyncManager(ctx=multiprocess.get_context())
        m.start(initializer=_manager_init)
        return m

    class Pool(multiprocess.pool.Pool):
        def __init__(self, processes=None, initializer=None, *args, **kwargs):
            super().__init__(processes, _worker_init if initializer is None else initializer, *args, **kwargs)

    original = multiprocess.Manager, multiprocess.pool.Pool
    multiprocess.Manager, multiprocess.pool.Pool = manager, Pool
    try:
        yield
    finally:
        multiprocess.Manager, multiprocess.pool.Pool = original


class QuietLocalExecutor(LocalPipelineExecutor):
    """datatrove's local executor, with each task's console log kept in its log file only.

    datatrove adds a stderr sink per task; under a progress bar that is noise. The task
    logs still land in ``<logging_dir>/logs/`` and errors still propagate.
    """

    def run(self):
        from loguru import logger

        logger.remove()  # datatrove's INFO lines on the main process; warnings still show
        logger.add(sys.__stderr__, level="WARNING")
        with _children_die_with_parent():
            return super().run()

    def _run_for_rank(self, rank: int, local_rank: int = 0, node_rank: int = -1):
        real = sys.stderr
        sys.stderr = io.StringIO()
        try:
            return super()._run_for_rank(rank, local_rank, node_rank)
        finally:
            sys.stderr = real
