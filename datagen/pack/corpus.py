"""The packing stage: text shards in repo order -> tokenized, packed outputs + counts.

Reads ``data/<split>-*.parquet`` (rows grouped by repo, files in repo order), cuts each
repo into documents, tokenizes them in large ``encode_batch`` calls, and writes, per
split: ``tokens/<seq_len>/`` (parquet shards of sequences and datatrove ``.ds`` files,
one per sequence length) and ``tokens/<split>_text_document.bin/.idx`` (Megatron,
documents, independent of the sequence length).
"""

from __future__ import annotations

import difflib
import shutil
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from datagen.config.pack import PackConfig
from datagen.errors import UserError
from datagen.memory import release_memory, steady_heap
from datagen.pack.docs import RepoDoc, SourceRow, build_docs, repo_pieces
from datagen.pack.packer import Packer
from datagen.pack.tokenize import LoadedTokenizer, load_tokenizer
from datagen.pack.writers import DatatroveWriter, MegatronWriter, ParquetTokenWriter, WrittenFile
from datagen.records.base import arrow_schema
from datagen.records.pack import PackOutputRow, RepoDocRow, TokenCountRow


@dataclass
class PackResult:
    token_counts: list[TokenCountRow] = field(default_factory=list)
    docs_file: Path | None = None  # parquet of the RepoDocRows (one per document, with file ids)
    outputs: list[PackOutputRow] = field(default_factory=list)
    files: list[WrittenFile] = field(default_factory=list)


def _shard_batches(shard: Path, batch_rows: int) -> Iterator[pa.RecordBatch]:
    """The shard's rows in small batches, one row group at a time: a reader across row
    groups holds several row groups' text at once (Arrow peak 120 MB instead of 48 MB on
    a 200 MB corpus), so memory followed the shards' largest neighbouring row groups."""
    pf = pq.ParquetFile(shard)
    for i in range(pf.metadata.num_row_groups):
        yield from pf.iter_batches(batch_size=batch_rows, row_groups=[i], use_threads=False,
                                   columns=["id", "repo", "path", "lang", "text"])


def iter_repo_rows(shards: Iterable[Path], batch_rows: int = 64) -> Iterator[tuple[str, list[SourceRow]]]:
    """(repo, rows) in shard order; a repo's rows are consecutive (may span shards)."""
    current: str | None = None
    rows: list[SourceRow] = []
    for shard in shards:
        for batch in _shard_batches(shard, batch_rows):
            for r in batch.to_pylist():
                if r["repo"] != current and rows:
                    yield current, rows
                    rows = []
                current = r["repo"]
                rows.append(SourceRow(r["id"], r["repo"], r["path"], r["lang"] or "", r["text"]))
    if rows:
        yield current, rows


class _SplitOutputs:
    """Writers and packers of one split."""

    def __init__(self, out: Path, split: str, cfg: PackConfig, tok: LoadedTokenizer):
        self.split, self.cfg = split, cfg
        self.packers: dict[int, Packer] = {}
        self.writers: dict[int, list] = {}
        for S in cfg.seq_lens:
            folder = out / "tokens" / str(S)
            self.packers[S] = Packer(S, tok.pad_id, flush_tokens=max(S, 1 << 22),
                                     remainder=cfg.remainder)
            ws: list = []
            if "parquet" in cfg.formats:
                ws.append(ParquetTokenWriter(folder, split, S, cfg.shard_tokens,
                                             cfg.reset_position_ids))
            if "datatrove" in cfg.formats:
                ws.append(DatatroveWriter(folder, split, tok.token_size, tok.name))
            self.writers[S] = ws
        self.megatron = (MegatronWriter(out / "tokens", split, tok.token_size)
                         if "megatron" in cfg.formats else None)
        self.documents = 0
        self.sequences = dict.fromkeys(cfg.seq_lens, 0)
        self.padding = dict.fromkeys(cfg.seq_lens, 0)

    def add(self, doc: RepoDoc) -> None:
        self.documents += 1
        if self.megatron is not None:
            self.megatron.write_doc(doc.tokens)
        for S, packer in self.packers.items():
            for batch in packer.add(doc.tokens, doc.doc_id):
                self._write(S, batch)

    def _write(self, S: int, batch) -> None:
        self.sequences[S] += len(batch)
        self.padding[S] += batch.pad_tokens
        for w in self.writers[S]:
            w.write(batch)
        release_memory()  # the batch's Arrow columns and compression buffers

    def close(self, run_id: str, tokenizer: str) -> tuple[list[PackOutputRow], list[WrittenFile]]:
        rows, files = [], []
        for S, packer in self.packers.items():
            for batch in packer.finish():
                self._write(S, batch)
            for w in self.writers[S]:
                files.extend(w.close())
            rows.append(PackOutputRow(
                run_id=run_id, split=self.split, seq_len=S, sequences=self.sequences[S],
                documents=self.documents, tokens=self.sequences[S] * S,
                padding_tokens=self.padding[S], dropped_tokens=packer.dropped_tokens,
                tokenizer=tokenizer, folder=f"tokens/{S}",
            ))
        if self.megatron is not None:
            files.extend(self.megatron.close())
        return rows, files


class _DocRows:
    """``RepoDocRow``s appended to a parquet file as documents are written: they name
    every packed file, so they are never held for the whole corpus."""

    def __init__(self, path: Path, batch_rows: int = 4096):
        self.path = path
        self.schema = arrow_schema(RepoDocRow)
        self.writer = pq.ParquetWriter(path, self.schema)
        self.pending: list[dict] = []
        self.batch_rows = batch_rows

    def add(self, row: RepoDocRow) -> None:
        self.pending.append(row.model_dump())
        if len(self.pending) >= self.batch_rows:
            self._flush()

    def _flush(self) -> None:
        if self.pending:
            self.writer.write_table(pa.Table.from_pylist(self.pending, schema=self.schema))
            self.pending = []

    def close(self) -> None:
        self._flush()
        self.writer.close()


