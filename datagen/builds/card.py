"""The dataset card (``OUT/README.md``) with the YAML header the Hugging Face Hub reads."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import yaml

from datagen import __version__
from datagen.config.base import recipe_hash
from datagen.config.cpt import CptCorpusRecipe
from datagen.records import LanguageMixRow, LongBucketRow, PackOutputRow, RepoDocRow, ShardRow
from datagen.records.hub import size_category

# SPDX id (as ``datagen.crawl.license`` detects it) -> the Hub's license id. A license the
# Hub does not list is ``other`` in the header (its SPDX id stays in the card's table).
HUB_LICENSES = {
    "MIT": "mit", "Apache-2.0": "apache-2.0", "BSD-2-Clause": "bsd-2-clause", "BSD-3-Clause": "bsd-3-clause",
    "ISC": "isc", "Zlib": "zlib", "Unlicense": "unlicense", "CC0-1.0": "cc0-1.0", "BSL-1.0": "bsl-1.0",
    "MPL-2.0": "mpl-2.0", "EPL-2.0": "epl-2.0", "EPL-1.0": "epl-1.0", "Artistic-2.0": "artistic-2.0",
    "GPL-2.0": "gpl-2.0", "GPL-3.0": "gpl-3.0", "LGPL-2.1": "lgpl-2.1", "LGPL-3.0": "lgpl-3.0",
    "AGPL-3.0": "agpl-3.0", "GPL-1.0": "gpl", "LGPL-2.0": "lgpl", "unknown": "unknown",
}


def hub_licenses(spdx_ids: list[str] | set[str]) -> list[str]:
    """The Hub's ``license:`` list for files under these SPDX ids (sorted, each once);
    ``-only`` / ``-or-later`` suffixes name the same Hub license."""
    ids = set()
    for spdx in spdx_ids:
        base = spdx.removesuffix("-only").removesuffix("-or-later").removesuffix("+")
        ids.add(HUB_LICENSES.get(base, "other"))
    return sorted(ids)


def build_date() -> str:
    """The build's UTC day; ``SOURCE_DATE_EPOCH`` (reproducible builds) fixes it."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = dt.datetime.fromtimestamp(int(epoch), dt.UTC) if epoch else dt.datetime.now(dt.UTC)
    return when.strftime("%Y-%m-%d")


def _provenance_lines(cfg: CptCorpusRecipe, counts: dict, run_id: str | None) -> list[str]:
    """Where the corpus came from: recipe (hash), inputs, datagen version, run, date."""
    inputs = ", ".join(f"`{i}`" for i in cfg.inputs) or "(none)"
    return ["## Provenance", "",
            "| | |", "|---|---|",
            f"| recipe | `{cfg.name}`, hash `{recipe_hash(cfg)}` (`runs.recipe_json` holds it whole) |",
            f"| inputs | {inputs} ({counts.get('repos', 0)} repos) |",
            f"| datagen | {__version__} |",
            *([f"| run | `{run_id}` (table `runs`) |"] if run_id else []),
            f"| built | {build_date()} (UTC) |", ""]


def _on(section: object) -> str:
    return "on" if getattr(section, "enabled", False) else "off"


def _how_lines(cfg: CptCorpusRecipe, counts: dict, text_shards: list[ShardRow], packed: bool) -> list[str]:
    """The build's steps in order, with the recipe's switches and the manifest's counts."""
    dropped = sum(counts["dropped_by_reason"].values())
    near = cfg.dedup.near
    lines = [
        "## How it was made", "",
        f"1. Crawl: {counts.get('repos', 0)} repos, {counts['seen']} files seen "
        f"({'`.gitignore` respected, ' if cfg.crawl.respect_gitignore else ''}files over "
        f"{cfg.crawl.max_file_bytes} bytes skipped, licenses allowed: `{cfg.crawl.licenses}`).",
        f"2. Per-file checks: heuristic quality {_on(cfg.quality)}, decontamination {_on(cfg.decontam)}, "
        f"syntax {_on(cfg.syntax)}, secrets {_on(cfg.secrets)}, learned quality {_on(cfg.quality_model)}, "
        f"perplexity {_on(cfg.perplexity)}.",
        f"3. Dedup: exact {'on' if cfg.dedup.exact else 'off'}, near {_on(near)}"
        + (f" (MinHash {near.bands}x{near.rows}, {near.ngram}-grams, Jaccard >= {near.threshold:g})"
           if near.enabled else "") + f"; the copy kept: `{cfg.dedup.keep}`."
        + (" Language mix: `mix.weights`." if cfg.mix.enabled else ""),
        f"4. Shards: {counts['kept']} kept files ({dropped} dropped) in {len(text_shards)} parquet shard(s), "
        f"each repo's files in {'dependency' if cfg.pack.order == 'imports' else cfg.pack.order} order.",
    ]
    if packed:
        lines.append(f"5. Tokens: `{Path(str(cfg.pack.tokenizer)).name}`, sequences of {cfg.pack.seq_lens} tokens.")
    return [*lines, "", "Every file seen, with the reason it was dropped, is a row of `manifest.duckdb`.", ""]


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
               packed: list[PackOutputRow] | None = None, tables: dict | None = None,
               run_id: str | None = None) -> Path | None:
    """``out/README.md``, or nothing (``None``) when there is no text shard: a card whose
    ``data_files`` match no file makes ``datasets.load_dataset`` fail, so it is not written.
    Every split listed has a shard."""
    text_shards = [s for s in shards if s.path.startswith("data/")]
    if not text_shards:
        return None
    splits = sorted({Path(s.path).name.split("-")[0] for s in text_shards},
                    key=lambda x: (x != cfg.shards.split, x))
    licenses = counts["licenses"]
    hub = hub_licenses(set(licenses))
    langs = [lang for lang, _, _ in counts["by_lang"] if lang]
    header = {
        "license": hub[0] if len(hub) == 1 else hub,
        "language": ["code"],  # the Hub's code for source code (natural languages are ISO codes)
        "pretty_name": cfg.card.pretty_name,
        "tags": list(dict.fromkeys([*cfg.card.tags, *langs])),
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
    lines += ["", "| license (SPDX) | Hub id | files |", "|---|---|---:|"]
    lines += [f"| {lic} | {hub_licenses([lic])[0]} | {n} |" for lic, n in sorted(licenses.items())]
    lines += ["", f"Shards: {len(text_shards)} ({sum(s.rows for s in text_shards)} rows, "
              f"{sum(s.bytes for s in text_shards)} bytes on disk).", ""]
    lines += _how_lines(cfg, counts, text_shards, bool(packed))
    lines += _provenance_lines(cfg, counts, run_id)
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
