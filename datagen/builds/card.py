"""The dataset card (``OUT/README.md``) with the YAML header the Hugging Face Hub reads."""

from __future__ import annotations

from pathlib import Path

import yaml

from datagen.config.cpt import CptCorpusRecipe
from datagen.records import LanguageMixRow, LongBucketRow, PackOutputRow, RepoDocRow, ShardRow
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


def _mix_lines(rows: list[LanguageMixRow]) -> list[str]:
    """The language mix, before and after (tokens with a tokenizer, else bytes)."""
    if not rows:
        return []
    tokens = rows[0].tokens_before is not None
    unit = "tokens" if tokens else "bytes"
    lines = ["## Language mix", "",
             "`mix.weights` after dedup (train split): a weight below 1 keeps that share of a language's",
             "files (seeded content-hash choice, the rest dropped as `mix_downsampled`), above 1 repeats",
             "them (`files.mix_repeats`, capped by `mix.max_repeat`). Table `language_mix`.", "",
             f"| language | weight | files before | files after | downsampled | repeated | {unit} before | "
             f"{unit} after |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        before, after = (r.tokens_before, r.tokens_after) if tokens else (r.bytes_before, r.bytes_after)
        lines.append(f"| {r.lang or '(none)'} | {r.weight:g} | {r.files_before} | {r.files_after} | "
                     f"{r.downsampled} | {r.repeated} | {before} | {after} |")
    return [*lines, ""]


def _long_lines(cfg: CptCorpusRecipe, rows: list[LongBucketRow]) -> list[str]:
    """Repo documents per length bucket, and what the longest output took."""
    if not rows:
        return []
    S = rows[0].seq_len
    share = cfg.pack.long.share
    lines = ["## Long-context buckets", "",
             "Repo documents by the token length of their repo (`pack.long.edges`; `repo_docs.bucket`,",
             f"table `long_buckets`); long: repos of {cfg.pack.long.min_tokens} tokens or more. "
             + (f"The {S}-token output takes every long document and short ones (seeded choice) to "
                f"`pack.long.share` = {share:g} of its document tokens." if share is not None
                else f"`pack.long.share` is unset: the {S}-token output takes every document."), "",
             f"| split | bucket | long | documents | tokens | in tokens-{S}: documents | tokens |",
             "|---|---|---|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r.split} | {r.bucket} | {'yes' if r.long else 'no'} | {r.documents} | {r.tokens} | "
                     f"{r.selected_documents} | {r.selected_tokens} |")
    for split in sorted({r.split for r in rows}):
        sel = sum(r.selected_tokens for r in rows if r.split == split)
        long = sum(r.selected_tokens for r in rows if r.split == split and r.long)
        if sel:
            lines.append(f"\n{split}: long documents are {long / sel:.3f} of the tokens-{S} document tokens.")
    return [*lines, ""]


def _fim_lines(cfg: CptCorpusRecipe, docs: Path | None) -> list[str]:
    """How many files (level=file) or documents (level=repo) fill-in-the-middle rearranged."""
    fim = cfg.pack.fim
    if fim.rate <= 0 or docs is None or not Path(docs).is_file():
        return []
    import pyarrow.parquet as pq

    table = pq.read_table(docs, columns=["fim", "fim_files"]).to_pydict()
    total = len(table["fim"])
    psm = sum(1 for f in table["fim"] if f == "psm")
    spm = sum(1 for f in table["fim"] if f == "spm")
    what = (f"{sum(table['fim_files'])} files rearranged in {sum(1 for n in table['fim_files'] if n)} of "
            f"{total} documents" if fim.level == "file" else f"{psm} PSM + {spm} SPM of {total} documents")
    return ["## Fill-in-the-middle", "",
            f"`pack.fim`: level {fim.level}, rate {fim.rate:g}, SPM share {fim.spm_rate:g}, cut at "
            f"{'code points' if fim.split == 'char' else 'line starts'}: {what} "
            "(`repo_docs.fim`, `repo_docs.fim_files`).", ""]


def write_card(out: Path, cfg: CptCorpusRecipe, counts: dict, shards: list[ShardRow],
               packed: list[PackOutputRow] | None = None, tables: dict | None = None) -> Path | None:
    """``out/README.md``, or nothing (``None``) when there is no text shard: a card whose
    ``data_files`` match no file makes ``datasets.load_dataset`` fail, so it is not written.
    Every split listed has a shard."""
    text_shards = [s for s in shards if s.path.startswith("data/")]
    if not text_shards:
        return None
    splits = sorted({Path(s.path).name.split("-")[0] for s in text_shards},
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
    tables = tables or {}
    if cfg.dedup.keep != "longest" or cfg.dedup.repo_metadata:
        lines += ["## Dedup", "", f"Which copy of a duplicate survives: `dedup.keep` = {cfg.dedup.keep}"
                  + (f" (repo metadata `{Path(cfg.dedup.repo_metadata).name}`)" if cfg.dedup.repo_metadata else "")
                  + ".", ""]
    lines += _mix_lines(tables.get(LanguageMixRow) or [])
    lines += _long_lines(cfg, tables.get(LongBucketRow) or [])
    docs = tables.get(RepoDocRow)
    lines += _fim_lines(cfg, docs if isinstance(docs, Path) else None)
    path = out / "README.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
