"""A stand-in Slurm for tests: ``sbatch``, ``squeue``, ``scancel``, ``scontrol`` and ``srun`` executables
(the shell scripts next to this file) that queue jobs in ``$STANDIN_SLURM_DIR`` and run
them on this machine, array tasks one after the other.

What it keeps of Slurm: ``#SBATCH`` lines and command-line options (the command line wins),
``--array=A-B[%N]``, ``--dependency=afterok:ID[:ID],afterany:ID`` (a job whose ``afterok``
dependency failed is cancelled, as with ``--kill-on-invalid-dep=yes``), ``--export=ALL,K=V``,
``--output`` with ``%A %a %j %x``, the ``SLURM_*`` variables a job reads, job states
(PENDING, RUNNING, COMPLETED, FAILED, CANCELLED) and ``Submitted batch job N``.

A failure can be planted: ``STANDIN_SLURM_FAIL=NAME:INDEX`` makes the first run of array
task INDEX of a job whose name contains NAME fail without running (a lost node).

The queue is run by one scheduler process at a time (a lock); ``sbatch`` starts one in the
background, and it runs every job whose dependencies are met until none is left.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import subprocess
import sys
from pathlib import Path

STATE = Path(os.environ.get("STANDIN_SLURM_DIR", "/tmp/standin-slurm"))
TERMINAL = {"COMPLETED", "FAILED", "CANCELLED"}


def _jobs() -> dict[int, dict]:
    return {int(p.stem): json.loads(p.read_text()) for p in (STATE / "jobs").glob("*.json")}


def _save(job: dict) -> None:
    path = STATE / "jobs" / f"{job['id']}.json"
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(job))
    tmp.replace(path)


def _next_id() -> int:
    with open(STATE / "lock.ids", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        counter = STATE / "next_id"
        n = int(counter.read_text()) if counter.exists() else 1000
        counter.write_text(str(n + 1))
        return n


def _options(argv: list[str], script: str) -> dict[str, str]:
    opts: dict[str, str] = {}
    for line in script.splitlines():
        if m := re.match(r"#SBATCH\s+--([\w-]+)(?:=(.*))?$", line.strip()):
            opts[m.group(1)] = (m.group(2) or "").strip()
    for arg in argv:
        if m := re.match(r"--([\w-]+)(?:=(.*))?$", arg):
            opts[m.group(1)] = m.group(2) or ""
    return opts


def sbatch(argv: list[str]) -> int:
    (STATE / "jobs").mkdir(parents=True, exist_ok=True)
    script = Path(argv[-1]).read_text()
    opts = _options(argv[:-1], script)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}  # Slurm sets its own
    for item in opts.get("export", "ALL").split(",")[1:]:
        key, _, value = item.partition("=")
        env[key] = value
    array = None
    if "array" in opts:
        lo, hi = opts["array"].split("%")[0].split("-")
        array = list(range(int(lo), int(hi) + 1))
    deps = [(kind, int(i)) for part in filter(None, opts.get("dependency", "").split(","))
            for kind, *ids in [part.split(":")] for i in ids]
    job = {"id": _next_id(), "name": opts.get("job-name", "sbatch"), "script": script, "array": array,
           "deps": deps, "env": env, "cwd": os.getcwd(), "output": opts.get("output", "slurm-%j.out"),
           "state": "PENDING", "tasks": {}}
    _save(job)
    print(f"Submitted batch job {job['id']}")
    log = open(STATE / "scheduler.log", "a")
    subprocess.Popen([sys.executable, __file__, "schedule"], stdout=log, stderr=log, start_new_session=True,
                     env={k: v for k, v in os.environ.items() if not k.startswith("SLURM_")})
    return 0


def _ready(job: dict, jobs: dict[int, dict]) -> bool | None:
    """True: run it; False: wait; None: a dependency can never be met."""
    for kind, dep in job["deps"]:
        state = jobs.get(dep, {}).get("state", "COMPLETED")  # an unknown job has long finished
        if kind == "afterok" and state in ("FAILED", "CANCELLED"):
            return None
        if state not in TERMINAL:
            return False
    return True


def _planted_failure(job: dict, index: int) -> bool:
    plan = job["env"].get("STANDIN_SLURM_FAIL", "")
    name, _, idx = plan.rpartition(":")
    marker = STATE / f"failed-{name}-{idx}"
    if not name or name not in job["name"] or str(index) != idx or marker.exists():
        return False
    marker.write_text(str(job["id"]))
    return True


def _run(job: dict) -> None:
    job["state"] = "RUNNING"
    _save(job)
    ok = True
    for index in job["array"] if job["array"] is not None else [None]:
        env = {**job["env"], "SLURM_JOB_ID": str(job["id"]), "SLURM_JOB_NAME": job["name"],
               "SLURM_NODELIST": "localhost", "SLURM_NODEID": "0", "SLURM_PROCID": "0"}
        names = {"%j": str(job["id"]), "%x": job["name"], "%A": str(job["id"]), "%a": str(index)}
        if index is not None:
            env |= {"SLURM_ARRAY_JOB_ID": str(job["id"]), "SLURM_ARRAY_TASK_ID": str(index)}
        out = re.sub(r"%[jxAa]", lambda m, names=names: names[m.group(0)], job["output"])
        out = Path(job["cwd"], out)
        out.parent.mkdir(parents=True, exist_ok=True)
        with open(out, "a") as log:
            if index is not None and _planted_failure(job, index):
                log.write("standin-slurm: node lost, task not run\n")
                code = 1
            else:
                code = subprocess.run(["bash", "-c", job["script"]], cwd=job["cwd"], env=env, stdout=log,
                                      stderr=subprocess.STDOUT).returncode
        job["tasks"][str(index)] = code
        ok = ok and code == 0
    job["state"] = "COMPLETED" if ok else "FAILED"
    _save(job)


def _step() -> bool:
    """Run the first job whose dependencies are met; False when none is."""
    jobs = _jobs()
    for job in sorted(jobs.values(), key=lambda j: j["id"]):
        if job["state"] != "PENDING":
            continue
        ready = _ready(job, jobs)
        if ready is None:
            job["state"] = "CANCELLED"
            _save(job)
            return True
        if ready:
            _run(job)
            return True
    return False


def schedule() -> int:
    while True:
        with open(STATE / "lock.queue", "a+") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return 0  # the running scheduler picks the new job up
            while _step():
                pass
        if not any(j["state"] == "PENDING" and _ready(j, _jobs()) is not False for j in _jobs().values()):
            return 0  # (checked after unlocking: a job queued meanwhile is not stranded)


def squeue(argv: list[str]) -> int:
    if "-h" not in argv and "--noheader" not in argv:
        print(f"{'JOBID':>8} {'NAME':<40} STATE")
    for job in sorted(_jobs().values(), key=lambda j: j["id"]) if (STATE / "jobs").exists() else []:
        if job["state"] not in TERMINAL:
            print(f"{job['id']:>8} {job['name'][:40]:<40} {job['state']}")
    return 0


def scancel(argv: list[str]) -> int:
    jobs = _jobs()
    for arg in argv:
        if arg.isdigit() and int(arg) in jobs and jobs[int(arg)]["state"] == "PENDING":
            jobs[int(arg)]["state"] = "CANCELLED"
            _save(jobs[int(arg)])
    return 0


def scontrol(argv: list[str]) -> int:
    """``scontrol show hostnames LIST`` (what datatrove asks): the names, one a line."""
    if argv[:2] == ["show", "hostnames"]:
        print("\n".join(argv[2].split(",")))
    return 0


def srun(argv: list[str]) -> int:
    """``srun [options] command ...``: runs the command here (one task)."""
    with_value = {"-n", "-N", "-c", "-p", "-t", "--ntasks", "--nodes"}
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        i += 2 if argv[i] in with_value else 1
    return subprocess.run(argv[i:]).returncode


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    sys.exit({"sbatch": sbatch, "squeue": squeue, "scancel": scancel, "scontrol": scontrol, "srun": srun,
              "schedule": lambda _: schedule()}[command](args))
