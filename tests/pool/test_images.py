"""Images for trainers that pull instead of building: `export-harbor --image-prefix` names
one image per environment in ``[environment].docker_image``, and `datagen pool
build-images` runs the user's container tool once per image (the command lines are what
is checked: no container engine runs here; a stand-in logs its argv where one must run)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from datagen.errors import UserError
from datagen.pool.exports import write_harbor, write_pool
from datagen.pool.images import image_jobs
from datagen.pool.rows import env_pins, read_pool_tasks, rows_from_tasks
from datagen.records.env import EnvPlan
from datagen.sandbox.harness.profiles.registry import get_profile
from tests.serve.conftest import ROOT, calc_tasks

PREFIX = "registry.test/team/"


def cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "datagen.cli.app", "pool", *args], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}, timeout=120)


def image_of(task: Path) -> str:
    return tomllib.loads((task / "task.toml").read_text())["environment"]["docker_image"]


def fake_tool(folder: Path, fail: str = "") -> Path:
    """A container tool stand-in: logs its argv to $FAKE_TOOL_LOG, fails the sub-command
    ``fail`` (exit 3), answers ``image inspect`` with a digest of the image name."""
    tool = folder / "fake-tool"
    tool.write_text("#!" + sys.executable + "\n"
                    "import hashlib, json, os, sys\n"
                    "with open(os.environ['FAKE_TOOL_LOG'], 'a') as fh:\n"
                    "    fh.write(json.dumps(sys.argv[1:]) + '\\n')\n"
                    f"if sys.argv[1] == {fail!r}:\n"
                    "    print('boom', file=sys.stderr); sys.exit(3)\n"
                    "if sys.argv[1:3] == ['image', 'inspect']:\n"
                    "    digest = hashlib.sha256(sys.argv[-1].encode()).hexdigest()\n"
                    "    print(sys.argv[-1].rsplit(':', 1)[0] + '@sha256:' + digest)\n")
    tool.chmod(0o755)
    return tool


@pytest.fixture(scope="module")
def calc_pool(tmp_path_factory) -> Path:
    """A pool of the two calc tasks (tests/serve/conftest.py's repo)."""
    root = tmp_path_factory.mktemp("calc")
    write_pool(rows_from_tasks(calc_tasks(root), group_size=4), [], root / "pool")
    return root / "pool"


@pytest.fixture
def exported(calc_pool, tmp_path) -> Path:
    """The calc pool's two tasks (one repo, one base commit) exported with an image prefix,
    where a pool folder keeps them (``POOL/exports/harbor``)."""
    harbor = tmp_path / "pool" / "exports" / "harbor"
    written, skipped = write_harbor(calc_pool, harbor, image_prefix=PREFIX)
    assert not skipped and len(written) == 2
    return harbor


def test_tasks_of_one_environment_share_one_image(exported, calc_pool, tmp_path):
    add, mul = image_of(exported / "calc__add"), image_of(exported / "calc__mul")
    assert add == mul and re.fullmatch(r"registry\.test/team/local-calc:env-[0-9a-f]{16}", add), add
    # the same export again names the same image; another environment (runner, source) another
    again, _ = write_harbor(calc_pool, tmp_path / "again", image_prefix=PREFIX)
    assert image_of(again[0]) == add
    (jobs,) = image_jobs(exported)
    assert jobs.image == add and [t.name for t in jobs.tasks] == ["calc__add", "calc__mul"]
    # no prefix: no docker_image (Harbor builds the Dockerfile)
    plain, _ = write_harbor(calc_pool, tmp_path / "plain")
    assert "docker_image" not in (plain[0] / "task.toml").read_text()


def test_build_images_prints_the_tool_command_lines(exported):
    image, env_dir = image_of(exported / "calc__add"), exported / "calc__add" / "environment"
    dry = cli("build-images", str(exported), "--tool", "podman", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.splitlines() == [f"podman build --tag {image} --file {env_dir}/Dockerfile {env_dir}"]
    pushed = cli("build-images", str(exported), "--push", "--dry-run")
    assert pushed.stdout.splitlines() == [
        f"docker build --tag {image} --file {env_dir}/Dockerfile {env_dir}", f"docker push {image}",
        f"docker image inspect --format '{{{{index .RepoDigests 0}}}}' {image}"]
    assert image_of(exported / "calc__add") == image  # a dry run changes nothing


def test_build_and_push_pin_the_tasks_to_the_digest(exported, tmp_path):
    image = image_of(exported / "calc__add")
    log = tmp_path / "argv.jsonl"
    # a pool folder works too (its exports/harbor)
    proc = cli("build-images", str(exported.parent.parent), "--tool", str(fake_tool(tmp_path)), "--push",
               env={"FAKE_TOOL_LOG": str(log)})
    assert proc.returncode == 0, proc.stderr
    argv = [json.loads(line) for line in log.read_text().splitlines()]
    assert [a[:2] for a in argv] == [["build", "--tag"], ["push", image], ["image", "inspect"]]
    assert argv[0][-1] == str(exported / "calc__add" / "environment")
    pinned = {image_of(exported / t) for t in ("calc__add", "calc__mul")}
    assert len(pinned) == 1 and re.fullmatch(r"registry\.test/team/local-calc@sha256:[0-9a-f]{64}", pinned.pop())
    # nothing left to build: said so, non-zero
    again = cli("build-images", str(exported), "--tool", str(fake_tool(tmp_path)), env={"FAKE_TOOL_LOG": str(log)})
    assert again.returncode != 0 and "no task" in again.stderr


def test_a_failed_build_is_reported_and_nothing_is_pinned(exported, tmp_path):
    image = image_of(exported / "calc__add")
    proc = cli("build-images", str(exported), "--tool", str(fake_tool(tmp_path, fail="build")), "--push",
               env={"FAKE_TOOL_LOG": str(tmp_path / "log")})
    assert proc.returncode == 1 and "exited 3" in proc.stderr and "boom" in proc.stderr
    assert len((tmp_path / "log").read_text().splitlines()) == 1  # no push after a failed build
    assert image_of(exported / "calc__add") == image


def test_one_image_name_for_two_contexts_is_refused(exported):
    dockerfile = exported / "calc__mul" / "environment" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text() + "RUN true\n")
    with pytest.raises(UserError, match="another build context"):
        image_jobs(exported)


def test_the_pool_carries_the_validating_envs_pins(tmp_path):
    """A pytest task's setup_script pins (EnvPlan.pins) reach the pool row; a runner whose
    scripts carry none, or one no profile knows, gives []."""
    pins = ["iniconfig==2.0.0", "pytest==8.3.4"]
    setup = get_profile("pytest").setup_script(EnvPlan(profile="pytest", pins=pins))
    tasks = tmp_path / "tasks.jsonl"
    base = {"repo": "r", "base_commit": "", "patch": "", "repo_path": "."}
    tasks.write_text("".join(json.dumps({**base, **t}) + "\n" for t in (
        {"instance_id": "a", "setup_script": setup},
        {"instance_id": "b", "runner": "go", "setup_script": get_profile("go").setup_script(EnvPlan(profile="go"))},
        {"instance_id": "c", "runner": "nosuchrunner", "setup_script": setup})))
    assert [env_pins(t) for t, _ in read_pool_tasks(tasks)] == [pins, [], []]
