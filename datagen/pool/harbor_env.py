"""A pool task's environment as a Harbor Dockerfile, from the task's own ``EnvPlan``.

The plan is the one ``datagen env plan`` makes for the task's source (the runner's profile
reads the repo's own files); the image and the tools it lacks are the profile's
(``Profile.docker_image``, ``image_tools``: what ``datagen env dockerfile`` renders), or
the user's ``--base-image`` (pin it by digest, ``image@sha256:...``). The install is the
plan's: a Python plan's pip steps one by one (``python_docker.install_lines``), any other
plan's ``setup_script`` as one heredoc ``RUN``, the same steps datagen's own build ran.
The source at ``base_commit`` is a git checkout in ``/testbed`` whose one commit is tagged
``datagen-base`` (what ``tests/test.sh`` checks the test files against), and the agent
works as a non-root user (``agent``, uid 1000): the setup runs as root with ``HOME`` set to
the agent's, and what it wrote (the checkout, ``$HOME``, ``$CARGO_HOME``, ``$GOPATH``) is
then the agent's.
"""

from __future__ import annotations

import io
import shlex
import tarfile
import tempfile
from pathlib import Path

from datagen.records.env import EnvPlan
from datagen.runtime.archive import extract_tar
from datagen.sandbox.envs.docker import HEREDOC, apt_install
from datagen.sandbox.envs.python.docker import install_lines, python_tag

BASE_TAG = "datagen-base"
PINS_FILE = "/opt/datagen-pins.txt"
AGENT_USER = "agent"


def task_plan(profile, source_tar: bytes) -> EnvPlan:
    """The plan ``profile`` makes for the task's source (its ``source.tar``); the profile's
    defaults, with a note, when its rules cannot read the source."""
    with tempfile.TemporaryDirectory(prefix="datagen-harbor-") as tmp:
        with tarfile.open(fileobj=io.BytesIO(source_tar)) as tar:
            extract_tar(tar, tmp)
        try:
            return profile.plan(Path(tmp))
        except (OSError, ValueError, KeyError) as exc:
            stub = profile.plan_stub()
            stub.notes.append(f"the profile's rules could not read the source ({type(exc).__name__}): defaults")
            return stub


def image_of(profile, plan: EnvPlan) -> str:
    """The profile's image for ``plan`` ('' when it names none); Python's is python's slim
    image at the plan's interpreter, as ``python_docker`` renders it."""
    if profile.language == "python":
        return f"python:{python_tag(plan)}-slim"
    return profile.docker_image(plan)


def render(profile, plan: EnvPlan, image: str) -> str:
    """The Dockerfile (see the module docstring); the build context holds ``source.tar``."""
    python = profile.language == "python"
    lines = ["# syntax=docker/dockerfile:1",
             f"# the task's environment, from its datagen EnvPlan (profile {plan.profile})",
             f"FROM {image}", *([] if python else profile.image_tools(plan)),
             apt_install("git", "ca-certificates"),
             # the agent's user first: caches the setup fills under $HOME (~/.m2, ~/.gradle) are its
             f"RUN useradd -m -u 1000 {AGENT_USER} 2>/dev/null || adduser -D -u 1000 {AGENT_USER}",
             f"ENV HOME=/home/{AGENT_USER}",
             "WORKDIR /testbed",
             "COPY source.tar /tmp/source.tar",
             "RUN tar -xf /tmp/source.tar -C /testbed && rm /tmp/source.tar \\",
             " && git init -q && git add -A \\",
             f" && git -c user.email=datagen@localhost -c user.name=datagen commit -qm base && git tag {BASE_TAG}"]
    if python:
        lines.append("ENV PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1")
    lines += [f"ENV {key}={shlex.quote(value)}" for key, value in sorted(plan.env.items())]
    if python:
        constraint = ""
        if plan.pins:  # the versions the task's validating env held: every pip install keeps to them
            constraint = PINS_FILE
            lines += ["# the versions the env that validated the task held (its setup_script's pins)",
                      f"RUN printf '%s\\n' {shlex.join(plan.pins)} > {constraint}"]
        # datagen's own runs take the test runner from the build's environment; the image needs its own
        pip = f"pip install -c {constraint}" if constraint else "pip install"
        lines += [*install_lines(plan, constraint), "# the test runner the eval script calls", f"RUN {pip} pytest",
                  "ENV PYTHONPATH=/testbed/src:/testbed"]
    else:
        for step in plan.install:
            lines.append(f"# {step.name}: {step.origin or '-'} ({step.source})")
        lines += [f"RUN <<'{HEREDOC}'", profile.setup_script(plan).rstrip("\n"), HEREDOC]
    # the setup ran as root (system packages); what the agent's runs write to becomes the agent's
    lines += [f'RUN chown -R 1000 /testbed /home/{AGENT_USER} ${{CARGO_HOME:-}} ${{GOPATH:-}} 2>/dev/null; true',
              f"USER {AGENT_USER}", ""]
    return "\n".join(lines)
