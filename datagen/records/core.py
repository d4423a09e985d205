"""Records shared by every build: runs and shards, and the CPT corpus's file rows."""

from __future__ import annotations

import datetime as dt
from typing import Literal, get_args

from pydantic import Field

from datagen.records.base import Record

DropReason = Literal[
    # listing: path, size and repo alone
    "gitignored", "vendored", "skipped_dir", "symlink", "not_regular_file", "submodule",
    "too_large", "binary", "generated", "minified", "license", "unreadable",
    "broken_repo", "empty_repo",
    # crawl: content checks
    "empty", "invalid_utf8", "unknown_lang",
    # per-file steps
    "too_few_lines", "max_line_length", "avg_line_length", "alnum_fraction", "data_lines",
    "eval_repo", "contaminated", "syntax_errors", "perplexity", "quality_model",
    # global decisions
    "exact_duplicate", "near_duplicate", "mix_downsampled",
]
"""Why a file was dropped: ``files.reason`` is one of these, optionally followed by
``": detail"`` (e.g. ``broken_repo: fatal: not a git repository``)."""
DROP_REASONS: tuple[str, ...] = get_args(DropReason)


def reason_key(reason: str) -> str:
    """The ``DropReason`` of a ``files.reason`` value (the part before any detail)."""
    return reason.split(":", 1)[0]


class RunRow(Record):
    """One build run. ``run_id`` = recipe hash + input fingerprint, so a re-run matches."""

    __table__ = "runs"
    __primary_key__ = ("run_id",)

    run_id: str
    command: str
    recipe_json: str
    recipe_hash: str
    datagen_version: str
    started_at: dt.datetime
    finished_at: dt.datetime | None = None
    status: Literal["running", "finished", "failed"]


class FileRow(Record):
    """One row for EVERY file the crawl saw, kept or not, with the reason it was dropped."""

    __table__ = "files"
    __primary_key__ = ("run_id", "file_id")

    run_id: str
    file_id: str = Field(description="sha1(repo + '/' + path)[:16]; stable across runs")
    repo: str = Field(description="repository name (its folder name unless the recipe names it)")
    path: str = Field(description="path relative to the repository root (bytes that are not UTF-8 as \\xNN)")
    path_raw: str | None = Field(None, description="the path's bytes in hex when it is not UTF-8 (else null)")
    lang: str | None = None
    license: str | None = Field(None, description="SPDX id of the repository's license")
    bytes: int
    content_hash: str | None = Field(None, description="xxh3-128 of normalized content")
    decision: Literal["kept", "dropped"]
    reason: str | None = Field(None, description="why the file was dropped, e.g. 'binary'")
    duplicate_of: str | None = Field(None, description="file_id of the kept copy")
    mix_repeats: int | None = Field(
        None, description="copies of the file in the shards after the language mix (null: mix off)"
    )
    shard: str | None = Field(None, description="shard path relative to the output folder")
    source: str = Field(description="the input this repo came from (path as given)")
    max_line_length: int | None = None
    avg_line_length: float | None = None
    alnum_fraction: float | None = None
    syntax_error_ratio: float | None = Field(
        None, description="share of lines with tree-sitter ERROR/MISSING nodes (null: no grammar)"
    )
    secrets_redacted: int | None = Field(None, description="secrets and PII replaced in the text")
    secret_kinds: str | None = Field(None, description='JSON counts per kind, e.g. {"email": 2}')
    contamination_source: str | None = Field(
        None, description="benchmark:row (or eval_repos:list:owner/name) the file overlaps"
    )
    contamination_span: str | None = Field(
        None, description="'start:end text' of the file's first stretch matching the benchmark"
    )
    cluster_id: str | None = Field(
        None, description="near-duplicate cluster (its representative's file_id)"
    )
    perplexity: float | None = Field(None, description="under the recipe's scorer model (null: not scored)")
    quality_score: float | None = Field(
        None, description="learned quality, 0-5, under quality_model.path (null: not scored)"
    )


class ClusterRow(Record):
    """One near-duplicate cluster; its members point to it with ``files.cluster_id``."""

    __table__ = "clusters"
    __primary_key__ = ("run_id", "cluster_id")

    run_id: str
    cluster_id: str = Field(description="the representative's file_id")
    size: int = Field(description="files in the cluster (kept representative included)")
    representative: str = Field(description="file_id kept, by dedup.keep (default: longest, then by (repo, path))")


class ShardRow(Record):
    __table__ = "shards"
    __primary_key__ = ("run_id", "path")

    run_id: str
    path: str = Field(description="relative to the output folder")
    rows: int
    bytes: int
    sha256: str


class CodeFile(Record):
    """A row of the CPT text shards (``data/train-*.parquet``)."""

    id: str
    repo: str
    path: str
    lang: str
    license: str | None
    text: str
