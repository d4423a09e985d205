"""How far a running datatrove rank is, for the progress bars (stdlib only: the crawl's
workers import it, and they should not pay for rich).

A rank writes its count of items done to ``<folder>/<rank>.progress`` (``RankProgress``);
the bar's process sums finished ranks and running ones (``items_done``).
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

PROGRESS_EVERY_S = 0.5  # how often a rank writes how far it is (``RankProgress``)


class RankProgress:
    """A rank's count of items done, written to ``<folder>/<rank>.progress`` every
    ``PROGRESS_EVERY_S`` while it changes (by a small thread, so a count reached in a burst
    is shown even when the next items are long in coming; a rename, so a reader never sees
    half a number): the bar of a stage then moves while its ranks run, not only when one
    finishes."""

    def __init__(self, folder: str | Path, rank: int, keep: bool = False) -> None:
        self.keep = keep  # a finished rank leaves its final count (for a stage whose output says none)
        self.path = Path(folder) / f"{rank:05d}.progress"
        self.done = 0
        self._written = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def add(self, n: int = 1) -> None:
        self.done += n
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="rank-progress", daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(PROGRESS_EVERY_S):
            done = self.done
            if done != self._written:
                with contextlib.suppress(OSError):  # a count not shown is no reason to fail the rank
                    self._write(done)

    def _write(self, done: int) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".progress.tmp")
        tmp.write_text(str(done), encoding="ascii")
        os.replace(tmp, self.path)
        self._written = done

    def __enter__(self) -> RankProgress:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self.close(finished=exc_type is None)

    def close(self, finished: bool = True) -> None:
        """The rank is done (its output file counts from now on, or with ``keep`` its final
        count stays) or failed (its count goes: it runs again)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.keep and finished:
            self._write(self.done)
        else:
            self.path.unlink(missing_ok=True)
        self.path.with_suffix(".progress.tmp").unlink(missing_ok=True)


def progress_sum(folder: str | Path) -> int:
    """Items done by the ranks of a stage that keep their counts (``RankProgress(keep=True)``)."""
    done = 0
    with contextlib.suppress(FileNotFoundError):
        for path in Path(folder).glob("*.progress"):
            with contextlib.suppress(OSError, ValueError):
                done += int(path.read_text(encoding="ascii"))
    return done


def items_done(folder: str | Path, files_per_task: int, total: int, suffix: str = ".parquet") -> int:
    """Items done by a stage whose rank ``r`` writes ``<folder>/<r:05d><suffix>`` when it
    finishes (``files_per_task`` items, fewer for the last) and ``RankProgress`` meanwhile."""
    done = 0
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return 0
    finished = {n[: -len(suffix)] for n in names if n.endswith(suffix) and n[: -len(suffix)].isdigit()}
    for rank in finished:
        done += max(0, min(files_per_task, total - int(rank) * files_per_task))
    for name in names:
        if name.endswith(".progress") and name[:-9] not in finished:
            with contextlib.suppress(OSError, ValueError):
                done += int(Path(folder, name).read_text(encoding="ascii"))
    return min(done, total)


__all__ = ["RankProgress", "items_done", "progress_sum", "PROGRESS_EVERY_S"]
