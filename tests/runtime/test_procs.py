"""An interrupted build stops its processes, and its pools do not start new ones."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

# Run in a process of its own: a test worker may hold a forkserver from an earlier test,
# whose subtree a stop spares (it existed before), and which a new pool would reuse.
SCENARIO = textwrap.dedent('''
    import json, threading, time
    import multiprocess
    from datagen.runtime.executors import _children_die_with_parent
    from datagen.runtime.procs import descendants, stop_children

    def nap(x):
        time.sleep(30)
        return x

    def started(before):
        """Descendants since ``before``, less multiprocessing's resource tracker (it stays
        by design: it exits with the last process that uses it)."""
        out = set()
        for pid in set(descendants()) - before:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    if b"resource_tracker" not in fh.read():
                        out.add(pid)
            except OSError:
                pass
        return out

    def stage():  # as a stage runs: datatrove's executor in a thread of its own
        with _children_die_with_parent():  # as QuietLocalExecutor runs it
            pool = multiprocess.get_context("forkserver").Pool(2)
            try:
                pool.map(nap, range(4))
            except Exception:
                pass

    if __name__ == "__main__":
        before = set(descendants())
        threading.Thread(target=stage, daemon=True).start()
        deadline = time.monotonic() + 30
        while len(started(before)) < 3 and time.monotonic() < deadline:  # forkserver + 2 workers
            time.sleep(0.05)
        running = sorted(started(before))
        stop_children(before)
        deadline = time.monotonic() + 6  # the pool's handler polls every 0.1 s; a forkserver starts in ~1 s
        while not (new := started(before)) and time.monotonic() < deadline:
            time.sleep(0.1)
        stop_children(before)
        print(json.dumps({"running": running, "after_stop": sorted(new)}))
''')


def test_a_pool_running_in_another_thread_does_not_replace_the_workers_a_stop_kills(tmp_path):
    """Without the watch the pool's handler starts a new forkserver for them (or fails to
    reach the killed one): a traceback on the interrupted build's stderr."""
    script = tmp_path / "scenario.py"
    script.write_text(SCENARIO)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(seen["running"]) >= 3, seen  # the pool ran
    assert seen["after_stop"] == [], f"processes started after the stop: {seen}"
    assert "Traceback" not in proc.stderr, proc.stderr
