"""``datagen build cpt-corpus``: repos -> curated, deduplicated parquet shards + manifest.

Stages, each a function below (each resumable through the run's work folder):

1. ``_list`` (main process): every file with its path-level skip reason, streamed repo by
   repo into the listing parquet the crawl tasks read.
2. ``_crawl`` (datatrove, ``ceil(files / files_per_task)`` tasks): read, content checks,
   the per-file steps of ``datagen.curate.file_steps.FILE_STEPS``, one parquet per rank with
   every row.
3. ``_decide`` (DuckDB over the crawl parquet, out of core): exact dedup, then near
   dedup (MinHash LSH in datatrove stages, ``datagen.curate.near_dedup``), each keeping
   the copy ``dedup.keep`` names (``datagen.curate.keep``); then the language mix
   (``mix.weights``, ``datagen.curate.mix``).
4. ``_write_shards``: kept files in (repo, dependency order) into size-capped shards;
   held-out repos (``pack.holdout_*``) into the ``validation`` split.
5. ``_pack`` (only with ``pack.tokenizer``): repo documents -> tokens (fill-in-the-middle,
   ``pack.fim``) -> fixed-length sequences per ``pack.seq_lens`` under ``tokens/``, the
   longest with ``pack.long.share`` of long documents (``datagen.pack.corpus``).
6. ``write_manifest`` (``datagen.builds.cpt_corpus.manifest``) + dataset card: ``files`` (every
   file seen, with its reason), ``shards``, ``clusters``, ``repo_orders``, and with
   packing ``repo_docs``, ``token_counts`` and ``pack_outputs``, in one transaction.

Stages 4-6 write into ``<work>/stage``; ``datagen.runtime.switch`` moves the files into the
output folder around the manifest transaction, so the manifest never lists a missing file
and a failed build leaves the previous output whole.

Memory: the listing never holds more than one repo's files and one crawl task's rows;
stages 3-6 stay within the recipe's ``memory_mb`` whatever the corpus size:
DuckDB is capped (``duckdb_config``), the shard writer and packing stream repo by repo,
and per-file rows go through DuckDB or parquet, never a Python list of the corpus.
``<work>/stages.log`` says which stage a running build is in.

The run itself (id, ``runs`` row, work folder, already-built check, Slurm continuation)
is the ``base.Build`` template's; stage 1 names it (``CptCorpusBuild.fingerprint``).
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import shutil
import socket
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
from rich.console import Console

from datagen.builds.base import Build
from datagen.builds.card import write_card
from datagen.builds.cpt_corpus.manifest import counts, outputs_intact, write_manifest
from datagen.builds.cpt_corpus.shards import write_text_shards
from datagen.config.cpt import CptCorpusRecipe
from datagen.crawl.paths import display_path, os_path, path_raw
from datagen.crawl.reader import RepoFileReader
from datagen.crawl.rules import CrawlRules
from datagen.crawl.sources import ListedFile, Repo, discover, fingerprint, list_repo
from datagen.crawl.writer import RowsParquetWriter
from datagen.curate.base import FileStep, StepContext
from datagen.curate.dedup import apply_near_dedup, exact_dedup
from datagen.curate.file_steps import FILE_STEPS
from datagen.curate.imports_step import ImportsStep
from datagen.curate.keep import keep_rule
from datagen.curate.mix import apply_mix, language_mix_rows, mix_counts
from datagen.errors import EmptyBuild, JobsSubmitted
from datagen.pack.corpus import check_pack_setup, file_tokens, pack_corpus
from datagen.pack.ordering import RepoOrderer, split_of
from datagen.records import PackOutputRow, Record, RepoDocRow, RepoOrderRow, ShardRow
from datagen.records.pack import LanguageMixRow, LongBucketRow, TokenCountRow
from datagen.runtime.atomic import publish
from datagen.runtime.executors import StageRunner
from datagen.runtime.memory import release_memory, release_polars_memory_in_workers
from datagen.runtime.procs import alive
from datagen.runtime.progress import Stopwatch, items_done, progress_bar
from datagen.runtime.run import BuildRun
from datagen.runtime.switch import Mark

# What a build replaces in its output folder: an earlier build's files here that the new
# one does not write are removed once the manifest lists the new ones.
OWNED_OUTPUTS = ("data/*.parquet", "tokens/**/*", "README.md")
LISTING_SCHEMA = pa.schema(
    [("repo", pa.string()), ("path", pa.string()), ("path_raw", pa.string()), ("size", pa.int64()),
     ("skip", pa.string()),
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
    submitted: JobsSubmitted | None = None  # --executor slurm: the stage submitted, the build's next job


@dataclass
class _Listing:
    """Stage 1's result: the repos, and every file of them in (repo, path) order in a
    parquet (``file``, see ``_list``), with the totals the later stages need."""

    repos: list[Repo]
    file: Path
    files: int = 0
    needed_bytes: int = 0  # bytes the crawl will read (the files not skipped by path)


@dataclass
class _Stages:
    """What every stage reads: the recipe, where it writes, the console and the clock."""

    cfg: CptCorpusRecipe
    out: Path
    work: Path
    run_id: str
    console: Console
    clock: Stopwatch
    runner: StageRunner
    publish: Callable[[Callable[[Mark], None]], None]  # the build's ``Build.publish`` for this run
    allow_empty: bool = False  # --allow-empty: a build that keeps no file is written, not refused

    @property
    def stage(self) -> Path:
        """Where the new outputs are written (same layout as ``out``) until they switch in."""
        return self.work / "stage"


def run_cpt_corpus(
    inputs: list[str] | None = None,
    output: str | Path | None = None,
    recipe: str | Path | None = None,
    overrides: list[str] | None = None,
    workers: int | None = None,
    force: bool = False,
    console: Console | None = None,
    allow_empty: bool = False,
) -> BuildResult:
    """Run the build; see the module docstring. Returns counts for the summary.

    A build that keeps no file is refused (``EmptyBuild``, after the crawl, before any
    output is written) unless ``allow_empty``."""
    release_polars_memory_in_workers()  # before the build starts any worker
    cfg = load_cpt_recipe(recipe, overrides, inputs=inputs, output=output, workers=workers)
    return CptCorpusBuild(cfg, force, console, allow_empty).run()


class CptCorpusBuild(Build):
    """The corpus build in the ``Build`` template: stage 1 (the listing) names the run."""

    name = "cpt-corpus"
    recipe_type = CptCorpusRecipe
    result_type = BuildResult
    owned = OWNED_OUTPUTS

    def __init__(self, cfg: CptCorpusRecipe, force: bool = False, console: Console | None = None,
                 allow_empty: bool = False):
        super().__init__(cfg, force, console, allow_empty)
        self.clock = Stopwatch()
        self.listing: _Listing | None = None
        self._listing_at: Path | None = None

    @contextlib.contextmanager
    def session(self) -> Iterator[None]:
        with _listing_file(self.out) as listing_file:
            self._listing_at = listing_file
            yield

    def fingerprint(self) -> str:
        self.listing = _list(self.cfg, self.console, self.clock, self._listing_at)
        return _fingerprint(self.cfg, self.listing)

    def intact(self, run: BuildRun, con: duckdb.DuckDBPyConnection) -> bool:
        return outputs_intact(self.out, run.run_id, con)

    def prepare(self, run: BuildRun) -> None:
        run.needed_bytes = self.listing.needed_bytes
        run.scratch = [run.work / n for n in
                       ("stage", "shards", "decisions.duckdb", "decisions.duckdb.wal", "duckdb.tmp")]

    def build(self, run: BuildRun, runner: StageRunner) -> BuildResult:
        stages = _Stages(self.cfg, self.out, run.work, run.run_id, self.console, self.clock, runner,
                         functools.partial(self.publish, run), self.allow_empty)
        self.clock.log = run.work / "stages.log"  # which stage a running build is in
        result = _build(stages, self.listing)
        result.stage_seconds = self.clock.seconds
        return result


def load_cpt_recipe(recipe: str | Path | None, overrides: list[str] | None, *, inputs: list[str] | None = None,
                    output: str | Path | None = None, workers: int | None = None) -> CptCorpusRecipe:
    """The recipe, ``--set`` overrides, then the flags (``base.recipe_with_flags``: validated
    like recipe fields, so ``--workers 0`` is refused)."""
    return CptCorpusBuild.load(recipe, overrides, inputs=list(inputs or []), workers=workers, output=output)


@contextlib.contextmanager
def _listing_file(out: Path) -> Iterator[Path]:
    """Where stage 1 writes the listing. The run id hashes the listing, so the run's work
    folder is not known yet: a temp file under ``<out>/.work`` (the same disk as the work
    folder), which ``_crawl`` moves in; removed if still here when the build ends, with
    ``<out>/.work`` if empty (as a finished run leaves it) and ``out`` if made for it and
    empty. Its name says which process writes it, so a killed build's is removed by the
    next build on the same host."""
    made_out = not out.exists()
    (out / ".work").mkdir(parents=True, exist_ok=True)
    host = socket.gethostname()
    for old in (out / ".work").glob(f"listing-{host}-*.parquet.tmp"):
        if not alive(int(old.name.split("-")[-2])):
            old.unlink(missing_ok=True)
    tmp = out / ".work" / f"listing-{host}-{os.getpid()}-{uuid.uuid4().hex[:8]}.parquet.tmp"
    try:
        yield tmp
    finally:
        tmp.unlink(missing_ok=True)
        for folder in (out / ".work", out) if made_out else (out / ".work",):
            with contextlib.suppress(OSError):
                folder.rmdir()


def _list(cfg: CptCorpusRecipe, console: Console, clock: Stopwatch, file: Path) -> _Listing:
    """Stage 1: the repos, and every file of them sorted by (repo, path) into ``file``,
    written repo by repo so that no list of the corpus is held."""
    rules = CrawlRules.from_config(cfg.crawl)
    repos = discover(cfg.inputs, cfg.crawl.repo_names)  # UserError on a missing input
    check_pack_setup(cfg.pack, (r.name for r in repos))  # UserError before any work
    listing = _Listing(repos, file)
    with (clock.stage("list"), progress_bar(console, "listing repos", len(repos)) as advance,
          _ListingWriter(file, cfg.crawl.files_per_task) as writer):
        # Repo names are unique (``discover``): repos in name order, each one's files in
        # path order, is the (repo, path) order.
        for repo in sorted(repos, key=lambda r: r.name):
            files = sorted(list_repo(repo, rules), key=lambda lf: lf.path)
            writer.write(repo, files)
            listing.files += len(files)
            listing.needed_bytes += sum(lf.size for lf in files if lf.skip is None)
            advance(1)
    return listing


def _fingerprint(cfg: CptCorpusRecipe, listing: _Listing) -> str:
    fp = fingerprint(listing.repos, _read_listing(listing.file))
    if cfg.pack.tokenizer:  # same path, new tokenizer content: a different build
        from datagen.pack.tokenize import tokenizer_digest

        fp += "\0" + tokenizer_digest(cfg.pack.tokenizer)
    if cfg.dedup.repo_metadata:  # same path, new metadata: a different build
        fp += "\0" + keep_rule(cfg.dedup.keep, cfg.dedup.repo_metadata).digest
    return fp


PACKING_OFF = ("[yellow]packing off:[/] pack.tokenizer is not set, so only text shards are written; for "
               "token sequences add --set pack.tokenizer=PATH (a tokenizer.json or a Hugging Face tokenizer folder)")


def _build(s: _Stages, listing: _Listing) -> BuildResult:
    if not s.cfg.pack.tokenizer:  # said once the build runs (not when it is refused or already built)
        s.console.print(PACKING_OFF, soft_wrap=True)
    crawl_files = _crawl(s, listing)
    shutil.rmtree(s.stage, ignore_errors=True)  # a killed run's half-written outputs
    db_path = s.work / "decisions.duckdb"
    db_path.unlink(missing_ok=True)  # always recomputed from the crawl output: cheap, idempotent
    con = duckdb.connect(str(db_path), config=duckdb_config(s.cfg, s.work))
    try:
        _decide(s, con, crawl_files)
        _refuse_empty(s, con)
        release_memory()  # what near dedup freed in this process (with one worker it runs here)
        shard_rows, text_shards, orderer = _write_shards(s, con, crawl_files)
        con.execute("CHECKPOINT")
        numbers = counts(con)
        mixed = mix_counts(con, s.cfg.mix) if s.cfg.mix.enabled else []
        mix_dropped = _mix_dropped(s, con, crawl_files) if mixed and s.cfg.pack.tokenizer else None
    finally:
        con.close()
    release_memory()  # DuckDB's and the shard windows' memory, before packing
    tables: dict[type[Record], list[Record] | Path] = {
        RepoOrderRow: [r.model_copy(update={"run_id": s.run_id}) for r in orderer.rows]}
    packed = _pack(s, text_shards, numbers["kept"], tables, shard_rows, mix_dropped)
    if mixed:
        tables[LanguageMixRow] = language_mix_rows(s.run_id, mixed, tables.get(TokenCountRow),
                                                   tables.pop(_MixTokens, None), s.cfg.shards.split)
    with s.clock.stage("manifest"):
        write_card(s.stage, s.cfg, numbers, shard_rows, packed, tables, run_id=s.run_id)
        s.publish(lambda mark: write_manifest(s.out, s.run_id, db_path, shard_rows, tables,
                                              duckdb_config(s.cfg, s.work), mark))
    return BuildResult(
        output=s.out, run_id=s.run_id, skipped=False, seen=numbers["seen"], kept=numbers["kept"],
        kept_bytes=numbers["kept_bytes"], dropped_by_reason=numbers["dropped_by_reason"],
        shards=[r.path for r in shard_rows if r.path.startswith("data/")], packed=packed,
    )


def file_steps(cfg: CptCorpusRecipe, repos: list[Repo]) -> list[FileStep]:
    """The enabled steps of ``FILE_STEPS``, each built from its recipe section."""
    context = StepContext(remotes={r.name: r.remote for r in repos if r.remote})
    sections = [(step, getattr(cfg, step.section)) for step in FILE_STEPS]
    return [step.from_recipe(section, context) for step, section in sections if section.enabled]


def _crawl(s: _Stages, listing: _Listing) -> list[str]:
    """Stage 2: read every listed file through the file steps; returns the rank parquets."""
    path = s.work / "listing.parquet"
    if path.exists():  # a resumed run keeps the listing its finished tasks read (the same rows)
        listing.file.unlink()
    else:
        publish(listing.file, path)  # the whole listing (its temp file) into the run's work folder
    tasks = max(1, math.ceil(listing.files / s.cfg.crawl.files_per_task))
    # Import specifiers are read here, in the workers, once (not again when ordering).
    imports = [ImportsStep()] if s.cfg.pack.order == "imports" else []
    steps = [RepoFileReader(str(path), s.cfg.crawl.files_per_task, s.cfg.crawl),
             *file_steps(s.cfg, listing.repos), *imports, RowsParquetWriter(str(s.work / "crawl"), progress=True)]
    per_task = s.cfg.crawl.files_per_task
    with s.clock.stage("crawl"):  # the bar counts files as the ranks write them, not per finished rank
        s.runner.run("crawling", steps, tasks, min(s.cfg.workers, tasks), s.work / "logs" / "crawl",
                     progress={"files_per_task": per_task, "total_files": listing.files,
                               "count": functools.partial(items_done, s.work / "crawl", per_task, listing.files)})
    return sorted(str(p) for p in (s.work / "crawl").glob("*.parquet"))


def _decide(s: _Stages, con: duckdb.DuckDBPyConnection, crawl_files: list[str]) -> None:
    """Stage 3: table ``files`` from the crawl output, then exact and near dedup."""
    keep = keep_rule(s.cfg.dedup.keep, s.cfg.dedup.repo_metadata)
    with s.clock.stage("dedup"):
        con.execute(
            "CREATE TABLE files AS SELECT * EXCLUDE (text, imports) FROM read_parquet(?) ORDER BY repo, path",
            [crawl_files],
        )
        if s.cfg.dedup.exact:
            exact_dedup(con, keep=keep)
        if s.cfg.dedup.near.enabled:
            apply_near_dedup(con, crawl_files, s.work, s.cfg.dedup.near, s.cfg.workers,
                             executor=s.runner.factory("near-dedup"), keep=keep)
    if s.cfg.mix.enabled:
        with s.clock.stage("mix"):
            repos = [r for (r,) in con.execute("SELECT DISTINCT repo FROM files ORDER BY repo").fetchall()]
            apply_mix(con, s.cfg.mix, [r for r in repos if split_of(r, s.cfg.pack) != "train"])


def _refuse_empty(s: _Stages, con: duckdb.DuckDBPyConnection) -> None:
    """No kept file: ``EmptyBuild`` (one line with why the files went), unless ``--allow-empty``."""
    seen, kept = con.execute("SELECT count(*), count(*) FILTER (decision='kept') FROM files").fetchone()
    if kept or s.allow_empty:
        return
    reasons = con.execute(
        "SELECT split_part(reason, ':', 1) AS r, count(*) FROM files WHERE decision='dropped' "
        "GROUP BY r ORDER BY count(*) DESC, r LIMIT 4").fetchall()
    why = ", ".join(f"{r} {n}" for r, n in reasons) or "no file found"
    raise EmptyBuild(f"no file kept of {seen} seen in the inputs ({why}); no shard written to {s.out}. "
                     "Check --input (and crawl.*, quality.* in the recipe), or pass --allow-empty "
                     "to write the empty build")


def _write_shards(s: _Stages, con: duckdb.DuckDBPyConnection,
                  crawl_files: list[str]) -> tuple[list[ShardRow], dict[str, list[Path]], RepoOrderer]:
    """Stage 4: text shards per split (train, and validation for held-out repos), staged."""
    data_dir = s.stage / "data"
    # One process: the crawl wrote each file's imports, only their resolution is left.
    orderer = RepoOrderer(s.cfg.pack, aliases=_DuplicateAliases(con))
    shard_rows: list[ShardRow] = []
    text_shards: dict[str, list[Path]] = {}
    with s.clock.stage("order + shards"):
        for split, names in _repos_by_split(con, s.cfg).items():
            name = s.cfg.shards.split if split == "train" else split
            if not names and split != "train":
                continue  # an earlier build's validation shards go when the new outputs switch in
            rows = write_text_shards(con, crawl_files, data_dir, s.work / "shards" / name, s.cfg.shards,
                                     s.console, order=orderer, split=name, repos=names,
                                     window_bytes=window_bytes(s.cfg))
            shard_rows += rows
            text_shards[name] = [s.stage / r.path for r in rows]
    return shard_rows, text_shards, orderer


class _MixTokens:
    """Key in ``tables`` of the mix's "before" tokens per language (not a manifest table)."""


