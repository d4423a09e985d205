"""A pool task's environment as a Harbor Dockerfile, from the task's own ``EnvPlan``.

The plan is the one ``datagen env plan`` makes for the task's source (the runner's profile
reads the repo's own files); the image, the tools it lacks and the install are the profile's
(``Profile.image_setup``: what ``datagen env dockerfile`` renders, by the one renderer of
``datagen/sandbox/envs/docker.py``), the image possibly the user's ``--base-image`` (pin it by
digest, ``image@sha256:...``): a Python plan's pip steps one by one, any other plan's
``setup_script`` as one heredoc ``RUN``, the same steps datagen's own build ran.
The source at ``base_commit`` is a git checkout in ``/testbed`` whose one commit is tagged
``datagen-base`` (what ``tests/test.sh`` checks the test files against), and the agent
works as a non-root user (``agent``, uid 1000): the setup runs as root with ``HOME`` set to
the agent's, and what it wrote (the checkout, ``$HOME``, ``$CARGO_HOME``, ``$GOPATH``) is
then the agent's.
"""

from __future__ import annotations

import io
import tarfile
import tempfile
from dataclasses import replace
from pathlib import Path

from datagen.records.env import EnvPlan
from datagen.runtime.archive import extract_tar
from datagen.sandbox.envs.docker import apt_install, render_dockerfile

BASE_TAG = "datagen-base"
AGENT_USER = "agent"
TESTBED = "/testbed"


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
    """The profile's image for ``plan`` ('' when it names none)."""
    return profile.docker_image(plan)


def render(profile, plan: EnvPlan, image: str) -> str:
    """The Dockerfile (see the module docstring); the build context holds ``source.tar``."""
    setup = replace(profile.image_setup(plan, TESTBED), image=image)
    context = [apt_install("git", "ca-certificates"),
               # the agent's user first: caches the setup fills under $HOME (~/.m2, ~/.gradle) are its
               f"RUN useradd -m -u 1000 {AGENT_USER} 2>/dev/null || adduser -D -u 1000 {AGENT_USER}",
               f"ENV HOME=/home/{AGENT_USER}",
               f"WORKDIR {TESTBED}",
               "COPY source.tar /tmp/source.tar",
               f"RUN tar -xf /tmp/source.tar -C {TESTBED} && rm /tmp/source.tar \\",
               " && git init -q && git add -A \\",
               f" && git -c user.email=datagen@localhost -c user.name=datagen commit -qm base && git tag {BASE_TAG}"]
    # the setup ran as root (system packages); what the agent's runs write to becomes the agent's
    final = [f'RUN chown -R 1000 {TESTBED} /home/{AGENT_USER} ${{CARGO_HOME:-}} ${{GOPATH:-}} 2>/dev/null; true',
             f"USER {AGENT_USER}"]
    title = f"the task's environment, from its datagen EnvPlan (profile {plan.profile})"
    return render_dockerfile(setup, title, context, plan.env, final)
