"""The ``Sandbox`` protocol and the plumbing both back ends share: start a process with
rlimits (and a cgroup when the host allows), keep a capped copy of its output, stop it at
the wall-clock limit, and work out which limit (if any) stopped it.
"""

from __future__ import annotations

import ctypes
import os
import resource
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from datagen.config.sandbox import SandboxLimits
from datagen.records.tasks import LimitName, RunResult
from datagen.sandbox.isolation.cgroups import RunCgroup
from datagen.sandbox.isolation.command_server import Capped

MiB = 1024 * 1024
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class Sandbox(Protocol):
    """Runs one command in a working copy under limits, with no network."""

    name: str

    def run(self, cmd: Sequence[str], workdir: Path, limits: SandboxLimits,
            env: Mapping[str, str] | None = None, ro_paths: Sequence[Path] = ()) -> RunResult: ...

    def claims(self) -> dict[str, str]:
        """Property -> how this back end enforces it ('NOT ENFORCED: why' when it cannot)."""
        ...


def base_env(env: Mapping[str, str] | None) -> dict[str, str]:
    """The environment a sandboxed command starts with: a bare one plus ``env``."""
    out = {"PATH": DEFAULT_PATH, "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
           "TZ": "UTC"}
    out.update(env or {})
    return out


class _Capture(threading.Thread):
    """Reads a pipe to the end, keeping the first and last ``cap // 2`` bytes (``Capped``, the
    same rule the session's command server applies inside a sandbox)."""

    def __init__(self, stream, cap: int):
        super().__init__(daemon=True)
        self.stream, self.capped = stream, Capped(cap)

    @property
    def total(self) -> int:
        return self.capped.total

    def run(self) -> None:
        while chunk := self.stream.read1(65536):
            self.capped.add(chunk)

    def text(self) -> str:
        return self.capped.kept().decode("utf-8", "replace")


def rlimit_setter(limits: SandboxLimits, memory: bool) -> Callable[[], None]:
    """Per-process limits applied in the child before exec (inherited by its tree)."""
    values = [
        (resource.RLIMIT_CPU, limits.cpu_s, limits.cpu_s + 1),  # SIGXCPU first, then KILL
        (resource.RLIMIT_FSIZE, limits.file_size_mb * MiB, limits.file_size_mb * MiB),
        (resource.RLIMIT_NPROC, limits.processes, limits.processes),
        (resource.RLIMIT_CORE, 0, 0),
    ]
    if memory:
        values.append((resource.RLIMIT_AS, limits.memory_mb * MiB, limits.memory_mb * MiB))

    def apply() -> None:
        for which, soft, hard in values:
            resource.setrlimit(which, (soft, hard))

    return apply


# Messages runtimes print when an rlimit refuses them; used only when no cgroup measured it.
_STDERR_MARKERS: list[tuple[LimitName, tuple[str, ...]]] = [
    ("memory", ("MemoryError", "Cannot allocate memory", "std::bad_alloc",
                "JavaScript heap out of memory")),
    ("processes", ("Cannot fork", "fork: Resource temporarily unavailable",
                   "BlockingIOError: [Errno 11]", "can't start new thread")),
    ("file_size", ("File too large", "[Errno 27]")),
    ("disk", ("No space left on device", "[Errno 28]")),
]


def detect_limit(
    exit_code: int, timed_out: bool, stderr: str, cgroup: RunCgroup | None,
    disk_full: str | None = None,
) -> tuple[LimitName | None, str | None]:
    """Which limit stopped a run, and the evidence. Kernel counters beat signals beat text.
    ``disk_full``: evidence that the run's capped working copy has no free block left."""
    if timed_out:
        return "timeout", "wall-clock timer"
    if cgroup is not None and cgroup.oom_kills():
        return "memory", "cgroup memory.oom_control oom_kill"
    if cgroup is not None and cgroup.processes_hit():
        return "processes", "cgroup pids.events max"
    if exit_code == 128 + signal.SIGXCPU:
        return "cpu", "SIGXCPU"
    if exit_code == 128 + signal.SIGXFSZ:
        return "file_size", "SIGXFSZ"
    if disk_full is not None:
        return "disk", disk_full
    # Any exit status: a child may hit a limit while the main process still exits 0.
    for name, markers in _STDERR_MARKERS:
        for marker in markers:
            if marker in stderr:
                return name, f"stderr: {marker!r}"
    return None, None


class Cancelled(RuntimeError):
    """The run's cancel scope was cancelled before it started (its caller has gone)."""


