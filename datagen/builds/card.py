"""The dataset card (``OUT/README.md``) with the YAML header the Hugging Face Hub reads."""

from __future__ import annotations

from pathlib import Path

import yaml

from datagen.config.cpt import CptCorpusRecipe
from datagen.records import PackOutputRow, ShardRow
from datagen.records.hub import size_category


def _token_configs(cfg: CptCorpusRecipe, packed: list[PackOutputRow]) -> list[dict]:
    """One Hub config per packed length: ``load_dataset(..., "tokens-32768")``."""
    if "parquet" not in cfg.pack.formats:
        return []
    configs = []
    for S in sorted({p.seq_len for p in packed}):
        splits = sorted({p.split for p in packed if p.seq_len == S}, key=lambda x: (x != "train", x))
        configs.append({"config_name": f"tokens-{S}",
                        "data_files": [{"split": sp, "path": f"tokens/{S}/{sp}-*.parquet"} for sp in splits]})
    return configs


def write_card(out: Path, cfg: CptCorpusRecipe, counts: dict, shards: list[ShardRow],
               packed: list[PackOutputRow] | None = None) -> Path:
    text_shards = [s for s in shards if s.path.startswith("data/")]
    splits = sorted({Path(s.path).name.split("-")[0] for s in text_shards} | {cfg.shards.split},
                    key=lambda x: (x != cfg.shards.split, x))
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
            "data_files": [{"split": sp, "path": f"data/{sp}-*.parquet"} for sp in splits],
        }] + _token_configs(cfg, packed or []),
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
    lines += ["", f"Shards: {len(text_shards)} ({sum(s.rows for s in text_shards)} rows, "
              f"{sum(s.bytes for s in text_shards)} bytes on disk).", ""]
    if packed:
        lines += [
            "## Tokens", "",
            "Repo documents (files in dependency order, `pack.doc_header` / `pack.file_header`)",
            "packed into fixed-length sequences under `tokens/<seq_len>/`: parquet shards",
            "(`input_ids, loss_mask, cu_seqlens, doc_ids[, position_ids]`) and datatrove `.ds`",
            "files; Megatron `tokens/<split>_text_document.bin/.idx` hold the documents.", "",
            "| split | seq_len | sequences | documents | tokens | padding |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        lines += [f"| {p.split} | {p.seq_len} | {p.sequences} | {p.documents} | {p.tokens} | "
                  f"{p.padding_tokens} |" for p in packed]
        lines += [""]
    path = out / "README.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
