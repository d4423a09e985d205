"""Token writers on their own: dtypes for big vocabularies, optional columns and formats."""

from __future__ import annotations

import struct

import numpy as np
import pyarrow.parquet as pq

from datagen.config.pack import PackConfig
from datagen.pack.corpus import pack_corpus
from datagen.pack.packer import Packer
from datagen.pack.writers import DatatroveWriter, MegatronWriter, ParquetTokenWriter


def batches(seq_len: int, docs: list[np.ndarray]):
    packer = Packer(seq_len, pad_id=0)
    out = []
    for i, d in enumerate(docs):
        out.extend(packer.add(d, f"d{i}"))
    return out + list(packer.finish())


def test_big_vocabulary_uses_four_byte_tokens(tmp_path):
    docs = [np.array([70000, 1, 2, 99999], np.int32), np.array([65536, 5], np.int32)]
    ds = DatatroveWriter(tmp_path, "train", token_size=4, tokenizer_name="big")
    mg = MegatronWriter(tmp_path, "train", token_size=4)
    for b in batches(4, docs):
        ds.write(b)
    for d in docs:
        mg.write_doc(d)
    ds.close()
    mg.close()
    ids = np.fromfile(tmp_path / "train_00000_unshuffled.ds", "<u4")
    assert ids.tolist() == [70000, 1, 2, 99999, 65536, 5, 0, 0]
    assert np.fromfile(tmp_path / "train_00000_unshuffled.ds.index", "<u8").tolist() == [4, 6]  # no pad run
    assert (tmp_path / "train_00000_unshuffled.ds.metadata").read_text() == "big|4\n8\n8.00 T"
    idx = (tmp_path / "train_text_document.idx").read_bytes()
    assert struct.unpack("<B", idx[17:18]) == (4,)  # int32
    assert np.fromfile(tmp_path / "train_text_document.bin", "<i4").tolist() == [70000, 1, 2, 99999, 65536, 5]
    assert np.frombuffer(idx, "<i8", 2, 34 + 8).tolist() == [0, 16]  # byte offsets


def test_parquet_shards_roll_over_and_position_ids_are_optional(tmp_path):
    docs = [np.arange(1, 30, dtype=np.int32)] * 10
    w = ParquetTokenWriter(tmp_path, "train", 16, shard_tokens=64, with_positions=False)
    for b in batches(16, docs):
        w.write(b)
    files = w.close()
    assert [f.path.name for f in files] == [f"train-{i:05d}-of-00005.parquet" for i in range(5)]
    table = pq.read_table([f.path for f in files])
    assert "position_ids" not in table.column_names and table.num_rows == sum(f.rows for f in files)
    assert np.array(table.column("input_ids").to_pylist()).reshape(-1)[:290].tolist() == \
        np.concatenate(docs).tolist()


def test_formats_select_outputs(tmp_path, tokenizer_dir, sample_code):
    import pyarrow as pa

    rows = [{"id": f"f{i}", "repo": "r", "path": f"f{i}.py", "lang": "python", "text": t}
            for i, t in enumerate(sample_code(5))]
    (tmp_path / "data").mkdir()
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "data" / "train-00000-of-00001.parquet")
    cfg = PackConfig(tokenizer=str(tokenizer_dir), seq_lens=[64], formats=["parquet"],
                     reset_position_ids=False)
    result = pack_corpus(tmp_path, cfg, "r1", {"train": [tmp_path / "data" / "train-00000-of-00001.parquet"]})
    names = sorted(p.name for p in (tmp_path / "tokens").rglob("*") if p.is_file())
    assert names == ["train-00000-of-00001.parquet"] and len(result.files) == 1
