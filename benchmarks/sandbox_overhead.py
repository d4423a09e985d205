"""Wall time of a sandboxed pytest run vs a bare one on the same small repo (goal <= 1.25x).

Both sides run the same interpreter, environment and pytest command (JUnit report
included); the sandboxed side adds bwrap, the uid hand-over of the working copy, cgroups,
rlimits and (as root) the disk_mb overlay. With bwrap a third side runs without that
overlay, to show what the disk cap itself costs.
Run by hand:  PYTHONPATH=. python benchmarks/sandbox_overhead.py [--files 20]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from datagen.config.sandbox import EnvConfig, SandboxLimits
from datagen.sandbox.envs.python.manager import EnvManager
from datagen.sandbox.harness.runners import REPORT, pytest_command, run_tests
from datagen.sandbox.isolation.bwrap import BwrapSandbox
from datagen.sandbox.isolation.select import get_sandbox

SITE = str(Path(pytest.__file__).resolve().parent.parent)


def make_repo(root: Path, files: int, tests: int) -> Path:
    repo = root / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "pkg" / "__init__.py").write_text("def double(x):\n    return 2 * x\n")
    for f in range(files):
        body = "".join(f"def test_{f}_{t}():\n    assert double({t}) == {2 * t}\n\n"
                       for t in range(tests))
        (repo / "tests" / f"test_m{f}.py").write_text("from pkg import double\n\n\n" + body)
    return repo


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--files", type=int, default=20)
    ap.add_argument("--tests", type=int, default=25)
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    sandbox = get_sandbox("auto")
    limits = SandboxLimits(timeout_s=120)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        repo = make_repo(root, args.files, args.tests)
        env = EnvManager(EnvConfig(cache_dir=str(root / "envs"), inherit_site_packages=[SITE]),
                         sandbox, limits).ensure(repo)
        bare_cmd = pytest_command(env.python, REPORT, [])
        uncapped = None
        if isinstance(sandbox, BwrapSandbox):
            uncapped = BwrapSandbox()
            uncapped._capped = lambda *args: None  # the same back end minus the disk_mb overlay
        bare, boxed, no_cap = [], [], []
        for _ in range(args.repeats):  # interleaved, so drift hits both sides alike
            t = time.perf_counter()
            proc = subprocess.run(bare_cmd, cwd=repo, env=env.run_env(repo), capture_output=True)
            bare.append(time.perf_counter() - t)
            assert proc.returncode == 0, proc.stdout[-500:]
            boxed.append(_timed_run(sandbox, repo, limits, env, args))
            if uncapped is not None:
                no_cap.append(_timed_run(uncapped, repo, limits, env, args))
    b, s = statistics.median(bare), statistics.median(boxed)
    print(f"repo: {args.files} files x {args.tests} tests; median of {args.repeats} runs")
    print(f"bare pytest:      {b:.3f} s")
    print(f"{sandbox.name} sandbox:    {s:.3f} s")
    print(f"ratio:            {s / b:.2f}x  (goal <= 1.25x)")
    if no_cap:
        n = statistics.median(no_cap)
        print(f"without disk cap: {n:.3f} s  (the cap adds {1000 * (s - n):+.1f} ms a run)")


def _timed_run(sandbox, repo: Path, limits: SandboxLimits, env, args) -> float:
    t = time.perf_counter()
    run = run_tests("pytest", sandbox, repo, limits, [], env=env)
    took = time.perf_counter() - t
    assert run.run.exit_code == 0 and len(run.results) == args.files * args.tests, run
    return took


if __name__ == "__main__":
    main()
