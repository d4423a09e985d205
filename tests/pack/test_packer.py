"""The packer: fixed-length sequences, document boundaries, padding, positions."""

from __future__ import annotations

import numpy as np
import pytest

from datagen.pack.packer import Packer, position_ids


def random_docs(seed: int, n: int, max_len: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(1, 500, size=int(rng.integers(1, max_len)), dtype=np.int32)
            for _ in range(n)]


def run(packer: Packer, docs: list[np.ndarray]) -> list:
    batches = []
    for i, d in enumerate(docs):
        batches.extend(packer.add(d, f"d{i}"))
    batches.extend(packer.finish())
    return batches


@pytest.mark.parametrize("seq_len,max_len,flush", [(64, 200, 64), (64, 20, 300), (257, 1000, 1 << 20)])
def test_sequences_are_exact_and_stream_is_preserved(seq_len, max_len, flush):
    docs = random_docs(seq_len, 300, max_len)
    batches = run(Packer(seq_len, pad_id=0, flush_tokens=flush), docs)
    ids = np.concatenate([b.input_ids for b in batches])
    assert ids.shape[1] == seq_len
    total = sum(len(d) for d in docs)
    pad = sum(b.pad_tokens for b in batches)
    assert pad < seq_len and ids.size == total + pad
    assert np.array_equal(ids.reshape(-1)[:total], np.concatenate(docs))
    # segments rebuild each document, in order, across sequence cuts
    rebuilt: dict[str, list[np.ndarray]] = {}
    for b in batches:
        for k in range(len(b)):
            cu = b.cu_seqlens[k]
            assert cu[0] == 0 and cu[-1] == seq_len and np.all(np.diff(cu) > 0)
            assert len(b.doc_ids[k]) == len(cu) - 1
            for j, doc in enumerate(b.doc_ids[k]):
                if doc is not None:
                    rebuilt.setdefault(doc, []).append(b.input_ids[k, cu[j] : cu[j + 1]])
    assert list(rebuilt) == [f"d{i}" for i in range(len(docs))]
    for i, d in enumerate(docs):
        assert np.array_equal(np.concatenate(rebuilt[f"d{i}"]), d)


def test_continues_flag_marks_documents_cut_at_the_end():
    docs = [np.arange(1, 11, dtype=np.int32), np.arange(1, 7, dtype=np.int32)]  # 10 + 6
    batches = run(Packer(8, pad_id=0, flush_tokens=8), docs)
    seqs = [(b, k) for b in batches for k in range(len(b))]
    assert [b.continues[k] for b, k in seqs] == [True, False]
    assert [b.doc_ids[k] for b, k in seqs] == [["d0"], ["d0", "d1"]]
    last_b, last_k = seqs[-1]
    assert last_b.cu_seqlens[last_k].tolist() == [0, 2, 8]
    exact = run(Packer(8, pad_id=0), [np.arange(1, 9, dtype=np.int32)] * 2)
    assert [b.continues[k] for b in exact for k in range(len(b))] == [False, False]


def test_padding_and_loss_mask_and_positions():
    batches = run(Packer(16, pad_id=3), [np.full(5, 7, np.int32), np.full(6, 8, np.int32)])
    (b,) = batches
    assert b.pad_tokens == 5 and b.doc_ids[0] == ["d0", "d1", None]
    assert b.cu_seqlens[0].tolist() == [0, 5, 11, 16]
    assert b.loss_mask(0).tolist() == [1] * 11 + [0] * 5
    assert b.position_ids(0).tolist() == list(range(5)) + list(range(6)) + list(range(5))
    assert b.input_ids[0, 11:].tolist() == [3] * 5


def test_drop_remainder_counts_dropped_tokens():
    packer = Packer(10, pad_id=0, remainder="drop")
    batches = run(packer, [np.ones(25, np.int32)])
    assert sum(len(b) for b in batches) == 2 and packer.dropped_tokens == 5


def test_position_ids_restart_per_segment():
    assert position_ids(np.array([0, 3, 4, 6])).tolist() == [0, 1, 2, 0, 0, 1]
