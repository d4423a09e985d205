"""The teacher repairs an environment plan that the rules could not make work.

When a repo's rule plan fails (an install step errors, the whole suite fails to collect, or
no test passes) and a teacher is configured, the teacher gets the plan, the failing step's
log tail and the repo's dependency and CI files, and answers a change to the plan under
``REPAIR_SCHEMA`` (requirements to add / pin / drop, env vars, pytest arguments). Each
answer is tried for real: the env is built in the sandbox and the suite runs once; up to
``env.repair_rounds`` rounds, each seeing the previous round's failure. The first plan that
works is kept (``<work>/env-plans/<repo>.json``), and every round is recorded
(``<work>/env-repairs/<repo>.json``). A malformed or useless answer costs its round, never
the build.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.requirements import InvalidRequirement, Requirement

from datagen.records.env import EnvPlan, InstallStep
from datagen.sandbox.envs.cache import EnvSetupError
from datagen.sandbox.harness.runners import ensure_env
from datagen.sandbox.isolation.base import Sandbox
from datagen.synth.baseline import SuiteRunner
from datagen.synth.statements import render
from datagen.teachers import TeacherRequest

if TYPE_CHECKING:
    from datagen.config.sandbox import EnvConfig
    from datagen.sandbox.harness.profiles.base import Profile

REPAIRABLE = ("env_setup_failed", "no_tests", "no_passing_tests")
REPAIR_SCHEMA = {
    "type": "object",
    "required": ["add", "pin", "drop", "env", "pytest_args", "reason"],
    "additionalProperties": False,
    "properties": {
        "add": {"type": "array", "items": {"type": "string"}, "maxItems": 40},
        "pin": {"type": "array", "items": {"type": "string"}, "maxItems": 40},
        "drop": {"type": "array", "items": {"type": "string"}, "maxItems": 40},
        "env": {"type": "object", "additionalProperties": {"type": "string"}},
        "pytest_args": {"type": "array", "items": {"type": "string"}, "maxItems": 20},
        "project_install": {"enum": ["plain", "editable", "none"]},
        "reason": {"type": "string"},
    },
}
CONTEXT_FILES = ("pyproject.toml", "setup.cfg", "setup.py", "tox.ini", "noxfile.py", "pytest.ini", "Makefile",
                 "requirements.txt", "Pipfile", "conftest.py")
_MAX_FILE = 4000
_PROTECTED_ENV = {"PATH", "VIRTUAL_ENV", "PYTHONPATH", "HOME", "TMPDIR", "LD_PRELOAD", "LD_LIBRARY_PATH"}


@dataclass
class Failure:
    """Why a plan did not work: what the teacher is shown."""

    kind: str  # env_setup_failed | no_tests | no_passing_tests
    detail: str
    log_tail: str = ""
    step: str = ""


@dataclass
class Repair:
    """What the rounds did: the kept plan (None: none worked) and one entry per round."""

    plan: EnvPlan | None
    rounds: list[dict] = field(default_factory=list)
    seconds: float = 0.0
    tokens: int = 0


def context_files(src: Path) -> list[tuple[str, str]]:
    """The repo's dependency and CI files, each cut to a few thousand characters."""
    paths = [src / name for name in CONTEXT_FILES if (src / name).is_file()]
    paths += sorted((src / ".github" / "workflows").glob("*.y*ml"))[:3]
    paths += sorted(src.glob("requirements*.txt"))[:4] + sorted((src / "requirements").glob("*.txt"))[:4]
    out = []
    for p in dict.fromkeys(paths):
        try:
            text = p.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        out.append((p.relative_to(src).as_posix(), text[:_MAX_FILE]))
    return out


def repair_prompt(repo: str, plan: EnvPlan, failure: Failure, files: list[tuple[str, str]]) -> str:
    shown = plan.model_dump(include={"toolchain", "install", "env", "test_command", "project_install", "notes"})
    return render("env_repair", repo=repo, plan=json.dumps(shown, indent=1), failure=f"{failure.kind}: "
                  f"{failure.detail}", log_tail=failure.log_tail[-3000:], files=files)


def _name(spec: str) -> str:
    try:
        return re.sub(r"[-_.]+", "-", Requirement(spec).name).lower()
    except InvalidRequirement:
        return re.sub(r"[-_.]+", "-", re.split(r"[\s\[<>=!~;@]", spec.strip())[0]).lower()


def _valid(specs: list[str]) -> list[str]:
    out = []
    for s in specs:
        try:
            out.append(str(Requirement(s)))
        except InvalidRequirement:
            continue
    return out


