"""``datagen sandbox check``: prove what a back end enforces by attacking it.

Each probe runs a small hostile Python program inside the sandbox, with small limits so a
failure cannot hurt the machine, and checks the host side afterwards. A probe that would
harm the host when the back end cannot contain it (killing the parent) is not run there.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from datagen.config.sandbox import SandboxLimits
from datagen.sandbox.isolation import disk
from datagen.sandbox.isolation.base import Sandbox
from datagen.sandbox.isolation.cgroups import support

SMALL = SandboxLimits(timeout_s=20, cpu_s=20, memory_mb=128, processes=32, file_size_mb=4,
                      tmp_size_mb=8, disk_mb=8, output_bytes=20_000)
# Four 3 MB files (each under file_size_mb) into the working copy: 12 MB past an 8 MB cap.
FILL_WORKDIR = "[open(f'fill{i}', 'wb').write(b'x' * 3 * 2**20) for i in range(4)]"

# Doubles the process count 9 times, then every process sleeps: at most 512 processes
# even where nothing limits it, so a broken back end cannot take the machine down.
BOUNDED_FORK_BOMB = "import os, time\nfor _ in range(9):\n    os.fork()\ntime.sleep(2)"


@dataclass
class ProbeResult:
    name: str
    contained: bool | None  # None: not run
    detail: str


def python_for_sandbox() -> tuple[str, tuple[Path, ...]]:
    """A base interpreter and the folder the sandbox must see for it to start."""
    return sys._base_executable, (Path(sys.base_prefix),)  # type: ignore[attr-defined]


def _listener() -> tuple[socket.socket, int]:
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.settimeout(0.2)
    return srv, srv.getsockname()[1]


def run_probes(sandbox: Sandbox, isolating: bool) -> list[ProbeResult]:
    """Run every probe; ``isolating`` says whether the back end claims a private host view."""
    py, ro = python_for_sandbox()
    host = Path(tempfile.mkdtemp(prefix="datagen-probe-"))
    work = host / "work"
    work.mkdir()
    secret = host / "secret.txt"
    secret.write_text("host-secret")
    out: list[ProbeResult] = []

    def attack(code: str, **limits) -> object:
        return sandbox.run([py, "-c", code], work, SMALL.model_copy(update=limits), ro_paths=ro)

    try:
        out.append(_network_probe(attack))
        r = attack(f"print(open({str(secret)!r}).read())")
        out.append(ProbeResult("read outside workdir", "host-secret" not in r.stdout,
                               "planted file invisible" if "host-secret" not in r.stdout
                               else "planted file read"))

        target = host / "escaped.txt"
        attack(f"open({str(target)!r}, 'w').write('x')")
        out.append(ProbeResult("write outside workdir", not target.exists(),
                               "host folder untouched" if not target.exists() else "file written"))

        if isolating or support()["pids"] or os.geteuid() != 0:
            r = attack(BOUNDED_FORK_BOMB, processes=16, timeout_s=20)
            out.append(ProbeResult("fork bomb", r.limit_hit == "processes",
                                   f"stopped in {r.duration_s:.2f}s ({r.limit_evidence})"))
        else:
            out.append(ProbeResult("fork bomb", None, "not run: root without a pids cgroup"))

        r = attack("x = 'a' * (10 * 128 * 2**20)", memory_mb=128)
        out.append(ProbeResult("memory 10x limit", r.limit_hit == "memory", str(r.limit_evidence)))

        r = attack("while True: pass", timeout_s=1.0)
        out.append(ProbeResult("infinite loop", r.limit_hit == "timeout",
                               f"killed after {r.duration_s:.2f}s"))

        r = attack("while True: pass", cpu_s=1, timeout_s=20)
        out.append(ProbeResult("cpu time", r.limit_hit == "cpu", str(r.limit_evidence)))

        r = attack("open('big', 'wb').write(b'x' * (8 * 2**20))", file_size_mb=4)
        big = work / "big"
        ok = r.limit_hit == "file_size" and (not big.exists() or big.stat().st_size <= 4 * 2**20)
        out.append(ProbeResult("file size", ok, str(r.limit_evidence)))

        if isolating:
            sentinel = subprocess.Popen(["sleep", "60"])  # a host process it must not reach
            r = attack("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n"
                       "os.kill(-1, signal.SIGKILL)")
            alive = sentinel.poll() is None
            sentinel.kill()
            sentinel.wait()
            out.append(ProbeResult("kill the parent", alive,
                                   "host processes alive" if alive else "host process killed"))
            r = attack("[open(f'/tmp/f{i}', 'wb').write(b'x' * 3 * 2**20) for i in range(4)]")
            out.append(ProbeResult("fill /tmp", r.limit_hit == "disk", str(r.limit_evidence)))
            out.append(_fill_workdir(attack, work))
        else:
            out.append(ProbeResult("kill the parent", None, "not run: no PID isolation"))
            out.append(ProbeResult("fill /tmp", None, "not run: /tmp is the host's"))
            out.append(ProbeResult("fill working copy", None, "not run: writes go to the host disk"))
    finally:
        shutil.rmtree(host, ignore_errors=True)
    return out


def _network_probe(attack) -> ProbeResult:
    """Connect from the sandbox to a listener on the host's loopback: contained when no
    connection arrives and the attempt fails."""
    srv, port = _listener()
    accepted: list[bool] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
                accepted.append(True)
                conn.close()
            except OSError:
                pass

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    r = attack(f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3)")
    stop.set()
    t.join()
    srv.close()
    return ProbeResult("network", not accepted and r.exit_code != 0,
                       "connection refused" if not accepted else "host listener reached")


def _fill_workdir(attack, work: Path) -> ProbeResult:
    """Write past ``disk_mb``; contained when the run is stopped as ``disk`` and the
    working copy holds no more than the cap afterwards."""
    ok, reason = disk.support()
    if not ok or os.geteuid() != 0:
        return ProbeResult("fill working copy", None, f"not run: disk_mb not enforced ({reason})")
    r = attack(FILL_WORKDIR)
    written = sum(p.stat().st_size for p in work.glob("fill*"))
    contained = r.limit_hit == "disk" and written <= SMALL.disk_mb * 2**20
    return ProbeResult("fill working copy", contained,
                       f"{written / 2**20:.1f} MB kept of 12 MB attempted ({r.limit_evidence})")
