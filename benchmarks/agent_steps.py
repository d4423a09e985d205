"""The agent difficulty step's cost: (1) one agent step's overhead in datagen's sandboxed
environment vs the same commands run bare by mini-swe-agent's own ``LocalEnvironment`` (goal
<= 1.3x per step), and (2) agent runs per core-hour against a scripted stand-in policy.

(1) A working copy of ``sample_data/tinyhttp`` (a git repo) and a mix of the commands agents
send (ls, cat, grep, sed, git status / diff, a Python one-liner). A step is one model call (the
stand-in server on 127.0.0.1, through datagen's teacher client, no cache) plus one command; the
sandboxed side runs the command with ``SandboxEnvironment.execute`` (bwrap, the uid hand-over,
the disk overlay, cgroups: one sandbox session for the run's commands), the bare side with
``LocalEnvironment.execute``, and, for reference, one sandbox per command (no session, on a
second copy). All sides in turns, in one process. Ratios: per command, and per step.
(2) ``--runs`` solving runs (six steps each: explore, write the fix, submit) of mini-swe-agent on
a small Python task, graded; CPU seconds of this process and its children.

Run by hand:  PYTHONPATH=. python benchmarks/agent_steps.py [--rounds 5] [--runs 8]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")

from datagen.config.sandbox import SandboxLimits  # noqa: E402
from datagen.sandbox.isolation.select import untrusted_sandbox  # noqa: E402
from datagen.score.agent.agent import template  # noqa: E402
from datagen.score.agent.env import SandboxEnvironment  # noqa: E402
from datagen.score.agent.model import TeacherModel, TeacherModelConfig  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = ["ls", "cat tinyhttp/headers.py", "grep -rn 'def ' tinyhttp | head -20", "sed -n 1,40p tinyhttp/router.py",
            "git status --short", "git diff", "python3 -c 'import json; print(json.dumps({\"a\": 1}))'",
            "find . -name '*.py' | wc -l"]


def _work(root: Path, name: str = "work") -> Path:
    work = shutil.copytree(ROOT / "sample_data" / "tinyhttp", root / name)
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run(["git", *args], cwd=work, env=env, check=True)
    return work


def _model(base_url: str) -> TeacherModel:
    from datagen.config.teacher import TeacherConfig
    from datagen.teachers import make_teacher

    teacher = make_teacher(TeacherConfig(model="stand-in-policy", base_url=base_url, api_key_env="DATAGEN_BENCH_KEY"),
                           cache=False)
    cfg = TeacherModelConfig(model_name="stand-in", seed=0, temperature=0.0, max_tokens=1000,
                             format_error_template=template("format_error"),
                             observation_template=template("observation"))
    return TeacherModel(teacher, cfg, request_id="bench", token_limit=10**12)


def step_overhead(rounds: int) -> None:
    from minisweagent.environments.local import LocalEnvironment

    from tests.teachers.fake_server import FakeOpenAI

    answer = "THOUGHT: look.\n\n```mswea_bash_command\nls\n```"
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAI(models=("stand-in-policy",), answer=lambda b: answer) as srv:
        work = _work(Path(tmp))
        sandbox, limits = untrusted_sandbox("auto"), SandboxLimits(timeout_s=60)
        # each side its own copy: a session holds its working copy (overlay, uid) until it closes
        boxed = SandboxEnvironment(workdir=work, sandbox=sandbox, limits=limits, run_env={})
        each = SandboxEnvironment(workdir=_work(Path(tmp), "each"), sandbox=sandbox, limits=limits, run_env={},
                                  session=False)
        bare = LocalEnvironment(cwd=str(_work(Path(tmp), "bare")), timeout=60)
        model = _model(srv.base_url)
        messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "task"}]
        times = {"bare": [], "sandbox": [], "per-command": [], "model": []}
        for _ in range(rounds):
            for command in COMMANDS:
                for side, env in (("bare", bare), ("sandbox", boxed), ("per-command", each)):
                    start = time.perf_counter()
                    env.execute({"command": command})
                    times[side].append(time.perf_counter() - start)
                start = time.perf_counter()
                model.query(messages)
                times["model"].append(time.perf_counter() - start)
        boxed.close()
    cmd = {k: statistics.median(v) for k, v in times.items()}
    step_bare, step_box = cmd["model"] + cmd["bare"], cmd["model"] + cmd["sandbox"]
    print(f"sandbox back end: {sandbox.name}, session: {boxed.session_error or 'on'}; "
          f"{len(COMMANDS)} commands x {rounds} rounds (medians); load average {os.getloadavg()[0]:.1f}")
    print(f"command: bare {cmd['bare'] * 1000:.1f} ms, sandboxed {cmd['sandbox'] * 1000:.1f} ms, "
          f"ratio {cmd['sandbox'] / cmd['bare']:.2f}x (one sandbox per command: {cmd['per-command'] * 1000:.1f} ms, "
          f"{cmd['per-command'] / cmd['bare']:.2f}x)")
    print(f"step (stand-in model call {cmd['model'] * 1000:.1f} ms + command): bare {step_bare * 1000:.1f} ms, "
          f"sandboxed {step_box * 1000:.1f} ms, ratio {step_box / step_bare:.2f}x")
    for latency in (0.5, 2.0):
        print(f"  with a {latency:.1f} s model reply: ratio {(latency + step_box) / (latency + step_bare):.3f}x")


def _cpu() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def runs_per_core_hour(runs: int) -> None:
    from datagen.records.tasks import TaskRecord
    from tests.agent import helpers, standin
    from tests.sandbox.conftest import make_task_repo

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        fields = make_task_repo(root)
        task = TaskRecord(instance_id="calc__add", repo="calc", problem_statement="add(2, 3) returns -1, not 5.",
                          FAIL_TO_PASS=["tests/test_add.py::test_add"], PASS_TO_PASS=["tests/test_mul.py::test_mul"],
                          **fields)
        with standin.ScriptedPolicy([task], standin.solve) as server:
            helpers.scorer(server, root, root / "warm", k=1, workers=1).score([(task, root)])  # env built once
            cpu, wall = _cpu(), time.perf_counter()
            report = helpers.scorer(server, root, root / "work", k=runs, workers=1).score([(task, root)])
            cpu, wall = _cpu() - cpu, time.perf_counter() - wall
    passed = sum(bool(r.passed) for r in report.runs)
    steps = sum(r.steps for r in report.runs)
    print(f"{runs} runs ({passed} passed, {steps} steps, graded): {wall:.1f} s wall, {cpu:.1f} CPU s "
          f"-> {runs / cpu * 3600:.0f} runs per core-hour ({cpu / runs:.2f} CPU s per run)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runs", type=int, default=8)
    args = ap.parse_args()
    step_overhead(args.rounds)
    runs_per_core_hour(args.runs)


if __name__ == "__main__":
    main()
