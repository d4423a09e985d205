"""The env cache of every profile: one folder per env key, built once, its build recorded.

A profile's environment (a Python venv, ``node_modules``, a Go module cache, a Maven
repository, ...) is built from its ``EnvPlan`` in the sandbox with the network on, in the
folder ``<env.cache_dir>/<name>`` (``name``: the profile's, and the key of the plan, the
repo's dependency files and the tools that built it). This module owns what every profile's
env shares:

- one builder per folder (a file lock ``<name>.lock``; others wait, then reuse);
- the build record ``attempt.json`` (plan, each step's outcome and seconds, error, log tail),
  ``ok.json`` for an env that is ready and ``failed.json`` for one that is not (a failed env
  is not rebuilt unless asked: ``retry_failed``);
- the leak guard: an env that holds a copy of the project's own code files fails
  (``env_holds_source``, emptied); one that holds copies of a few (a dependency vendors
  them) keeps their paths in ``ok.json``'s ``held`` (``leaks.py``);
- the log of a build's sandboxed install steps (``BuildLog``).

A builder fills the folder; Python's (``python/manager.py``) is one of them.
"""

from __future__ import annotations

import fcntl
import json
import shlex
import shutil
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from datagen.errors import SkipItem, UserError
from datagen.records.env import EnvPlan

if TYPE_CHECKING:
    from datagen.config.sandbox import SandboxLimits
    from datagen.records.tasks import RunResult
    from datagen.sandbox.isolation.base import Sandbox

LOG_TAIL = 4000  # characters of the build's log kept with a failure


class EnvSetupError(SkipItem):
    """The environment could not be built; the task is skipped with this reason."""

    def __init__(self, detail: str, log_tail: str = "", step: str = "", reason: str = "env_setup_failed"):
        super().__init__(reason or "env_setup_failed", detail)
        self.log_tail = log_tail
        self.step = step


@dataclass
class Attempt:
    """One build of a plan: what each step did (``attempt.json``)."""

    plan: EnvPlan
    outcome: str = "ok"  # ok | failed
    failed_step: str = ""
    error: str = ""
    log_tail: str = ""
    seconds: float = 0.0
    installer: str = ""  # Python's: uv or pip
    steps: list[dict] = field(default_factory=list)
    reason: str = "env_setup_failed"  # or registry_unreachable: <registry>, env_holds_source

    def fail(self, step: str, error: str, log_tail: str, reason: str = "env_setup_failed") -> None:
        self.outcome, self.failed_step, self.error, self.log_tail = "failed", step, error, log_tail[-LOG_TAIL:]
        self.reason = reason or "env_setup_failed"

    def error_of(self) -> EnvSetupError:
        return EnvSetupError(self.error, self.log_tail, self.failed_step, self.reason)

    def record(self) -> dict:
        return {"plan": json.loads(self.plan.model_dump_json()), "outcome": self.outcome,
                **({"reason": self.reason} if self.outcome != "ok" else {}),
                "failed_step": self.failed_step, "error": self.error, "log_tail": self.log_tail,
                "seconds": self.seconds, "installer": self.installer, "steps": self.steps}


# A builder fills the empty folder it is given and says how it went in the attempt (or raises
# ``EnvSetupError``); what it returns is kept in ``ok.json`` (the env's own facts: pins, ...).
Builder = Callable[[Path, Attempt], Mapping[str, object]]


