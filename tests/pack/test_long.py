"""Long-context buckets: bucket edges, the long share of the longest output, end to end."""

from __future__ import annotations

import numpy as np
import pyarrow.parquet as pq
import pytest

from datagen.config.pack import LongConfig, PackConfig
from datagen.pack.corpus import pack_corpus
from datagen.pack.long import LongSpool, bucket_of, buckets

from .test_corpus import write_text


def test_bucket_labels_and_edges():
    table = buckets(LongConfig())
    assert [b.label for b in table] == ["<32k", "32k-128k", "128k-256k", ">=256k"]
    assert [b.long for b in table] == [False, True, True, True]
    assert bucket_of(32767, table).label == "<32k" and bucket_of(32768, table).label == "32k-128k"
    assert bucket_of(10**7, table).label == ">=256k"
    odd = buckets(LongConfig(edges=[100, 1000], min_tokens=1000))
    assert [(b.label, b.long) for b in odd] == [("<100", False), ("100-1000", False), (">=1000", True)]
    with pytest.raises(ValueError, match="increasing"):
        LongConfig(edges=[10, 10])


@pytest.mark.parametrize("share", [0.25, 0.5, 0.8, 1.0, 0.0])
def test_spool_takes_long_documents_and_short_ones_to_the_share(tmp_path, share):
    spool = LongSpool(tmp_path / "s.i32", LongConfig(share=share, seed=1))
    sizes = {f"L{i}": (True, 500) for i in range(4)} | {f"s{i:03d}": (False, 20 + i % 7) for i in range(300)}
    for doc, (long, n) in sizes.items():
        spool.add(doc, long, np.full(n, len(doc), np.int32))
    chosen = spool.select()
    long = sum(sizes[d][1] for d in chosen if sizes[d][0])
    short = sum(sizes[d][1] for d in chosen if not sizes[d][0])
    if share == 0.0:
        assert long == 0 and short == sum(n for lg, n in sizes.values() if not lg)
    else:
        assert long == 2000
        budget = 2000 * (1 - share) / share  # short tokens for the share; the next short doc would pass it
        assert budget - 26 < short <= budget and long / (long + short) >= share
    replayed = list(spool.replay(chosen))
    assert [d for d, _ in replayed] == [d for d in sizes if d in chosen]  # corpus order
    assert all(len(t) == sizes[d][1] for d, t in replayed)
    assert LongSpool(tmp_path / "t.i32", LongConfig(share=share, seed=1)).select() == set()
    spool.close()
    assert not (tmp_path / "s.i32").exists()


def test_longest_output_takes_the_share_and_repo_docs_say_so(tmp_path, tokenizer_dir, sample_code):
    code = sample_code(40)
    repos = {"big": {f"m{i:02d}.py": code[i] for i in range(30)}} | {
        f"s{k}": {"a.py": code[k]} for k in range(12)}
    long = LongConfig(edges=[400, 2000], min_tokens=400, share=0.8)
    cfg = PackConfig(tokenizer=str(tokenizer_dir), seq_lens=[64, 1024], long=long)
    result = pack_corpus(tmp_path, cfg, "run1", write_text(tmp_path / "data", repos, cfg))
    docs = pq.read_table(result.docs_file).to_pylist()
    assert {d["bucket"] for d in docs if d["repo"] == "big"} == {">=2000"}
    assert {d["bucket"] for d in docs if d["repo"] != "big"} == {"<400"}
    chosen = {d["doc_id"] for d in docs if d["long_output"]}
    assert {d["doc_id"] for d in docs if d["repo"] == "big"} <= chosen
    seen = {x for ids in pq.read_table(tmp_path / "tokens" / "1024" / "train-00000-of-00001.parquet")
            .column("doc_ids").to_pylist() for x in ids if x}
    assert seen == chosen  # the longest output holds exactly the chosen documents
    every = {x for ids in pq.read_table(tmp_path / "tokens" / "64" / "train-00000-of-00001.parquet")
             .column("doc_ids").to_pylist() for x in ids if x}
    assert every == {d["doc_id"] for d in docs}  # shorter outputs hold every document
    rows = {r.bucket: r for r in result.long_buckets}
    assert rows[">=2000"].selected_tokens == rows[">=2000"].tokens > 0
    sel = sum(r.selected_tokens for r in rows.values())
    assert 0.8 <= rows[">=2000"].selected_tokens / sel < 0.9
    out = {o.seq_len: o for o in result.outputs}
    assert out[1024].documents == len(chosen) < out[64].documents == len(docs)