def check_pack_setup(cfg: PackConfig, repo_names: Iterable[str]) -> None:
    """Refuse, before any work, what would fail or be lost later: a held-out repo name
    that matches no input repo, a doc header that leaves no room in a document."""
    names = sorted(set(repo_names))
    unknown = [r for r in cfg.holdout_repos if r not in names]
    if unknown:
        hints = [f"{r!r} (did you mean {m[0]!r}?)" if (m := difflib.get_close_matches(r, names, 1))
                 else repr(r) for r in unknown]
        raise UserError(f"pack.holdout_repos: no input repo named {', '.join(hints)}; "
                        f"repos: {', '.join(names[:10])}{' ...' if len(names) > 10 else ''}")
    if not cfg.tokenizer or not names:
        return
    tok = load_tokenizer(cfg.tokenizer, cfg.eos_token, cfg.pad_token)
    headers = [cfg.doc_header.format(repo=r) for r in names]
    for name, enc in zip(names, tok.tokenizer.encode_batch(headers, add_special_tokens=False), strict=True):
        if len(enc.ids) + 1 >= cfg.max_doc_tokens:
            raise UserError(
                f"pack.doc_header for repo {name!r} takes {len(enc.ids)} tokens, leaving no room "
                f"in {cfg.max_doc_tokens}-token documents; raise pack.seq_lens or pack.doc_max_tokens")


def pack_corpus(
    out: Path, cfg: PackConfig, run_id: str, shards: dict[str, list[Path]],
    advance: Callable[[int], None] | None = None, docs_file: Path | None = None,
) -> PackResult:
    """Tokenize and pack the text shards of each split (``{"train": [paths], ...}``, in order);
    outputs are named by those split names. The ``repo_docs`` rows go to ``docs_file``
    (default ``out/repo_docs.parquet``); repos stream through, so memory stays flat."""
    assert cfg.tokenizer, "pack_corpus needs pack.tokenizer"
    steady_heap()
    tok = load_tokenizer(cfg.tokenizer, cfg.eos_token, cfg.pad_token)
    tokens_dir = out / "tokens"
    if tokens_dir.exists():
        shutil.rmtree(tokens_dir)  # outputs are rebuilt whole: no stale shard survives
    for S in cfg.seq_lens:
        (tokens_dir / str(S)).mkdir(parents=True, exist_ok=True)
    result = PackResult(docs_file=docs_file or out / "repo_docs.parquet")
    doc_rows = _DocRows(result.docs_file)
    for split, paths in shards.items():
        if not paths:
            continue
        outputs = _SplitOutputs(out, split, cfg, tok)
        counts: dict[tuple[str, str], list[int]] = {}
        for docs in _repo_docs(iter_repo_rows(paths), split, cfg, tok, advance):
            for doc in docs:
                outputs.add(doc)
                doc_rows.add(RepoDocRow(
                    run_id=run_id, doc_id=doc.doc_id, split=split, repo=doc.repo, part=doc.part,
                    tokens=len(doc.tokens), file_ids=list(dict.fromkeys(doc.file_ids))))
                for lang, n in doc.lang_tokens.items():
                    counts.setdefault((doc.repo, lang), [0, 0])[1] += n
            for repo, lang, files in _file_counts(docs):
                counts.setdefault((repo, lang), [0, 0])[0] += files
        rows, files = outputs.close(run_id, tok.name)
        result.outputs.extend(rows)
        result.files.extend(files)
        result.token_counts.extend(
            TokenCountRow(run_id=run_id, split=split, repo=repo, lang=lang, files=f, tokens=t)
            for (repo, lang), (f, t) in sorted(counts.items())
        )
    doc_rows.close()
    return result


def _file_counts(docs: list[RepoDoc]) -> list[tuple[str, str, int]]:
    """Files per (repo, lang) of one repo's documents (a cut file counts once)."""
    seen: dict[str, str] = {}
    for doc in docs:
        for fid, lang in zip(doc.file_ids, doc.file_langs, strict=True):
            seen.setdefault(fid, lang)
    by_lang: dict[str, int] = {}
    for lang in seen.values():
        by_lang[lang] = by_lang.get(lang, 0) + 1
    repo = docs[0].repo if docs else ""
    return [(repo, lang, n) for lang, n in sorted(by_lang.items())]


def _repo_docs(
    repos: Iterator[tuple[str, list[SourceRow]]], split: str, cfg: PackConfig,
    tok: LoadedTokenizer, advance: Callable[[int], None] | None,
) -> Iterator[list[RepoDoc]]:
    """Documents of each repo, tokenizing many repos per ``encode_batch`` call."""
    batch: list[tuple[str, list[SourceRow], list[str]]] = []
    size = 0

    def flush() -> Iterator[list[RepoDoc]]:
        encoded = tok.encode_pieces([pieces for _, _, pieces in batch])
        for (repo, rows, _), ids in zip(batch, encoded, strict=True):
            yield build_docs(repo, split, rows, ids, tok.eos_id, cfg.max_doc_tokens)
            if advance:
                advance(len(rows))

    for repo, rows in repos:
        pieces = repo_pieces(repo, rows, cfg.doc_header, cfg.file_header)
        batch.append((repo, rows, pieces))
        size += sum(len(p) for p in pieces)
        if size >= cfg.batch_bytes:
            yield from flush()
            batch, size = [], 0
            release_memory()  # the batch's text and encodings: freed, and given back
    if batch:
        yield from flush()
