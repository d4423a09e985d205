"""The DuckDB manifest every build writes to ``<out>/manifest.duckdb``."""

from datagen.manifest.db import Manifest, manifest_ddl, query, query_all

__all__ = ["Manifest", "manifest_ddl", "query", "query_all"]
