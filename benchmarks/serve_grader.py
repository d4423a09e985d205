"""Latency (p50 / p99) and throughput (grades per core-minute) of `datagen serve grader`,
against the same grades called in process (``Grader.grade``, no HTTP, no queue: the
baseline), on the tests' two-task repo with warm environments.

The server runs as a real process with ``-w W``; ``2 W`` client threads send gold and
wrong patches (half each) over HTTP and wait out 503s as trainers do (``Retry-After``).
Latency is the client's wall time per grade, queueing included; grades per core-minute
is grades / (wall minutes x min(W, cores)).

Run by hand:  PYTHONPATH=. python benchmarks/serve_grader.py [--workers 2] [--grades 32]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from datagen.config.sandbox import EnvConfig, SandboxLimits
from datagen.sandbox.isolation.select import get_sandbox
from datagen.serve import clients
from datagen.serve.grader import Grader
from tests.serve.conftest import SITE, calc_tasks

LIMITS = {"processes": 64, "memory_mb": 1024}


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def jobs(tasks: Path, n: int) -> list[tuple[str, str]]:
    rows = [json.loads(line) for line in tasks.read_text().splitlines()]
    out = []
    for k in range(n):
        row = rows[k % len(rows)]
        patch = row["patch"] if k % 4 < 2 else row["patch"].replace("+    return a", "+    return 1 + a")
        out.append((row["instance_id"], patch))
    return out


def in_process(tasks: Path, work: list[tuple[str, str]], cache: Path) -> list[float]:
    grader = Grader(tasks, get_sandbox("auto", warn=False), workers=1, timeout_s=120,
                    limits=SandboxLimits(**LIMITS), env=EnvConfig(cache_dir=str(cache), inherit_site_packages=[SITE]))
    try:
        grader.warm()
        times = []
        for iid, patch in work:
            t0 = time.perf_counter()
            grader.grade(iid, patch)
            times.append(time.perf_counter() - t0)
        return times
    finally:
        grader.close()


def served(tasks: Path, work: list[tuple[str, str]], cache: Path, workers: int, port: int) -> tuple[list[float], float]:
    sets = ["--set", f"env.inherit_site_packages=[{SITE}]", "--set", f"env.cache_dir={cache}",
            *(a for k, v in LIMITS.items() for a in ("--set", f"sandbox.limits.{k}={v}"))]
    proc = subprocess.Popen([sys.executable, "-m", "datagen.cli.app", "serve", "grader", str(tasks), "--port",
                             str(port), "-w", str(workers), "--queue", str(workers), "--warm", *sets],
                            stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": os.getcwd()})
    url = f"http://127.0.0.1:{port}"
    try:
        while True:
            try:
                clients.call(url, "/health", retries=0)
                break
            except Exception:  # noqa: BLE001 - not up yet
                if proc.poll() is not None:
                    raise SystemExit("grader exited") from None
                time.sleep(0.2)

        def one(job: tuple[str, str]) -> float:
            t0 = time.perf_counter()
            clients.grade(job[0], job[1], url)
            return time.perf_counter() - t0

        t0 = time.perf_counter()
        with ThreadPoolExecutor(2 * workers) as pool:
            times = list(pool.map(one, work))
        return times, time.perf_counter() - t0
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", "-w", type=int, default=2)
    ap.add_argument("--grades", type=int, default=32)
    ap.add_argument("--baseline-grades", type=int, default=8)
    ap.add_argument("--port", type=int, default=18765)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="serve-grader-bench-") as tmp:
        tasks, cache = calc_tasks(Path(tmp)), Path(tmp) / "envs"
        base = in_process(tasks, jobs(tasks, args.baseline_grades), cache)
        times, wall = served(tasks, jobs(tasks, args.grades), cache, args.workers, args.port)
    cores = min(args.workers, os.cpu_count() or 1)
    print(json.dumps({
        "workers": args.workers, "cores": os.cpu_count(), "grades": len(times),
        "p50_s": round(statistics.median(times), 2), "p99_s": round(pct(times, 0.99), 2),
        "grades_per_core_minute": round(len(times) / (wall / 60) / cores, 1),
        "in_process_p50_s": round(statistics.median(base), 2),
        "in_process_grades_per_core_minute": round(60 / statistics.mean(base), 1),
        "load_average": round(os.getloadavg()[0], 1),
    }))


if __name__ == "__main__":
    main()
