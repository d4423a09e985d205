"""Global dedup decisions over the crawl output, in the build's DuckDB ``files`` table.

- ``exact_dedup``: one representative per normalized-content hash. Among kept files with
  the same ``content_hash`` the one ``dedup.keep`` names is kept (default: the first by
  (repo, path); ``datagen.curate.keep``); every other copy is dropped with reason
  ``exact_duplicate`` and ``duplicate_of`` = the kept copy's file_id.
- ``apply_near_dedup``: after exact dedup, cluster near-duplicates of the kept files
  (``datagen.curate.near_dedup``) and record the decisions (+ a ``clusters`` table).

Both run in DuckDB, so they work out of core.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
from datatrove.executor import LocalPipelineExecutor

from datagen.config.curate import NearDedupConfig
from datagen.curate.keep import KeepRule
from datagen.curate.near_dedup import near_dedup, useful_workers


def exact_dedup(con: duckdb.DuckDBPyConnection, table: str = "files", keep: KeepRule | None = None) -> int:
    """Mark exact duplicates in ``table``; returns how many were dropped."""
    keep = keep or KeepRule()
    join = ""
    if keep.name in ("newest", "stars"):
        keep.register(con)
        join = "LEFT JOIN _keep_meta m ON m.repo = f.repo"
    con.execute(
        f"""
        CREATE OR REPLACE TEMP TABLE _exact AS
        SELECT file_id, rep FROM (
            SELECT f.file_id,
                   first(f.file_id) OVER (PARTITION BY f.content_hash ORDER BY {keep.exact_order('f.')}) AS rep
            FROM {table} f {join}
            WHERE f.decision = 'kept' AND f.content_hash IS NOT NULL
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


def apply_near_dedup(
    con: duckdb.DuckDBPyConnection,
    crawl_files: list[str],
    work: Path,
    cfg: NearDedupConfig,
    workers: int,
    executor: type[LocalPipelineExecutor] = LocalPipelineExecutor,
    keep: KeepRule | None = None,
) -> int:
    """Drop near-duplicates (reason ``near_duplicate``, ``duplicate_of`` = the cluster's
    representative), set ``cluster_id`` on every member, and fill table ``clusters``.
    Files already dropped in ``files`` (e.g. exact duplicates) take no part. Returns the
    number of files dropped."""
    exclude = work / "near_dedup_exclude.parquet"
    con.execute(
        f"COPY (SELECT file_id FROM files WHERE decision = 'dropped' ORDER BY file_id) TO '{exclude}' (FORMAT parquet)"
    )
    parquets = [Path(p) for p in crawl_files]
    (total,) = con.execute("SELECT count(*) FROM files WHERE decision = 'kept'").fetchone()
    clusters = near_dedup(parquets, work / "near_dedup", cfg, useful_workers(parquets, workers),
                          exclude=exclude, executor=executor, keep=keep, total=total)
    con.execute("CREATE OR REPLACE TEMP TABLE _near AS SELECT * FROM read_parquet(?)", [str(clusters)])
    con.execute("UPDATE files SET cluster_id = n.cluster_id FROM _near n WHERE files.file_id = n.file_id")
    con.execute(
        "UPDATE files SET decision = 'dropped', reason = 'near_duplicate', "
        "duplicate_of = n.duplicate_of FROM _near n "
        "WHERE files.file_id = n.file_id AND n.duplicate_of IS NOT NULL"
    )
    con.execute(
        "CREATE OR REPLACE TABLE clusters AS SELECT cluster_id, count(*)::BIGINT AS size, "
        "cluster_id AS representative FROM _near GROUP BY cluster_id ORDER BY cluster_id"
    )
    (n,) = con.execute("SELECT count(*) FROM _near WHERE duplicate_of IS NOT NULL").fetchone()
    con.execute("DROP TABLE _near")
    return n
