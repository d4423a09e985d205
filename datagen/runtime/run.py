"""The one run lifecycle every build and every recorded command shares.

A build names its run by content: the same recipe (minus where it writes and how many
workers) and the same inputs give the same ``run_id``, so a re-run finds its ``runs``
row, resumes from its work folder, or says it has nothing to do.

API::

    run = BuildRun(out, "build cpt-corpus", recipe, fingerprint, force=False)
    run.run_id        # sha256(canonical content recipe \\0 fingerprint \\0 datagen version)[:16]
    run.work          # out/.work/<run_id> (datatrove completions, crawl parquet, ...)
    run.already_built(check=None) -> bool
                      # False under --force or while a killed build's output switch is
                      # pending; else whether `runs` holds a 'finished' row for run_id and
                      # ``check(con)`` (a read-only manifest connection) agrees
    with run:         # `runs` row 'running' + mkdir work; on leaving: 'finished' (work and
        ...           # an empty .work removed) or 'failed' on any BaseException (re-raised,
                      # work kept for the resume); JobsSubmitted leaves it 'running'

While a build runs (``uses_work``) it holds ``<out>/.datagen.lock`` (a second build on the
same output fails at once, naming this one); on entering, an output switch a killed build
left half done is completed or undone (``switch.recover``), 'running' build rows left by a
killed build are marked 'failed' and other runs' work folders are removed. During any run,
SIGINT / SIGTERM raise ``Interrupted`` (the CLI exits ``128 + signal``). On any failure the
processes the run started are killed; a full disk becomes ``DiskFull`` (one line), after
every ``*.tmp`` under ``out`` and the run's ``scratch`` paths are removed.

Commands that are not builds (``validate``, ``sandbox run``, ``teacher run``) use
``BuildRun.command_run(out, command, recipe, run_id=None)``: the same ``runs`` row and
status, no work folder, the id given (e.g. a content hash of the command's input) or
``<command>-<recipe hash>-<random>``; with ``out=None`` nothing is written. Every time the
row is written, ``on_record(manifest)`` (if set) runs in the same manifest session, so a
command's own rows (e.g. ``teacher_calls``) land with its status.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import shutil
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import duckdb

from datagen import __version__
from datagen.config.base import StrictModel, canonical_json, recipe_hash
from datagen.errors import DiskFull, Interrupted, JobsSubmitted
from datagen.manifest import Manifest
from datagen.manifest.db import manifest_path
from datagen.records import Record, RunRow
from datagen.runtime.faults import disk_full, disk_full_message, interrupts, quiet_orphaned_threads, remove_partial
from datagen.runtime.lock import OutputLock
from datagen.runtime.procs import children, stop_children
from datagen.runtime.switch import journal_path as switch_journal
from datagen.runtime.switch import recover as recover_outputs

# Recipe fields that say where a build writes, where it runs, how fast and in how much
# memory, not what it makes.
NOT_CONTENT = frozenset({"workers", "output", "executor", "memory_mb"})


def content_run_id(recipe: StrictModel, fingerprint: str) -> str:
    """The id of a build: its content recipe, its inputs' fingerprint, datagen's version."""
    content = recipe.model_dump(mode="json", exclude=set(NOT_CONTENT))
    return hashlib.sha256(f"{canonical_json(content)}\0{fingerprint}\0{__version__}".encode()).hexdigest()[:16]


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


class BuildRun:
    """A build's run: its id, work folder, ``runs`` row and already-built check."""

    def __init__(self, out: Path | None, command: str, recipe: StrictModel, fingerprint: str = "",
                 force: bool = False, *, run_id: str | None = None,
                 tables: Iterable[type[Record]] | None = None, uses_work: bool = True):
        self.out = Path(out) if out is not None else None
        self.command = command
        self.recipe = recipe
        self.force = force
        self.run_id = run_id or content_run_id(recipe, fingerprint)
        self.tables = list(tables) if tables is not None else None
        self.uses_work = uses_work and self.out is not None
        self.on_record: Callable[[Manifest], None] | None = None
        self.status: str | None = None
        self.scratch: list[Path] = []  # removed with every *.tmp when the disk is full
        self.needed_bytes: int | None = None  # about what the build writes, for the disk-full hint
        self._row: RunRow | None = None
        self._keep: set[int] = set()  # processes that are not the run's (e.g. a test's server)
        self._stack = contextlib.ExitStack()

    @classmethod
    def command_run(cls, out: Path | None, command: str, recipe: StrictModel, run_id: str | None = None,
                    tables: Iterable[type[Record]] | None = None) -> BuildRun:
        """The run of a command that is not content-addressed (see the module docstring)."""
        rid = run_id or f"{command.replace(' ', '-')}-{recipe_hash(recipe)}-{uuid.uuid4().hex[:8]}"
        return cls(out, command, recipe, run_id=rid, tables=tables, uses_work=False)

    @property
    def work(self) -> Path:
        if self.out is None:
            raise ValueError(f"{self.command} writes no output, so it has no work folder")
        return self.out / ".work" / self.run_id

    def already_built(self, check: Callable[[duckdb.DuckDBPyConnection], bool] | None = None) -> bool:
        """Whether this exact run already finished here (always False under ``force``)."""
        if self.force or self.out is None:
            return False
        if switch_journal(self.out).exists():  # a switch a killed build left: the folder is not whole
            return False
        path = manifest_path(self.out)
        if not path.exists():
            return False
        try:
            con = duckdb.connect(str(path), read_only=True)
        except duckdb.Error:
            return False
        try:
            row = con.execute("SELECT status FROM runs WHERE run_id = ?", [self.run_id]).fetchall()
            return bool(row) and row[0][0] == "finished" and (check is None or check(con))
        except duckdb.Error:
            return False
        finally:
            con.close()

    def __enter__(self) -> BuildRun:
        self._row = RunRow(
            run_id=self.run_id, command=self.command,
            recipe_json=canonical_json(self.recipe.model_dump(mode="json")),
            recipe_hash=recipe_hash(self.recipe), datagen_version=__version__,
            started_at=self._resumed_start() or _now(), status="running",
        )
        self._stack = contextlib.ExitStack()
        self._keep = children()
        owned = False  # until the lock is ours, a failure must not touch this run's row or work
        try:
            if self.uses_work:
                self._stack.enter_context(OutputLock(self.out, self.command))
            owned = True
            self._stack.enter_context(interrupts(self._keep))
            if self.uses_work:
                recover_outputs(self.out)  # a switch a killed build left half done: one set again
                self._forget_stale_runs()
                self.work.mkdir(parents=True, exist_ok=True)
            self._record("running")
        except BaseException as exc:
            with self._stack:
                if owned:
                    self._fail(exc)
            raise
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any) -> bool:
        with self._stack:  # signal handlers restored, output lock released last
            if isinstance(exc, JobsSubmitted):
                return False  # stays 'running' with its work folder: a dependent job resumes it
            if exc is not None:
                self._fail(exc)
                return False  # re-raised
            try:
                self._finish()
            except BaseException as err:
                self._fail(err)
                raise
        return False

    def _fail(self, exc: BaseException) -> None:
        """Stop the run's processes, remove its half-written files, mark it failed; a full
        disk becomes ``DiskFull`` (one line)."""
        quiet_orphaned_threads()
        stop_children(self._keep)  # workers, forkserver, managers: nothing outlives the run
        full = disk_full(exc) if self.out is not None else None
        if self.uses_work:  # half-written files (finished ranks stay for the resume)
            remove_partial([self.out] if full else [self.work], self.scratch if full else [])
        marked = self._record_failure(exc)
        if full is not None:
            note = "" if marked else "; the next build marks this run failed"
            raise DiskFull(disk_full_message(full, self.out, self.needed_bytes) + note) from exc
        if isinstance(exc, Interrupted):
            exc.run_note = self._resume_note()

    def _resume_note(self) -> str:
        """What an interrupted run keeps and how to resume it, for the CLI's one line."""
        head = f"run {self.run_id} marked failed"
        if not self.uses_work or not self.work.is_dir():
            return f"{head}; run the same command again to start it over"
        done = [f"{stage} {n}" for stage, n in finished_tasks(self.work).items() if n]
        kept = (f"kept the finished tasks ({', '.join(done)}) in {self.work}" if done
                else f"no stage task had finished ({self.work} kept)")
        return f"{head}; {kept}; run the same command again to resume from there"

    def _finish(self) -> None:
        self._record("finished")
        if self.uses_work:
            keep_logs(self.work, self.out / "logs")
            shutil.rmtree(self.work, ignore_errors=True)
            try:
                self.work.parent.rmdir()  # .work, when no other run left its folder there
            except OSError:
                pass

    def _record_failure(self, exc: BaseException) -> bool:
        """Mark the run failed; if even that cannot be written (a full disk, a locked
        manifest), the next build marks the stale 'running' row failed instead."""
        try:
            self._record("failed")
            return True
        except Exception as err:  # noqa: BLE001 - the run's own error is the one to report
            exc.add_note(f"(the run could not be marked failed: {str(err).splitlines()[0]})")
            return False

    def _forget_stale_runs(self) -> None:
        """With the output lock held, no other build runs here: a 'running' build row is
        a killed build's, and a work folder of another run will never be resumed."""
        assert self.out is not None
        if manifest_path(self.out).exists():
            with Manifest(self.out, tables=self.tables) as m:
                m.execute("UPDATE runs SET status = 'failed', finished_at = ? "
                          "WHERE status = 'running' AND command LIKE 'build %'", [_now()])
        work_root = self.out / ".work"
        if work_root.is_dir():
            for folder in work_root.iterdir():  # files there are not runs' (a build's listing before its id)
                if folder.name != self.run_id and folder.is_dir():
                    shutil.rmtree(folder, ignore_errors=True)

    def _resumed_start(self) -> dt.datetime | None:
        """When this run is resumed (its row still 'running': a Slurm job picking the build
        up, or a re-run after a kill), the time it first started."""
        if self.out is None or not manifest_path(self.out).exists():
            return None
        try:
            con = duckdb.connect(str(manifest_path(self.out)), read_only=True)
        except duckdb.Error:
            return None
        try:
            row = con.execute("SELECT started_at FROM runs WHERE run_id = ? AND status = 'running'",
                              [self.run_id]).fetchall()
            return row[0][0] if row else None
        except duckdb.Error:
            return None
        finally:
            con.close()

    def _record(self, status: str) -> None:
        self.status = status
        if self.out is None or self._row is None:
            return
        row = self._row if status == "running" else self._row.model_copy(
            update={"status": status, "finished_at": _now()})
        with Manifest(self.out, tables=self.tables) as m:
            if self.on_record is not None:
                self.on_record(m)
            m.upsert(RunRow, row)


