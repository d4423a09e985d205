"""Manifest tables of repo-level ordering and sequence packing (``cpt-corpus`` with a tokenizer)."""

from __future__ import annotations

from pydantic import Field

from datagen.records.base import Record


class RepoOrderRow(Record):
    """The import graph of one repository and how its files were ordered."""

    __table__ = "repo_orders"
    __primary_key__ = ("run_id", "repo")

    run_id: str
    repo: str
    split: str = Field(description="train, or validation for a held-out repository")
    files: int
    edges: int = Field(description="resolved import edges between files of the repo")
    imports: int = Field(description="import specifiers seen in supported languages")
    unresolved: int = Field(description="imports that look repo-internal but match no file")
    external: int = Field(description="imports of other packages or the standard library")
    cycles_broken: int = Field(description="import edges dropped to break cycles")
    parse_errors: int = Field(0, description="files with an import-like line that did not parse")


class TokenCountRow(Record):
    """Tokens per repository and language (lang '' = doc headers and EOS)."""

    __table__ = "token_counts"
    __primary_key__ = ("run_id", "split", "repo", "lang")

    run_id: str
    split: str
    repo: str
    lang: str
    files: int
    tokens: int


class PackOutputRow(Record):
    """One packed output: a split at one sequence length."""

    __table__ = "pack_outputs"
    __primary_key__ = ("run_id", "split", "seq_len")

    run_id: str
    split: str
    seq_len: int
    sequences: int
    documents: int = Field(description="repo documents (a repo longer than the window is cut)")
    tokens: int = Field(description="tokens in sequences, padding included")
    padding_tokens: int
    dropped_tokens: int = Field(0, description="tail tokens dropped when pack.remainder=drop")
    tokenizer: str
    folder: str = Field(description="relative to the output folder")


class RepoDocRow(Record):
    """One repo document: the files (in order) whose tokens it holds; ``doc_ids`` in the
    token shards point here, and ``file_ids`` point at ``files.file_id``."""

    __table__ = "repo_docs"
    __primary_key__ = ("run_id", "doc_id")

    run_id: str
    doc_id: str
    split: str
    repo: str
    part: int = Field(description="0, 1, ... when a repo is cut into several documents")
    tokens: int = Field(description="tokens, EOS included")
    file_ids: list[str]
    bucket: str | None = Field(
        None, description="length bucket of the repo's tokens (pack.long.edges), e.g. '32k-128k'"
    )
    long_output: bool | None = Field(
        None, description="in the longest seq_len's output (false: left out by pack.long.share)"
    )
    fim: str | None = Field(None, description="psm / spm: a repo-level fill-in-the-middle document")
    fim_files: int = Field(0, description="files rearranged for fill-in-the-middle inside it (level=file)")


class LanguageMixRow(Record):
    """One language before and after ``mix.weights`` (train split; held-out repos are not mixed)."""

    __table__ = "language_mix"
    __primary_key__ = ("run_id", "lang")

    run_id: str
    lang: str
    weight: float
    files_before: int = Field(description="kept files after dedup")
    files_after: int = Field(description="distinct files kept by the mix")
    downsampled: int = Field(description="files dropped: mix_downsampled")
    repeated: int = Field(description="files written more than once")
    bytes_before: int
    bytes_after: int = Field(description="bytes in the shards, copies included")
    tokens_before: int | None = Field(None, description="file tokens (header + text) before; null without a tokenizer")
    tokens_after: int | None = Field(None, description="file tokens in the packed outputs, copies included")


class LongBucketRow(Record):
    """Repo documents of one length bucket in one split, and what the longest output took."""

    __table__ = "long_buckets"
    __primary_key__ = ("run_id", "split", "bucket")

    run_id: str
    split: str
    bucket: str
    min_tokens: int = Field(description="repo tokens from (inclusive)")
    max_tokens: int | None = Field(None, description="repo tokens up to (exclusive); null = no bound")
    long: bool = Field(description="counts as long for pack.long.share")
    documents: int
    tokens: int
    selected_documents: int = Field(description="documents in the longest seq_len's output")
    selected_tokens: int
    seq_len: int = Field(description="the output the selection is for")
