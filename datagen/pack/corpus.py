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
from datagen.pack.docs import RepoDoc, SourceRow, build_docs, file_piece, repo_pieces
from datagen.pack.fim import (
    FimIds,
    choose_in,
    doc_key,
    file_level_ids,
    file_level_pieces,
    fim_ids,
    rearrange_doc,
)
from datagen.pack.long import BucketCounts, LongSpool, bucket_of, buckets
from datagen.pack.packer import Packer
from datagen.pack.tokenize import LoadedTokenizer, load_tokenizer
from datagen.pack.writers import DatatroveWriter, MegatronWriter, ParquetTokenWriter, WrittenFile, file_record
from datagen.records.base import arrow_schema
from datagen.records.pack import LongBucketRow, PackOutputRow, RepoDocRow, TokenCountRow
from datagen.runtime.atomic import atomic_path
from datagen.runtime.memory import release_memory, steady_heap

HELD_OUT = "validation"  # the split of pack.holdout_repos (datagen.pack.ordering.split_of)


@dataclass
class PackResult:
    token_counts: list[TokenCountRow] = field(default_factory=list)
    docs_file: Path | None = None  # parquet of the RepoDocRows (one per document, with file ids)
    outputs: list[PackOutputRow] = field(default_factory=list)
    files: list[WrittenFile] = field(default_factory=list)
    long_buckets: list[LongBucketRow] = field(default_factory=list)
    # split -> lang -> tokens of each file once (mix repeats not counted): the mix's "before"
    unique_tokens: dict[str, dict[str, int]] = field(default_factory=dict)
    fim: dict[str, int] = field(default_factory=dict)  # psm / spm -> files (level=file) or documents (repo)


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

    def __init__(self, out: Path, split: str, cfg: PackConfig, tok: LoadedTokenizer, spool_dir: Path,
                 select_long: bool = True):
        self.split, self.cfg = split, cfg
        # pack.long.share: the longest output's documents wait in a spool for the choice
        self.long_S = max(cfg.seq_lens) if cfg.long.share is not None and select_long else None
        self.spool = LongSpool(spool_dir / f"long-{split}.i32", cfg.long) if self.long_S else None
        self.buckets = BucketCounts()
        self.doc_buckets: dict[str, tuple[str, int]] = {}  # doc_id -> (bucket, tokens), spooled docs only
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
        self.documents = dict.fromkeys(cfg.seq_lens, 0)
        self.sequences = dict.fromkeys(cfg.seq_lens, 0)
        self.padding = dict.fromkeys(cfg.seq_lens, 0)
        self.chosen: set[str] | None = None  # documents of the long output (pack.long.share)

    def add(self, doc: RepoDoc) -> None:
        if self.megatron is not None:
            self.megatron.write_doc(doc.tokens)
        for S, packer in self.packers.items():
            if S == self.long_S:
                self.spool.add(doc.doc_id, doc.long, doc.tokens)
                self.doc_buckets[doc.doc_id] = (doc.bucket or "", len(doc.tokens))
                continue
            self.documents[S] += 1
            for batch in packer.add(doc.tokens, doc.doc_id):
                self._write(S, batch)
        if self.spool is None:
            self.buckets.add(doc.bucket or "", len(doc.tokens), True)

    def _pack_long(self) -> None:
        """The longest output from the spool: every long document, short ones to the share."""
        S = self.long_S
        self.chosen = self.spool.select()
        for doc_id, (bucket, n) in self.doc_buckets.items():
            self.buckets.add(bucket, n, doc_id in self.chosen)
        for doc_id, tokens in self.spool.replay(self.chosen):
            self.documents[S] += 1
            for batch in self.packers[S].add(tokens, doc_id):
                self._write(S, batch)
        self.spool.close()

    def _write(self, S: int, batch) -> None:
        self.sequences[S] += len(batch)
        self.padding[S] += batch.pad_tokens
        for w in self.writers[S]:
            w.write(batch)
        release_memory()  # the batch's Arrow columns and compression buffers

    def close(self, run_id: str, tokenizer: str) -> tuple[list[PackOutputRow], list[WrittenFile]]:
        rows, files = [], []
        if self.spool is not None:
            self._pack_long()
        for S, packer in self.packers.items():
            for batch in packer.finish():
                self._write(S, batch)
            for w in self.writers[S]:
                files.extend(w.close())
            rows.append(PackOutputRow(
                run_id=run_id, split=self.split, seq_len=S, sequences=self.sequences[S],
                documents=self.documents[S], tokens=self.sequences[S] * S,
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

    def mark_long(self, chosen: dict[str, set[str]]) -> None:
        """Fill ``long_output`` (pack.long.share): rewrite the file, a row group at a time."""
        with (atomic_path(self.path) as tmp, pq.ParquetFile(self.path) as src,
              pq.ParquetWriter(tmp, self.schema) as dst):
            for batch in src.iter_batches(batch_size=self.batch_rows):
                rows = batch.to_pylist()
                for r in rows:
                    # a split without a choice (held out) has every document in the long output
                    r["long_output"] = r["doc_id"] in chosen[r["split"]] if r["split"] in chosen else True
                dst.write_table(pa.Table.from_pylist(rows, schema=self.schema))


def check_pack_setup(cfg: PackConfig, repo_names: Iterable[str]) -> None:
    """Refuse, before any work, what would fail or be lost later: a held-out repo name
    that matches no input repo, a doc header that leaves no room in a document, FIM
    tokens the tokenizer lacks."""
    names = sorted(set(repo_names))
    unknown = [r for r in cfg.holdout_repos if r not in names]
    if unknown:
        hints = [f"{r!r} (did you mean {m[0]!r}?)" if (m := difflib.get_close_matches(r, names, 1))
                 else repr(r) for r in unknown]
        raise UserError(f"pack.holdout_repos: no input repo named {', '.join(hints)}; "
                        f"repos: {', '.join(names[:10])}{' ...' if len(names) > 10 else ''}")
    if not cfg.tokenizer:
        return
    tok = load_tokenizer(cfg.tokenizer, cfg.eos_token, cfg.pad_token)
    if cfg.fim.rate > 0:
        fim_ids(tok.tokenizer, cfg.fim, cfg.tokenizer)
    if not names:
        return
    headers = [cfg.doc_header.format(repo=r) for r in names]
    for name, enc in zip(names, tok.tokenizer.encode_batch(headers, add_special_tokens=False), strict=True):
        if len(enc.ids) + 1 >= cfg.max_doc_tokens:
            raise UserError(
                f"pack.doc_header for repo {name!r} takes {len(enc.ids)} tokens, leaving no room "
                f"in {cfg.max_doc_tokens}-token documents; raise pack.seq_lens or pack.doc_max_tokens")


def _fim_setup(tok: LoadedTokenizer, cfg: PackConfig, tokens_dir: Path, result: PackResult) -> FimIds | None:
    """The FIM token ids (None: FIM off); a tokenizer given new tokens is written beside the
    outputs (``tokens/tokenizer.json``), as the ids in them need it."""
    if cfg.fim.rate <= 0:
        return None
    ids = fim_ids(tok.tokenizer, cfg.fim, cfg.tokenizer)
    if ids.added:
        tok.vocab_size = tok.tokenizer.get_vocab_size(with_added_tokens=True)
        path = tokens_dir / "tokenizer.json"
        tok.tokenizer.save(str(path))
        result.files.append(file_record(path, 1))
    return ids


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
    fim = _fim_setup(tok, cfg, tokens_dir, result)
    doc_rows = _DocRows(result.docs_file)
    chosen: dict[str, set[str]] = {}
    for split, paths in shards.items():
        if not paths:
            continue
        # held-out repos stay as they are, for codebase perplexity: no FIM, every document long
        held = split == HELD_OUT
        outputs = _SplitOutputs(out, split, cfg, tok, result.docs_file.parent, select_long=not held)
        counts: dict[tuple[str, str], list[int]] = {}
        unique = result.unique_tokens.setdefault(split, {})
        for docs in _repo_docs(iter_repo_rows(paths), split, cfg, tok, advance, None if held else fim, unique):
            for doc in docs:
                outputs.add(doc)
                doc_rows.add(RepoDocRow(
                    run_id=run_id, doc_id=doc.doc_id, split=split, repo=doc.repo, part=doc.part,
                    tokens=len(doc.tokens), file_ids=list(dict.fromkeys(doc.file_ids)), bucket=doc.bucket,
                    fim=doc.fim, fim_files=doc.fim_files))
                for lang, n in doc.lang_tokens.items():
                    counts.setdefault((doc.repo, lang), [0, 0])[1] += n
                if doc.fim:
                    result.fim[doc.fim] = result.fim.get(doc.fim, 0) + 1
                elif doc.fim_files:
                    result.fim["file"] = result.fim.get("file", 0) + doc.fim_files
            for repo, lang, files in _file_counts(docs):
                counts.setdefault((repo, lang), [0, 0])[0] += files
        rows, files = outputs.close(run_id, tok.name)
        if outputs.chosen is not None:
            chosen[split] = outputs.chosen
        result.long_buckets.extend(_bucket_rows(run_id, split, cfg, outputs.buckets))
        result.outputs.extend(rows)
        result.files.extend(files)
        result.token_counts.extend(
            TokenCountRow(run_id=run_id, split=split, repo=repo, lang=lang, files=f, tokens=t)
            for (repo, lang), (f, t) in sorted(counts.items())
        )
    doc_rows.close()
    if cfg.long.share is not None:
        doc_rows.mark_long(chosen)
    return result


def _bucket_rows(run_id: str, split: str, cfg: PackConfig, counts: BucketCounts) -> list[LongBucketRow]:
    """One row per bucket of ``pack.long.edges`` (empty ones too, so the card shows the edges)."""
    rows = []
    for b in buckets(cfg.long):
        docs, tokens, sel_docs, sel_tokens = counts.docs.get(b.label, [0, 0, 0, 0])
        rows.append(LongBucketRow(run_id=run_id, split=split, bucket=b.label, min_tokens=b.low,
                                  max_tokens=b.high, long=b.long, documents=docs, tokens=tokens,
                                  selected_documents=sel_docs, selected_tokens=sel_tokens,
                                  seq_len=max(cfg.seq_lens)))
    return rows


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


def _copies(rows: list[SourceRow]) -> list[int]:
    """Copy number of each row in its repo (0 = first; the mix repeats files)."""
    seen: dict[str, int] = {}
    out = []
    for r in rows:
        out.append(seen.get(r.id, 0))
        seen[r.id] = out[-1] + 1
    return out


@dataclass
class _RepoBatch:
    """One repo on its way through ``_repo_docs``."""

    repo: str
    rows: list[SourceRow]
    pieces: list[str]  # doc header, then one per row
    plans: list | None = None  # level=file: the FIM choice of each row
    fim_parts: list = field(default_factory=list)  # level=file: (text, context) of each FIM part
    piece_ids: list = field(default_factory=list)
    docs: list[RepoDoc] = field(default_factory=list)


def _repo_docs(
    repos: Iterator[tuple[str, list[SourceRow]]], split: str, cfg: PackConfig,
    tok: LoadedTokenizer, advance: Callable[[int], None] | None,
    fim: FimIds | None = None, unique: dict[str, int] | None = None,
) -> Iterator[list[RepoDoc]]:
    """Documents of each repo, tokenizing many repos per ``encode_batch`` call; FIM and
    length buckets applied. ``unique`` gets the tokens of each file once, per language."""
    batch: list[_RepoBatch] = []
    size = 0
    table = buckets(cfg.long)

    def flush() -> Iterator[list[RepoDoc]]:
        file_level = fim is not None and cfg.fim.level == "file"
        groups = [_fim_file_pieces(b, cfg) if file_level else b.pieces for b in batch]
        all_parts = [p for b in batch for p in b.fim_parts]
        part_ids = tok.encode_parts([t for t, _ in all_parts], [c for _, c in all_parts]) if all_parts else []
        k = 0
        for b, ids in zip(batch, tok.encode_pieces(groups), strict=True):
            _build(b, ids, part_ids[k : k + len(b.fim_parts)], split, cfg, tok, fim, unique)
            k += len(b.fim_parts)
        if fim is not None and cfg.fim.level == "repo":
            _fim_repo_level(batch, cfg, tok, fim)
        for b in batch:
            bucket = bucket_of(sum(len(d.tokens) for d in b.docs), table)
            for d in b.docs:
                d.bucket, d.long = bucket.label, bucket.long
            yield b.docs
            if advance:
                advance(len({r.id for r in b.rows}))

    for repo, rows in repos:
        pieces = repo_pieces(repo, rows, cfg.doc_header, cfg.file_header)
        batch.append(_RepoBatch(repo, rows, pieces))
        size += sum(len(p) for p in pieces)
        if size >= cfg.batch_bytes:
            yield from flush()
            batch, size = [], 0
            release_memory()  # the batch's text and encodings: freed, and given back
    if batch:
        yield from flush()


def _headers(b: _RepoBatch, cfg: PackConfig) -> list[str]:
    return [cfg.file_header.format(repo=r.repo, path=r.path, lang=r.lang) for r in b.rows]


def _fim_file_pieces(b: _RepoBatch, cfg: PackConfig) -> list[str]:
    headers = _headers(b, cfg)
    bodies = [p[len(h):] for p, h in zip(b.pieces[1:], headers, strict=True)]
    flat, b.plans, b.fim_parts = file_level_pieces(headers, bodies, _copies(b.rows), cfg.fim)
    return [b.pieces[0], *flat]


def _build(b: _RepoBatch, ids: list, part_ids: list, split: str, cfg: PackConfig, tok: LoadedTokenizer,
           fim: FimIds | None, unique: dict[str, int] | None) -> None:
    """Documents of one tokenized repo (file-level FIM ids joined first)."""
    header = ids[0]
    done = [False] * len(b.rows)
    if b.plans is not None:
        room = cfg.max_doc_tokens - len(header) - 1
        files, done = file_level_ids(ids[1:], part_ids, b.plans, fim, room)
        ids = [header, *files]
    b.piece_ids = ids
    b.docs = build_docs(b.repo, split, b.rows, ids, tok.eos_id, cfg.max_doc_tokens)
    if b.plans is not None:
        for d in b.docs:
            d.fim_files = len({i for i in d.file_rows if done[i]})
    if unique is not None:
        for row, copy, piece in zip(b.rows, _copies(b.rows), ids[1:], strict=True):
            if copy == 0:
                unique[row.lang] = unique.get(row.lang, 0) + len(piece)


def _fim_repo_level(batch: list[_RepoBatch], cfg: PackConfig, tok: LoadedTokenizer, fim: FimIds) -> None:
    """Repo-level FIM: in each chosen document, one whole file holds the middle; its four
    pieces are tokenized in one call for the batch, then the document is rearranged (or
    left as is when the result would pass ``doc_max_tokens``)."""
    todo: list[tuple[_RepoBatch, RepoDoc, int, object]] = []
    texts: list[str] = []
    contexts: list[str] = []
    for b in batch:
        headers = _headers(b, cfg)
        for d in b.docs:
            whole = [j for j, (i, (lo, hi)) in enumerate(zip(d.file_rows, d.spans, strict=True))
                     if hi - lo == len(b.piece_ids[i + 1])]
            bodies = [b.pieces[d.file_rows[j] + 1][len(headers[d.file_rows[j]]):] for j in whole]
            pick = choose_in(doc_key([b.pieces[i + 1] for i in d.file_rows]), bodies, cfg.fim)
            if pick is None:
                continue
            j, choice = pick
            i = d.file_rows[whole[j]]
            body = bodies[j]
            before = b.pieces[i][-1:]  # the text's last character before this file: its context
            for part in (headers[i], body[: choice.start], body[choice.start : choice.end], body[choice.end :]):
                texts.append(part)
                contexts.append(before)
                before = part[-1:] or before
            todo.append((b, d, whole[j], choice))
    encoded = tok.encode_parts(texts, contexts) if texts else []
    for k, (_b, d, j, choice) in enumerate(todo):
        ids = [None, *encoded[4 * k : 4 * k + 4]]
        span = d.spans[j]
        new = rearrange_doc(d.tokens, span, d.spans[0][0], ids[1:], fim, choice.spm)
        if len(new) > cfg.max_doc_tokens:
            continue
        lang = d.file_langs[j]
        d.lang_tokens[""] = d.lang_tokens.get("", 0) + 3
        d.lang_tokens[lang] = d.lang_tokens.get(lang, 0) + sum(len(x) for x in ids[1:]) - (span[1] - span[0])
        d.tokens = new
        d.fim = "spm" if choice.spm else "psm"


def file_tokens(cfg: PackConfig, parquet: Path) -> dict[str, int]:
    """Tokens per language of the files in ``parquet`` (``id, repo, path, lang, text``), each
    as packing would write it (file header + text), a row group at a time."""
    tok = load_tokenizer(cfg.tokenizer, cfg.eos_token, cfg.pad_token)
    out: dict[str, int] = {}
    for batch in _shard_batches(parquet, 256):
        rows = [SourceRow(r["id"], r["repo"], r["path"], r["lang"] or "", r["text"]) for r in batch.to_pylist()]
        for row, ids in zip(rows, tok._encode_ids([file_piece(r, cfg.file_header) for r in rows]), strict=True):
            out[row.lang] = out.get(row.lang, 0) + len(ids)
    return out
