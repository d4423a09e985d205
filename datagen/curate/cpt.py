"""The curation steps of the CPT corpus build, as the pipeline wires them.

- ``file_steps``: per-file steps for the crawl stage (decontamination, syntax, secrets).
- ``apply_near_dedup``: after exact dedup, cluster near-duplicates of the kept files and
  record the decisions in the build's DuckDB ``files`` table (+ a ``clusters`` table).
"""

from __future__ import annotations

from pathlib import Path

import duckdb
from datatrove.executor import LocalPipelineExecutor

from datagen.config.curate import DecontamConfig, NearDedupConfig, SecretsConfig, SyntaxConfig
from datagen.curate.base import FileStep
from datagen.curate.decontam import DecontamStep
from datagen.curate.near_dedup import near_dedup
from datagen.curate.secrets import SecretsStep
from datagen.curate.syntax import SyntaxStep


def file_steps(
    decontam: DecontamConfig,
    syntax: SyntaxConfig,
    secrets: SecretsConfig,
    remotes: dict[str, str] | None = None,
) -> list[FileStep]:
    """Enabled per-file steps, cheapest drop first; redaction last (it edits the text)."""
    steps: list[FileStep] = []
    if decontam.enabled:
        steps.append(DecontamStep(decontam, remotes))
    if syntax.enabled:
        steps.append(SyntaxStep(syntax))
    if secrets.enabled:
        steps.append(SecretsStep(secrets))
    return steps


def apply_near_dedup(
    con: duckdb.DuckDBPyConnection,
    crawl_files: list[str],
    work: Path,
    cfg: NearDedupConfig,
    workers: int,
    executor: type[LocalPipelineExecutor] = LocalPipelineExecutor,
) -> int:
    """Drop near-duplicates (reason ``near_duplicate``, ``duplicate_of`` = the cluster's
    representative), set ``cluster_id`` on every member, and fill table ``clusters``.
    Files already dropped in ``files`` (e.g. exact duplicates) take no part. Returns the
    number of files dropped."""
    exclude = work / "near_dedup_exclude.parquet"
    con.execute(
        f"COPY (SELECT file_id FROM files WHERE decision = 'dropped' ORDER BY file_id) TO '{exclude}' (FORMAT parquet)"
    )
    clusters = near_dedup(
        [Path(p) for p in crawl_files], work / "near_dedup", cfg, workers, exclude=exclude, executor=executor
    )
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