def _stage_dirs(work: Path) -> dict[str, Path]:
    """The datatrove logging folders under a run's work folder, by stage name (the path
    below ``work`` without its ``logs`` parts: ``crawl``, ``near_dedup/signatures``)."""
    dirs = {}
    for marker in sorted(work.rglob("executor.json")):
        rel = [p for p in marker.parent.relative_to(work).parts if p != "logs"]
        dirs["/".join(rel) or marker.parent.name] = marker.parent
    return dirs


def finished_tasks(work: Path) -> dict[str, int]:
    """Tasks that finished per stage (datatrove's completion markers) of a run's work folder."""
    counts = {}
    for stage, folder in _stage_dirs(work).items():
        completions = folder / "completions"
        counts[stage] = sum(1 for _ in completions.iterdir()) if completions.is_dir() else 0
    return counts


def keep_logs(work: Path, logs: Path) -> None:
    """Before a finished run's work folder goes: each stage's task logs and stats (datatrove's
    ``logs/``, ``stats/``, ``stats.json``, ``executor.json``; not its completion markers)
    into ``logs/<stage>/``, and ``stages.log`` (when each stage ran, how long); an earlier
    build's are replaced (``logs/slurm``, the job logs of a cluster build, stays). Best
    effort: the build is already recorded finished, a failed copy must not undo that."""
    with contextlib.suppress(OSError):
        stages = _stage_dirs(work)
        if not stages and not (work / "stages.log").is_file():
            return
        if logs.is_dir():
            for old in logs.iterdir():
                if old.name != "slurm":
                    shutil.rmtree(old) if old.is_dir() and not old.is_symlink() else old.unlink()
        for stage, folder in stages.items():
            shutil.copytree(folder, logs / stage, ignore=shutil.ignore_patterns("completions"),
                            dirs_exist_ok=True)
        if (work / "stages.log").is_file():
            logs.mkdir(parents=True, exist_ok=True)
            shutil.copy2(work / "stages.log", logs / "stages.log")


__all__ = ["BuildRun", "content_run_id", "NOT_CONTENT", "finished_tasks", "keep_logs"]
