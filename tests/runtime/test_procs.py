"""An interrupted build stops its processes, and its pools do not start new ones."""

from __future__ import annotations

import threading
import time

import multiprocess

from datagen.runtime.executors import _children_die_with_parent
from datagen.runtime.procs import descendants, stop_children


def _started(before: set[int]) -> set[int]:
    """This process's descendants since ``before``, less multiprocessing's resource tracker
    (which stays by design: it exits with the last process that uses it)."""
    out = set()
    for pid in set(descendants()) - before:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if b"resource_tracker" in fh.read():
                    continue
        except OSError:
            continue
        out.add(pid)
    return out


def _nap(x: int) -> int:
    time.sleep(30)
    return x


def test_a_pool_running_in_another_thread_does_not_replace_the_workers_a_stop_kills():
    """Without the watch the pool's handler starts a new forkserver for them (or fails to
    reach the killed one): a traceback on the interrupted build's stderr."""
    before = set(descendants())
    started = threading.Event()

    def stage() -> None:  # as a stage runs: datatrove's executor in a thread of its own
        def run() -> None:
            pool = multiprocess.get_context("forkserver").Pool(2)
            started.set()
            try:
                pool.map(_nap, range(4))
            except Exception:
                pass
        with _children_die_with_parent():  # as QuietLocalExecutor runs datatrove's executor
            run()

    thread = threading.Thread(target=stage, daemon=True)
    thread.start()
    assert started.wait(20)
    deadline = time.monotonic() + 20
    while len(_started(before)) < 3 and time.monotonic() < deadline:  # forkserver + 2 workers
        time.sleep(0.05)
    assert len(_started(before)) >= 3
    stop_children(before)
    deadline = time.monotonic() + 6  # the pool's handler polls every 0.1 s; a forkserver starts in ~1 s
    while not (new := _started(before)) and time.monotonic() < deadline:
        time.sleep(0.1)
    stop_children(before)
    assert not new, f"processes started after the stop: {new}"
