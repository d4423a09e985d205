"""Fixtures for the server tests: real `datagen serve` processes on 127.0.0.1, a pool of
made-up instructions, and a real two-task repo (two bugs, one per task) to grade on."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

import datagen
from datagen.pool.exports import write_pool
from datagen.pool.rows import rows_from_tasks
from tests.sandbox.conftest import git

ROOT = Path(datagen.__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), **extra}


def request(port: int, path: str, body: object = None, token: str | None = None, raw: bytes | None = None,
            timeout: float = 60.0) -> tuple[int, object, dict]:
    """One HTTP call: (status, parsed JSON body, headers); errors are answers, not raises."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, headers=headers,
                                 method="GET" if data is None else "POST")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read() or b"null"), dict(r.headers)
    except urllib.error.HTTPError as exc:
        payload = exc.read()
        try:
            parsed = json.loads(payload or b"null")
        except ValueError:
            parsed = payload.decode(errors="replace")
        return exc.code, parsed, dict(exc.headers)


class Server:
    """`python -m datagen.cli.app serve ...` as a child process, up once /health answers."""

    def __init__(self, *args: str, port: int | None = None, extra_env: dict | None = None):
        self.args, self.port, self.extra_env = list(args), port or free_port(), extra_env or {}
        self.proc: subprocess.Popen | None = None
        # what every start of it printed (a file, not a pipe nobody reads: that could fill)
        self.log = tempfile.NamedTemporaryFile("w+", prefix="datagen-serve-", suffix=".log")

    def output(self) -> str:
        return Path(self.log.name).read_text(errors="replace")

    def start(self, wait_s: float = 60.0) -> Server:
        self.proc = subprocess.Popen([sys.executable, "-m", "datagen.cli.app", "serve", *self.args,
                                      "--port", str(self.port)], env=env(**self.extra_env), cwd=ROOT,
                                     stdout=subprocess.DEVNULL, stderr=self.log, text=True)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"server exited {self.proc.returncode}: {self.output()}")
            try:
                if request(self.port, "/health", timeout=2)[0] == 200:
                    return self
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.1)
        self.stop()
        raise AssertionError("server did not come up")

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.kill()

    def __enter__(self) -> Server:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


# -- a real repo with two bugs, two tasks ------------------------------------------------
CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"
SUB_TEST = "from calc import sub\n\n\ndef test_sub():\n    assert sub(5, 3) == 2\n"
TESTS = {"add": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
         "mul": "from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n"}
FIXES = {"add": ("return a - b\n\n\ndef mul", "return a + b\n\n\ndef mul"),
         "mul": ("return a + b\n\n\ndef sub", "return a * b\n\n\ndef sub")}


def calc_tasks(root: Path) -> Path:
    """``root/tasks/tasks.jsonl``: tasks ``calc__add`` and ``calc__mul`` on one git repo."""
    repo = root / "tasks" / "calc"
    (repo / "tests").mkdir(parents=True)
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "t")
    (repo / "calc.py").write_text(CALC)
    (repo / "tests" / "test_sub.py").write_text(SUB_TEST)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    base = git(repo, "rev-parse", "HEAD").strip()
    tasks = []
    for name, test in TESTS.items():
        (repo / "tests" / f"test_{name}.py").write_text(test)
        git(repo, "add", "-A")
        test_patch = git(repo, "diff", "--cached", base)
        git(repo, "reset", "-q", "--hard", base)
        old, new = FIXES[name]
        (repo / "calc.py").write_text(CALC.replace(old, new))
        patch = git(repo, "diff")
        git(repo, "checkout", "-q", ".")
        tasks.append({"instance_id": f"calc__{name}", "repo": "local/calc", "base_commit": base, "patch": patch,
                      "test_patch": test_patch, "problem_statement": f"{name}(2, 3) is wrong.",
                      "FAIL_TO_PASS": [f"tests/test_{name}.py::test_{name}"],
                      "PASS_TO_PASS": ["tests/test_sub.py::test_sub"], "repo_path": "calc"})
    path = root / "tasks" / "tasks.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in tasks))
    return path


@pytest.fixture(scope="session")
def calc_pool(tmp_path_factory) -> Path:
    """A pool folder of the two calc tasks (the grader reads a pool too)."""
    root = tmp_path_factory.mktemp("calc")
    tasks = calc_tasks(root)
    out = root / "pool"
    write_pool(rows_from_tasks(tasks, group_size=4), [], out)
    return out
