"""The command server that runs inside a sandbox session (``session.py``): standard library
only, because its source is handed to the system ``python3`` inside the sandbox, which sees
none of datagen.

It reads one request per line on stdin (JSON: ``argv``, ``cwd``, ``timeout``, ``cap``,
``cpu``), runs the command in its own process group with stdin from /dev/null, keeps the
first and last ``cap // 2`` bytes of each of its stdout and stderr, and writes one reply per
line on stdout (JSON: ``code``, ``out``/``err`` base64, ``out_total``/``err_total``,
``timed_out``). When the command exits or its ``timeout`` passes, every other process in the
sandbox's PID namespace is killed: nothing a command started outlives it, as with one
sandbox per command. It ends at EOF on stdin. It makes itself non-dumpable first, so a
command (same uid) cannot open its pipes through /proc or ptrace it.
"""

import base64
import ctypes
import json
import os
import resource
import select
import signal
import subprocess
import sys
import time

_PR_SET_DUMPABLE = 4


class Capped:
    """The first and last ``cap // 2`` bytes of a stream, and its total size."""

    def __init__(self, cap):
        self.half, self.head, self.tail, self.total = max(cap // 2, 1), bytearray(), bytearray(), 0

    def add(self, chunk):
        self.total += len(chunk)
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            del self.tail[: max(len(self.tail) - self.half, 0)]

    def kept(self):
        """The kept bytes, with a line saying how many were cut between head and tail."""
        cut = self.total - len(self.head) - len(self.tail)
        mid = f"\n[... {cut} bytes cut by the sandbox ...]\n".encode() if cut > 0 else b""
        return bytes(self.head) + mid + bytes(self.tail)

    def text(self):
        return base64.b64encode(self.kept()).decode()


def sweep():
    """SIGKILL every process of the namespace but its init (pid 1) and this server, until
    none is left alive (a process may fork while the sweep runs)."""
    me = os.getpid()
    for _ in range(10_000):
        alive = False
        for name in os.listdir("/proc"):
            if not name.isdigit() or int(name) in (1, me):
                continue
            try:
                with open(f"/proc/{name}/stat", "rb") as fh:
                    if fh.read().rpartition(b")")[2].split()[0] == b"Z":
                        continue
                os.kill(int(name), signal.SIGKILL)
                alive = True
            except (OSError, IndexError):
                continue
        if not alive:
            return


def _reap_zombies():
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                return
        except ChildProcessError:
            return


def _pump(streams, poller, wait_ms):
    for fd, _ in poller.poll(wait_ms):
        if fd in streams:
            chunk = os.read(fd, 65536)
            if chunk:
                streams[fd].add(chunk)
            else:
                poller.unregister(fd)
                del streams[fd]


def run(req):
    cpu = req["cpu"]

    def limit_cpu():
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))

    try:
        proc = subprocess.Popen(req["argv"], cwd=req["cwd"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True, preexec_fn=limit_cpu)
    except OSError as exc:
        message = f"sandbox: cannot start {req['argv'][0]} in {req['cwd']}: {exc.strerror}\n".encode()
        err = Capped(req["cap"])
        err.add(message)
        return {"code": 127 if isinstance(exc, FileNotFoundError) else 126, "out": "", "err": err.text(),
                "out_total": 0, "err_total": err.total, "timed_out": False}
    out, err = Capped(req["cap"]), Capped(req["cap"])
    streams = {proc.stdout.fileno(): out, proc.stderr.fileno(): err}
    exited = os.pidfd_open(proc.pid)
    poller = select.poll()
    for fd in [*streams, exited]:
        poller.register(fd, select.POLLIN)
    deadline = time.monotonic() + req["timeout"]
    timed_out = True
    while (left := deadline - time.monotonic()) > 0:
        _pump(streams, poller, max(1, int(left * 1000) + 1))
        if select.select([exited], [], [], 0)[0]:
            timed_out = False
            break
    os.close(exited)
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    sweep()
    while streams:  # every writer is dead: the pipes end
        _pump(streams, poller, -1)
    code = proc.wait()
    _reap_zombies()
    return {"code": code if code >= 0 else 128 - code, "out": out.text(), "err": err.text(),
            "out_total": out.total, "err_total": err.total, "timed_out": timed_out}


def main():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    reply = sys.stdout.buffer
    reply.write(b'{"ready": true}\n')
    reply.flush()
    for line in sys.stdin.buffer:
        reply.write(json.dumps(run(json.loads(line))).encode() + b"\n")
        reply.flush()


if __name__ == "__main__":
    main()
