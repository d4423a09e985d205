"""A build's datatrove stages on the recipe's executor: local, Slurm or Ray.

Every stage is a datatrove pipeline run by datatrove's own executor; nothing here
schedules work. ``StageRunner.run(name, pipeline, tasks, workers, logging_dir)``:

- ``local``: ``QuietLocalExecutor`` (processes on this machine), waits;
- ``ray``: ``RayPipelineExecutor`` on the running Ray cluster (``ray.init`` with
  ``executor.ray_address`` when none is running), waits;
- ``slurm``: ``SlurmPipelineExecutor`` submits the stage's unfinished ranks as an array job
  and the build stops with ``JobsSubmitted``; ``submit_rest`` then submits the build itself
  as a job that depends on the array (``afterany``), so it resumes where it stopped: the
  finished ranks are skipped (datatrove completion markers), ranks a failed array task left
  undone are submitted again (at most ``executor.resubmits`` times), and the next stage
  goes the same way.

Either way the stage must end with every rank complete (``StageIncomplete`` otherwise).
"""

from __future__ import annotations

import contextlib
import io
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import yaml
from datatrove.executor.local import LocalPipelineExecutor
from datatrove.executor.slurm import SlurmPipelineExecutor
from rich.console import Console

from datagen.config.executor import ExecutorConfig
from datagen.errors import JobsSubmitted, StageIncomplete, UserError, install_hint
from datagen.runtime.procs import die_with_parent, watch_pool
from datagen.runtime.progress import run_with_rank_progress


def _manager_init() -> None:  # runs in the manager process
    die_with_parent(signal.SIGTERM)


