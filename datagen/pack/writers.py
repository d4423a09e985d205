"""Writers for packed tokens: parquet shards, datatrove ``.ds`` and Megatron ``.bin/.idx``.

Formats follow /work/shared/FORMATS.md byte for byte:

- datatrove: ``<name>.ds`` little-endian ids (uint16 when the vocabulary fits, else
  uint32); ``.ds.index`` uint64 cumulative document ends, no header (one per document:
  the final padding run is not one; its ``.ds.loss`` bytes are 0); ``.ds.loss`` one
  byte per token; ``.ds.metadata`` three lines ``tokenizer|token_size``, count, humanized.
  We write the packed sequences back to back, so datatrove's reader with
  ``seq_len = our seq_len - 1`` (it reads seq_len + 1 tokens per sample) returns exactly
  our sequences, and its positions-from-index equal our position ids.
- Megatron: ``<prefix>.bin`` the documents back to back (no padding), ``<prefix>.idx``:
  ``MMIDIDX\\x00\\x00``, u64 version 1, u8 dtype code (8 = uint16, 4 = int32), u64 sequence
  count, u64 document count (sequences + 1), int32 lengths, int64 byte offsets, int64
  document indices 0..n.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from datagen.pack.packer import PackedBatch
from datagen.runtime.atomic import publish

MEGATRON_MAGIC = b"MMIDIDX\x00\x00"
MEGATRON_DTYPE_CODE = {np.dtype(np.uint16): 8, np.dtype(np.int32): 4}


@dataclass
class WrittenFile:
    path: Path
    rows: int
    bytes: int
    sha256: str


def file_record(path: Path, rows: int) -> WrittenFile:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return WrittenFile(path, rows, path.stat().st_size, h.hexdigest())


def token_schema(with_positions: bool) -> pa.Schema:
    fields = [
        pa.field("input_ids", pa.list_(pa.int32())),
        pa.field("loss_mask", pa.list_(pa.uint8())),
        pa.field("cu_seqlens", pa.list_(pa.int32())),
        pa.field("doc_ids", pa.list_(pa.string())),
    ]
    if with_positions:
        fields.append(pa.field("position_ids", pa.list_(pa.int32())))
    return pa.schema(fields)


class ParquetTokenWriter:
    """Rows = sequences; shards ``<split>-00000-of-000NN.parquet`` (renamed on close)."""

    def __init__(self, folder: Path, split: str, seq_len: int, shard_tokens: int,
                 with_positions: bool):
        self.folder, self.split, self.seq_len = folder, split, seq_len
        self.rows_per_shard = max(1, shard_tokens // seq_len)
        self.row_group = max(1, min(self.rows_per_shard, (1 << 22) // seq_len))
        self.schema = token_schema(with_positions)
        self.with_positions = with_positions
        self.writer: pq.ParquetWriter | None = None
        self.parts: list[tuple[Path, int]] = []
        self.rows_in_shard = 0

    def _open(self) -> None:
        path = self.folder / f".{self.split}-{len(self.parts):05d}.parquet.part"
        self.writer = pq.ParquetWriter(path, self.schema, compression="zstd")
        self.parts.append((path, 0))
        self.rows_in_shard = 0

    def write(self, batch: PackedBatch) -> None:
        i = 0
        while i < len(batch):
            if self.writer is None or self.rows_in_shard >= self.rows_per_shard:
                self._close_shard()
                self._open()
            take = min(len(batch) - i, self.rows_per_shard - self.rows_in_shard, self.row_group)
            self._write_rows(batch, i, i + take)
            i += take

    def _write_rows(self, batch: PackedBatch, a: int, b: int) -> None:
        n, S = b - a, self.seq_len
        offsets = pa.array(np.arange(n + 1, dtype=np.int32) * S)
        ids = pa.ListArray.from_arrays(offsets, pa.array(batch.input_ids[a:b].reshape(-1).astype(np.int32)))
        mask = np.concatenate([batch.loss_mask(k) for k in range(a, b)])
        cols = {
            "input_ids": ids,
            "loss_mask": pa.ListArray.from_arrays(offsets, pa.array(mask)),
            "cu_seqlens": pa.array([c.tolist() for c in batch.cu_seqlens[a:b]], pa.list_(pa.int32())),
            "doc_ids": pa.array(batch.doc_ids[a:b], pa.list_(pa.string())),
        }
        if self.with_positions:
            pos = np.concatenate([batch.position_ids(k) for k in range(a, b)])
            cols["position_ids"] = pa.ListArray.from_arrays(offsets, pa.array(pos))
        self.writer.write_table(pa.table(cols, schema=self.schema), row_group_size=self.row_group)
        path, rows = self.parts[-1]
        self.parts[-1] = (path, rows + n)
        self.rows_in_shard += n

    def _close_shard(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def close(self) -> list[WrittenFile]:
        self._close_shard()
        out = []
        total = len(self.parts)
        for i, (part, rows) in enumerate(self.parts):
            final = self.folder / f"{self.split}-{i:05d}-of-{total:05d}.parquet"
            publish(part, final)  # a finished part, fsync-ed and renamed to its name
            out.append(file_record(final, rows))
        return out


class DatatroveWriter:
    """``<split>_00000_unshuffled.ds`` (+ ``.index``, ``.loss``, ``.metadata``)."""

    def __init__(self, folder: Path, split: str, token_size: int, tokenizer_name: str):
        self.path = folder / f"{split}_00000_unshuffled.ds"
        self.dtype = np.dtype("<u4" if token_size == 4 else "<u2")
        self.token_size = token_size
        self.tokenizer_name = tokenizer_name
        self.tokens = open(self.path, "wb")
        self.loss = open(f"{self.path}.loss", "wb")
        self.index = open(f"{self.path}.index", "wb")
        self.written = 0
        self.sequences = 0

    def write(self, batch: PackedBatch) -> None:
        S = batch.input_ids.shape[1]
        self.tokens.write(batch.input_ids.astype(self.dtype).tobytes())
        for k in range(len(batch)):
            self.loss.write(batch.loss_mask(k).tobytes())
            cu = batch.cu_seqlens[k]
            # document ends only, as datatrove's own writer records them: not the end of
            # a document that goes on in the next sequence, nor of the final padding
            # (datatrove never pads; readers count documents from the index)
            last_is_doc = not batch.continues[k] and batch.doc_ids[k][-1] is not None
            ends = cu[1:] if last_is_doc else cu[1:-1]
            ends = ends.astype(np.uint64) + np.uint64(self.written)
            self.index.write(ends.astype("<u8").tobytes())
            self.written += S
        self.sequences += len(batch)

    def close(self) -> list[WrittenFile]:
        import humanize

        for f in (self.tokens, self.loss, self.index):
            f.close()
        meta = Path(f"{self.path}.metadata")
        meta.write_text("\n".join([f"{self.tokenizer_name}|{self.token_size}", str(self.written),
                                   humanize.metric(self.written, unit="T")]), encoding="utf-8")
        return [file_record(Path(p), self.sequences) for p in
                (self.path, f"{self.path}.index", f"{self.path}.loss", meta)]


class MegatronWriter:
    """``<split>_text_document.bin/.idx``: one Megatron sequence per document."""

    def __init__(self, folder: Path, split: str, token_size: int):
        self.prefix = folder / f"{split}_text_document"
        self.dtype = np.dtype(np.uint16 if token_size == 2 else np.int32)
        self.bin = open(f"{self.prefix}.bin", "wb")
        self.lengths: list[int] = []

    def write_doc(self, tokens: np.ndarray) -> None:
        self.bin.write(tokens.astype(self.dtype.newbyteorder("<")).tobytes())
        self.lengths.append(len(tokens))

    def close(self) -> list[WrittenFile]:
        self.bin.close()
        lengths = np.asarray(self.lengths, dtype="<i4")
        pointers = np.zeros(len(lengths), dtype="<i8")
        if len(lengths):
            pointers[1:] = np.cumsum(lengths[:-1].astype(np.int64)) * self.dtype.itemsize
        with open(f"{self.prefix}.idx", "wb") as f:
            f.write(MEGATRON_MAGIC)
            f.write(struct.pack("<Q", 1))
            f.write(struct.pack("<B", MEGATRON_DTYPE_CODE[self.dtype]))
            f.write(struct.pack("<Q", len(lengths)))
            f.write(struct.pack("<Q", len(lengths) + 1))
            f.write(lengths.tobytes())
            f.write(pointers.tobytes())
            f.write(np.arange(len(lengths) + 1, dtype="<i8").tobytes())
        return [file_record(Path(f"{self.prefix}{ext}"), len(lengths)) for ext in (".bin", ".idx")]
