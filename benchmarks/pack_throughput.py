"""Tokenize + pack throughput vs the raw ``tokenizers`` call datagen makes, on the same text.

Corpus: real Python sources from this venv's site-packages, one "repo" per top-level
package, files in dependency order (``order_repo``, timed separately). Measured in one run:

- raw:   ``Tokenizer.encode_batch_fast`` (no offsets; what datagen calls when the
         installed ``tokenizers`` has it, else ``encode_batch``) over the same pieces
         (headers + file texts), in the same batches, ids not even read back: the baseline
         of the ratios; ``encode_batch`` (with offsets) is printed for reference;
- ours:  ``datagen.pack`` repo documents -> ``LoadedTokenizer.encode_pieces`` (each piece
         after its one context character, see there) -> ``Packer`` at
         32768 and 262144, i.e. every sequence cut, with cu_seqlens and doc ids;
- ours + write: the same plus parquet and datatrove ``.ds`` files on disk.

Goal: ours >= 0.8x raw (the call datagen makes). Run by hand:

    python benchmarks/pack_throughput.py [--mb 40] [--tokenizer PATH]

Without ``--tokenizer`` a 16k byte-level BPE is trained on a slice of the corpus first.
"""

from __future__ import annotations

import argparse
import site
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from common import train_bpe


def collect(mb: float) -> dict[str, list[tuple[str, str]]]:
    """(path, text) per top-level package of site-packages, up to ``mb`` MB, sorted."""
    roots = [Path(p) for p in site.getsitepackages()]
    files = sorted(f for r in roots for f in r.rglob("*.py") if f.is_file())
    repos: dict[str, list[tuple[str, str]]] = defaultdict(list)
    total = 0
    for f in files:
        try:
            text = f.read_text("utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        rel = f.relative_to(next(r for r in roots if f.is_relative_to(r)))
        repos[rel.parts[0]].append((str(Path(*rel.parts[1:])) if len(rel.parts) > 1 else rel.name, text))
        total += len(text)
        if total >= mb * 1e6:
            break
    return dict(sorted(repos.items()))


def train_tokenizer(repos: dict, folder: Path) -> Path:
    """A 16k byte-level BPE on the first 3000 files."""
    return train_bpe([t for files in repos.values() for _, t in files][:3000], folder)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mb", type=float, default=40.0, help="MB of source text (default 40)")
    ap.add_argument("--tokenizer", help="tokenizer.json or folder (default: train a 16k BPE)")
    args = ap.parse_args()

    from datagen.config.pack import PackConfig
    from datagen.pack.corpus import _repo_docs
    from datagen.pack.docs import SourceRow, repo_pieces
    from datagen.pack.imports import order_repo
    from datagen.pack.packer import Packer
    from datagen.pack.tokenize import load_tokenizer
    from datagen.pack.writers import DatatroveWriter, ParquetTokenWriter

    repos = collect(args.mb)
    n_files = sum(len(v) for v in repos.values())
    mb = sum(len(t) for v in repos.values() for _, t in v) / 1e6
    print(f"corpus: {n_files} files, {len(repos)} repos, {mb:.1f} MB (site-packages)")
    tmp = Path(tempfile.mkdtemp(prefix="pack-bench-"))
    tok_path = args.tokenizer or train_tokenizer(repos, tmp)
    tok = load_tokenizer(tok_path, eos_token="<|endoftext|>" if not args.tokenizer else None)
    cfg = PackConfig(tokenizer=str(tok_path), seq_lens=[32768, 262144])

    t = time.perf_counter()
    rows = {}
    for repo, files in repos.items():
        srcs = [SourceRow(f"{repo}/{p}", repo, p, "python", text) for p, text in files]
        rows[repo] = order_repo(srcs).apply(srcs)
    t_order = time.perf_counter() - t
    print(f"order_repo (tree-sitter import graph): {t_order:.2f} s, {n_files / t_order:.0f} files/s, "
          f"{mb / t_order:.1f} MB/s")

    # the same texts, in the same batches, for both
    pieces = [repo_pieces(r, rs, cfg.doc_header, cfg.file_header) for r, rs in rows.items()]
    batches, cur, size = [], [], 0
    for p in pieces:
        cur.extend(p)
        size += sum(map(len, p))
        if size >= cfg.batch_bytes:
            batches.append(cur)
            cur, size = [], 0
    if cur:
        batches.append(cur)

    def raw(method: str = "encode_batch") -> float:
        fn = getattr(tok.tokenizer, method)
        t = time.perf_counter()
        for b in batches:
            fn(b, add_special_tokens=False)
        return time.perf_counter() - t

    def ours(write: bool) -> tuple[float, int]:
        out = Path(tempfile.mkdtemp(dir=tmp))
        t = time.perf_counter()
        packers = [Packer(S, tok.pad_id, flush_tokens=max(S, 1 << 22)) for S in cfg.seq_lens]
        writers = {S: [ParquetTokenWriter(out, f"p{S}", S, cfg.shard_tokens, True),
                       DatatroveWriter(out, f"d{S}", tok.token_size, str(tok_path))]
                   for S in cfg.seq_lens} if write else {}
        seqs = 0
        for docs in _repo_docs(iter(rows.items()), "train", cfg, tok, None):
            for doc in docs:
                for packer in packers:
                    for batch in packer.add(doc.tokens, doc.doc_id):
                        seqs += len(batch)
                        for w in writers.get(packer.seq_len, []):
                            w.write(batch)
        for packer in packers:
            for batch in packer.finish():
                seqs += len(batch)
                for w in writers.get(packer.seq_len, []):
                    w.write(batch)
        for ws in writers.values():
            for w in ws:
                w.close()
        return time.perf_counter() - t, seqs

    raw()  # warm up (thread pool, caches)
    fast = hasattr(tok.tokenizer, "encode_batch_fast")
    runs = defaultdict(list)
    for _ in range(2):  # interleaved, best of two: the machine is shared
        runs["raw"].append(raw())
        if fast:
            runs["fast"].append(raw("encode_batch_fast"))
        runs["ours"].append(ours(False))
    t_raw, t_fast = min(runs["raw"]), min(runs["fast"]) if fast else None
    t_ours, seqs = min(runs["ours"])
    t_write, _ = ours(True)
    base, call = (t_fast, "encode_batch_fast") if t_fast else (t_raw, "encode_batch")
    print(f"raw tokenizers encode_batch:         {t_raw:.2f} s  ({mb / t_raw:.1f} MB/s)")
    if t_fast:
        print(f"raw tokenizers encode_batch_fast:    {t_fast:.2f} s  ({mb / t_fast:.1f} MB/s)  (what datagen calls)")
    print(f"datagen tokenize+pack (32k + 256k):  {t_ours:.2f} s  ({mb / t_ours:.1f} MB/s), "
          f"{seqs} sequences   ratio {base / t_ours:.2f}x of raw {call}")
    print(f"  + writing parquet and .ds files:   {t_write:.2f} s  ({mb / t_write:.1f} MB/s)   "
          f"ratio {base / t_write:.2f}x of raw {call}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
