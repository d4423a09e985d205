"""``datagen build cpt-corpus``: repos -> curated, deduplicated parquet shards + manifest.

Stages (each resumable):
1. discover + list (main process): every file with its path-level skip reason.
2. crawl (datatrove, ``ceil(files / files_per_task)`` tasks): read, content checks,
   per-file steps (quality, decontamination, syntax, secrets), one parquet per rank with
   every row.
3. global decisions (DuckDB over the crawl parquet, out of core): exact dedup, then near
   dedup (MinHash LSH in datatrove stages, ``datagen.curate.near_dedup``).
4. write: kept files in (repo, dependency order) into size-capped shards + dataset card;
   held-out repos (``pack.holdout_*``) into the ``validation`` split.
5. pack (only with ``pack.tokenizer``): repo documents -> tokens -> fixed-length
   sequences per ``pack.seq_lens`` under ``tokens/`` (``datagen.pack.corpus``).
6. manifest: ``runs``, ``files`` (every file seen, with its reason), ``shards``,
   ``clusters``, ``repo_orders``, and with packing ``repo_docs``, ``token_counts`` and
   ``pack_outputs``, replaced in one transaction.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import shutil
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
from rich.console import Console

from datagen import __version__
from datagen.config.base import canonical_json, load_recipe, recipe_hash, validate
from datagen.config.cpt import CptCorpusRecipe
from datagen.crawl.reader import RepoFileReader
from datagen.crawl.rules import CrawlRules
from datagen.crawl.sources import Repo, discover, fingerprint, list_repo
from datagen.curate.cpt import apply_near_dedup, file_steps
from datagen.curate.exact import exact_dedup
from datagen.curate.quality import QualityFilter
from datagen.manifest import Manifest
from datagen.manifest.db import manifest_path
from datagen.pack.corpus import check_pack_setup, pack_corpus
from datagen.pack.ordering import RepoOrderer, split_of
from datagen.pipelines.card import write_card
from datagen.pipelines.progress import Stopwatch, progress_bar, run_with_rank_progress
from datagen.pipelines.shards import write_text_shards
from datagen.pipelines.steps import QuietLocalExecutor, RowsParquetWriter
from datagen.records import ClusterRow, FileRow, PackOutputRow, Record, RepoDocRow, RepoOrderRow, RunRow, ShardRow
from datagen.records.pack import TokenCountRow

LISTING_SCHEMA = pa.schema(
    [("repo", pa.string()), ("path", pa.string()), ("size", pa.int64()), ("skip", pa.string()),
     ("lang", pa.string()), ("git_oid", pa.string()), ("license", pa.string()),
     ("source", pa.string()), ("root", pa.string()), ("kind", pa.string())]
)


@dataclass
class BuildResult:
    output: Path
    run_id: str
    skipped: bool  # True when the same build had already finished
    seen: int = 0
    kept: int = 0
    kept_bytes: int = 0
    dropped_by_reason: dict[str, int] = field(default_factory=dict)
    shards: list[str] = field(default_factory=list)
    seconds: float = 0.0
    stage_seconds: dict[str, float] = field(default_factory=dict)
    packed: list[PackOutputRow] = field(default_factory=list)  # empty without pack.tokenizer


def _content_recipe(cfg: CptCorpusRecipe) -> dict:
    """The recipe fields that change the output (not where it goes or how many workers)."""
    return cfg.model_dump(mode="json", exclude={"workers", "output"})


def run_cpt_corpus(
    inputs: list[str] | None = None,
    output: str | Path | None = None,
    recipe: str | Path | None = None,
    overrides: list[str] | None = None,
    workers: int | None = None,
    force: bool = False,
    console: Console | None = None,
) -> BuildResult:
    """Run the build; see the module docstring. Returns counts for the summary."""
    t0 = time.monotonic()
    console = console or Console(file=sys.__stderr__)
    cfg, _ = load_recipe(CptCorpusRecipe, recipe, "cpt-corpus", overrides)
    update = {}
    if inputs:
        update["inputs"] = list(inputs)
    if output is not None:
        update["output"] = str(output)
    if workers is not None:
        update["workers"] = workers
    if update:  # flags are validated like recipe fields (e.g. --workers 0 is refused)
        cfg = validate(CptCorpusRecipe, {**cfg.model_dump(mode="json"), **update}, "command line")
    out = Path(cfg.output)
    rules = CrawlRules.from_config(cfg.crawl)

    # 1. discover + list ---------------------------------------------------------------
    clock = Stopwatch()
    repos = discover(cfg.inputs, cfg.crawl.repo_names)  # UserError on a missing input
    check_pack_setup(cfg.pack, (r.name for r in repos))  # UserError before any work
    listed = []
    with clock.stage("list"), progress_bar(console, "listing repos", len(repos)) as advance:
        for repo in repos:
            listed.extend((repo, lf) for lf in list_repo(repo, rules))
            advance(1)
    listed.sort(key=lambda x: (x[1].repo, x[1].path))
    fp = fingerprint(repos, [lf for _, lf in listed])
    if cfg.pack.tokenizer:  # same path, new tokenizer content: a different build
        from datagen.pack.tokenize import tokenizer_digest

        fp += "\0" + tokenizer_digest(cfg.pack.tokenizer)
    run_id = hashlib.sha256(
        f"{canonical_json(_content_recipe(cfg))}\0{fp}\0{__version__}".encode()
    ).hexdigest()[:16]

    if not force and _already_built(out, run_id):
        console.print(f"[green]Nothing to do:[/] {out} already holds this build (run {run_id}). "
                      "Use --force to rebuild.")
        return BuildResult(output=out, run_id=run_id, skipped=True, seconds=time.monotonic() - t0)

    work = out / ".work" / run_id
    work.mkdir(parents=True, exist_ok=True)
    started = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    run_row = RunRow(
        run_id=run_id, command="build cpt-corpus", recipe_json=canonical_json(cfg.model_dump(mode="json")),
        recipe_hash=recipe_hash(cfg), datagen_version=__version__, started_at=started, status="running",
    )
    with Manifest(out) as m:
        m.upsert(RunRow, run_row)
    try:
        result = _build(cfg, out, work, run_id, repos, listed, console, clock)
    except BaseException:
        with Manifest(out) as m:
            m.upsert(RunRow, run_row.model_copy(update={"status": "failed",
                                                        "finished_at": _now()}))
        raise
    with Manifest(out) as m:
        m.upsert(RunRow, run_row.model_copy(update={"status": "finished", "finished_at": _now()}))
    shutil.rmtree(work, ignore_errors=True)
    _remove_if_empty(out / ".work")
    result.seconds = time.monotonic() - t0
    result.stage_seconds = clock.seconds
    return result


def _build(cfg: CptCorpusRecipe, out: Path, work: Path, run_id: str, repos: list[Repo],
           listed: list, console: Console, clock: Stopwatch) -> BuildResult:
    listing = work / "listing.parquet"
    if not listing.exists():
        _write_listing(listing, listed, cfg.crawl.files_per_task)
    n_files = len(listed)
    tasks = max(1, math.ceil(n_files / cfg.crawl.files_per_task))

    # 2. crawl stage ---------------------------------------------------------------------
    steps = [RepoFileReader(str(listing), cfg.crawl.files_per_task, cfg.crawl)]
    if cfg.quality.enabled:
        steps.append(QualityFilter(cfg.quality.rules))
    steps += file_steps(cfg.decontam, cfg.syntax, cfg.secrets,
                        {r.name: r.remote for r in repos if r.remote})
    steps.append(RowsParquetWriter(str(work / "crawl")))
    executor = QuietLocalExecutor(
        pipeline=steps, tasks=tasks, workers=min(cfg.workers, tasks),
        logging_dir=str(work / "logs" / "crawl"),
    )
    with clock.stage("crawl"):
        run_with_rank_progress(executor, console, "crawling", tasks, files_per_task=cfg.crawl.files_per_task,
                               total_files=n_files)
    crawl_files = sorted(str(p) for p in (work / "crawl").glob("*.parquet"))

    # 3. global decisions ----------------------------------------------------------------
    db_path = work / "decisions.duckdb"
    db_path.unlink(missing_ok=True)  # always recomputed from the crawl output: cheap, idempotent
    con = duckdb.connect(str(db_path))
    try:
        with clock.stage("dedup"):
            con.execute(
                "CREATE TABLE files AS SELECT * EXCLUDE (text) FROM read_parquet(?) ORDER BY repo, path",
                [crawl_files],
            )
            if cfg.dedup.exact:
                exact_dedup(con)
            if cfg.dedup.near.enabled:
                apply_near_dedup(con, crawl_files, work, cfg.dedup.near, cfg.workers,
                                 executor=QuietLocalExecutor)

        # 4. shards (train, and validation for held-out repos) --------------------------
        data_dir = out / "data"
        orderer = RepoOrderer(cfg.pack, workers=cfg.workers, aliases=_duplicate_aliases(con))
        shard_rows: list[ShardRow] = []
        text_shards: dict[str, list[Path]] = {}
        with clock.stage("order + shards"):
            for split, names in _repos_by_split(con, cfg).items():
                name = cfg.shards.split if split == "train" else split
                if not names and split != "train":
                    for stale in data_dir.glob(f"{name}-*.parquet"):
                        stale.unlink()
                    continue
                rows = write_text_shards(con, crawl_files, data_dir, work / "shards" / name, cfg.shards,
                                         console, order=orderer, split=name, repos=names)
                shard_rows += rows
                text_shards[name] = [out / r.path for r in rows]
        con.execute("CHECKPOINT")
        counts = _counts(con)
    finally:
        con.close()
    # 5. pack --------------------------------------------------------------------------
    tables: dict[type[Record], list[Record]] = {
        RepoOrderRow: [r.model_copy(update={"run_id": run_id}) for r in orderer.rows]}
    packed: list[PackOutputRow] = []
    if cfg.pack.tokenizer:
        with clock.stage("pack"), progress_bar(console, "packing tokens", counts["kept"]) as advance:
            packing = pack_corpus(out, cfg.pack, run_id, text_shards, advance)
        packed = packing.outputs
        tables[TokenCountRow] = packing.token_counts
        tables[RepoDocRow] = packing.docs
        tables[PackOutputRow] = packed
        shard_rows += [ShardRow(run_id="", path=str(f.path.relative_to(out)), rows=f.rows,
                                bytes=f.bytes, sha256=f.sha256) for f in packing.files]
    elif (out / "tokens").exists():
        shutil.rmtree(out / "tokens")  # tokens of an earlier build with packing: now stale
    # 6. manifest ----------------------------------------------------------------------
    with clock.stage("manifest"):
        _write_manifest(out, run_id, db_path, shard_rows, tables)
        write_card(out, cfg, counts, shard_rows, packed)
    return BuildResult(
        output=out, run_id=run_id, skipped=False, seen=counts["seen"], kept=counts["kept"],
        kept_bytes=counts["kept_bytes"], dropped_by_reason=counts["dropped_by_reason"],
        shards=[s.path for s in shard_rows if s.path.startswith("data/")], packed=packed,
    )


def _duplicate_aliases(con: duckdb.DuckDBPyConnection) -> dict[str, dict[str, str]]:
    """repo -> {path of a dropped exact duplicate: path of its kept copy in the same repo},
    so that imports of the removed copy still order the importer after the kept one."""
    aliases: dict[str, dict[str, str]] = {}
    for repo, dup, kept in con.execute(
        "SELECT d.repo, d.path, k.path FROM files d JOIN files k ON d.duplicate_of = k.file_id "
        "WHERE d.repo = k.repo AND k.decision = 'kept' ORDER BY d.repo, d.path"
    ).fetchall():
        aliases.setdefault(repo, {})[dup] = kept
    return aliases


def _repos_by_split(con: duckdb.DuckDBPyConnection, cfg: CptCorpusRecipe) -> dict[str, list[str]]:
    """Repos with kept files per split; ``validation`` holds the held-out repos."""
    names = [r for (r,) in con.execute(
        "SELECT DISTINCT repo FROM files WHERE decision='kept' ORDER BY repo").fetchall()]
    splits: dict[str, list[str]] = {"train": [], "validation": []}
    for repo in names:
        splits[split_of(repo, cfg.pack)].append(repo)
    return splits


def _write_listing(path: Path, listed: list, files_per_task: int) -> None:
    """One row group per crawl task, so that each task reads only its own slice."""
    rows = [
        {"repo": lf.repo, "path": lf.path, "size": lf.size, "skip": lf.skip, "lang": lf.lang,
         "git_oid": lf.git_oid, "license": repo.license, "source": repo.source, "root": repo.root,
         "kind": repo.kind}
        for repo, lf in listed
    ]
    tmp = path.with_suffix(".tmp")
    pq.write_table(pa.Table.from_pylist(rows, schema=LISTING_SCHEMA), tmp, row_group_size=files_per_task)
    tmp.replace(path)


def _counts(con: duckdb.DuckDBPyConnection) -> dict:
    seen, kept, kept_bytes = con.execute(
        "SELECT count(*), count(*) FILTER (decision='kept'), "
        "coalesce(sum(bytes) FILTER (decision='kept'), 0) FROM files"
    ).fetchone()
    by_reason = dict(con.execute(
        "SELECT split_part(reason, ':', 1) AS r, count(*) FROM files WHERE decision='dropped' "
        "GROUP BY r ORDER BY count(*) DESC, r"
    ).fetchall())
    by_lang = con.execute(
        "SELECT lang, count(*), sum(bytes) FROM files WHERE decision='kept' GROUP BY lang "
        "ORDER BY sum(bytes) DESC, lang"
    ).fetchall()
    licenses = Counter(dict(con.execute(
        "SELECT coalesce(license, 'unknown'), count(*) FROM files WHERE decision='kept' GROUP BY 1"
    ).fetchall()))
    return {"seen": seen, "kept": kept, "kept_bytes": int(kept_bytes), "dropped_by_reason": by_reason,
            "by_lang": by_lang, "licenses": licenses}


def _write_manifest(out: Path, run_id: str, db_path: Path, shard_rows: list[ShardRow],
                    tables: dict[type[Record], list[Record]] | None = None) -> None:
    """Replace the ``files``, ``shards`` (and ``tables``) tables in one transaction."""
    cols = [c for c in FileRow.columns() if c not in ("run_id", "shard")]
    with Manifest(out) as m:
        m.execute(f"ATTACH '{db_path}' AS w (READ_ONLY)")
        m.execute("BEGIN TRANSACTION")
        m.execute("DELETE FROM files")
        m.execute("DELETE FROM shards")
        m.execute(
            f"INSERT INTO files (run_id, {', '.join(cols)}, shard) "
            f"SELECT ?, {', '.join('f.' + c for c in cols)}, s.shard FROM w.files f "
            "LEFT JOIN w.shard_of s USING (file_id) ORDER BY f.repo, f.path",
            [run_id],
        )
        m.insert(ShardRow, [s.model_copy(update={"run_id": run_id}) for s in shard_rows])
        for record in (RepoOrderRow, RepoDocRow, TokenCountRow, PackOutputRow):
            m.execute(f"DELETE FROM {record.__table__}")
        for record, rows in (tables or {}).items():
            m.insert(record, rows)
        m.execute("DELETE FROM clusters")  # empty when near-dedup was off
        has_clusters = m.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE database_name = 'w' AND table_name = 'clusters'"
        ).fetchall()[0][0]
        if has_clusters:
            ccols = ", ".join(c for c in ClusterRow.columns() if c != "run_id")
            m.execute(f"INSERT INTO clusters (run_id, {ccols}) SELECT ?, {ccols} FROM w.clusters "
                      "ORDER BY cluster_id", [run_id])
        m.execute("COMMIT")
        m.execute("DETACH w")


def _already_built(out: Path, run_id: str) -> bool:
    path = manifest_path(out)
    if not path.exists():
        return False
    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.Error:
        return False
    try:
        row = con.execute("SELECT status FROM runs WHERE run_id = ?", [run_id]).fetchall()
        if not row or row[0][0] != "finished":
            return False
        # The folder must hold *this* run's files and shards, not a later build's.
        mine, others = con.execute(
            "SELECT count(*) FILTER (run_id = $1), count(*) FILTER (run_id <> $1) FROM "
            "(SELECT run_id FROM files UNION ALL SELECT run_id FROM shards)", [run_id]).fetchall()[0]
        if not mine or others:
            return False
        shards = con.execute("SELECT path, bytes FROM shards").fetchall()
    except duckdb.Error:
        return False
    finally:
        con.close()
    return all((out / p).is_file() and (out / p).stat().st_size == b for p, b in shards)


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


def _remove_if_empty(path: Path) -> None:
    try:
        path.rmdir()
    except OSError:
        pass


__all__ = ["run_cpt_corpus", "BuildResult"]