def _mix_dropped(s: _Stages, con: duckdb.DuckDBPyConnection, crawl_files: list[str]) -> Path:
    """The text of the files the mix dropped (their tokens count to ``tokens_before``)."""
    path = s.work / "mix_dropped.parquet"
    con.execute(
        f"COPY (SELECT c.file_id AS id, c.repo, c.path, coalesce(c.lang, '') AS lang, c.text "
        f"FROM read_parquet(?) c JOIN files f USING (file_id) WHERE f.reason = 'mix_downsampled' "
        f"ORDER BY c.repo, c.path) TO '{path}' (FORMAT parquet)", [crawl_files])
    return path


def _pack(s: _Stages, text_shards: dict[str, list[Path]], kept: int,
          tables: dict[type[Record], list[Record] | Path], shard_rows: list[ShardRow],
          mix_dropped: Path | None = None) -> list[PackOutputRow]:
    """Stage 5 (with ``pack.tokenizer``): tokens and packed sequences; adds their manifest
    rows to ``tables`` and their files to ``shard_rows``. Returns the packed outputs."""
    if not s.cfg.pack.tokenizer:  # tokens of an earlier build go when the new outputs switch in
        return []
    with s.clock.stage("pack"), progress_bar(s.console, "packing tokens", kept) as advance:
        packing = pack_corpus(s.stage, s.cfg.pack, s.run_id, text_shards, advance,
                              docs_file=s.work / "repo_docs.parquet")
        if mix_dropped is not None:
            before = dict(packing.unique_tokens.get(s.cfg.shards.split, {}))
            for lang, n in file_tokens(s.cfg.pack, mix_dropped).items():
                before[lang] = before.get(lang, 0) + n
            tables[_MixTokens] = before  # type: ignore[index]
    tables[TokenCountRow] = packing.token_counts
    tables[RepoDocRow] = packing.docs_file
    tables[PackOutputRow] = packing.outputs
    tables[LongBucketRow] = packing.long_buckets
    shard_rows += [ShardRow(run_id="", path=str(f.path.relative_to(s.stage)), rows=f.rows,
                            bytes=f.bytes, sha256=f.sha256) for f in packing.files]
    return packing.outputs


