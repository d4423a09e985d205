"""The Harbor export read by the trainers' own tools, not by what their code was read to
expect: ``harbor lint --select ALL`` (harbor 0.26.0) over a pool from every sample repo,
and verifiers' ``HarborTaskset`` loader (verifiers 0.4.0, with the harbor 0.24.0 its
``harbor`` extra pins) over the folders that name an image. Each runs from its venv under
``.venv-trainers/`` (Python >= 3.12, made by tests/run)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from datagen.pool.exports import write_harbor, write_pool
from datagen.pool.images import build_images
from datagen.pool.rows import rows_from_tasks
from datagen.sandbox.harness.profiles.registry import detect_profile
from tests.conftest import git
from tests.trainer_venvs import ROOT, run_script, trainer_python, version_of

SAMPLES = ROOT / "sample_data"
PINNED = "debian:bookworm-slim@sha256:" + "1" * 64  # a digest-pinned --base-image (never pulled here)
# what a validating env of datagen's holds for a pytest repo (EnvPlan.pins): its test tools
PINS = ["coverage==7.6.10", "iniconfig==2.0.0", "packaging==24.2", "pluggy==1.5.0", "pytest==8.3.4"]


def _task(name: str, root: Path) -> dict:
    """A task on a git copy of one sample repo, as a tasks build writes it: the runner its
    profile detects, the setup_script of the profile's plan (with the validating env's pins
    for a plan that keeps them), a one-line fix."""
    repo = root / name
    shutil.copytree(SAMPLES / name, repo)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    base = git(repo, "rev-parse", "HEAD").strip()
    paths = git(repo, "ls-files").split("\n")
    profile = detect_profile(repo, [p for p in paths if p])
    assert profile is not None, name
    plan = profile.plan(repo)
    plan = plan.model_copy(update={"pins": PINS if profile.language == "python" else []})
    first = sorted(p for p in paths if p and (repo / p).is_file())[0]
    with open(repo / first, "a", encoding="utf-8") as fh:
        fh.write("\n")
    patch = git(repo, "diff")
    git(repo, "checkout", "-q", ".")
    return {"instance_id": f"sample__{name}", "repo": f"sample/{name}", "base_commit": base, "patch": patch,
            "problem_statement": f"{name} is broken.", "FAIL_TO_PASS": ["test/a::TestFails"],
            "PASS_TO_PASS": ["test/a::TestPasses"],
            "repo_path": str(repo), "runner": profile.name, "setup_script": profile.setup_script(plan)}


@pytest.fixture(scope="module")
def sample_pool(tmp_path_factory) -> Path:
    """A pool of one task per sample repo (every repo of ``sample_data``)."""
    root = tmp_path_factory.mktemp("samples")
    names = sorted(p.name for p in SAMPLES.iterdir() if p.is_dir())
    tasks = root / "tasks.jsonl"
    tasks.write_text("".join(json.dumps(_task(n, root / "repos")) + "\n" for n in names))
    write_pool(rows_from_tasks(tasks, group_size=4), [], root / "pool")
    return root / "pool"


def harbor_lint(folders: list[Path]) -> list[dict]:
    """``harbor lint --select ALL --json`` over the task folders: its findings."""
    python = trainer_python("harbor")
    proc = subprocess.run([str(python.parent / "harbor"), "lint", "--select", "ALL", "--json",
                           *map(str, folders)], capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    return json.loads(proc.stdout or "[]")


def test_harbor_lint_finds_nothing_on_every_sample_repo(sample_pool, tmp_path):
    assert version_of("harbor", "harbor") == "0.26.0"
    written, skipped = write_harbor(sample_pool, tmp_path / "plain")
    assert not skipped and len(written) == sum(p.is_dir() for p in SAMPLES.iterdir())
    runners = {tomllib.loads((w / "task.toml").read_text())["metadata"]["tags"][1] for w in written}
    assert len(runners) >= 9, runners  # every sample repo's own runner: pytest, go, cargo, maven, ...
    findings = harbor_lint(written)
    # the runner's toolchain image is a tag: the one rule left, once per task, on its FROM
    assert {f["rule"] for f in findings} <= {"unpinned-image"}, findings
    assert sorted(Path(f["path"]).parent.parent.name for f in findings) == sorted(w.name for w in written)
    assert all(f["message"].startswith("FROM:") for f in findings)

    # a digest-pinned --base-image: nothing at all
    pinned, _ = write_harbor(sample_pool, tmp_path / "pinned", base_image=PINNED)
    assert harbor_lint(pinned) == []

    # the pytest task installs under the validating env's pins, its runner included
    python = (tmp_path / "pinned" / "sample__tinyhttp" / "environment" / "Dockerfile").read_text()
    assert "pytest==" in python and "RUN pip install -c /opt/datagen-pins.txt pytest" in python
    assert 'user = "agent"' in (tmp_path / "pinned" / "sample__tinyhttp" / "task.toml").read_text()


def _fake_tool(folder: Path) -> Path:
    """A stand-in for a container engine (none runs here): logs its argv, answers
    ``image inspect`` with a digest made from the image name."""
    tool = folder / "fake-docker"
    tool.write_text("#!" + sys.executable + "\n"
                    "import hashlib, json, os, sys\n"
                    "with open(os.environ['FAKE_DOCKER_LOG'], 'a') as fh:\n"
                    "    fh.write(json.dumps(sys.argv[1:]) + '\\n')\n"
                    "if sys.argv[1:3] == ['image', 'inspect']:\n"
                    "    name = sys.argv[-1].rsplit(':', 1)[0]\n"
                    "    print(name + '@sha256:' + hashlib.sha256(sys.argv[-1].encode()).hexdigest())\n")
    tool.chmod(0o755)
    return tool


def test_pushed_images_pin_the_tasks_and_lint_clean(sample_pool, tmp_path, monkeypatch):
    written, _ = write_harbor(sample_pool, tmp_path / "harbor", base_image=PINNED, image_prefix="registry.test/org")
    # before the push: the image names carry tags, Harbor's unpinned-image says so on each
    before = harbor_lint(written)
    assert {(f["rule"], f["message"].split(":")[0]) for f in before} == {("unpinned-image", "environment.docker_image")}
    log = tmp_path / "argv.jsonl"
    monkeypatch.setenv("FAKE_DOCKER_LOG", str(log))
    results = build_images(tmp_path / "harbor", tool=str(_fake_tool(tmp_path)), push=True, echo=lambda _: None)
    assert {r["status"] for r in results} == {"pushed"} and len(results) == len(written)
    argv = [json.loads(line) for line in log.read_text().splitlines()]
    assert [a[0] for a in argv] == ["build", "push", "image"] * len(written)
    assert harbor_lint(written) == []  # every docker_image is now name@sha256:...
    assert all("@sha256:" in (w / "task.toml").read_text() for w in written)


VERIFIERS_LOAD = """
import json, shutil, sys
from verifiers.v1.tasksets.harbor import HarborConfig, HarborTaskset
from verifiers.v1.tasksets.harbor.taskset import cache_dir
out = {}
for folder in sys.argv[1:]:
    config = HarborConfig(dataset="datagen/" + folder.rstrip("/").rsplit("/", 1)[-1])
    # where the loader keeps what `harbor download --export` fetched: the exported folders
    shutil.copytree(folder, cache_dir(config))
    try:
        out[folder] = {"tasks": [
            {"name": t.data.name, "image": t.data.image, "user": t.data.agent_user,
             "separate": t.data.verifier is not None, "upload": t.data.upload_environment}
            for t in HarborTaskset(config).load()]}
    except ValueError as exc:
        out[folder] = {"error": str(exc)}
