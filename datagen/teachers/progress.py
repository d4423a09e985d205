"""A rich progress bar for teacher batches: requests done, tokens/s, errors, cache hits."""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from datagen.teachers.types import TeacherResult


class TeacherProgress:
    """Context manager; ``update(result)`` once per finished request. No-op when disabled."""

    def __init__(self, total: int, *, enabled: bool = True, description: str = "teacher"):
        self.enabled = enabled and total > 0
        self.total = total
        self.tokens = 0
        self.errors = 0
        self.cached = 0
        self.started = time.monotonic()
        self._progress: Progress | None = None
        self._task: Any = None
        self.description = description

    def __enter__(self) -> TeacherProgress:
        if self.enabled:
            self._progress = Progress(
                TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                TextColumn("{task.fields[tok_s]:.0f} tok/s  {task.fields[errors]} errors  "
                           "{task.fields[cached]} cached"),
                TimeElapsedColumn(), console=Console(stderr=True), transient=False,
            )
            self._progress.start()
            self._task = self._progress.add_task(
                self.description, total=self.total, tok_s=0.0, errors=0, cached=0
            )
        return self

    def update(self, result: TeacherResult) -> None:
        if result.cached:
            self.cached += 1
        else:
            self.tokens += result.usage.completion_tokens
        if result.status == "error":
            self.errors += 1
        if self._progress is not None:
            elapsed = max(time.monotonic() - self.started, 1e-9)
            self._progress.update(self._task, advance=1, tok_s=self.tokens / elapsed,
                                  errors=self.errors, cached=self.cached)

    def __exit__(self, *exc: Any) -> None:
        if self._progress is not None:
            self._progress.stop()
