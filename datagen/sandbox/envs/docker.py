"""A profile's ``EnvPlan`` as a Dockerfile, for harnesses that run each task in a container.

The image is the ecosystem's official one (``Profile.image``) at the plan's toolchain, plus the
tools it lacks (``Profile.image_tools``: cmake in gcc's, Composer in php's); the plan's
variables are ``ENV`` lines; the setup is one ``RUN`` whose body is the task's own
``setup_script`` (a BuildKit heredoc, run by the bash its shebang names), so the container holds
exactly the env the task's ``eval_script`` expects. Python's plans have their own rendering
(``python_docker.py``: pip steps one by one).
"""

from __future__ import annotations

import json
import re
import shlex
from typing import TYPE_CHECKING

from datagen.errors import UserError
from datagen.records.env import EnvPlan

if TYPE_CHECKING:
    from datagen.sandbox.harness.profiles.base import Profile

HEREDOC = "DATAGEN_SETUP"
# leading letters and operators, then the version: 'go1.21', 'rust1.75.0', '>=8.1', '~> 3.1';
# not 'nightly-2023-01-01' (a date) or 'stable'
_VERSION = re.compile(r"^[A-Za-z~^>=<v ]*(\d+(?:\.\d+)*)")


def apt_install(*packages: str) -> str:
    """A RUN line adding Debian packages to an image (its package lists not kept)."""
    return (f"RUN apt-get update && apt-get install -y --no-install-recommends {' '.join(packages)}"
            " && rm -rf /var/lib/apt/lists/*")


def image_version(plan: EnvPlan, parts: int = 2) -> str:
    """The version an image is tagged with (``parts`` of it): what the repo asks where the
    toolchain here did not meet it, else the toolchain the plan was built and measured with;
    '' when neither names one."""
    asked = [plan.toolchain_request] if plan.toolchain_mismatch else []
    for text in [*asked, plan.toolchain]:
        if m := _VERSION.match(text or ""):
            return ".".join(m.group(1).split(".")[:parts])
    return ""


def render_dockerfile(profile: Profile, plan: EnvPlan, repo: str = "repo") -> str:
    """The Dockerfile text; the build context is the repo's working copy."""
    image = profile.docker_image(plan)
    if not image:
        raise UserError(f"profile {profile.name!r} names no base image for a Dockerfile")
    script = profile.setup_script(plan)
    if any(line == HEREDOC for line in script.splitlines()):
        raise UserError(f"{repo}: the setup script holds the line {HEREDOC}; cannot render it as a heredoc")
    toolchain = f"; toolchain {plan.toolchain}" if plan.toolchain else ""
    lines = ["# syntax=docker/dockerfile:1",  # heredocs need the Dockerfile 1.4 syntax (BuildKit)
             f"# environment of {repo}, from its datagen EnvPlan (profile {plan.profile}{toolchain})",
             f"FROM {image}", *profile.image_tools(plan), "WORKDIR /repo", "COPY . /repo"]
    lines += [f"ENV {key}={shlex.quote(value)}" for key, value in sorted(plan.env.items())]
    for step in plan.install:
        lines.append(f"# {step.name}: {step.origin or '-'} ({step.source})")
    lines += [f"RUN <<'{HEREDOC}'", script.rstrip("\n"), HEREDOC]
    if plan.test_command:
        lines.append("CMD " + json.dumps(plan.test_command))
    return "\n".join(lines) + "\n"
