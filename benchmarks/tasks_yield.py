"""Yield and cost of ``datagen build tasks`` without a teacher, and a replay of every task
outside datagen (the quality bar of the tasks build).

Each input is built on its own (procedural + removal + feature_removal + combine) in a
subprocess; its CPU time is measured in core-seconds: the build's process tree in a
cpuacct cgroup when the host lets us make one (it also counts the sandboxed test runs,
whose processes bubblewrap reaps out of our sight), else ``getrusage(RUSAGE_CHILDREN)``.
Then every emitted task is replayed with plain tools: ``git clone`` of ``repos/``,
``git checkout base_commit``, then the task's own ``setup_script`` and ``eval_script``
(bash, any language: it must fail), ``git apply`` of ``patch``, ``eval_script`` again (it
must pass). Tasks without scripts (older builds) replay the whole suite under plain pytest
(``node --test`` for node tasks) instead. The table has a row per input with its tasks'
languages, so non-Python repos' tasks per core-hour read beside Python's.

Run by hand (inputs: folders or git repos; sample_data/<name> for the bundled ones):

    PYTHONPATH=. python benchmarks/tasks_yield.py sample_data/* /tmp/src/inflection-0.5.1 -o /tmp/yield
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

import duckdb

from datagen.synth.statements import MIN_QUOTED_LINE, added_lines

ROOT = Path(__file__).resolve().parents[1]
SITE = sysconfig.get_paths()["purelib"]
CPUACCT = Path("/sys/fs/cgroup/cpuacct")
FAMILIES = "[procedural,removal,feature_removal,combine]"
_PLUGIN = '''import json, os


def pytest_runtest_logreport(report):
    import pytest
    res = pytest._replay_results = getattr(pytest, "_replay_results", {})
    if report.when == "call" or report.outcome != "passed":
        res[report.nodeid] = res.get(report.nodeid, True) and report.outcome == "passed"


def pytest_sessionfinish(session):
    import pytest
    with open(os.environ["REPLAY_REPORT"], "w") as fh:
        json.dump(getattr(pytest, "_replay_results", {}), fh)
'''


class CpuMeter:
    """Core-seconds of a child process tree: a cpuacct cgroup, else RUSAGE_CHILDREN."""

    def __init__(self) -> None:
        self.group: Path | None = None
        if CPUACCT.is_dir():
            group = CPUACCT / f"datagen-bench-{os.getpid()}-{time.monotonic_ns()}"
            try:
                group.mkdir()
                self.group = group
            except OSError:
                pass

    def run(self, cmd: list[str], **kw) -> tuple[subprocess.CompletedProcess, float, float]:
        """(result, cgroup core-s or -1, rusage core-s)."""
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        group = self.group

        def enter() -> None:
            if group is not None:
                (group / "cgroup.procs").write_text(str(os.getpid()))

        proc = subprocess.run(cmd, preexec_fn=enter, **kw)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        rusage = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        cgroup = int((group / "cpuacct.usage").read_text()) / 1e9 if group is not None else -1.0
        return proc, cgroup, rusage

    def close(self) -> None:
        if self.group is not None:
            try:
                self.group.rmdir()
            except OSError:
                pass


def build(source: str, out: Path, workers: int, extra: list[str]) -> tuple[float, float, float]:
    """Build one input; (wall s, cgroup core-s, rusage core-s)."""
    shutil.rmtree(out, ignore_errors=True)
    cmd = [sys.executable, "-c", "from datagen.cli.app import main; main()", "build", "tasks", "-i", source,
           "-o", str(out), "-w", str(workers), "--set", f"synth.families={FAMILIES}",
           "--set", f"env.inherit_site_packages=[{SITE}]", *extra]
    proc, wall, cgroup, rusage = measured(cmd)
    if proc.returncode != 0:
        raise SystemExit(f"build of {source} failed:\n{proc.stderr[-4000:]}")
    return wall, cgroup, rusage


def measured(cmd: list[str]) -> tuple[subprocess.CompletedProcess, float, float, float]:
    """Run a datagen command of this checkout: (result, wall s, cgroup core-s or -1, rusage core-s)."""
    meter = CpuMeter()
    start = time.monotonic()
    try:
        proc, cgroup, rusage = meter.run(cmd, capture_output=True, text=True,
                                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    finally:
        meter.close()
    return proc, time.monotonic() - start, cgroup, rusage


def _suite(clone: Path, plugin_dir: Path, report: Path) -> dict[str, bool]:
    paths = [str(clone / "src"), str(clone)] if (clone / "src").is_dir() else [str(clone)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*paths, str(plugin_dir)]), "PYTHONDONTWRITEBYTECODE": "1",
           "REPLAY_REPORT": str(report)}
    report.unlink(missing_ok=True)
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "replay_plugin", "-p", "no:cacheprovider"],
                   cwd=clone, env=env, capture_output=True, timeout=900)
    return json.loads(report.read_text()) if report.exists() else {}


def _node_suite(clone: Path, report: Path) -> dict[str, bool]:
    """``node --test`` with its junit reporter: "suite > test" -> passed (as datagen names them)."""
    report.unlink(missing_ok=True)
    subprocess.run(["node", "--test", "--test-reporter=junit", f"--test-reporter-destination={report}"],
                   cwd=clone, capture_output=True, timeout=900)
    if not report.exists():
        return {}
    results: dict[str, bool] = {}

    def walk(node: ET.Element, prefix: list[str]) -> None:
        for child in node:
            if child.tag == "testsuite":
                walk(child, [*prefix, child.get("name", "")])
            elif child.tag == "testcase":
                name = " > ".join([*prefix, child.get("name", "")])
                bad = any(c.tag in ("failure", "error", "skipped") for c in child)
                results[name] = results.get(name, True) and not bad

    walk(ET.fromstring(report.read_text(encoding="utf-8", errors="replace")), [])
    return results


def _bash(script: str, cwd: Path) -> int:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    # from a file, as a user runs it: one argument holds at most 128 KB (MAX_ARG_STRLEN), and a
    # large suite's eval_script is longer
    with tempfile.NamedTemporaryFile("w", suffix=".sh", dir=cwd.parent, delete=False) as fh:
        fh.write(script)
    try:
        return subprocess.run(["bash", fh.name], cwd=cwd, env=env, capture_output=True, timeout=1800).returncode
    finally:
        os.unlink(fh.name)


def script_replay(clone: Path, task: dict) -> str | None:
    """The task's setup_script, eval_script (fails), the patch, eval_script (passes)."""
    if _bash(task["setup_script"], clone) != 0:
        return "setup_script_fails"
    if _bash(task["eval_script"], clone) == 0:
        return "eval_passes_before"
    apply = subprocess.run(["git", "apply", "-"], cwd=clone, input=task["patch"].encode(), capture_output=True)
    if apply.returncode != 0:
        return "patch_does_not_apply"
    return None if _bash(task["eval_script"], clone) == 0 else "eval_fails_after"