def apply_answer(plan: EnvPlan, answer: dict) -> EnvPlan:
    """``plan`` changed by one teacher answer; the changed and new steps are ``source: teacher``."""
    new = plan.model_copy(deep=True)
    drop = {_name(d) for d in answer.get("drop", [])}
    pins = {_name(p): p for p in _valid(answer.get("pin", []))}
    pinned: set[str] = set()
    steps = []
    for step in new.install:
        if step.kind != "requirements":
            steps.append(step)
            continue
        args, changed = [], False
        for a in step.args:
            n = _name(a) if not a.startswith("-") else ""
            if n in drop:
                changed = True
            elif n in pins:
                args.append(pins[n])
                pinned.add(n)
                changed = True
            else:
                args.append(a)
        if args:
            steps.append(step.model_copy(update={"args": args, "source": "teacher"} if changed else {}))
    add = _valid(answer.get("add", [])) + [p for n, p in pins.items() if n not in pinned]
    if add:
        steps.append(InstallStep(name="teacher additions", kind="requirements", args=add, origin="teacher repair",
                                 source="teacher"))
    new.install = steps
    env = {k: v for k, v in (answer.get("env") or {}).items() if k not in _PROTECTED_ENV and re.fullmatch(
        r"[A-Za-z_][A-Za-z0-9_]*", k)}
    args = [a for a in answer.get("pytest_args") or [] if isinstance(a, str)]
    if args:
        env["PYTEST_ADDOPTS"] = " ".join([*filter(None, [new.env.get("PYTEST_ADDOPTS", "")]), *args])
        new.test_command = [*new.test_command, *args]
    new.env = {**new.env, **env}
    if answer.get("project_install") in ("plain", "editable", "none"):
        new.project_install = answer["project_install"]
        if new.project_install == "none":
            new.install = [s for s in new.install if s.kind != "project"]
    new.notes = [*new.notes, f"teacher: {str(answer.get('reason', ''))[:300]}"]
    return new


def try_plan(profile: Profile, src: Path, plan: EnvPlan, config: EnvConfig, sandbox: Sandbox, limits,
             scratch: Path, setup_limits=None) -> Failure | None:
    """Build ``plan`` with the profile's builder (the env cache, a recorded failure retried;
    ``setup_limits``, default ``limits``, under the setup's network and timeout) and run the
    suite once under ``limits``: None when at least one test passes."""
    try:
        env = ensure_env(profile, src, config, sandbox, setup_limits or limits, retry_failed=True, plan=plan)
    except EnvSetupError as exc:
        return Failure("env_setup_failed", str(exc), exc.log_tail, exc.step)
    scratch.mkdir(parents=True, exist_ok=True)
    run = SuiteRunner(profile.name, src, sandbox, limits, env, scratch).run()
    output = (run.run.stdout + run.run.stderr)[-4000:]
    if not run.results:
        return Failure("no_tests", run.report_error or "the runner reported no tests", output, "test run")
    if not any(s == "pass" for s in run.results.values()):
        failing = sum(1 for s in run.results.values() if s in ("fail", "error"))
        return Failure("no_passing_tests", f"{failing} of {len(run.results)} tests fail", output, "test run")
    return None


def repair(repo: str, src: Path, plan: EnvPlan, failure: Failure, teacher, rounds: int, attempt) -> Repair:
    """Up to ``rounds`` teacher answers, each tried with ``attempt(plan) -> Failure | None``."""
    started = time.monotonic()
    out = Repair(plan=None)
    files = context_files(src)
    current = plan
    for i in range(rounds):
        prompt = repair_prompt(repo, current, failure, files)
        req = TeacherRequest(id=f"env_repair:{repo}:{i}", messages=[{"role": "user", "content": prompt}],
                             seed=i, json_schema=REPAIR_SCHEMA)
        [res] = teacher.generate([req])
        out.tokens += res.usage.prompt_tokens + res.usage.completion_tokens
        answer = res.parsed[0] if res.status == "ok" and res.parsed else None
        if not isinstance(answer, dict):
            out.rounds.append({"round": i + 1, "answer": None, "status": res.status, "outcome": "no usable answer"})
            continue
        candidate = apply_answer(current, answer)
        if candidate.key_material() == current.key_material() and candidate.test_command == current.test_command:
            out.rounds.append({"round": i + 1, "answer": answer, "status": "ok", "outcome": "changed nothing"})
            continue
        failed = attempt(candidate)
        if failed is None:
            out.rounds.append({"round": i + 1, "answer": answer, "status": "ok", "outcome": "works"})
            out.plan = candidate
            break
        out.rounds.append({"round": i + 1, "answer": answer, "status": "ok",
                           "outcome": f"{failed.kind}: {failed.detail[:300]}"})
        current, failure = candidate, failed
    out.seconds = round(time.monotonic() - started, 2)
    return out
