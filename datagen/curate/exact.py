"""Exact dedup over the crawl output: one representative per normalized-content hash.

Rule: among kept files with the same ``content_hash`` the first by (repo, path) is kept;
every other copy is dropped with reason ``exact_duplicate`` and ``duplicate_of`` = the
kept copy's file_id. Runs in DuckDB, so it works out of core.
"""

from __future__ import annotations

import duckdb


def exact_dedup(con: duckdb.DuckDBPyConnection, table: str = "files") -> int:
    """Mark exact duplicates in ``table``; returns how many were dropped."""
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE _exact AS
        SELECT file_id, rep FROM (
            SELECT file_id,
                   first(file_id) OVER (PARTITION BY content_hash ORDER BY repo, path) AS rep
            FROM {table}
            WHERE decision = 'kept' AND content_hash IS NOT NULL
        ) WHERE file_id <> rep
        """
    )
    con.execute(
        f"""
        UPDATE {table} SET decision = 'dropped', reason = 'exact_duplicate', duplicate_of = e.rep
        FROM _exact e WHERE {table}.file_id = e.file_id
        """
    )
    (n,) = con.execute("SELECT count(*) FROM _exact").fetchone()
    con.execute("DROP TABLE _exact")
    return n
