"""Progress bars (rich) for the builds, including one over datatrove tasks."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from datagen.errors import StageIncomplete
from datagen.runtime.rank_progress import RankProgress, items_done


class RateColumn(ProgressColumn):
    """Items per second (``1.2k/s``), from rich's moving estimate; blank until it has one."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        if speed is None:
            return Text("", style="progress.data.speed")
        for unit, scale in (("M", 1e6), ("k", 1e3)):
            if speed >= scale:
                return Text(f"{speed / scale:.1f}{unit}/s", style="progress.data.speed")
        return Text(f"{speed:.1f}/s" if speed < 10 else f"{speed:.0f}/s", style="progress.data.speed")


def _progress(console: Console) -> Progress:
    """A bar like tqdm's: done/total, rate, elapsed and time left (ETA)."""
    return Progress(
        TextColumn("[bold blue]{task.description:<16}"), BarColumn(), MofNCompleteColumn(), RateColumn(),
        TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(), console=console, transient=False,
        disable=os.environ.get("DATAGEN_NO_PROGRESS") == "1", speed_estimate_period=10.0,
    )


class Stopwatch:
    """Wall time per named stage, in the order the stages ran (for the build summary).

    With ``log`` set, every stage start and end is also appended there as a line
    ``<unix time>\t<start|end>\t<stage>[\t<seconds>]``, so that whoever watches a running
    build (a person with ``tail -f``, a memory profiler) can tell which stage it is in.
    """

    def __init__(self, log: Path | None = None) -> None:
        self.seconds: dict[str, float] = {}
        self.log = log

    @contextlib.contextmanager
    def stage(self, name: str) -> Iterator[None]:
        self._note("start", name)
        t0 = time.monotonic()
        try:
            yield
        finally:
            spent = time.monotonic() - t0
            self.seconds[name] = self.seconds.get(name, 0.0) + spent
            self._note("end", name, f"{spent:.3f}")

    def _note(self, *fields: str) -> None:
        if self.log is not None:
            with open(self.log, "a", encoding="utf-8") as fh:
                fh.write("\t".join([f"{time.time():.3f}", *fields]) + "\n")


@contextlib.contextmanager
def progress_bar(console: Console, description: str, total: int | None) -> Iterator[Callable[[int], None]]:
    """A bar; yields ``advance(n)``."""
    with _progress(console) as prog:
        task = prog.add_task(description, total=total)
        yield lambda n=1: prog.advance(task, n)


def run_with_rank_progress(executor, console: Console, description: str, tasks: int, *,
                           files_per_task: int, total_files: int, count: Callable[[], int] | None = None) -> None:
    """Run a datatrove executor while a bar follows its completed ranks (in files), or
    ``count()`` (items done so far) where the stage stores its items as it goes."""
    completions = os.path.join(str(executor.logging_dir.path), "completions")
    error: list[BaseException] = []

    def target() -> None:
        try:
            executor.run()
        except BaseException as exc:  # re-raised in the caller's thread
            error.append(exc)

    thread = threading.Thread(target=target, name="datatrove-executor", daemon=True)

    def done_files() -> int:
        try:
            ranks = [int(n) for n in os.listdir(completions) if n.isdigit()]
        except FileNotFoundError:
            return 0
        return sum(min(files_per_task, total_files - r * files_per_task) for r in ranks)

    done = count or done_files
    with _progress(console) as prog:
        task = prog.add_task(description, total=total_files, completed=done())
        thread.start()
        while thread.is_alive():
            thread.join(0.2)
            prog.update(task, completed=done())
        prog.update(task, completed=done())
    if error:
        raise error[0]
    missing = tasks - len([n for n in os.listdir(completions) if n.isdigit()]) if os.path.isdir(completions) else tasks
    if missing:
        raise StageIncomplete(f"{missing} of {tasks} {description} tasks did not complete; "
                              f"see the task logs in {executor.logging_dir.path}/logs")


__all__ = ["Stopwatch", "progress_bar", "run_with_rank_progress", "RankProgress", "items_done", "RateColumn"]
