"""One Dockerfile renderer for every export, from plain values (no profile in sight).

A profile says what its image holds as an ``ImageSetup`` (``Profile.image_setup``): the base
image (the ecosystem's official one at the plan's toolchain), the lines that add the tools
it lacks (cmake in gcc's, Composer in php's), its own ``ENV`` lines, the install lines (for
most profiles one ``RUN`` whose body is the task's own ``setup_script``, a BuildKit heredoc
run by the bash its shebang names, so the container holds exactly the env the task's
``eval_script`` expects; for Python the pip steps one by one) and the test command. The
export says where the source goes (``context``) and what closes the file (``final``):
``datagen env dockerfile`` copies the repo to ``/repo`` and ends with ``CMD``; the Harbor
export (``datagen/pool/harbor_env.py``) unpacks the task's source into ``/testbed`` as a git
checkout and hands it to a non-root user.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field

from datagen.errors import UserError
from datagen.records.env import EnvPlan

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


@dataclass(frozen=True)
class ImageSetup:
    """What a profile puts into a task's image, as Dockerfile lines (see the module docstring)."""

    image: str
    tools: list[str] = field(default_factory=list)  # after FROM: the tools the image lacks
    env: list[str] = field(default_factory=list)  # the ecosystem's ENV lines, before the plan's variables
    install: list[str] = field(default_factory=list)  # the setup
    after: list[str] = field(default_factory=list)  # after the setup (the import path, ...)
    cmd: list[str] = field(default_factory=list)  # the test command


def setup_heredoc(plan: EnvPlan, script: str, repo: str = "repo") -> list[str]:
    """The plan's steps as comments, then ``script`` (a ``setup_script``) as one heredoc RUN."""
    if any(line == HEREDOC for line in script.splitlines()):
        raise UserError(f"{repo}: the setup script holds the line {HEREDOC}; cannot render it as a heredoc")
    lines = [f"# {step.name}: {step.origin or '-'} ({step.source})" for step in plan.install]
    return [*lines, f"RUN <<'{HEREDOC}'", script.rstrip("\n"), HEREDOC]


def render_dockerfile(setup: ImageSetup, title: str, context: list[str], env: Mapping[str, str],
                      final: list[str]) -> str:
    """The Dockerfile: ``title`` as its comment, ``setup``'s image and tools, the export's
    ``context`` lines (where the source goes), the variables ``env``, the setup, ``final``."""
    lines = ["# syntax=docker/dockerfile:1",  # heredocs need the Dockerfile 1.4 syntax (BuildKit)
             f"# {title}", f"FROM {setup.image}", *setup.tools, *context, *setup.env]
    lines += [f"ENV {key}={shlex.quote(value)}" for key, value in sorted(env.items())]
    return "\n".join([*lines, *setup.install, *setup.after, *final]) + "\n"


def repo_dockerfile(setup: ImageSetup, plan: EnvPlan, repo: str = "repo") -> str:
    """``datagen env dockerfile``: the repo's working copy (the build context) in ``/repo``."""
    toolchain = f"; toolchain {plan.toolchain}" if plan.toolchain else ""
    title = f"environment of {repo}, from its datagen EnvPlan (profile {plan.profile}{toolchain})"
    return render_dockerfile(setup, title, ["WORKDIR /repo", "COPY . /repo"], plan.env,
                             ["CMD " + json.dumps(setup.cmd)] if setup.cmd else [])
