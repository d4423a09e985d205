"""Plain-subprocess back end: the fallback where bubblewrap cannot run.

It limits resources (rlimits, a cgroup when the host allows one, a wall-clock timer and a
process-group kill) but it does NOT isolate: the command sees the whole filesystem and the
network, with the caller's permissions. It says so on every run.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from datagen.config.sandbox import SandboxLimits
from datagen.records.tasks import RunResult
from datagen.sandbox.isolation.base import base_env, execute, not_started
from datagen.sandbox.isolation.guard import check_workdir

WARNING = (
    "WARNING: subprocess sandbox: NO network or filesystem isolation; the command runs "
    "with your permissions and can read and write anything you can. Install bubblewrap."
)


class SubprocessSandbox:
    """Resource limits without isolation; use only for trusted code."""

    name = "subprocess"

    def __init__(self, warn: bool = True):
        self.warn = warn
        self._warned = False

    def claims(self) -> dict[str, str]:
        root = os.geteuid() == 0
        return {
            "network": "NOT ENFORCED: shares the host network",
            "filesystem": "NOT ENFORCED: sees and may write everything the caller can",
            "tmp": "NOT ENFORCED: shares the host /tmp",
            "processes": ("cgroup pids.max when writable; RLIMIT_NPROC is ignored for root"
                          if root else "RLIMIT_NPROC on the caller's uid; cgroup when writable"),
            "memory": "cgroup memory.limit_in_bytes when writable, else RLIMIT_AS",
            "cpu": "RLIMIT_CPU",
            "file_size": "RLIMIT_FSIZE",
            "disk": "NOT ENFORCED: writes go to the host disk (RLIMIT_FSIZE caps each file only)",
            "timeout": "wall-clock timer, kills the process group",
            "pid/ipc/uts": "NOT ENFORCED: a process that leaves the group survives",
        }

    def run(self, cmd: Sequence[str], workdir: Path, limits: SandboxLimits,
            env: Mapping[str, str] | None = None, ro_paths: Sequence[Path] = ()) -> RunResult:
        if self.warn and not self._warned:
            print(WARNING, file=sys.stderr)
            self._warned = True
        workdir = Path(workdir).resolve()
        check_workdir(workdir)
        run_env = base_env(env)
        try:
            return execute(list(cmd), backend=self.name, cwd=workdir, env=run_env,
                           limits=limits, use_cgroup=True)
        except (FileNotFoundError, PermissionError) as exc:
            if exc.filename not in (cmd[0], None):
                raise
            return not_started(self.name, cmd[0], exc, run_env["PATH"])
