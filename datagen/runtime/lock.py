"""One build at a time per output folder.

``OutputLock(out)`` holds an exclusive ``flock`` on ``<out>/.datagen.lock`` for a build's
whole life; the file names the holder (pid, command, start time) so that a second build
fails at once with one line saying which build is running. The kernel drops the lock when
the holder dies, even by SIGKILL, so a killed build never blocks the next one. The file is
removed on release; a waiter that locked a file already unlinked tries again.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import socket
from pathlib import Path

from datagen.errors import UserError

LOCK_NAME = ".datagen.lock"


class OutputLocked(UserError):
    """Another build holds the output folder."""


class OutputLock:
    def __init__(self, out: Path, command: str):
        self.path = Path(out) / LOCK_NAME
        self.command = command
        self.fd: int | None = None

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read(fd)
                os.close(fd)
                raise OutputLocked(self._busy(holder)) from None
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)  # the holder removed this file as we opened it: lock the new one
        info = {"pid": os.getpid(), "host": socket.gethostname(), "command": self.command,
                "started_at": dt.datetime.now().astimezone().isoformat(timespec="seconds")}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(info).encode() + b"\n", 0)
        self.fd = fd

    def release(self) -> None:
        if self.fd is None:
            return
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass
        os.close(self.fd)
        self.fd = None

    def _busy(self, holder: dict) -> str:
        who = (f"`datagen {holder.get('command', 'build')}` (pid {holder.get('pid', '?')} on "
               f"{holder.get('host', '?')}, started {holder.get('started_at', '?')})") if holder else "another build"
        return f"{self.path.parent} is in use by {who}; wait for it to finish or stop it, then run again"

    def __enter__(self) -> OutputLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _read(fd: int) -> dict:
    try:
        return json.loads(os.pread(fd, 4096, 0) or b"{}")
    except ValueError:
        return {}  # the holder is still writing its line


__all__ = ["OutputLock", "OutputLocked", "LOCK_NAME"]
