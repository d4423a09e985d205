"""A pool task's environment as a Dockerfile, from the task's own ``EnvPlan``.

The plan is the one ``datagen env plan`` makes for the task's source (the runner's profile
reads the repo's own files); its install steps become ``RUN`` lines, the same steps in the
same order as datagen's build ran them (``python_docker.install_lines``). The base image
is the runner's toolchain image (``BASE_IMAGES``, the toolchain version the plan names
when it names one), or the user's ``--base-image`` (pin it by digest,
``image@sha256:...``, for builds that do not drift). A runner with no base image is not
exported: the caller records the reason.

The agent works as a non-root user (``agent``) in ``/testbed``; the verifier's
``tests/test.sh`` checks the test files against ``base_commit`` itself.
"""

from __future__ import annotations

import re
import shlex
import tarfile
import tempfile
from pathlib import Path

from datagen.records.env import EnvPlan
from datagen.sandbox.profiles.python_docker import install_lines, python_tag

# profile -> (image, with {v} for the plan's toolchain version, the default version)
BASE_IMAGES: dict[str, tuple[str, str]] = {
    "pytest": ("python:{v}-slim", "3.11"),
    "node": ("node:{v}-slim", "20"), "jest": ("node:{v}-slim", "20"), "vitest": ("node:{v}-slim", "20"),
    "mocha": ("node:{v}-slim", "20"), "ava": ("node:{v}-slim", "20"),
    "go": ("golang:{v}", "1.22"),
    "cargo": ("rust:{v}-slim", "1"),
    "maven": ("maven:3-eclipse-temurin-{v}", "17"), "gradle": ("gradle:8-jdk{v}", "17"),
    "ctest": ("gcc:{v}", "13"), "make": ("gcc:{v}", "13"),
    "rspec": ("ruby:{v}-slim", "3.3"), "minitest": ("ruby:{v}-slim", "3.3"),
    "phpunit": ("php:{v}-cli", "8.3"),
}
# what a profile's steps need beyond its image (Debian packages)
_APT = {"ctest": "cmake", "rspec": "build-essential", "minitest": "build-essential", "phpunit": "unzip"}
_EXTRA = {"phpunit": ["COPY --from=composer:2 /usr/bin/composer /usr/bin/composer"]}


def base_image(plan: EnvPlan) -> str | None:
    """The runner's toolchain image for ``plan`` (None: no image known for the runner)."""
    if plan.profile not in BASE_IMAGES:
        return None
    image, default = BASE_IMAGES[plan.profile]
    version = default
    if plan.profile == "pytest":
        tag = python_tag(plan)
        version = tag if tag != "3" else default
    elif m := re.search(r"(\d+(?:\.\d+)?)", plan.toolchain or ""):
        version = m.group(1) if plan.profile in ("go", "rspec", "minitest", "phpunit") else m.group(1).split(".")[0]
    return image.format(v=version)


def task_plan(runner: str, source_tar: bytes) -> EnvPlan:
    """The plan the runner's profile makes for the task's source (its ``source.tar``); the
    profile's defaults when its rules cannot read the source (a note says so)."""
    import io

    from datagen.sandbox.profiles.registry import get_profile

    profile = get_profile(runner)
    with tempfile.TemporaryDirectory(prefix="datagen-harbor-") as tmp:
        with tarfile.open(fileobj=io.BytesIO(source_tar)) as tar:
            tar.extractall(tmp, filter="data")
        try:
            return profile.plan(Path(tmp))
        except (OSError, ValueError, KeyError) as exc:
            stub = profile.plan_stub()
            stub.notes.append(f"the profile's rules could not read the source ({type(exc).__name__}): defaults")
            return stub


def render(plan: EnvPlan, image: str) -> str:
    """The Dockerfile: ``image``, git, the source at ``base_commit`` (``source.tar``) in
    ``/testbed`` as a git checkout, the plan's env and install steps, a non-root agent."""
    apt = " ".join(["git", "ca-certificates", *([_APT[plan.profile]] if plan.profile in _APT else [])])
    lines = [f"# the task's environment, from its datagen EnvPlan (profile {plan.profile})",
             f"FROM {image}", *_EXTRA.get(plan.profile, []),
             f"RUN apt-get update && apt-get install -y --no-install-recommends {apt} \\",
             " && rm -rf /var/lib/apt/lists/*",
             "WORKDIR /testbed",
             "COPY source.tar /tmp/source.tar",
             "RUN tar -xf /tmp/source.tar -C /testbed && rm /tmp/source.tar \\",
             " && git init -q && git add -A \\",
             " && git -c user.email=datagen@localhost -c user.name=datagen commit -qm base"]
    if plan.profile == "pytest":
        lines.append("ENV PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1")
    lines += [f"ENV {key}={shlex.quote(value)}" for key, value in sorted(plan.env.items())]
    lines += install_lines(plan)
    if plan.profile == "pytest":
        if not any(s.kind == "requirements" and any("pytest" in a for a in s.args) for s in plan.install):
            # datagen's own runs take pytest from the build's environment; the image needs its own
            lines += ["# test runner: the eval script runs pytest", "RUN pip install pytest"]
        lines.append("ENV PYTHONPATH=/testbed/src:/testbed")
    lines += ["RUN useradd -m -u 1000 agent 2>/dev/null || adduser -D -u 1000 agent; chown -R 1000 /testbed",
              "USER agent", ""]
    return "\n".join(lines)
