"""mini-swe-agent's ``Environment`` over datagen's sandbox: every command the agent sends is
one sandboxed run in the task's working copy, with the environment and limits of a test run
and no network.

The working copy (``working_copy``) is the task's source at its base commit, the env's links
(``node_modules``, ...) and a git repository of one root commit, so ``git diff`` works and no
history is there to read. The diff that is graded (``final_diff``) is read by the host through
a copy of that repository kept outside the working copy, so nothing the agent writes into its
``.git`` changes what is graded.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from datagen.config.sandbox import SandboxLimits
from datagen.errors import SkipItem
from datagen.records.tasks import TaskRecord
from datagen.sandbox.harness.profiles.base import ProfileEnv, links_into
from datagen.sandbox.harness.profiles.registry import get_profile
from datagen.sandbox.harness.task_store import materialize
from datagen.sandbox.isolation.base import Sandbox
from datagen.sandbox.isolation.session import BwrapSession, SessionError, open_session

SUBMIT = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
# a fixed author and date: the same task gives the same root commit in every run
_GIT_ENV = {"GIT_AUTHOR_NAME": "datagen", "GIT_AUTHOR_EMAIL": "datagen@localhost",
            "GIT_COMMITTER_NAME": "datagen", "GIT_COMMITTER_EMAIL": "datagen@localhost",
            "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
_EPOCH = 946_684_800  # 2000-01-01, the root commit's date


class SandboxFailure(RuntimeError):
    """The sandbox could not run a command (not the command's failure): the run is masked."""


def _git(args: Sequence[str], cwd: Path, git_dir: Path | None = None, work_tree: Path | None = None) -> str:
    env = {**os.environ, **_GIT_ENV, "GIT_CEILING_DIRECTORIES": str(cwd.parent)}
    where = ([f"--git-dir={git_dir}"] if git_dir else []) + ([f"--work-tree={work_tree}"] if work_tree else [])
    proc = subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", *where, *args],
                          cwd=cwd, env=env, capture_output=True)
    if proc.returncode != 0:
        raise SkipItem("working_copy_failed", proc.stderr.decode(errors="replace").strip()[:300])
    return proc.stdout.decode("utf-8", errors="replace")


def working_copy(task: TaskRecord, base: Path, env: ProfileEnv, dest: Path, pristine: Path) -> None:
    """``dest``: the task at its base commit as one root commit (every file, ignored ones
    too), then the env's links made and ignored by git; ``pristine``: a copy of its git
    folder, outside the working copy, that ``final_diff`` reads."""
    dest.mkdir(parents=True)
    materialize(task, base, dest)
    _git(["init", "-q", "-b", "main"], dest)
    _git(["add", "-A", "-f"], dest)
    _git(["commit", "-q", "--allow-empty", "-m", "Initial commit"], dest)
    ignored = [*env.links, get_profile(task.runner).report]
    (dest / ".git" / "info").mkdir(exist_ok=True)
    (dest / ".git" / "info" / "exclude").write_text("".join(f"/{p}\n" for p in ignored))
    links_into(dest, env.links)
    _fixed_times(dest)
    shutil.copytree(dest / ".git", pristine, symlinks=True)


def _fixed_times(root: Path) -> None:
    """Every entry's times set to the commit's date: what ``ls -l`` shows is the same in every
    run, so the same policy step is the same request (and found in the teacher cache)."""
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            os.utime(os.path.join(folder, name), (_EPOCH, _EPOCH), follow_symlinks=False)
    os.utime(root, (_EPOCH, _EPOCH))


def final_diff(work: Path, pristine: Path) -> str:
    """The working copy's changes against the base commit, new files included, as a git
    diff (binary files too); read through ``pristine``, never the copy's own ``.git``."""
    _git(["add", "-A"], work, git_dir=pristine, work_tree=work)
    return _git(["diff", "--cached", "--binary", "--no-color", "--no-ext-diff", "--no-textconv", "HEAD"],
                work, git_dir=pristine, work_tree=work)


class SandboxEnvironmentConfig(BaseModel):
    """What the trajectory records of the environment (mini-swe-agent serializes ``config``)."""

    cwd: str
    timeout_s: float
    max_output_chars: int
    sandbox: str


