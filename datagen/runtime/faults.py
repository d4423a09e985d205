"""What a run does when it is stopped from outside: signals and a full disk.

- ``interrupts()``: while a run is in progress, SIGINT and SIGTERM raise ``Interrupted`` in
  the main thread (also when the shell started the build with SIGINT ignored, as it does
  for ``cmd &``); a second signal while the run cleans up ends the process at once.
- ``disk_full(exc)``: the ``OSError`` (or DuckDB / Arrow error) in ``exc``'s chain that
  says the disk is full, so the run can say so in one line (``disk_full_message``).
- ``fault_point(name)``: where a test may kill the process (``DATAGEN_FAULT=name[#n]``:
  SIGKILL the n-th time, default the first, that this process reaches ``name``), so a
  kill lands at an exact place of a write instead of wherever a timer happens to be.
  Points: ``write:<file name>`` (a file written whole, not yet renamed onto its path,
  ``atomic``), ``switch-move`` (after each file the output switch moves in) and
  ``switch-commit`` (the manifest committed, the old files not yet removed).
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
import shutil
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

from datagen.errors import Interrupted
from datagen.runtime.procs import stop_children

MiB = 1024 * 1024
NO_SPACE = "No space left on device"
SIGNALS = (signal.SIGINT, signal.SIGTERM)
FAULT_ENV = "DATAGEN_FAULT"
_reached: dict[str, int] = {}


@contextlib.contextmanager
def interrupts(keep: set[int]) -> Iterator[None]:
    """SIGINT / SIGTERM -> ``Interrupted``; a second one stops the children and exits
    ``128 + signal`` at once. Only the main thread can handle signals: elsewhere a no-op."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    fired: list[int] = []

    def handler(signum: int, _frame) -> None:
        if fired:  # the user insists: no more cleanup
            stop_children(keep, timeout_s=1.0)
            os._exit(128 + signum)
        fired.append(signum)
        raise Interrupted(signum, signal.Signals(signum).name)

    previous = {s: signal.signal(s, handler) for s in SIGNALS}
    try:
        yield
    finally:
        for s, old in previous.items():
            signal.signal(s, old)


def fault_point(name: str) -> None:
    """Kill this process here if ``DATAGEN_FAULT`` names this point (see the module
    docstring); a no-op otherwise (one environment lookup)."""
    wanted = os.environ.get(FAULT_ENV)
    if not wanted:
        return
    point, _, nth = wanted.partition("#")
    if point != name:
        return
    _reached[name] = _reached.get(name, 0) + 1
    if _reached[name] == int(nth or 1):
        os.kill(os.getpid(), signal.SIGKILL)


def quiet_orphaned_threads() -> None:
    """After a run killed its pool, the pool's helper threads in this process fail to reach
    the dead workers and manager; their tracebacks say nothing the user needs, so
    connection errors in threads are no longer printed once a run was stopped."""
    previous = threading.excepthook
    if getattr(previous, "datagen_quiet", False):
        return

    def hook(args: threading.ExceptHookArgs) -> None:
        if not issubclass(args.exc_type, (EOFError, ConnectionError, OSError)):
            previous(args)

    hook.datagen_quiet = True  # type: ignore[attr-defined]
    threading.excepthook = hook


def disk_full(exc: BaseException | None) -> BaseException | None:
    """The error in ``exc``'s cause/context chain that reports a full disk, if any."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno == errno.ENOSPC or NO_SPACE in str(exc):
            return exc
        exc = exc.__cause__ or exc.__context__
    return None


def disk_full_message(err: BaseException, out: Path, needed_bytes: int | None) -> str:
    """'no space left on device while writing PATH; free N MB and run again'."""
    where = getattr(err, "filename", None) or _path_in(str(err)) or str(out)
    free = _free_bytes(out)
    if needed_bytes and needed_bytes > free:
        ask = f"free {max(1, math.ceil((needed_bytes - free) / MiB))} MB"
    else:
        ask = "free some space"
    return (f"no space left on device while writing {where}; {ask} and run again "
            f"({free / MiB:.0f} MB free there now)")


def _path_in(text: str) -> str | None:
    """A quoted path in an error message (DuckDB and Arrow name the file in quotes)."""
    for quote in ('"', "'"):
        parts = text.split(quote)
        for part in parts[1::2]:
            if part.startswith("/"):
                return part
    return None


def _free_bytes(out: Path) -> int:
    path = Path(out)
    while not path.exists() and path != path.parent:
        path = path.parent
    try:
        return shutil.disk_usage(path).free
    except OSError:
        return 0


def remove_partial(roots: list[Path], scratch: list[Path]) -> None:
    """Remove half-written files: every ``*.tmp`` under ``roots``, and ``scratch`` paths."""
    for root in roots:
        if root.is_dir():
            for tmp in root.rglob("*.tmp"):
                _remove(tmp)
    for path in scratch:
        _remove(path)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


__all__ = ["interrupts", "fault_point", "quiet_orphaned_threads", "disk_full", "disk_full_message", "remove_partial"]
