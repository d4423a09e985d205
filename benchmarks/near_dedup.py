"""Near-dedup: datagen's MinHash LSH vs datatrove's MinHash pipeline, same corpus, same
parameters (5-word shingles, 14 bands x 8 rows = 112 permutations), one process.

Corpus: real ``.py`` files from this interpreter's site-packages, plus planted near-copies
of some of them (renamed identifier, re-indented, a few lines changed; shingle Jaccard
>= 0.85). Both pipelines run end to end from the same crawl parquet to written kept /
removed parquet files; recall is the share of planted pairs that land in one cluster.

datatrove runs with a whitespace word tokenizer (its default needs spaCy) and with text
normalisation switched off, so both sides hash exactly the same shingles
(``--datatrove-default-norm`` keeps its prose normalisation: slower, coarser shingles).

    python benchmarks/near_dedup.py --mb 40 --planted 400
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import site
import sys
import tempfile
import time
from pathlib import Path

# One process, one thread each: polars and rensa would otherwise use every core.
os.environ.setdefault("POLARS_MAX_THREADS", "1")
os.environ.setdefault("RAYON_NUM_THREADS", "1")

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from common import WhitespaceTokenizer  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from datagen.config.curate import NearDedupConfig  # noqa: E402
from datagen.curate.near_dedup import near_dedup  # noqa: E402
from tests.curate.plant import planted_copy  # noqa: E402


def build_corpus(out: Path, mb: float, planted: int, seed: int) -> tuple[Path, set[frozenset]]:
    files = []
    for sp in site.getsitepackages():
        files += sorted(Path(sp).rglob("*.py"))
    rows, total = [], 0
    for f in files:
        try:
            text = f.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if not text.strip():
            continue
        rows.append(
            {
                "file_id": f"sp/{len(rows):06d}",
                "repo": "site-packages",
                "path": str(f),
                "bytes": len(text.encode()),
                "decision": "kept",
                "text": text,
            }
        )
        total += rows[-1]["bytes"]
        if total >= mb * 1e6:
            break
    rng = random.Random(seed)
    truth: set[frozenset] = set()
    candidates = [r for r in rows if 2_000 <= r["bytes"] <= 200_000]
    for r in rng.sample(candidates, min(planted, len(candidates))):
        got = planted_copy(r["text"], rng)
        if got is None:
            continue
        fid = f"planted/{len(truth):06d}"
        rows.append(dict(r, file_id=fid, repo="planted", bytes=len(got[0].encode()), text=got[0]))
        truth.add(frozenset({r["file_id"], fid}))
    rng.shuffle(rows)
    (out / "crawl").mkdir(parents=True)
    path = out / "crawl" / "00000.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    print(f"corpus: {len(rows)} files, {sum(r['bytes'] for r in rows) / 1e6:.1f} MB, {len(truth)} planted pairs")
    return path, truth


def recall(result: tuple[dict[str, object], set[str]], truth: set[frozenset]) -> str:
    """Two recalls on the planted pairs: both files in one cluster; and the pair resolved
    (one of the two removed, so the corpus no longer holds both)."""
    clusters, removed = result
    same = resolved = 0
    for pair in truth:
        a, b = tuple(pair)
        same += a in clusters and clusters.get(a) == clusters.get(b)
        resolved += a in removed or b in removed
    return f"recall {same / len(truth):.3f} (same cluster), {resolved / len(truth):.3f} (one removed)"


def run_datatrove(crawl: Path, out: Path, cfg: NearDedupConfig, default_norm: bool):
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.dedup.minhash import (
        MinhashConfig,
        MinhashDedupBuckets,
        MinhashDedupCluster,
        MinhashDedupFilter,
        MinhashDedupSignature,
    )
    from datatrove.pipeline.readers import ParquetReader
    from datatrove.pipeline.writers import ParquetWriter
    from datatrove.utils.text import TextNormConfig

    off = TextNormConfig(
        lowercase=False,
        norm_whitespace=False,
        remove_punctuation=False,
        norm_unicode_diacritics=False,
        norm_numbers=False,
    )
    mcfg = MinhashConfig(
        n_grams=cfg.ngram,
        num_buckets=cfg.bands,
        hashes_per_bucket=cfg.rows,
        seed=cfg.seed,
        norm_config=TextNormConfig() if default_norm else off,
    )

    def reader():
        return ParquetReader(str(crawl.parent), id_key="file_id", text_key="text")

    def run(pipeline, name, tasks=1):
        LocalPipelineExecutor(pipeline, tasks=tasks, workers=1, logging_dir=str(out / "logs" / name)).run()

    run([reader(), MinhashDedupSignature(str(out / "sigs"), config=mcfg, language=WhitespaceTokenizer())], "sigs")
    run([MinhashDedupBuckets(str(out / "sigs"), str(out / "buckets"), config=mcfg)], "buckets", tasks=cfg.bands)
    run([MinhashDedupCluster(str(out / "buckets"), str(out / "remove"), config=mcfg, save_cluster_id=True)], "cluster")
    run(
        [
            reader(),
            MinhashDedupFilter(
                str(out / "remove"), load_cluster_ids=True, exclusion_writer=ParquetWriter(str(out / "removed"))
            ),
            ParquetWriter(str(out / "kept")),
        ],
        "filter",
    )
    clusters: dict[str, object] = {}
    removed: set[str] = set()
    for f in sorted((out / "kept").glob("*.parquet")) + sorted((out / "removed").glob("*.parquet")):
        for row in pq.read_table(f, columns=["id", "metadata"]).to_pylist():
            cid = row["metadata"].get("minhash_cluster_id", -1)
            if cid != -1:
                clusters[row["id"]] = cid
            if f.parent.name == "removed":
                removed.add(row["id"])
    return clusters, removed


def run_datagen(crawl: Path, out: Path, cfg: NearDedupConfig):
    import pyarrow.compute as pc

    clusters = pq.read_table(near_dedup([crawl], out / "work", cfg, workers=1))
    # The filter stage, as datatrove's: kept and removed files written to parquet.
    dups = clusters.filter(pc.is_valid(clusters["duplicate_of"]))["file_id"]
    table = pq.read_table(crawl)
    removed = pc.is_in(table["file_id"], dups)
    pq.write_table(table.filter(pc.invert(removed)), out / "kept.parquet")
    pq.write_table(table.filter(removed), out / "removed.parquet")
    ids = dict(zip(clusters["file_id"].to_pylist(), clusters["cluster_id"].to_pylist(), strict=True))
    return ids, set(dups.to_pylist())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=40.0, help="corpus size before planting")
    ap.add_argument("--planted", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--datatrove-default-norm",
        action="store_true",
        help="let datatrove lowercase, strip punctuation and map digits (its default)",
    )
    args = ap.parse_args()
    from datatrove.utils.logging import logger

    logger.remove()  # stage logs would drown the figures
    cfg = NearDedupConfig()
    tmp = Path(tempfile.mkdtemp(prefix="neardedup-bench-"))
    try:
        crawl, truth = build_corpus(tmp, args.mb, args.planted, args.seed)
        t0 = time.perf_counter()
        dt_clusters = run_datatrove(crawl, tmp / "datatrove", cfg, args.datatrove_default_norm)
        t1 = time.perf_counter()
        dg_clusters = run_datagen(crawl, tmp / "datagen", cfg)
        t2 = time.perf_counter()
        dt_s, dg_s = t1 - t0, t2 - t1
        print(
            f"datatrove minhash (sig->buckets->cluster->filter): {dt_s:7.2f} s  "
            f"{recall(dt_clusters, truth)}  clustered files {len(dt_clusters[0])}"
        )
        print(
            f"datagen near_dedup (+ filter):                     {dg_s:7.2f} s  "
            f"{recall(dg_clusters, truth)}  clustered files {len(dg_clusters[0])}"
        )
        print(f"speed-up: {dt_s / dg_s:.1f}x")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
