"""The quality bar: hostile code runs INSIDE the sandbox and each attack is contained
and reported. Every limit is small so that a failure cannot hurt the machine."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import threading
from pathlib import Path

import pytest

# At most 2**9 = 512 processes even where nothing limits it (see datagen.sandbox.isolation.probe).
FORK_BOMB = "import os, time\nfor _ in range(9):\n    os.fork()\ntime.sleep(3)"


def attack(sandbox, py, workdir, limits, code: str, **update):
    python, ro = py
    return sandbox.run([python, "-c", code], workdir, limits.model_copy(update=update),
                       ro_paths=ro)


def test_socket_to_host_listener_is_refused(bwrap, py, workdir, limits):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    srv.settimeout(0.2)
    port = srv.getsockname()[1]
    accepted, stop = [], threading.Event()

    def serve():
        while not stop.is_set():
            try:
                accepted.append(srv.accept()[0])
            except OSError:
                pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        # Sanity: the listener is reachable from the host itself.
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        r = attack(bwrap, py, workdir, limits,
                   f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3)")
    finally:
        stop.set()
        thread.join()
        srv.close()
    assert len(accepted) == 1  # only the host's own connection
    assert r.exit_code != 0 and "ConnectionRefusedError" in r.stderr


def test_write_outside_workdir_does_not_reach_host(bwrap, py, workdir, limits, tmp_path):
    target = tmp_path / "escaped.txt"
    r = attack(bwrap, py, workdir, limits,
               f"open({str(target)!r}, 'w').write('x'); open('inside.txt', 'w').write('ok')")
    assert not target.exists()
    assert r.exit_code != 0  # the folder does not exist in the sandbox
    inside = attack(bwrap, py, workdir, limits, "open('inside.txt', 'w').write('ok')")
    assert inside.exit_code == 0 and (workdir / "inside.txt").read_text() == "ok"
    # the working copy is handed back to its owner after the run
    assert (workdir / "inside.txt").stat().st_uid == os.stat(workdir).st_uid == os.getuid()


@pytest.mark.parametrize("where", ["tmp", "home"])
def test_planted_files_outside_workdir_are_invisible(bwrap, py, workdir, limits, tmp_path, where):
    if where == "tmp":
        secret = tmp_path / "planted-secret.txt"
    else:
        home = Path.home()
        if not os.access(home, os.W_OK):
            pytest.skip("home folder not writable here")
        secret = home / f".datagen-test-secret-{os.getpid()}"
    secret.write_text("TOPSECRET")
    try:
        r = attack(bwrap, py, workdir, limits, f"print(open({str(secret)!r}).read())")
        listing = attack(bwrap, py, workdir, limits,
                         f"import os; print(os.listdir({str(Path.home())!r}))")
    finally:
        secret.unlink()
    assert "TOPSECRET" not in r.stdout and r.exit_code != 0
    assert secret.name not in listing.stdout


@pytest.mark.slow
def test_fork_bomb_fails_fast_and_is_reported(any_sandbox, py, workdir, limits,
                                             fallback_bounds_processes):
    if any_sandbox.name == "subprocess" and not fallback_bounds_processes:
        pytest.skip("subprocess back end as root without a pids cgroup cannot bound processes")
    r = attack(any_sandbox, py, workdir, limits, FORK_BOMB, processes=16, timeout_s=15)
    assert r.limit_hit == "processes", (r.exit_code, r.stderr[-500:])
    assert r.duration_s < 10


def test_allocating_ten_times_the_memory_limit_is_stopped(any_sandbox, py, workdir, limits):
    r = attack(any_sandbox, py, workdir, limits, "x = 'a' * (10 * 128 * 2**20)", memory_mb=128)
    assert r.limit_hit == "memory", (r.exit_code, r.stderr[-500:])
    assert r.exit_code != 0


@pytest.mark.slow
def test_infinite_loop_is_killed_at_the_timeout(any_sandbox, py, workdir, limits):
    r = attack(any_sandbox, py, workdir, limits,
               "import subprocess, sys\n"
               "subprocess.Popen([sys.executable, '-c', 'while True: pass'])\n"
               "while True: pass", timeout_s=1.0)
    assert r.limit_hit == "timeout" and 1.0 <= r.duration_s < 5
    # the child it started died with it: nothing of the run spins on
    assert not [cmd for cmd in _command_lines() if "while True: pass" in cmd]


@pytest.mark.slow
def test_cpu_time_limit(any_sandbox, py, workdir, limits):
    r = attack(any_sandbox, py, workdir, limits, "while True: pass", cpu_s=1, timeout_s=15)
    assert r.limit_hit == "cpu" and r.limit_evidence == "SIGXCPU"


def test_killing_the_parent_is_contained(bwrap, py, workdir, limits):
    sentinel = subprocess.Popen(["sleep", "30"])  # a host process the attack must not reach
    try:
        r = attack(bwrap, py, workdir, limits,
                   "import os, signal\n"
                   "for target in (os.getppid(), 1, -1):\n"
                   "    try:\n"
                   "        os.kill(target, signal.SIGKILL)\n"
                   "    except OSError as e:\n"
                   "        print(target, type(e).__name__)\n")
        assert sentinel.poll() is None
    finally:
        sentinel.send_signal(signal.SIGKILL)
        sentinel.wait()
    assert r.limit_hit is None
    again = attack(bwrap, py, workdir, limits, "print('still works')")
    assert again.stdout.strip() == "still works"


def test_one_huge_file_hits_the_file_size_limit(any_sandbox, py, workdir, limits):
    r = attack(any_sandbox, py, workdir, limits,
               "f = open('huge.bin', 'wb')\nwhile True:\n    f.write(b'x' * 2**20)", file_size_mb=4)
    assert r.limit_hit == "file_size"
    assert (workdir / "huge.bin").stat().st_size <= 4 * 2**20


def test_filling_private_tmp_stops_at_its_size(bwrap, py, workdir, limits):
    r = attack(bwrap, py, workdir, limits,
               "for i in range(100):\n    open(f'/tmp/fill{i}', 'wb').write(b'x' * 2**20)",
               tmp_size_mb=8, file_size_mb=4)
    assert r.limit_hit == "disk", (r.exit_code, r.stderr[-300:])
    assert not list(Path("/tmp").glob("fill*"))  # the host /tmp saw nothing


def test_output_is_capped_head_and_tail(any_sandbox, py, workdir, limits):
    r = attack(any_sandbox, py, workdir, limits,
               "import sys\nsys.stdout.write('START' + 'x' * 200000 + 'END')", output_bytes=1000)
    assert r.stdout.startswith("START") and r.stdout.endswith("END")
    assert r.stdout_bytes == 200008 and len(r.stdout) < 1200
    assert "bytes cut by the sandbox" in r.stdout


def test_hard_link_to_a_host_file_stays_read_only(bwrap, py, workdir, limits, tmp_path):
    host_file = tmp_path / "host-owned.txt"
    host_file.write_text("original")
    os.link(host_file, workdir / "linked.txt")
    r = attack(bwrap, py, workdir, limits, "open('linked.txt', 'w').write('tampered')")
    assert r.exit_code != 0 and "PermissionError" in r.stderr
    assert host_file.read_text() == "original"


def test_system_folders_are_refused_as_working_copy(bwrap, limits):
    from datagen.errors import UserError

    for folder in ("/", "/usr", str(Path.home())):
        with pytest.raises(UserError, match="refusing"):
            bwrap.run(["true"], Path(folder), limits)


def test_the_way_to_a_bound_folder_cannot_be_listed(bwrap, workdir, limits, py):
    """The interpreter's folder is bound at its host path; the folders above it exist only
    to reach it and show nothing (no host `.pyenv` listing under `/root`)."""
    exe, ro = py
    above = [str(p) for p in reversed(ro[0].parents) if str(p) not in ("/", "/usr")][:2]
    code = ("import os, sys\nfor p in sys.argv[1:]:\n    try:\n        print(p, sorted(os.listdir(p)))\n"
            "    except OSError as e:\n        print(p, 'denied', e.errno)\nprint('ok', sys.version_info[0])")
    result = bwrap.run([exe, "-c", code, *above], workdir, limits, ro_paths=ro)
    assert "ok 3" in result.stdout, result.stderr
    for path in above:
        assert f"{path} denied" in result.stdout, result.stdout


def _command_lines() -> list[str]:
    """Every process's command line, read from /proc (no `ps` needed)."""
    lines = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            lines.append(cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:  # the process ended meanwhile
            pass
    return lines
