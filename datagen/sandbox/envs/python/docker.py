"""A Python ``EnvPlan``'s image, for harnesses that run each task in a container (SWE-bench /
SWE-smith style images): the same steps, in the same order, with pip (the pytest profile's
``image_setup``; ``datagen/sandbox/envs/docker.py`` renders it)."""

from __future__ import annotations

import re
import shlex

from datagen.records.env import EnvPlan
from datagen.sandbox.envs.docker import ImageSetup
from datagen.sandbox.envs.python.plan import interpreter_version

PINS_FILE = "/opt/datagen-pins.txt"  # where an image keeps the pins its pip installs keep to


def python_tag(plan: EnvPlan) -> str:
    """'3.12' for a plan whose interpreter is python3.12 (a name or a path); '3' when unknown."""
    m = re.search(r"python(\d+\.\d+)$", plan.toolchain or "")
    if m:
        return m.group(1)
    v = interpreter_version(plan.toolchain) if plan.toolchain else None
    return f"{v[0]}.{v[1]}" if v else "3"


def image_setup(plan: EnvPlan, image: str, workdir: str) -> ImageSetup:
    """A Python plan's image: pip's variables, the versions the validating env held as a
    constraint file (its pins, where the plan has them), the plan's steps one by one, pytest
    (datagen's own runs take it from the build's env; the image needs its own), and the
    source in ``workdir`` on the import path."""
    constraint, install = "", []
    if plan.pins:  # the versions the task's validating env held: every pip install keeps to them
        constraint = PINS_FILE
        install += ["# the versions the env that validated the task held (its setup_script's pins)",
                    f"RUN printf '%s\\n' {shlex.join(plan.pins)} > {constraint}"]
    pip = f"pip install -c {constraint}" if constraint else "pip install"
    install += [*install_lines(plan, constraint), "# the test runner the eval script calls", f"RUN {pip} pytest"]
    return ImageSetup(image, env=["ENV PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1"],
                      install=install, after=[f"ENV PYTHONPATH={workdir}/src:{workdir}"],
                      cmd=list(plan.test_command or ["python", "-m", "pytest"]))


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