class CancelScope:
    """Runs started by ``execute`` in a thread while this scope is current there
    (``with scope:``) are killed by ``cancel()``, from any thread, and later ones refuse to
    start: the grader cancels the grade of a client that closed its connection."""

    _current = threading.local()

    def __init__(self) -> None:
        self.cancelled = False
        self._groups: set[int] = set()
        self._lock = threading.Lock()

    def __enter__(self) -> CancelScope:
        self._current.scope = self
        return self

    def __exit__(self, *exc: object) -> None:
        self._current.scope = None

    @classmethod
    def current(cls) -> CancelScope | None:
        return getattr(cls._current, "scope", None)

    def cancel(self) -> None:
        with self._lock:
            self.cancelled = True
            groups = list(self._groups)
        for pid in groups:
            _kill_group(pid)

    def _started(self, pid: int) -> None:
        with self._lock:
            self._groups.add(pid)
            late = self.cancelled
        if late:
            _kill_group(pid)

    def _ended(self, pid: int) -> None:
        with self._lock:
            self._groups.discard(pid)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def execute(
    argv: Sequence[str],
    *,
    backend: str,
    cwd: Path,
    env: Mapping[str, str],
    limits: SandboxLimits,
    use_cgroup: bool,
    extra_preexec: Callable[[], None] | None = None,
    pass_fds: Sequence[int] = (),
    disk_full: Callable[[], str | None] | None = None,
) -> RunResult:
    """Start ``argv`` in its own session, wait at most ``limits.timeout_s``, report.
    ``disk_full()`` is asked after the run whether it filled its capped working copy."""
    cgroup = RunCgroup.create(limits.processes, limits.memory_mb) if use_cgroup else None
    set_limits = rlimit_setter(limits, memory=cgroup is None or cgroup.memory is None)

    parent = os.getpid()

    def preexec() -> None:
        _die_with(parent)
        if cgroup is not None:
            cgroup.attach_current()
        set_limits()
        if extra_preexec is not None:
            extra_preexec()

    scope = CancelScope.current()
    if scope is not None and scope.cancelled:
        if cgroup is not None:
            cgroup.remove()
        raise Cancelled("the run's caller has gone")
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            list(argv), cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
            preexec_fn=preexec, pass_fds=tuple(pass_fds),
        )
    except OSError:
        if cgroup is not None:
            cgroup.remove()
        raise
    out, err = _Capture(proc.stdout, limits.output_bytes), _Capture(proc.stderr, limits.output_bytes)
    out.start()
    err.start()
    if scope is not None:
        scope._started(proc.pid)
    try:
        timed_out = not _wait_exit(proc, limits.timeout_s)
    finally:
        _kill_tree(proc.pid, cgroup)
        proc.wait()
        if scope is not None:
            scope._ended(proc.pid)
    duration = time.monotonic() - start
    # Readers end when every writer is gone; a writer that escaped the kill cannot hold us.
    out.join(timeout=5)
    err.join(timeout=5)
    code = proc.returncode if proc.returncode >= 0 else 128 - proc.returncode
    stderr = err.text()
    full = disk_full() if disk_full is not None else None
    limit, evidence = detect_limit(code, timed_out, stderr, cgroup, full)
    peak = cgroup.memory_peak_mb() if cgroup is not None else None
    if cgroup is not None:
        cgroup.remove()
    return RunResult(
        backend=backend, exit_code=code, stdout=out.text(), stderr=stderr,
        stdout_bytes=out.total, stderr_bytes=err.total, duration_s=round(duration, 4),
        limit_hit=limit, limit_evidence=evidence, memory_peak_mb=peak,
    )


_PR_SET_PDEATHSIG = 1
try:
    _prctl = ctypes.CDLL(None, use_errno=True).prctl  # loaded here, not in a forked child
except (OSError, AttributeError):  # not Linux: the run still ends with its timeout
    _prctl = None


def _die_with(parent: int) -> None:
    """In the forked child: be killed with datagen, even when datagen is SIGKILLed.

    The signal survives exec (bwrap's own ``--die-with-parent`` comes later, after its
    setup). A parent already gone before the signal was asked for is caught by the pid
    check: a run that outlives datagen would hold its uid slot and mounts, unowned.
    """
    if _prctl is not None:
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(255)


def _wait_exit(proc: subprocess.Popen, timeout: float) -> bool:
    """Block until ``proc`` exits (True) or ``timeout`` seconds pass (False).

    ``Popen.wait(timeout)`` polls with sleeps of up to 50 ms, which added 0-50 ms to every
    run; a pidfd wakes us the moment the process exits. Falls back to ``wait`` where the
    kernel or Python has no pidfd.
    """
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        try:
            proc.wait(timeout=timeout)
            return True
        except subprocess.TimeoutExpired:
            return False
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            if poller.poll(max(1, int(left * 1000) + 1)):  # ms, rounded up
                return True
        return bool(poller.poll(0))
    finally:
        os.close(fd)


# Exit codes of a command that could not be started (the shell's convention).
NOT_FOUND_EXIT, NOT_EXECUTABLE_EXIT = 127, 126


def not_started_message(command: str, not_found: bool, path: str) -> str:
    """The sandbox's own words for a command that could not be started."""
    if not_found:
        return (f"sandbox: command not found: {command} (PATH inside the sandbox: {path}; "
                "a #! interpreter the sandbox cannot see fails the same way)\n")
    return f"sandbox: command not executable: {command} (permission denied)\n"


def exec_failure(result: RunResult, command: str, prefixes: tuple[str, ...], path: str) -> RunResult:
    """Replace a launcher's "cannot execute" line (e.g. setpriv's) with the sandbox's own
    message and the shell's exit code, so the internal tool never shows through."""
    err = result.stderr.strip()
    if result.limit_hit or result.stdout or "\n" in err or not err.startswith(prefixes):
        return result
    if err.endswith("No such file or directory"):
        code, message = NOT_FOUND_EXIT, not_started_message(command, True, path)
    elif err.endswith("Permission denied"):
        code, message = NOT_EXECUTABLE_EXIT, not_started_message(command, False, path)
    else:
        return result
    return result.model_copy(update={"exit_code": code, "stderr": message,
                                     "stderr_bytes": len(message)})


def not_started(backend: str, command: str, exc: OSError, path: str) -> RunResult:
    """The result of a command the OS refused to start (the fallback's Popen raised)."""
    not_found = isinstance(exc, FileNotFoundError)
    message = not_started_message(command, not_found, path)
    return RunResult(
        backend=backend, exit_code=NOT_FOUND_EXIT if not_found else NOT_EXECUTABLE_EXIT,
        stdout="", stderr=message, stdout_bytes=0, stderr_bytes=len(message), duration_s=0.0,
    )


def _kill_tree(pid: int, cgroup: RunCgroup | None) -> None:
    """Kill the run's process group (and its cgroup): nothing outlives a run."""
    _kill_group(pid)
    if cgroup is not None:
        cgroup.kill_all()
