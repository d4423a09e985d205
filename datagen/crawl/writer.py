"""The crawl stage's per-rank parquet writer: every file row the crawl's steps made, with its text."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
from datatrove.data import DocumentsPipeline
from datatrove.pipeline.base import PipelineStep

from datagen.records import FileRow
from datagen.records.base import arrow_schema
from datagen.runtime.atomic import atomic_path
from datagen.runtime.memory import release_memory
from datagen.runtime.rank_progress import RankProgress

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

    def __init__(self, folder: str, batch_rows: int = 512, progress: bool = False):
        super().__init__()
        self.folder = folder
        self.batch_rows = batch_rows
        self.progress = progress  # write <rank>.progress as rows come (the crawl's bar reads it)

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        schema = crawl_schema()
        names = [f.name for f in schema if f.name != "text"]
        columns = frozenset(names)
        os.makedirs(self.folder, exist_ok=True)
        final = Path(self.folder) / f"{rank:05d}.parquet"
        batch: dict[str, list] = {f.name: [] for f in schema}
        # The progress file goes when the rank ends, finished (its parquet counts then) or not.
        counter = RankProgress(self.folder, rank) if self.progress else contextlib.nullcontext()
        # No dictionary for ``text``: file texts are nearly all distinct, and a dictionary
        # page holds a whole row group's text, which every reader then decodes at once.
        with counter as progress, atomic_path(final) as tmp, pq.ParquetWriter(tmp, schema, compression="zstd",
                                                                          use_dictionary=names) as writer:
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
                if progress is not None:
                    progress.add()
            if batch["text"]:
                writer.write_table(_arrow_table(batch, schema))
        return
        yield  # a generator that consumes the pipeline and yields nothing


def _arrow_table(batch: dict[str, list], schema: pa.Schema) -> pa.Table:
    """Columns of Python values as an Arrow table of ``schema``, built by polars: pyarrow's
    own conversion (``pa.array``, ``Table.from_pylist``) imports pandas on first use, some
    0.2 s of CPU in every crawl worker that nothing else there needs."""
    frame = pl.DataFrame(batch, schema={f.name: _POLARS_TYPES[f.type] for f in schema})
    return frame.to_arrow().cast(schema)  # a null in a non-nullable column is an error here
