"""Typed records (source of ``schemas/``). Import record classes from here."""

from datagen.records.base import Record
from datagen.records.core import CodeFile, FileRow, RunRow, ShardRow
from datagen.records.pack import PackOutputRow, RepoDocRow, RepoOrderRow, TokenCountRow

# Every manifest table, in DDL order. Later builds append their records here.
TABLES: list[type[Record]] = [
    RunRow, FileRow, ShardRow, RepoOrderRow, RepoDocRow, TokenCountRow, PackOutputRow,
]
# Records that are rows of an output dataset rather than manifest tables.
DATASET_RECORDS: list[type[Record]] = [CodeFile]

__all__ = [
    "Record", "RunRow", "FileRow", "ShardRow", "CodeFile", "RepoOrderRow", "RepoDocRow", "TokenCountRow",
    "PackOutputRow", "TABLES", "DATASET_RECORDS",
]
