"""A sandbox session: one bubblewrap sandbox kept up for a series of commands in one working
copy (an agent run's shell), instead of one sandbox per command.

The session is the sandbox a single ``BwrapSandbox.run`` builds (the same namespaces, no
network, the same environment, rlimits, cgroup, uid lease and capped disk overlay), started
once; inside it a small command server (``command_server.py``, run by the system python3)
runs each command in its own process group under the command's wall-clock limit and, when
the command ends, kills every other process in the sandbox, so no process outlives its
command. What persists between commands is files: the working copy and the sandbox's /tmp.

    with BwrapSession.open(sandbox, workdir, limits, env=..., ro_paths=...) as session:
        result = session.run(["bash", "-c", "ls"], cwd=workdir, timeout_s=30)

The host keeps its own deadline (the command's plus a grace): a server that does not answer
in time (killed by the command, or stuck) has its whole sandbox killed, and the session is
``broken``; open a new one. The working copy's writes reach the host's copy at ``close``
(with the disk overlay, as root), so read the copy after closing. The session's bwrap dies
with the process that opened it (PDEATHSIG, then bwrap's --die-with-parent).
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from datagen.config.sandbox import SandboxLimits
from datagen.records.tasks import RunResult
from datagen.sandbox.isolation import command_server
from datagen.sandbox.isolation.base import DEFAULT_PATH, _die_with, _kill_group, base_env, detect_limit, rlimit_setter
from datagen.sandbox.isolation.bwrap import BwrapSandbox
from datagen.sandbox.isolation.cgroups import RunCgroup

GRACE_S = 5.0  # the host's deadline past the command's own, for the server to answer
_START_S = 30.0


class SessionError(RuntimeError):
    """The session could not start, or its sandbox is gone (``broken``)."""


def _server_python() -> str | None:
    """The system python3 (the sandbox sees /usr, never datagen's virtual environment)."""
    return shutil.which("python3", path=DEFAULT_PATH)


class BwrapSession:
    """One sandbox, many commands; see the module docstring."""

    def __init__(self, sandbox: BwrapSandbox, workdir: Path, limits: SandboxLimits):
        self.sandbox, self.workdir, self.limits = sandbox, workdir, limits
        self.proc: subprocess.Popen | None = None
        self.cgroup: RunCgroup | None = None
        self.broken: str | None = None
        self._held = None  # the sandbox's hand-over (uid lease, overlay), undone at close
        self._buffer = b""

    @classmethod
    def open(cls, sandbox: BwrapSandbox, workdir: Path, limits: SandboxLimits,
             env: Mapping[str, str] | None = None, ro_paths: Sequence[Path] = ()) -> BwrapSession:
        """Build the sandbox and start its command server; ``SessionError`` if it cannot."""
        python = _server_python()
        if python is None:
            raise SessionError("no system python3 on the sandbox's PATH to run the command server")
        session = cls(sandbox, Path(workdir).resolve(), limits)
        try:
            session._start(python, env, ro_paths)
        except BaseException:
            session.close()
            raise
        return session

    def _start(self, python: str, env: Mapping[str, str] | None, ro_paths: Sequence[Path]) -> None:
        self._held = self.sandbox.hand_over(self.workdir, self.limits)
        lease, cap = self._held.lease, self._held.cap
        server = [python, "-I", "-S", "-c", Path(command_server.__file__).read_text()]
        argv = self.sandbox.argv(server, self.workdir, self.limits, ro_paths, lease.uid if lease else None,
                                 source=cap.merged if cap else None)
        self.cgroup = RunCgroup.create(self.limits.processes, self.limits.memory_mb)
        # RLIMIT_CPU is per process: the server sets it on each command, not on itself
        set_limits = rlimit_setter(self.limits.model_copy(update={"cpu_s": 10**9}),
                                   memory=self.cgroup.memory is None)
        parent, cgroup = os.getpid(), self.cgroup

        def preexec() -> None:
            _die_with(parent)
            cgroup.attach_current()
            set_limits()

        self.proc = subprocess.Popen(argv, cwd=self.workdir, env=base_env(env), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                                     preexec_fn=preexec)
        ready = self._reply(_START_S)
        if ready != {"ready": True}:
            self._kill()
            err = self.proc.stderr.read().decode(errors="replace").strip()[:500]
            raise SessionError(f"the sandbox session did not start: {err or ready}")

    def run(self, argv: Sequence[str], *, cwd: Path | None = None, timeout_s: float | None = None) -> RunResult:
        """Run ``argv`` in the session (default: in the working copy, the session's timeout)."""
        if self.broken or self.proc is None:
            raise SessionError(f"the sandbox session is broken: {self.broken}")
        timeout = self.limits.timeout_s if timeout_s is None else timeout_s
        before = self._counters()
        request = {"argv": list(argv), "cwd": str(cwd or self.workdir), "timeout": timeout,
                   "cap": self.limits.output_bytes, "cpu": self.limits.cpu_s}
        start = time.monotonic()
        try:
            self.proc.stdin.write(json.dumps(request).encode() + b"\n")
            self.proc.stdin.flush()
        except OSError as exc:
            self._break(f"cannot reach the command server: {exc}")
            raise SessionError(self.broken) from exc
        reply = self._reply(timeout + GRACE_S)
        duration = time.monotonic() - start
        if reply is None:
            return self._lost(timeout, duration)
        return self._result(reply, before, duration)

    def _result(self, reply: dict, before: tuple[int, int], duration: float) -> RunResult:
        out = base64.b64decode(reply["out"]).decode("utf-8", "replace")
        err = base64.b64decode(reply["err"]).decode("utf-8", "replace")
        oom, procs = (a - b for a, b in zip(self._counters(), before))
        full = self._held.cap.full() if self._held.cap else None
        limit, evidence = detect_limit(reply["code"], reply["timed_out"], err, None, full)
        if limit is None and oom:
            limit, evidence = "memory", "cgroup memory.oom_control oom_kill"
        elif limit is None and procs:
            limit, evidence = "processes", "cgroup pids.events max"
        return RunResult(backend=self.sandbox.name, exit_code=reply["code"], stdout=out, stderr=err,
                         stdout_bytes=reply["out_total"], stderr_bytes=reply["err_total"],
                         duration_s=round(duration, 4), limit_hit=limit, limit_evidence=evidence)

    def _lost(self, timeout: float, duration: float) -> RunResult:
        """The server did not answer (stuck, or killed by the command or the OOM killer): the
        whole sandbox is killed and the session broken; the next command needs a new one."""
        alive = self.proc.poll() is None
        oom = self._counters()[0] > 0
        self._break("the command server did not answer in time" if alive else "the command server died")
        if alive:
            limit, evidence = "timeout", f"wall-clock timer ({timeout:g} s + {GRACE_S:g} s grace, session killed)"
        elif oom:
            limit, evidence = "memory", "cgroup memory.oom_control oom_kill (the session's sandbox)"
        else:
            limit, evidence = None, None
        message = f"sandbox: {self.broken}; the sandbox was ended (files kept)\n"
        return RunResult(backend=self.sandbox.name, exit_code=137, stdout="", stderr=message, stdout_bytes=0,
                         stderr_bytes=len(message), duration_s=round(duration, 4), limit_hit=limit,
                         limit_evidence=evidence)

    def _counters(self) -> tuple[int, int]:
        if self.cgroup is None:
            return 0, 0
        return self.cgroup.oom_kills(), self.cgroup.processes_max_events()

    def _reply(self, timeout: float) -> dict | None:
        """The server's next line, or None when none comes in ``timeout`` seconds or it ended."""
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return None
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            return json.loads(line)
        except ValueError:
            return None

    def _break(self, why: str) -> None:
        self.broken = why
        self._kill()

    def _kill(self) -> None:
        if self.proc is not None:
            _kill_group(self.proc.pid)
        if self.cgroup is not None:
            self.cgroup.kill_all()

    def close(self) -> None:
        """End the server (EOF), kill whatever is left, hand the working copy back."""
        try:
            if self.proc is not None:
                try:
                    self.proc.stdin.close()
                    self.proc.wait(timeout=GRACE_S)
                except (OSError, subprocess.TimeoutExpired):
                    pass
                self._kill()
                self.proc.wait()
                for stream in (self.proc.stdout, self.proc.stderr):
                    stream.close()
                self.proc = None
        finally:
            try:
                if self.cgroup is not None:
                    self.cgroup.remove()
                    self.cgroup = None
            finally:
                if self._held is not None:
                    self._held.release()
                    self._held = None
            self.broken = self.broken or "closed"

    def __enter__(self) -> BwrapSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_session(sandbox, workdir: Path, limits: SandboxLimits, env: Mapping[str, str] | None = None,
                 ro_paths: Sequence[Path] = ()) -> BwrapSession:
    """A session in ``sandbox`` (bwrap only); ``SessionError`` where none can be had."""
    if not isinstance(sandbox, BwrapSandbox):
        raise SessionError(f"sandbox sessions need the bwrap back end, not {sandbox.name}")
    return BwrapSession.open(sandbox, workdir, limits, env=env, ro_paths=ro_paths)

