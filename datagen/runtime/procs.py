"""The processes a build starts: they die with it, and an interrupted build stops them.

Two guarantees, both Linux-only (elsewhere they quietly do nothing):

- ``die_with_parent(sig)`` in a child: the kernel sends ``sig`` when its parent dies, even
  by SIGKILL. The builds' pool workers and datatrove's manager set it at start (see
  ``datagen.crawl.writer``); the forkserver between them exits when the build's end of
  its pipe closes, which fires the workers' signal in turn.
- ``freeze_children(keep)`` / ``stop_children(keep)``: freeze, then SIGKILL every descendant of this process except
  the subtrees of ``keep`` (children that existed before the build began, e.g. a test's
  own server), so nothing of an interrupted build keeps running or writing. First the
  process pools this process runs (``watch_pool``) stop replacing workers: a stage runs its
  pool in a thread of its own, which an interrupt does not reach, and whose pool would
  otherwise start a new forkserver for the workers just killed (and leave it half spoken
  to, printing a traceback, when the build exits).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
import weakref

PR_SET_PDEATHSIG = 1


def alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (on this host; another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def die_with_parent(sig: int = signal.SIGKILL) -> None:
    """Ask the kernel to send ``sig`` to this process when its parent dies."""
    import ctypes

    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, sig)
    except (OSError, AttributeError):
        pass


def _parents() -> dict[int, int]:
    """pid -> parent pid of every process (live or zombie) we can see."""
    out: dict[int, int] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()  # after "pid (comm) "
        if fields and fields[0] != b"Z":
            out[int(name)] = int(fields[1])
    return out


def children(pid: int | None = None) -> set[int]:
    """The live direct children of ``pid`` (default: this process)."""
    pid = os.getpid() if pid is None else pid
    return {p for p, parent in _parents().items() if parent == pid}


def descendants(pid: int | None = None, keep: set[int] = frozenset()) -> list[int]:
    """Live descendants of ``pid`` (default: this process), minus the subtrees of ``keep``."""
    pid = os.getpid() if pid is None else pid
    tree: dict[int, list[int]] = {}
    for p, parent in _parents().items():
        tree.setdefault(parent, []).append(p)
    out: list[int] = []
    todo = [c for c in tree.get(pid, []) if c not in keep]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(tree.get(p, []))
    return out


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


_POOLS: weakref.WeakSet = weakref.WeakSet()


def watch_pool(pool) -> None:
    """Have ``halt_pools`` stop ``pool`` (a ``multiprocessing``-style pool) from replacing
    its workers once the run is being stopped."""
    _POOLS.add(pool)


def halt_pools(timeout_s: float = 2.0) -> None:
    """End every watched pool's worker-handler thread (the one that starts replacement
    workers), without waiting for its tasks; the workers are left for ``stop_children``."""
    handlers = []
    for pool in list(_POOLS):
        handler = getattr(pool, "_worker_handler", None)
        if handler is None or not handler.is_alive():
            continue
        handler._state = "TERMINATE"  # the pool module's TERMINATE: the loop ends
        try:
            pool._change_notifier.put(None)  # wake it now, not at its next poll
        except (OSError, ValueError):
            pass
        handlers.append(handler)
    deadline = time.monotonic() + timeout_s
    for handler in handlers:
        if handler is not threading.current_thread():
            handler.join(max(0.0, deadline - time.monotonic()))


def _trackers() -> set[int]:
    """multiprocessing's resource trackers: spared, since the build's own pool threads would
    only start a new one (with a warning); each exits when the last process using it does."""
    pids = set()
    for name in ("multiprocess.resource_tracker", "multiprocessing.resource_tracker"):
        tracker = getattr(sys.modules.get(name), "_resource_tracker", None)
        if getattr(tracker, "_pid", None):
            pids.add(tracker._pid)
    return pids


def freeze_children(keep: set[int] = frozenset()) -> set[int]:
    """SIGSTOP every descendant (minus ``keep``'s subtrees and the resource trackers) until
    the tree stops growing, so nothing forks a replacement or writes another byte."""
    seen: set[int] = set(_trackers())
    while tree := set(descendants(keep=keep)) - seen:
        for pid in tree:
            _signal(pid, signal.SIGSTOP)
        seen |= tree
    return seen - _trackers()


def stop_children(keep: set[int] = frozenset(), frozen: set[int] = frozenset(), timeout_s: float = 5.0) -> None:
    """SIGKILL ``frozen`` and every other descendant (frozen first, see above); repeat
    until none is left or ``timeout_s`` passed."""
    halt_pools(min(2.0, timeout_s))
    deadline = time.monotonic() + timeout_s
    while True:
        tree = set(frozen) | freeze_children(keep)
        frozen = set()
        for pid in tree:  # zombies stay for their parents (multiprocessing, subprocess) to reap
            _signal(pid, signal.SIGKILL)
        if not tree or time.monotonic() > deadline:
            return