def ensure_cached(cache_dir: Path, name: str, src: Path, plan: EnvPlan, build: Builder,
                  retry_failed: bool = False) -> Path:
    """The env folder ``cache_dir / name``, made by ``build`` on first use (see the module
    docstring); raises ``EnvSetupError`` when it cannot be, or a recorded failure says so."""
    target = cache_dir / name
    cache_dir.mkdir(parents=True, exist_ok=True)
    with open(cache_dir / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        failed = target / "failed.json"
        if failed.exists() and not retry_failed:
            info = json.loads(failed.read_text())
            raise EnvSetupError(f"{info['error']} (recorded in {failed}; not retried)", info.get("log_tail", ""),
                                info.get("step", ""), reason=info.get("reason", ""))
        if not (target / "ok.json").exists():
            shutil.rmtree(target, ignore_errors=True)
            target.mkdir(parents=True)
            _build(target, src, plan, build)
    return target


def _build(target: Path, src: Path, plan: EnvPlan, build: Builder) -> None:
    attempt = Attempt(plan=plan)
    started = time.time()
    facts: Mapping[str, object] = {}
    try:
        facts = build(target, attempt)
    except EnvSetupError as exc:
        if attempt.outcome == "ok":  # raised without saying so in the attempt
            attempt.fail(exc.step, str(exc), exc.log_tail, exc.reason)
    held: list[str] = []
    if attempt.outcome == "ok":
        held = _guard_leaks(target, src, attempt)
    attempt.seconds = round(time.time() - started, 2)
    (target / "attempt.json").write_text(json.dumps(attempt.record(), indent=1))
    if attempt.outcome != "ok":
        (target / "failed.json").write_text(json.dumps(
            {"error": attempt.error, "step": attempt.failed_step, "log_tail": attempt.log_tail,
             "reason": attempt.reason, "at": started}))
        raise attempt.error_of()
    (target / "ok.json").write_text(json.dumps({**facts, "held": held, "seconds": attempt.seconds}, sort_keys=True))


def _guard_leaks(target: Path, src: Path, attempt: Attempt) -> list[str]:
    """The project files a built env may hold (``held``); an env holding the project's code
    fails instead, and nothing of it stays readable."""
    from datagen.sandbox.envs.leaks import LEAK_REASON, env_leaks, held_copies, leak_detail, source_digests

    digests = source_digests(src)
    leaks = env_leaks(target, src, digests=digests)
    held = held_copies(leaks, digests) or []
    if leaks and not held:  # never a silent pass: the env would hand every task of the repo its answer
        attempt.fail("leak check", leak_detail(leaks), "\n".join(map(str, leaks)), LEAK_REASON)
        for entry in target.iterdir():
            shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
    return held


def read_attempt(folder: Path) -> dict | None:
    """The stored ``attempt.json`` of an env folder (None when it has none)."""
    path = folder / "attempt.json"
    return json.loads(path.read_text()) if path.is_file() else None


def write_record(record: Path, name: str, folder: Path, plan: EnvPlan, exc: EnvSetupError | None) -> None:
    """What happened to an env (its key ``name``, the attempt's plan, steps, outcome), as JSON
    in ``record``, for the build's ``repo_envs`` row. The plan is the one given: the env's plan
    as built (with the fallback it took) where it was built."""
    attempt = {**(read_attempt(folder) or {}), "plan": json.loads(plan.model_dump_json())}
    if exc is not None:
        attempt.setdefault("outcome", "failed")
        attempt["error"], attempt["failed_step"] = str(exc), exc.step or attempt.get("failed_step", "")
        attempt["log_tail"] = exc.log_tail or attempt.get("log_tail", "")
    record.parent.mkdir(parents=True, exist_ok=True)
    tmp = record.with_suffix(".tmp")
    tmp.write_text(json.dumps({"env_key": name, **attempt}, indent=1))
    tmp.replace(record)


class BuildLog:
    """The install steps of one build, run in the sandbox with the network on: the sandbox may
    write only the env folder; each step's output is logged and its outcome kept in the attempt."""

    def __init__(self, sandbox: Sandbox, limits: SandboxLimits, target: Path, attempt: Attempt,
                 env: Mapping[str, str] | None = None):
        self.sandbox, self.limits, self.target, self.attempt = sandbox, limits, target, attempt
        self.env = dict(env or {})
        self.lines: list[str] = []

    def run(self, name: str, cmd: list[str], env: Mapping[str, str] | None = None,
            ro_paths: Iterable[Path] = (), shown: list[str] | None = None) -> tuple[RunResult, str]:
        """Run one command in the env folder (logged as ``shown``, default ``cmd``): the result,
        and why it failed ('' when it did not)."""
        started = time.time()
        result = self.sandbox.run(cmd, self.target, self.limits, env={**self.env, **(env or {})},
                                  ro_paths=tuple(ro_paths))
        self.lines.append(f"$ {shlex.join(shown or cmd)}\n{result.stdout}{result.stderr}")
        ok = result.exit_code == 0 and result.limit_hit is None
        why = "" if ok else (f"limit {result.limit_hit}" if result.limit_hit else f"exit {result.exit_code}")
        self.attempt.steps.append({"name": name, "ok": ok, "seconds": round(time.time() - started, 2),
                                   **({"why": why} if why else {})})
        return result, why

    def tail(self) -> str:
        return "\n".join(self.lines)[-LOG_TAIL:]

    def fail(self, name: str, error: str, output: str) -> EnvSetupError:
        """Mark the attempt failed at step ``name`` and return the error to raise; a registry
        this machine cannot reach is said in those words (the machine's reach, not the repo)."""
        from datagen.sandbox.envs.mirrors import unreachable_registry

        registry = unreachable_registry(output)
        self.attempt.fail(name, error, self.tail(),
                          f"registry_unreachable: {registry}" if registry else "env_setup_failed")
        return self.attempt.error_of()


def load_plan(path: str | Path, source: str = "user") -> EnvPlan:
    """A plan file (JSON or YAML); its steps are marked ``source`` (a person's: ``user``)."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
        plan = EnvPlan.model_validate(data)
    except (OSError, yaml.YAMLError, ValueError) as exc:
        raise UserError(f"env plan {path}: {exc}") from None
    if source != "keep":
        plan.install = [s.model_copy(update={"source": source}) for s in plan.install]
    return plan


def write_generated(src: Path, plan: EnvPlan) -> None:
    """Write the plan's ``write_files`` (build-generated files such as a VCS version file)
    into ``src`` where they are missing, as an editable install would."""
    for rel, text in plan.write_files.items():
        path = (src / rel).resolve()
        if src.resolve() in path.parents and not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
