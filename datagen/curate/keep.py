"""Which copy survives dedup (``dedup.keep``), for exact and near duplicates alike.

Rules, each an order over the copies (the first is kept); every rule ends in
(repo, path, file_id), so the choice never depends on row order:

- ``longest`` (default, today's behaviour byte for byte): near duplicates keep the
  longest file (bytes); exact duplicates share their normalized content, and keep the
  first by (repo, path).
- ``newest``: the copy in the repo with the latest ``date`` of ``dedup.repo_metadata``
  (repos without one last), then the longest.
- ``stars``: the copy in the repo with the most ``stars``, then the longest.
- ``path``: the first by (repo, path), for both.

``dedup.repo_metadata`` is a JSON or YAML mapping ``repo -> {stars, date}``, or JSONL /
CSV rows with a ``repo`` column; ``date`` is an ISO date or date-time (a commit or push
date), read as UTC when it names no zone.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import polars as pl
import yaml

from datagen.errors import UserError

META_FIELDS = ("stars", "date")


@dataclass(frozen=True)
class KeepRule:
    """A ``dedup.keep`` rule with the repo metadata it reads (repo -> (stars, epoch seconds))."""

    name: str = "longest"
    meta: dict[str, tuple[int | None, int | None]] = field(default_factory=dict)
    digest: str = ""  # sha256 of the metadata file ('' without one)

    @property
    def default(self) -> bool:
        return self.name == "longest"

    def exact_order(self, alias: str = "") -> str:
        """SQL ORDER BY of one content hash's copies (``_keep_meta`` joined as ``m``)."""
        if self.name in ("longest", "path"):
            return f"{alias}repo, {alias}path"
        return f"{self._meta_sql()}, {alias}bytes DESC, {alias}repo, {alias}path, {alias}file_id"

    def _meta_sql(self) -> str:
        return "m.date DESC NULLS LAST" if self.name == "newest" else "m.stars DESC NULLS LAST"

    def register(self, con: duckdb.DuckDBPyConnection) -> None:
        """Table ``_keep_meta(repo, stars, date)`` for ``exact_order``."""
        rows = sorted((r, s, d) for r, (s, d) in self.meta.items())
        con.execute("CREATE OR REPLACE TEMP TABLE _keep_meta (repo VARCHAR, stars BIGINT, date BIGINT)")
        if rows:
            con.executemany("INSERT INTO _keep_meta VALUES (?, ?, ?)", rows)

    def sort_members(self, members: pl.DataFrame) -> pl.DataFrame:
        """Near-dedup members (``label, bytes, repo, path, file_id``) sorted so that the
        first of each component is the one this rule keeps."""
        if self.name == "path":
            return members.sort(["label", "repo", "path", "file_id"])
        if self.name == "longest":
            return members.sort(["label", "bytes", "repo", "path", "file_id"],
                                descending=[False, True, False, False, False])
        col = "date" if self.name == "newest" else "stars"
        values = {r: m[1] if col == "date" else m[0] for r, m in self.meta.items()}
        ranked = members.with_columns(
            pl.col("repo").replace_strict(values, default=None, return_dtype=pl.Int64).alias("_meta"))
        return ranked.sort(["label", "_meta", "bytes", "repo", "path", "file_id"],
                           descending=[False, True, True, False, False, False], nulls_last=True).drop("_meta")

    @property
    def cache_key(self) -> str:
        """Names the near-dedup cluster file of this rule (the default keeps the old name)."""
        return "" if self.default else f"-{self.name}-{self.digest[:12]}"


def keep_rule(name: str, metadata: str | None) -> KeepRule:
    """The rule ``name`` with ``metadata`` read (UserError naming the file on a bad one)."""
    if not metadata:
        return KeepRule(name)
    path = Path(metadata).expanduser()
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UserError(f"dedup.repo_metadata: cannot read {metadata}: {exc.strerror}") from None
    try:
        rows = _rows(path.suffix.lower(), raw.decode("utf-8"))
        meta = {str(r["repo"]): (_stars(r.get("stars")), _epoch(r.get("date"))) for r in rows}
    except (ValueError, KeyError, TypeError, yaml.YAMLError) as exc:
        raise UserError(f"dedup.repo_metadata: {metadata}: {exc}") from None
    return KeepRule(name, meta, hashlib.sha256(raw).hexdigest())


def _rows(suffix: str, text: str) -> list[dict]:
    if suffix == ".csv":
        return list(csv.DictReader(text.splitlines()))
    if suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    data = json.loads(text) if suffix == ".json" else yaml.safe_load(text)
    if isinstance(data, dict):
        return [{"repo": k, **(v or {})} for k, v in data.items()]
    if isinstance(data, list):
        return data
    raise ValueError("expected a mapping repo -> {stars, date} or a list of rows with 'repo'")


def _stars(value: object) -> int | None:
    if value in (None, ""):
        return None
    return int(value)


def _epoch(value: object) -> int | None:
    """Seconds since 1970 of an ISO date / date-time (UTC when no zone is given)."""
    if value in (None, ""):
        return None
    if isinstance(value, dt.datetime):
        when = value
    elif isinstance(value, dt.date):
        when = dt.datetime(value.year, value.month, value.day)
    else:
        when = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return int(when.timestamp())
