"""The one driver every ``datagen build X`` runs; each build says only what it makes.

A build subclasses ``Build`` and gives:

- ``name`` (the command, ``build <name>``, and the build a Slurm continuation runs),
  ``recipe_type`` (its recipe model), ``result_type`` (its result dataclass: ``output``,
  ``run_id``, ``skipped``, ``seconds``, ``submitted`` as keywords) and ``owned`` (globs of
  the output files it replaces, relative to the output folder);
- ``fingerprint()``: its inputs' content (what, with the content recipe, names the run);
- ``intact(run, con)``: the already-built check beyond a 'finished' ``runs`` row
  (default ``shards_on_disk``: the files this run listed in ``shards`` are in the folder,
  byte for byte, so a folder that a later build of another recipe replaced is rebuilt);
- ``build(run, runner)``: its stages, writing every output under ``stage(run)`` and ending
  with ``publish(run, commit)``;
- optionally ``prepare(run)`` (the disk-full hint, scratch paths) and ``session()`` (a
  context around the whole run, e.g. the corpus listing's temp file).

``Build.run()`` does the rest, the same way for every build:

1. the recipe and the flags under one rule (``recipe_with_flags``): a flag given (not
   ``None``) is validated like the recipe field it replaces, so ``--workers 0`` is refused
   by every build with the same one-line error;
2. the run (``BuildRun``: content id, output lock, ``runs`` row, work folder), and
   "nothing to do" when this exact build already finished here;
3. the stages on the recipe's executor (``StageRunner``); with ``--executor slurm`` a stage
   submitted stops the build (``JobsSubmitted``) and ``submit_rest`` submits the rest as a
   job that depends on it;
4. publication: every output goes through the output switch (``switch.switch_outputs``)
   around the build's manifest transaction, so a failed or killed build leaves the
   previous outputs or the new ones, never a mix.
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import duckdb
from rich.console import Console

from datagen.config.base import StrictModel, load_recipe, validate
from datagen.errors import JobsSubmitted
from datagen.runtime.executors import StageRunner, submit_rest
from datagen.runtime.run import BuildRun
from datagen.runtime.switch import Mark, switch_outputs


def accounted_teacher(run: BuildRun, config: Any) -> Any:
    """A teacher whose paid calls are journaled beside the manifest as answers arrive
    and land in ``teacher_calls`` (each once) whenever this run's row is written, so a
    killed build's spending is recorded by the run that resumes it."""
    from datagen.manifest import Manifest
    from datagen.records import TeacherCall
    from datagen.teachers import make_teacher
    from datagen.teachers.accounting import CallJournal, journal_path

    journal = CallJournal(journal_path(run.out))
    teacher = make_teacher(config, run_id=run.run_id, journal=journal)
    before = run.on_record

    def record(db: Manifest) -> None:
        if before is not None:
            before(db)
        journal.fold(db)
        db.insert(TeacherCall, teacher.take_calls())

    run.on_record = record
    return teacher


def recipe_with_flags(model: type[StrictModel], recipe: str | Path | None, name: str,
                      overrides: list[str] | None, flags: dict[str, Any]) -> tuple[Any, Path]:
    """The recipe (and its path), its ``--set`` overrides, then the command-line flags: a
    flag that is ``None`` (or an empty list) was not given; any other value, ``0``
    included, replaces the recipe's field and is validated like it."""
    cfg, path = load_recipe(model, recipe, name, overrides)
    update = {k: str(v) if isinstance(v, Path) else v for k, v in flags.items()
              if v is not None and v != []}
    if update:
        cfg = validate(model, {**cfg.model_dump(mode="json"), **update}, "command line")
    return cfg, path


def shards_on_disk(out: Path, run_id: str, con: duckdb.DuckDBPyConnection) -> bool:
    """Whether ``run_id`` listed files in ``shards`` and each is in ``out`` with its
    recorded sha256 (what a later build of another recipe, switched in, breaks)."""
    rows = con.execute("SELECT path, sha256 FROM shards WHERE run_id = ?", [run_id]).fetchall()
    return bool(rows) and all(_sha256(out / path) == sha for path, sha in rows)


