"""Per-run cgroup (v1) groups: exact process and memory limits for a whole tree, and a
record of which one was hit. Used when the host mounts the ``pids`` / ``memory``
controllers writable (as root on these machines); callers fall back to rlimits otherwise.
"""

from __future__ import annotations

import itertools
import os
import re
import signal
import time
from pathlib import Path

from datagen.runtime.procs import alive

ROOT = Path("/sys/fs/cgroup")
_counter = itertools.count()
_NAME = re.compile(r"datagen-(\d+)-\d+")


def _own_path(controller: str) -> str | None:
    """Our cgroup's path inside ``controller``'s hierarchy (from /proc/self/cgroup)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(","):
            return path
    return None


def _make(controller: str, name: str) -> Path | None:
    rel = _own_path(controller)
    if rel is None:
        return None
    group = ROOT / controller / rel.lstrip("/") / name
    try:
        group.mkdir()
    except OSError:
        return None
    return group


class RunCgroup:
    """The pids and memory groups of one run (either may be missing)."""

    def __init__(self, pids: Path | None, memory: Path | None):
        self.pids = pids
        self.memory = memory

    @classmethod
    def create(cls, processes: int, memory_mb: int) -> RunCgroup:
        reap_orphans()
        name = f"datagen-{os.getpid()}-{next(_counter)}"
        pids = _make("pids", name)
        if pids is not None and not _write(pids / "pids.max", str(processes)):
            _rmdir(pids)
            pids = None
        memory = _make("memory", name)
        if memory is not None:
            limit = str(memory_mb * 1024 * 1024)
            if not _write(memory / "memory.limit_in_bytes", limit):
                _rmdir(memory)
                memory = None
            else:
                _write(memory / "memory.memsw.limit_in_bytes", limit)  # absent without swap
        return cls(pids, memory)

    def attach_current(self) -> None:
        """Move the calling process in (called in the child between fork and exec)."""
        for group in (self.pids, self.memory):
            if group is not None:
                fd = os.open(group / "cgroup.procs", os.O_WRONLY)
                try:
                    os.write(fd, str(os.getpid()).encode())
                finally:
                    os.close(fd)

    def processes_hit(self) -> bool:
        return self.processes_max_events() > 0

    def processes_max_events(self) -> int:
        """How often a fork was refused at pids.max (a count: a session compares two)."""
        if self.pids is None:
            return 0
        for line in _read(self.pids / "pids.events").splitlines():
            key, _, value = line.partition(" ")
            if key == "max":
                return int(value or 0)
        return 0

    def oom_kills(self) -> int:
        if self.memory is None:
            return 0
        for line in _read(self.memory / "memory.oom_control").splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
        return 0

    def memory_peak_mb(self) -> float | None:
        if self.memory is None:
            return None
        raw = _read(self.memory / "memory.max_usage_in_bytes").strip()
        return round(int(raw) / 2**20, 1) if raw else None

    def kill_all(self) -> None:
        for group in (self.pids, self.memory):
            if group is None:
                continue
            for pid in _read(group / "cgroup.procs").split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def remove(self) -> None:
        self.kill_all()
        for group in (self.pids, self.memory):
            if group is not None:
                _rmdir(group)


def reap_orphans() -> None:
    """Kill and remove the run groups of a datagen that is gone (SIGKILLed mid-run).

    Its runs die with it, except one caught inside bwrap's own start-up (bwrap's
    ``--die-with-parent`` is asked for after its fork): such a run would go on, bounded
    only by its CPU rlimit. Its group, named after the dead datagen's pid, finds it.
    """
    for controller in ("pids", "memory"):
        rel = _own_path(controller)
        if rel is None:
            continue
        try:
            entries = list(os.scandir(ROOT / controller / rel.lstrip("/")))
        except OSError:
            continue
        for entry in entries:
            match = _NAME.fullmatch(entry.name)
            if match and not alive(int(match.group(1))):
                group = RunCgroup(Path(entry.path), None)
                group.remove()


def _write(path: Path, value: str) -> bool:
    try:
        path.write_text(value)
        return True
    except OSError:
        return False


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _rmdir(path: Path) -> None:
    # A group can only go once its last process is reaped; that takes a moment after kill.
    for _ in range(50):
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.02)


def support() -> dict[str, bool]:
    """Which per-run controllers this process can create right now."""
    group = RunCgroup.create(processes=1024, memory_mb=1024)
    try:
        return {"pids": group.pids is not None, "memory": group.memory is not None}
    finally:
        group.remove()