print(json.dumps(out))
"""


def test_verifiers_harbor_taskset_loads_the_folders_that_name_an_image(sample_pool, tmp_path):
    assert version_of("verifiers", "verifiers") == "0.4.0"
    written, _ = write_harbor(sample_pool, tmp_path / "images", image_prefix="registry.test/org")
    write_harbor(sample_pool, tmp_path / "plain")
    proc = run_script("verifiers", VERIFIERS_LOAD, str(tmp_path / "images"), str(tmp_path / "plain"),
                      env={**os.environ, "HOME": str(tmp_path / "home")}, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    loaded = json.loads(proc.stdout.strip().splitlines()[-1])
    images = loaded[str(tmp_path / "images")]
    assert "tasks" in images, images
    tasks = {t["name"]: t for t in images["tasks"]}
    assert sorted(tasks) == sorted(w.name for w in written)
    for folder in written:
        task = tasks[folder.name]
        assert task["image"].startswith("registry.test/org/sample-") and ":env-" in task["image"]
        assert task["user"] == "agent" and task["separate"] and not task["upload"]  # the Dockerfile stays beside
    # without an image the same loader refuses a Dockerfile-only task, as it says it does
    refused = loaded[str(tmp_path / "plain")]
    assert "needs a pullable docker_image" in refused.get("error", ""), refused