class _DuplicateAliases(Mapping[str, dict[str, str]]):
    """repo -> {path of a dropped exact duplicate: path of its kept copy in the same repo},
    so that imports of the removed copy still order the importer after the kept one.

    The pairs stay in DuckDB (table ``dup_aliases``); each repo's are read when it is
    ordered, so no mapping of the whole corpus is held."""

    def __init__(self, con: duckdb.DuckDBPyConnection):
        con.execute(
            "CREATE OR REPLACE TABLE dup_aliases AS SELECT d.repo, d.path AS dup, k.path AS kept "
            "FROM files d JOIN files k ON d.duplicate_of = k.file_id "
            "WHERE d.repo = k.repo AND k.decision = 'kept' ORDER BY d.repo, d.path"
        )
        self.cursor = con.cursor()  # its own: other cursors stream rows meanwhile

    def __getitem__(self, repo: str) -> dict[str, str]:
        pairs = self.cursor.execute("SELECT dup, kept FROM dup_aliases WHERE repo = ? ORDER BY dup",
                                    [repo]).fetchall()
        if not pairs:
            raise KeyError(repo)
        return dict(pairs)

    def __iter__(self) -> Iterator[str]:
        return (r for (r,) in self.cursor.execute("SELECT DISTINCT repo FROM dup_aliases ORDER BY repo").fetchall())

    def __len__(self) -> int:
        return self.cursor.execute("SELECT count(DISTINCT repo) FROM dup_aliases").fetchone()[0]


