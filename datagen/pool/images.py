"""Build (and push) the images Harbor task folders name, for trainers that pull an image
instead of building a Dockerfile (verifiers' ``HarborTaskset`` is one: it rejects a task
whose environment is only a Dockerfile).

``datagen pool export-harbor POOL --image-prefix REGISTRY/PATH`` writes each task's image
name into ``[environment].docker_image`` (``exports.harbor_image``: tasks whose build
context is the same bytes share one name). ``build_images(folder, tool)`` runs the user's
container tool once per image::

    <tool> build --tag IMAGE --file TASK/environment/Dockerfile TASK/environment
    <tool> push IMAGE                                                      (push=True)
    <tool> image inspect --format '{{index .RepoDigests 0}}' IMAGE         (push=True)

and, once an image is pushed, pins every task that names it to the digest the registry
gave (``docker_image = "REGISTRY/PATH/repo@sha256:..."``), so Harbor's
``unpinned-image`` rule holds too. ``docker`` and ``podman`` take the same arguments; the
Dockerfiles use heredoc ``RUN`` steps (Dockerfile syntax 1.4: BuildKit, or Buildah 1.33+).
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from datagen.errors import UserError

_DIGEST = re.compile(r"@sha256:[0-9a-f]{64}$")


@dataclass
class ImageJob:
    """One image: the task folder whose environment builds it, and every task naming it."""

    image: str
    context: Path
    tasks: list[Path] = field(default_factory=list)


def image_jobs(folder: str | Path) -> list[ImageJob]:
    """The images the task folders under ``folder`` name (``[environment].docker_image``),
    each built from its first task's ``environment/`` (sorted by folder). A task that names
    no image is left out; two tasks naming one image with different build contexts are a
    ``UserError`` (the name would not say which environment it holds)."""
    jobs: dict[str, ImageJob] = {}
    contexts: dict[str, bytes] = {}
    for toml in sorted(Path(folder).glob("*/task.toml")):
        image = (tomllib.loads(toml.read_text(encoding="utf-8")).get("environment") or {}).get("docker_image")
        if not image or _DIGEST.search(image):  # none, or already pinned by an earlier push
            continue
        context = toml.parent / "environment"
        material = b"".join((context / name).read_bytes() for name in ("Dockerfile", "source.tar")
                            if (context / name).is_file())
        job = jobs.setdefault(image, ImageJob(image, context))
        if contexts.setdefault(image, material) != material:
            raise UserError(f"{toml.parent.name} names {image} with another build context than "
                            f"{job.context.parent.name}")
        job.tasks.append(toml.parent)
    return list(jobs.values())


def build_commands(job: ImageJob, tool: str = "docker", push: bool = False) -> list[list[str]]:
    """The container tool's command lines for one image (see the module docstring)."""
    commands = [[tool, "build", "--tag", job.image, "--file", str(job.context / "Dockerfile"), str(job.context)]]
    if push:
        commands += [[tool, "push", job.image],
                     [tool, "image", "inspect", "--format", "{{index .RepoDigests 0}}", job.image]]
    return commands


def pin_tasks(job: ImageJob, reference: str) -> None:
    """Rewrite ``docker_image`` of the job's tasks to ``reference`` (``name@sha256:...``)."""
    old = f"docker_image = {json.dumps(job.image, ensure_ascii=False)}"
    new = f"docker_image = {json.dumps(reference, ensure_ascii=False)}"
    for task in job.tasks:
        toml = task / "task.toml"
        toml.write_text(toml.read_text(encoding="utf-8").replace(old, new, 1), encoding="utf-8")


def _pushed_reference(job: ImageJob, inspect_output: str) -> str:
    """``name@sha256:...`` from ``image inspect``'s first RepoDigest (it names the
    repository without the tag)."""
    reference = inspect_output.strip().splitlines()[0].strip() if inspect_output.strip() else ""
    if not _DIGEST.search(reference):
        raise UserError(f"{job.image}: no digest after the push (image inspect said {inspect_output.strip()!r})")
    return reference


def build_images(folder: str | Path, tool: str = "docker", push: bool = False, dry_run: bool = False,
                 echo=print) -> list[dict]:
    """Build (and push) every image the task folders under ``folder`` name; ``dry_run``
    only prints the command lines. Returns one ``{image, tasks, status, reference?}`` per
    image; a failed command stops that image (``status: failed``, the tool's exit code
    and output tail), the others go on."""
    results = []
    for job in image_jobs(folder):
        commands = build_commands(job, tool, push)
        result = {"image": job.image, "tasks": [t.name for t in job.tasks], "status": "planned"}
        if dry_run:
            for command in commands:
                echo(shlex.join(command))
            results.append(result)
            continue
        for command in commands:
            echo(shlex.join(command))
            proc = subprocess.run(command, capture_output=True, text=True)
            if proc.returncode != 0:
                result.update(status="failed", command=shlex.join(command), exit_code=proc.returncode,
                              output=(proc.stdout + proc.stderr)[-2000:])
                break
        else:
            result["status"] = "pushed" if push else "built"
            if push:
                result["reference"] = _pushed_reference(job, proc.stdout)
                pin_tasks(job, result["reference"])
        results.append(result)
    return results