def _sha256(path: Path) -> str | None:
    if not path.is_file():
        return None
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


class Build:
    """One build of ``datagen build <name>`` (see the module docstring)."""

    name: ClassVar[str]
    recipe_type: ClassVar[type[StrictModel]]
    result_type: ClassVar[type]
    owned: ClassVar[tuple[str, ...]]

    def __init__(self, cfg: Any, force: bool = False, console: Console | None = None, allow_empty: bool = False):
        self.cfg = cfg
        self.allow_empty = allow_empty  # --allow-empty: an empty build is written, not refused
        self.out = Path(cfg.output)
        self.force = force
        self.console = console or Console(file=sys.__stderr__)
        self.t0 = time.monotonic()

    @classmethod
    def load(cls, recipe: str | Path | None, overrides: list[str] | None, **flags: Any) -> Any:
        """The build's recipe with its flags (``recipe_with_flags``)."""
        return recipe_with_flags(cls.recipe_type, recipe, cls.name, overrides, flags)[0]

    # -- what a build says ------------------------------------------------------------
    def fingerprint(self) -> str:
        raise NotImplementedError

    def intact(self, run: BuildRun, con: duckdb.DuckDBPyConnection) -> bool:
        return shards_on_disk(self.out, run.run_id, con)

    def prepare(self, run: BuildRun) -> None:
        """Before the run starts: what it needs besides the recipe (default: nothing)."""

    def session(self) -> contextlib.AbstractContextManager[Any]:
        return contextlib.nullcontext()

    def build(self, run: BuildRun, runner: StageRunner) -> Any:
        raise NotImplementedError

    # -- the same for every build -----------------------------------------------------
    def run(self) -> Any:
        """Nothing to do, or the build (resumed where a run stopped), or its Slurm jobs."""
        with self.session():
            run = BuildRun(self.out, f"build {self.name}", self.cfg, self.fingerprint(), self.force)
            if run.already_built(lambda con: self.intact(run, con)):
                self.console.print(f"[green]Nothing to do:[/] {self.out} already holds this build "
                                   f"(run {run.run_id}). Use --force to rebuild.")
                return self.result_type(output=self.out, run_id=run.run_id, skipped=True, seconds=self._seconds())
            self.prepare(run)
            runner = StageRunner(self.cfg.executor, run.run_id, self.console)
            try:
                with run:
                    result = self.build(run, runner)
            except JobsSubmitted as sub:  # --executor slurm: the build goes on in a job after the stage
                sub.continuation = submit_rest(self.name, self.cfg.model_dump(mode="json"), self.cfg.executor,
                                               run.work, self.out / "logs" / "slurm", sub.job_id, self.cfg.workers)
                return self.result_type(output=self.out, run_id=run.run_id, skipped=False, submitted=sub,
                                        seconds=self._seconds())
        result.seconds = self._seconds()
        return result

    def stage(self, run: BuildRun) -> Path:
        """Where the build writes its outputs (the output folder's layout) until they switch in."""
        return run.work / "stage"

    def fresh_stage(self, run: BuildRun) -> Path:
        """The staging folder, emptied of what a killed run half-wrote there."""
        stage = self.stage(run)
        shutil.rmtree(stage, ignore_errors=True)
        stage.mkdir(parents=True)
        return stage

    def publish(self, run: BuildRun, commit: Callable[[Mark], None]) -> None:
        """Switch the staged outputs in around ``commit(mark)``, the manifest transaction
        (which runs ``mark(manifest)`` before its ``COMMIT``)."""
        switch_outputs(self.stage(run), self.out, run.work / "replaced", self.owned, commit)

    def _seconds(self) -> float:
        return time.monotonic() - self.t0


__all__ = ["Build", "recipe_with_flags", "shards_on_disk"]