def cut(text: str, limit: int) -> str:
    """``text`` with its middle cut out past ``limit`` characters (head and tail kept)."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters cut ...]\n{text[-half:]}"


class SandboxEnvironment:
    """mini-swe-agent's ``Environment`` protocol (``execute``, ``get_template_vars``,
    ``serialize``); each command is ``bash -c`` in the sandbox, stderr merged into stdout.

    The commands of one environment (one agent run) go through one sandbox session
    (``isolation/session.py``: the same isolation, started once, no process outliving its
    command); where no session can start, each command is its own sandbox run and
    ``session_error`` says why. ``close()`` ends the session: the working copy holds the
    run's writes only after it."""

    def __init__(self, *, workdir: Path, sandbox: Sandbox, limits: SandboxLimits, run_env: Mapping[str, str],
                 ro_paths: Sequence[Path] = (), max_output_chars: int = 10_000, session: bool = True):
        self.workdir = Path(workdir)
        self.sandbox = sandbox
        self.limits = limits
        self.run_env = dict(run_env)
        self.ro_paths = tuple(ro_paths)
        self.config = SandboxEnvironmentConfig(cwd=str(self.workdir), timeout_s=limits.timeout_s,
                                               max_output_chars=max_output_chars, sandbox=sandbox.name)
        self.commands = 0
        self.seconds = 0.0
        self.session: BwrapSession | None = None
        self.session_error: str | None = None if session else "off (one sandbox per command asked for)"

    def _run(self, command: str, cwd: str, limits: SandboxLimits):
        """One command: through the session (opened on first use, reopened after a broken
        one), else as its own sandbox run."""
        if self.session is not None and self.session.broken:
            self.session.close()
            self.session = None
        if self.session is None and self.session_error is None:
            try:
                self.session = open_session(self.sandbox, self.workdir, self.limits, env=self.run_env,
                                            ro_paths=self.ro_paths)
            except (OSError, SessionError) as exc:
                self.session_error = str(exc)
        argv = ["bash", "-c", "exec 2>&1\n" + command]
        if self.session is not None:
            return self.session.run(argv, cwd=Path(cwd) if cwd else None, timeout_s=limits.timeout_s)
        if cwd:
            argv[2] = f"cd {shlex.quote(cwd)} || exit\n{argv[2]}"
        return self.sandbox.run(argv, self.workdir, limits, env=self.run_env, ro_paths=self.ro_paths)

    def close(self) -> None:
        """End the session (its writes reach the working copy); later commands open another."""
        if self.session is not None:
            self.session.close()
            self.session = None

    def execute(self, action: dict, cwd: str = "", *, timeout: int | None = None) -> dict[str, Any]:
        """Run the action's ``command``; raises mini-swe-agent's ``Submitted`` when its first
        output line is the submit word (exit 0), ``SandboxFailure`` when the sandbox fails."""
        from minisweagent.exceptions import Submitted

        limits = self.limits if timeout is None else self.limits.model_copy(update={"timeout_s": float(timeout)})
        try:
            result = self._run(action.get("command", ""), cwd, limits)
        except (OSError, RuntimeError, SkipItem) as exc:
            raise SandboxFailure(f"{type(exc).__name__}: {exc}") from exc
        self.commands += 1
        self.seconds += result.duration_s
        text = result.stdout + result.stderr
        info = f"the command hit the sandbox's {result.limit_hit} limit" if result.limit_hit else ""
        output = {"output": cut(text, self.config.max_output_chars), "returncode": result.exit_code,
                  "exception_info": info}
        lines = text.lstrip().splitlines(keepends=True)
        if lines and lines[0].strip() == SUBMIT and result.exit_code == 0:
            submission = "".join(lines[1:])
            raise Submitted({"role": "exit", "content": submission,
                             "extra": {"exit_status": "Submitted", "submission": submission}})
        return output

    def get_template_vars(self, **kwargs) -> dict[str, Any]:
        """The prompts' variables: the working copy's path and the command limits (nothing of
        the host: its environment and name stay out of the trajectory)."""
        return {**self.config.model_dump(), **kwargs}

    def serialize(self) -> dict:
        return {"info": {"sandbox_session": self.session_error or "on",
                         "config": {"environment": self.config.model_dump(mode="json"),
                                    "environment_type": f"{type(self).__module__}.{type(self).__name__}"}}}