def replay(out: Path, task: dict, scratch: Path, plugin_dir: Path) -> str | None:
    """None when the task replays with plain git + its scripts (or pytest), else why not."""
    clone = scratch / task["instance_id"]
    git = ["git", "-c", "advice.detachedHead=false"]
    subprocess.run([*git, "clone", "-q", str(out / task["repo_path"]), str(clone)], check=True, capture_output=True)
    subprocess.run([*git, "checkout", "-q", task["base_commit"]], cwd=clone, check=True, capture_output=True)
    if task.get("eval_script"):
        try:
            return script_replay(clone, task)
        finally:
            shutil.rmtree(clone, ignore_errors=True)
    report = scratch / f"{task['instance_id']}.report"

    def suite() -> dict[str, bool]:
        return _node_suite(clone, report) if task["runner"] == "node" else _suite(clone, plugin_dir, report)

    try:
        before = suite()
        if any(before.get(t) for t in task["FAIL_TO_PASS"]):
            return "f2p_passes_before"
        apply = subprocess.run(["git", "apply", "-"], cwd=clone, input=task["patch"].encode(), capture_output=True)
        if apply.returncode != 0:
            return "patch_does_not_apply"
        after = suite()
        if not all(after.get(t) for t in task["FAIL_TO_PASS"]):
            return "f2p_fails_after"
        if not all(after.get(t) for t in task["PASS_TO_PASS"]):
            return "p2p_fails_after"
        return None
    finally:
        shutil.rmtree(clone, ignore_errors=True)


