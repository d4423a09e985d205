"""A sandbox session (one bwrap sandbox, many commands): the isolation of a per-command run
holds for every command, and nothing a command started outlives it, its session or the
process that opened the session."""

from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from datagen.sandbox.isolation.session import BwrapSession, open_session
from datagen.sandbox.isolation.subprocess_backend import SubprocessSandbox
from tests.sandbox.conftest import SMALL

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def session(bwrap, workdir):
    with open_session(bwrap, workdir, SMALL) as s:
        yield s


def sh(session: BwrapSession, script: str, **kw):
    return session.run(["bash", "-c", script], **kw)


def _others(session: BwrapSession) -> list[str]:
    """The sandbox's processes besides its init, the server and this listing's own shell/ps."""
    out = sh(session, "ps -eo pid=,comm=").stdout.split("\n")
    return [line for line in out if line.strip() and line.split()[1] not in ("bwrap", "python3", "bash", "ps")]


def test_a_timeout_kills_the_command_and_everything_it_started(session):
    result = sh(session, "sleep 1000 & setsid sleep 1001 & (trap '' TERM; sleep 1002) & sleep 1003", timeout_s=1)
    assert result.limit_hit == "timeout" and result.exit_code == 137
    assert _others(session) == []
    assert sh(session, "echo alive").stdout == "alive\n"  # the session goes on


def test_background_processes_do_not_outlive_their_command(session):
    assert sh(session, "nohup sleep 1000 >/dev/null 2>&1 & setsid sleep 1001 & echo started").stdout == "started\n"
    assert _others(session) == []


def test_each_command_starts_fresh_but_files_persist(session, workdir):
    sh(session, "cd /tmp && export LEAK=1 && echo kept > note.txt && echo data > /tmp/scratch")
    after = sh(session, 'pwd; echo "${LEAK:-unset}"; cat /tmp/scratch')
    assert after.stdout.splitlines() == [str(workdir), "unset", "data"]
    sh(session, "echo new > made.txt; mkdir sub")
    assert sh(session, "pwd", cwd=workdir / "sub").stdout.strip() == str(workdir / "sub")
    session.close()
    assert (workdir / "made.txt").read_text() == "new\n"  # writes are the working copy's after close


def test_no_network_not_even_the_hosts_loopback(session):
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        probe = f"import socket; socket.create_connection(('127.0.0.1', {port}), 2)"
        result = sh(session, f"python3 -c \"{probe}\" && echo CONNECTED")
    assert result.exit_code != 0 and "CONNECTED" not in result.stdout
    assert "ConnectionRefusedError" in result.stderr  # the sandbox's own loopback: nobody listens
    devices = sh(session, "tail -n +3 /proc/net/dev").stdout.splitlines()
    assert [line.split(":")[0].strip() for line in devices] == ["lo"]


def test_output_is_capped_head_and_tail(session):
    result = sh(session, "seq 1 200000")
    assert result.stdout_bytes == len("".join(f"{i}\n" for i in range(1, 200001)))
    assert len(result.stdout) < SMALL.output_bytes + 200 and "bytes cut by the sandbox" in result.stdout
    assert result.stdout.startswith("1\n2\n") and result.stdout.endswith("199999\n200000\n")


def test_a_command_that_kills_the_server_breaks_only_its_session(bwrap, workdir):
    with open_session(bwrap, workdir, SMALL) as session:
        result = sh(session, "kill -9 $PPID; sleep 5")
        assert result.exit_code == 137 and session.broken
        assert "command server died" in result.stderr


def test_close_leaves_no_process(bwrap, workdir):
    session = open_session(bwrap, workdir, SMALL)
    bwrap_pid = session.proc.pid
    group = session.cgroup.pids if session.cgroup else None
    session.close()
    with pytest.raises(ProcessLookupError):
        os.kill(bwrap_pid, 0)
    if group is not None:
        assert not group.exists()


def test_the_session_dies_with_the_process_that_opened_it(workdir):
    """The opener is SIGKILLed while a command runs: the sandbox and the command end too."""
    opener = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        from pathlib import Path
        from datagen.sandbox.isolation.bwrap import BwrapSandbox
        from datagen.sandbox.isolation.session import open_session
        from tests.sandbox.conftest import SMALL
        import threading, time
        from tests.sandbox.test_session import _sleeps
        s = open_session(BwrapSandbox(), Path({str(workdir)!r}), SMALL)
        threading.Thread(target=s.run, args=(["bash", "-c", "sleep 1000.25"],), kwargs={{"timeout_s": 1000}}).start()
        deadline = time.monotonic() + 10
        while not any(_sleeps()) and time.monotonic() < deadline:
            time.sleep(0.01)
        print(s.proc.pid if any(_sleeps()) else "no command started", flush=True)
    """)], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE, text=True)
    bwrap_pid = int(opener.stdout.readline())
    pidfd = os.pidfd_open(bwrap_pid)
    try:
        opener.send_signal(signal.SIGKILL)
        opener.wait()
        assert select.select([pidfd], [], [], 10)[0], "the sandbox outlived its opener"
    finally:
        os.close(pidfd)
    deadline = time.monotonic() + 10
    while any(_sleeps()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_sleeps())


def _sleeps():
    for pid in os.listdir("/proc"):
        try:
            yield pid.isdigit() and Path(f"/proc/{pid}/cmdline").read_bytes() == b"sleep\x001000.25\x00"
        except OSError:
            continue


def test_other_back_ends_have_no_session(workdir):
    from datagen.sandbox.isolation.session import SessionError

    with pytest.raises(SessionError, match="bwrap"):
        open_session(SubprocessSandbox(warn=False), workdir, SMALL)
