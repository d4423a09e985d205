"""Pack documents into fixed-length sequences, keeping document boundaries.

Choice: concatenate-and-split (standard for continued pretraining). Documents follow
each other in order, each ending in EOS, and the stream is cut every ``seq_len`` tokens;
a document that crosses a cut continues at the start of the next sequence. So no token is
padding except in the last sequence (``remainder="pad"``; ``"drop"`` discards that tail
instead), i.e. waste < ``seq_len`` tokens per output. Each sequence records its segments
as ``cu_seqlens`` (0, ends..., seq_len) with the document id of each segment; position ids
restart at 0 at every segment start. Padding is its own final segment (id ``None``) with
loss mask 0; every other token, EOS included, has loss mask 1.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np


@dataclass
class PackedBatch:
    """Consecutive packed sequences: ``input_ids`` is (n, seq_len)."""

    input_ids: np.ndarray
    cu_seqlens: list[np.ndarray]  # int32, per sequence, starts with 0 and ends with seq_len
    doc_ids: list[list[str | None]]  # per sequence, one per segment
    pad_tokens: int  # padding tokens in this batch (only ever in the last sequence)
    continues: list[bool]  # per sequence: its last document goes on in the next sequence

    def __len__(self) -> int:
        return len(self.input_ids)

    def loss_mask(self, i: int) -> np.ndarray:
        mask = np.ones(self.input_ids.shape[1], dtype=np.uint8)
        if self.doc_ids[i] and self.doc_ids[i][-1] is None:
            mask[self.cu_seqlens[i][-2] :] = 0
        return mask

    def position_ids(self, i: int) -> np.ndarray:
        return position_ids(self.cu_seqlens[i])


def position_ids(cu_seqlens: np.ndarray) -> np.ndarray:
    """0, 1, ... restarting at every segment start."""
    cu = np.asarray(cu_seqlens, dtype=np.int64)
    n = int(cu[-1])
    return (np.arange(n) - np.repeat(cu[:-1], np.diff(cu))).astype(np.int32)


class Packer:
    """Streaming packer: ``add`` documents, iterate the full sequences it returns.

    Work is batched: sequences are cut once ``flush_tokens`` tokens are pending, with
    numpy over the whole pending stream (``searchsorted`` for the boundaries).
    """

    def __init__(self, seq_len: int, pad_id: int, flush_tokens: int = 1 << 20,
                 remainder: str = "pad"):
        if seq_len < 2:
            raise ValueError("seq_len must be at least 2")
        self.seq_len = seq_len
        self.pad_id = pad_id
        self.remainder = remainder
        self.flush_tokens = max(seq_len, flush_tokens)
        self.buf: list[np.ndarray] = []
        self.starts: list[int] = []  # start offset of each pending document in the stream
        self.ids: list[str] = []
        self.pending = 0
        self.dropped_tokens = 0

    def add(self, tokens: np.ndarray, doc_id: str) -> Iterator[PackedBatch]:
        if len(tokens) == 0:
            return
        self.buf.append(tokens)
        self.starts.append(self.pending)
        self.ids.append(doc_id)
        self.pending += len(tokens)
        if self.pending >= self.flush_tokens:
            yield from self._cut(final=False)

    def finish(self) -> Iterator[PackedBatch]:
        yield from self._cut(final=True)

    def _cut(self, final: bool) -> Iterator[PackedBatch]:
        if not self.pending:
            return
        S = self.seq_len
        stream = np.concatenate(self.buf)
        n_full = len(stream) // S
        tail = len(stream) - n_full * S
        pad = 0
        if final and tail:
            if self.remainder == "pad":
                pad = S - tail
                stream = np.concatenate([stream, np.full(pad, self.pad_id, dtype=stream.dtype)])
                n_full += 1
            else:
                self.dropped_tokens += tail
        # starts[0] == 0 always: the first pending document may continue from a cut
        starts = np.asarray(self.starts, dtype=np.int64)
        ids = self.ids
        seq_starts = np.arange(n_full, dtype=np.int64) * S
        first = np.searchsorted(starts, seq_starts, side="right") - 1  # doc at each cut
        hi = np.searchsorted(starts, seq_starts + S, side="left")  # docs starting before end
        real_end = len(stream) - pad
        cus, doc_ids, continues = [], [], []
        for k in range(n_full):
            a = int(seq_starts[k])
            cu = [0, *(starts[first[k] + 1 : hi[k]] - a).tolist()]
            seg_ids: list[str | None] = list(ids[first[k] : hi[k]])
            if pad and k == n_full - 1:
                cu.append(real_end - a)
                seg_ids.append(None)
            cu.append(S)
            cus.append(np.asarray(cu, dtype=np.int32))
            doc_ids.append(seg_ids)
            last_end = int(starts[hi[k]]) if hi[k] < len(starts) else real_end
            continues.append(seg_ids[-1] is not None and last_end > a + S)
        if n_full:
            yield PackedBatch(stream[: n_full * S].reshape(n_full, S), cus, doc_ids, pad, continues)
        cut = n_full * S
        if final or cut >= len(stream):
            self.buf, self.starts, self.ids, self.pending = [], [], [], 0
            return
        keep = int(np.searchsorted(starts, cut, side="right"))  # docs starting at or before
        self.buf = [stream[cut:].copy()]  # a view would keep the whole stream alive
        self.starts = [0, *(starts[keep:] - cut).tolist()]
        self.ids = [ids[keep - 1], *ids[keep:]]
        self.pending = len(stream) - cut