def duckdb_config(cfg: CptCorpusRecipe, work: Path) -> dict[str, str | int]:
    """DuckDB settings within the recipe's ``memory_mb``: a quarter of it for DuckDB, which
    spills to the work folder past that (the rest is for the rows in flight in Python)."""
    return {"memory_limit": f"{max(64, cfg.memory_mb // 4)}MB", "temp_directory": str(work / "duckdb.tmp"),
            "threads": cfg.workers}


def window_bytes(cfg: CptCorpusRecipe) -> int:
    """Kept text sorted per DuckDB query when the shards are written (``iter_repos``)."""
    return (cfg.memory_mb << 20) // 32


def _repos_by_split(con: duckdb.DuckDBPyConnection, cfg: CptCorpusRecipe) -> dict[str, list[str]]:
    """Repos with kept files per split; ``validation`` holds the held-out repos."""
    names = [r for (r,) in con.execute(
        "SELECT DISTINCT repo FROM files WHERE decision='kept' ORDER BY repo").fetchall()]
    splits: dict[str, list[str]] = {"train": [], "validation": []}
    for repo in names:
        splits[split_of(repo, cfg.pack)].append(repo)
    return splits


class _ListingWriter:
    """Writes the listing: one row group per crawl task (``files_per_task`` rows), so that
    each task reads only its own slice; holds at most one row group's rows."""

    def __init__(self, path: Path, files_per_task: int) -> None:
        self.files_per_task = files_per_task
        self.rows: list[dict] = []
        self.groups = 0
        self.writer = pq.ParquetWriter(path, LISTING_SCHEMA)

    def __enter__(self) -> _ListingWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None and (self.rows or not self.groups):  # no file at all: one empty group
            self._flush()
        self.writer.close()

    def write(self, repo: Repo, files: list[ListedFile]) -> None:
        for lf in files:
            self.rows.append(
                {"repo": lf.repo, "path": display_path(lf.path), "path_raw": path_raw(lf.path), "size": lf.size,
                 "skip": lf.skip, "lang": lf.lang, "git_oid": lf.git_oid, "license": repo.license,
                 "source": repo.source, "root": repo.root, "kind": repo.kind})
            if len(self.rows) == self.files_per_task:
                self._flush()

    def _flush(self) -> None:
        table = pa.Table.from_pylist(self.rows, schema=LISTING_SCHEMA)
        self.writer.write_table(table, row_group_size=self.files_per_task)
        self.rows = []
        self.groups += 1


def _read_listing(path: Path) -> Iterator[ListedFile]:
    """The listing's files back, a few thousand at a time, as ``fingerprint`` hashes them."""
    columns = ["repo", "path", "path_raw", "size", "skip", "git_oid"]
    with pq.ParquetFile(path) as listing:
        for batch in listing.iter_batches(batch_size=4096, columns=columns):
            for row in batch.to_pylist():
                yield ListedFile(row["repo"], os_path(row["path"], row["path_raw"]), row["size"],
                                 skip=row["skip"], git_oid=row["git_oid"])


__all__ = ["run_cpt_corpus", "load_cpt_recipe", "file_steps", "BuildResult", "LISTING_SCHEMA"]