def leaks(task: dict) -> bool:
    flat = " ".join(task["problem_statement"].split())
    quoted = (" ".join(line.split()) for line in added_lines(task["patch"]))
    return any(len(q) >= MIN_QUOTED_LINE and q in flat for q in quoted)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inputs", nargs="+", help="one build per input (a glob in quotes builds several repos together)")
    ap.add_argument("-o", "--out", default=str(Path(tempfile.gettempdir()) / "datagen-tasks-yield"))
    ap.add_argument("-w", "--workers", type=int, default=1, help="parallel sandboxed runs in the build")
    ap.add_argument("--replay-workers", type=int, default=2)
    ap.add_argument("--set", action="append", default=[], help="extra recipe overrides")
    args = ap.parse_args()
    extra = [x for s in args.set for x in ("--set", s)]
    plugin_dir = Path(tempfile.mkdtemp(prefix="replay-plugin-"))
    (plugin_dir / "replay_plugin.py").write_text(_PLUGIN)
    rows = []
    for k, source in enumerate(args.inputs):
        out = Path(args.out) / f"{k:02d}-{Path(source).name.replace('*', 'all')}"
        wall, cgroup, rusage = build(source, out, args.workers, extra)
        con = duckdb.connect(str(out / "manifest.duckdb"), read_only=True)
        repos = con.execute("SELECT repo, source_lines, status, reason FROM repo_baselines ORDER BY repo").fetchall()
        con.close()
        tasks = [json.loads(line) for line in (out / "tasks.jsonl").read_text().splitlines()]
        scratch = Path(tempfile.mkdtemp(prefix="replay-"))
        with ThreadPoolExecutor(args.replay_workers) as pool:
            fails = list(pool.map(partial(replay, out, scratch=scratch, plugin_dir=plugin_dir), tasks))
        shutil.rmtree(scratch, ignore_errors=True)
        core_s = cgroup if cgroup >= 0 else rusage
        patches = [t["patch"] for t in tasks]
        ok_repos = [r for r in repos if r[2] == "ok"]
        lines = sum(r[1] for r in ok_repos)
        row = {
            "input": source, "repos": ", ".join(r[0] for r in ok_repos) or "-",
            "languages": ", ".join(sorted({t.get("language") or "-" for t in tasks})) or "-",
            "skipped": ", ".join(f"{r[0]} ({r[3]})" for r in repos if r[2] != "ok"),
            "source_lines": lines, "tasks": len(tasks), "lines_per_task": lines / len(tasks) if tasks else None,
            "wall_s": wall, "core_s": core_s, "rusage_core_s": rusage,
            "tasks_per_core_hour": len(tasks) / core_s * 3600 if core_s > 0 else None,
            "replayed": sum(f is None for f in fails), "replay_failures": sorted({f for f in fails if f}),
            "duplicate_patches": len(patches) - len(set(patches)), "statement_leaks": sum(map(leaks, tasks)),
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    print()
    print("| input | repos | languages | non-blank source lines | tasks | lines / task | build core-s "
          "| tasks / core-hour | replay pass | duplicate patches | statement leaks |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        lpt = f"{r['lines_per_task']:.1f}" if r["lines_per_task"] else "-"
        tph = f"{r['tasks_per_core_hour']:.0f}" if r["tasks_per_core_hour"] else "-"
        rate = f"{r['replayed']}/{r['tasks']}"
        print(f"| {r['input']} | {r['repos']} | {r['languages']} | {r['source_lines']} | {r['tasks']} | {lpt} "
              f"| {r['core_s']:.0f} "
              f"| {tph} | {rate} | {r['duplicate_patches']} | {r['statement_leaks']} |")


if __name__ == "__main__":
    main()
