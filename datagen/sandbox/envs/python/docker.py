"""A Python ``EnvPlan`` as a Dockerfile, for RL harnesses that run each task in a container
(SWE-bench / SWE-smith style images): the same steps, in the same order, with pip."""

from __future__ import annotations

import json
import re
import shlex

from datagen.records.env import EnvPlan
from datagen.sandbox.envs.python.plan import interpreter_version


def python_tag(plan: EnvPlan) -> str:
    """'3.12' for a plan whose interpreter is python3.12 (a name or a path); '3' when unknown."""
    m = re.search(r"python(\d+\.\d+)$", plan.toolchain or "")
    if m:
        return m.group(1)
    v = interpreter_version(plan.toolchain) if plan.toolchain else None
    return f"{v[0]}.{v[1]}" if v else "3"


def render_dockerfile(plan: EnvPlan, repo: str = "repo") -> str:
    """The Dockerfile text; the build context is the repo's working copy."""
    lines = [f"# environment of {repo}, from its datagen EnvPlan (profile {plan.profile})",
             f"FROM python:{python_tag(plan)}-slim", "WORKDIR /repo", "COPY . /repo",
             "ENV PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1"]
    for key, value in sorted(plan.env.items()):
        lines.append(f"ENV {key}={shlex.quote(value)}")
    lines += install_lines(plan)
    lines += ["ENV PYTHONPATH=/repo/src:/repo",
              "CMD " + json.dumps(plan.test_command or ["python", "-m", "pytest"]), ""]
    return "\n".join(lines)


def install_lines(plan: EnvPlan, constraint: str = "") -> list[str]:
    """The plan's install steps as Dockerfile ``RUN`` lines (pip for Python plans; a
    command step runs as it is), each after a comment naming where it came from; with
    ``constraint`` (a file in the image) every pip install keeps to it (``-c``)."""
    pip = f"pip install -c {shlex.quote(constraint)}" if constraint else "pip install"
    lines = []
    for step in plan.install:
        lines.append(f"# {step.name}: {step.origin or '-'} ({step.source})")
        if step.kind == "project":
            flag = "-e " if plan.project_install == "editable" else ""
            lines.append(f"RUN {pip} --no-deps {flag}. || echo 'project install failed: deps only, "
                         "source on PYTHONPATH'")
            continue
        args = " ".join(shlex.quote(a) for a in step.args)
        if step.kind == "command":
            lines.append(f"RUN {args}" + (" || echo 'optional step failed'" if step.optional else ""))
        elif step.optional:  # one by one when together they fail, as datagen's own build does
            lines.append(f"RUN {pip} {args} || (for r in {args}; do {pip} \"$r\" || "
                         "echo \"skipped $r\"; done)")
        else:
            lines.append(f"RUN {pip} {args}")
    return lines
