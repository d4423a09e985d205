"""The default ``datagen build tasks`` on the bundled ``sample_data/``: its time and what its
tasks are worth (``tasks_audit``: leaks, statement counts, duplicates, spread, replay).

The baseline is the same command on the code before sealed environments and spread
candidates (commit b40d0fc): 38 min wall on 2 cores, 685 tasks, a median of 9.4 tasks per
changed function and 392 statements identical to another task's (issue 27's figures). The
wall time of a shared machine depends on its load, so the build's core-seconds are measured
too (its process tree in a cpuacct cgroup, sandboxed test runs included; see
``tasks_yield.CpuMeter``): core-s / 2 is the wall time the build needs on two idle cores.

    PYTHONPATH=. python benchmarks/tasks_default.py -o /tmp/tasks-default --replay 1
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from tasks_audit import audit, markdown  # noqa: E402
from tasks_yield import measured  # noqa: E402

BASELINE_WALL_S = 38 * 60  # b40d0fc, same command, 2 cores (issue 27)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--out", type=Path, default=Path("/tmp/tasks-default"))
    ap.add_argument("-w", "--workers", type=int, default=2)
    ap.add_argument("--replay", type=int, default=1, help="tasks replayed per repo")
    args = ap.parse_args()
    shutil.rmtree(args.out, ignore_errors=True)
    cmd = [sys.executable, "-c", "from datagen.cli.app import main; main()", "build", "tasks", "-o", str(args.out),
           "-w", str(args.workers)]
    load = os.getloadavg()[0]
    proc, wall, cgroup, rusage = measured(cmd)
    if proc.returncode != 0:
        raise SystemExit(f"build failed:\n{proc.stderr[-4000:]}")
    core_s = cgroup if cgroup >= 0 else rusage
    report = audit(args.out, args.replay)
    report.update({"wall_s": round(wall, 1), "core_s": round(core_s, 1), "load_at_start": load,
                   "two_idle_cores_s": round(core_s / 2, 1), "baseline_wall_s": BASELINE_WALL_S})
    (args.out / "audit.json").write_text(json.dumps(report, indent=2, sort_keys=True))
    print(f"wall {wall / 60:.1f} min (load {load:.1f} at start); {core_s:.0f} core-s = {core_s / 120:.1f} min on two "
          f"idle cores; baseline {BASELINE_WALL_S / 60:.0f} min -> {BASELINE_WALL_S / (core_s / 2):.2f}x")
    print(markdown(report))
    subprocess.run(["tail", "-n", "40"], input=proc.stderr, text=True)


if __name__ == "__main__":
    main()