def _worker_init() -> None:  # runs in each pool worker
    """Die with the forkserver (which exits when the build dies); leave Ctrl-C to the build
    process, which stops every worker itself (a worker that died of SIGINT on its own
    would leave the pool waiting for its task forever). SIGTERM stays: the pool's own
    ``terminate()`` stops workers with it."""
    die_with_parent(signal.SIGKILL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextlib.contextmanager
def _children_die_with_parent():
    """datatrove's executor starts a ``multiprocess.Manager()`` server and a pool of
    workers (forkserver) that nothing stops when the build is killed with SIGKILL: they
    would wait forever as orphans. While the executor runs, both start with a parent-death
    signal instead (and workers leave signals to the build; see ``_worker_init``)."""
    import multiprocess
    import multiprocess.pool
    from multiprocess.managers import SyncManager

    def manager() -> SyncManager:
        m = SyncManager(ctx=multiprocess.get_context())
        m.start(initializer=_manager_init)
        return m

    class Pool(multiprocess.pool.Pool):
        def __init__(self, processes=None, initializer=None, *args, **kwargs):
            super().__init__(processes, _worker_init if initializer is None else initializer, *args, **kwargs)
            watch_pool(self)  # an interrupted build stops it replacing the workers it kills

    original = multiprocess.Manager, multiprocess.pool.Pool
    multiprocess.Manager, multiprocess.pool.Pool = manager, Pool
    try:
        yield
    finally:
        multiprocess.Manager, multiprocess.pool.Pool = original


def console_log_level() -> str:
    """The level of stage log lines on stderr: WARNING, INFO under ``datagen -v``
    (``DATAGEN_VERBOSE=1``), ERROR under ``datagen -q`` (``DATAGEN_QUIET=1``)."""
    if os.environ.get("DATAGEN_VERBOSE") == "1":
        return "INFO"
    return "ERROR" if os.environ.get("DATAGEN_QUIET") == "1" else "WARNING"


class QuietLocalExecutor(LocalPipelineExecutor):
    """datatrove's local executor, with each task's console log kept in its log file only.

    datatrove adds a stderr sink per task; under a progress bar that is noise. The task
    logs still land in ``<logging_dir>/logs/`` and errors still propagate.
    """

    def run(self):
        from loguru import logger

        logger.remove()  # datatrove's INFO lines on the main process; warnings still show
        logger.add(sys.__stderr__, level=console_log_level())
        with _children_die_with_parent():
            return super().run()

    def _run_for_rank(self, rank: int, local_rank: int = 0, node_rank: int = -1):
        if os.environ.get("DATAGEN_VERBOSE") == "1":  # datagen -v: every task's log lines too
            return super()._run_for_rank(rank, local_rank, node_rank)
        real = sys.stderr
        sys.stderr = io.StringIO()
        try:
            return super()._run_for_rank(rank, local_rank, node_rank)
        finally:
            sys.stderr = real


class DatagenSlurmExecutor(SlurmPipelineExecutor):
    """datatrove's Slurm executor, without ``#SBATCH`` lines for unset options (datatrove
    would write ``--partition=None``)."""

    def get_sbatch_args(self, max_array: int = 1) -> dict:
        return {k: v for k, v in super().get_sbatch_args(max_array).items() if v is not None}


class StageRunner:
    """Runs each datatrove stage of one build (see the module docstring)."""

    def __init__(self, cfg: ExecutorConfig, run_id: str, console: Console):
        self.cfg = cfg
        self.run_id = run_id
        self.console = console

    def run(self, name: str, pipeline: list, tasks: int, workers: int, logging_dir: str | Path,
            progress: dict | None = None) -> None:
        """Run one stage; ``progress`` (``files_per_task``, ``total_files``) draws a bar."""
        logging_dir = str(logging_dir)
        if self.cfg.kind == "slurm":
            return self._slurm(name, pipeline, tasks, logging_dir)
        if self.cfg.kind == "ray":
            executor = self._ray(pipeline, tasks, workers, logging_dir)
        else:
            executor = QuietLocalExecutor(pipeline=pipeline, tasks=tasks, workers=workers, logging_dir=logging_dir)
        progress = progress or {"files_per_task": 1, "total_files": tasks}
        run_with_rank_progress(executor, self.console, name, tasks, **progress)

    def factory(self, name: str):
        """An ``executor(pipeline, tasks=, workers=, logging_dir=)`` whose ``run()`` runs the
        stage here (what ``curate.near_dedup`` takes)."""
        runner = self

        class _Stage:
            def __init__(self, pipeline: list, tasks: int, workers: int, logging_dir: str):
                self.args = (pipeline, tasks, workers, logging_dir)

            def run(self) -> None:
                # a first step that can say how far it is (``progress_bar``) gets a bar in its items
                bar = getattr(self.args[0][0], "progress_bar", None) if self.args[0] else None
                runner.run(f"{name} {Path(self.args[3]).name}", *self.args, progress=bar() if callable(bar) else None)

        return _Stage

    def _ray(self, pipeline: list, tasks: int, workers: int, logging_dir: str):
        try:
            import ray
            from datatrove.executor.ray import RayPipelineExecutor
        except ImportError:
            raise UserError(install_hint("ray", "ray")) from None
        if not ray.is_initialized():
            ray.init(address=self.cfg.ray_address, log_to_driver=False)
        return RayPipelineExecutor(pipeline, tasks=tasks, workers=workers, logging_dir=logging_dir,
                                   cpus_per_task=self.cfg.cpus_per_task, mem_per_cpu_gb=self.cfg.mem_per_cpu_gb)

    def _slurm(self, name: str, pipeline: list, tasks: int, logging_dir: str) -> None:
        c = self.cfg
        executor = DatagenSlurmExecutor(
            pipeline, tasks=tasks, time=c.time, partition=c.partition, cpus_per_task=c.cpus_per_task,
            mem_per_cpu_gb=c.mem_per_cpu_gb, job_name=f"datagen-{name.replace(' ', '-')}-{self.run_id[:8]}",
            qos=c.qos, env_command=c.env_command, sbatch_args=dict(c.sbatch_args), max_array_size=c.max_array_size,
            logging_dir=logging_dir, tasks_per_job=c.tasks_per_job, requeue=False, mail_type=None)
        todo = executor.get_incomplete_ranks()
        if not todo:
            return
        tries = Path(logging_dir) / "submissions"
        done = int(tries.read_text()) if tries.exists() else 0
        if done > c.resubmits:
            raise StageIncomplete(f"{len(todo)} of {tasks} {name} tasks did not complete after {done} submissions; "
                                  f"see the task logs in {logging_dir}/logs and {logging_dir}/slurm_logs")
        tries.parent.mkdir(parents=True, exist_ok=True)
        tries.write_text(str(done + 1))
        executor.run()
        raise JobsSubmitted(name, str(executor.job_id), len(todo), tasks)


def submit_rest(build: str, recipe: dict, cfg: ExecutorConfig, work: Path, logs: Path, after: str,
                workers: int) -> str:
    """Submit ``datagen build <build>`` with the same recipe as a job that starts when job
    ``after`` ends (``afterany``: a failed array task must not strand the build). Returns
    the job id."""
    work.mkdir(parents=True, exist_ok=True)
    logs.mkdir(parents=True, exist_ok=True)
    recipe_file = work / "recipe.yaml"
    recipe_file.write_text(yaml.safe_dump(recipe, sort_keys=False), encoding="utf-8")
    sbatch = {"job-name": f"datagen-build-{build}", "dependency": f"afterany:{after}", "time": cfg.time,
              "cpus-per-task": workers, "mem-per-cpu": f"{cfg.mem_per_cpu_gb}G",
              "output": str(logs / "build-%j.out"), "partition": cfg.partition, "qos": cfg.qos, **cfg.sbatch_args}
    command = [sys.executable, "-m", "datagen.cli.app", "build", build, "--recipe", str(recipe_file)]
    lines = ["#!/bin/bash", *(f"#SBATCH --{k}={v}" for k, v in sbatch.items() if v is not None),
             "# Generated by datagen: the rest of the build, after its stage's array job.",
             "set -euo pipefail", f"cd {shlex.quote(os.getcwd())}", cfg.env_command or "", shlex.join(command), ""]
    script = work / f"build-after-{after}.sbatch"
    script.write_text("\n".join(lines), encoding="utf-8")
    out = subprocess.run(["sbatch", str(script)], capture_output=True, text=True)
    if out.returncode != 0:
        raise UserError(f"sbatch refused the build job {script}: {out.stderr.strip()}")
    return out.stdout.split()[-1]


__all__ = ["StageRunner", "DatagenSlurmExecutor", "submit_rest"]
