"""The dataset card (``OUT/README.md``) with the YAML header the Hugging Face Hub reads."""

from __future__ import annotations

from pathlib import Path

import yaml

from datagen.config.cpt import CptCorpusRecipe
from datagen.records import ShardRow


def size_category(n: int) -> str:
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
                        (1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M")):
        if n < limit:
            return name
    return "n>10M"


def write_card(out: Path, cfg: CptCorpusRecipe, counts: dict, shards: list[ShardRow]) -> Path:
    licenses = counts["licenses"]
    license_id = next(iter(licenses)).lower() if len(licenses) == 1 else "other"
    header = {
        "license": license_id,
        "pretty_name": cfg.card.pretty_name,
        "tags": list(cfg.card.tags),
        "task_categories": ["text-generation"],
        "size_categories": [size_category(counts["kept"])],
        "configs": [{
            "config_name": "default",
            "default": True,
            "data_files": [{"split": cfg.shards.split, "path": f"data/{cfg.shards.split}-*.parquet"}],
        }],
    }
    lines = [
        "---", yaml.safe_dump(header, sort_keys=False).rstrip(), "---", "",
        f"# {cfg.card.pretty_name}", "",
        "A code corpus for continued pretraining, built by `datagen build cpt-corpus`.",
        "Every file the crawl saw is listed in `manifest.duckdb` (table `files`) with the reason",
        "it was dropped; query it with `datagen sql . \"SELECT reason, count(*) FROM files GROUP BY 1\"`.",
        "", "## Load", "", "```python", "import datasets",
        'ds = datasets.load_dataset("parquet", data_dir="data", split="train")', "```", "",
        "## Statistics", "",
        "| | files | bytes |", "|---|---:|---:|",
        f"| seen | {counts['seen']} | |",
        f"| kept | {counts['kept']} | {counts['kept_bytes']} |",
    ]
    lines += [f"| dropped: {r} | {n} | |" for r, n in counts["dropped_by_reason"].items()]
    lines += ["", "| language | files | bytes |", "|---|---:|---:|"]
    lines += [f"| {lang} | {n} | {b} |" for lang, n, b in counts["by_lang"]]
    lines += ["", "| license | files |", "|---|---:|"]
    lines += [f"| {lic} | {n} |" for lic, n in sorted(licenses.items())]
    lines += ["", f"Shards: {len(shards)} ({sum(s.rows for s in shards)} rows, "
              f"{sum(s.bytes for s in shards)} bytes on disk).", ""]
    path = out / "README.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
