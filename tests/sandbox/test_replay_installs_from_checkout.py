"""The exported setup scripts, Dockerfiles and Harbor folders install from the task's own
checkout, for every profile (issue 37, point 4): they name no host folder (no env cache,
no snapshot, no build work folder), and a Python project is installed from ``.``."""

from __future__ import annotations

import io
import re
import shutil
import tarfile
from pathlib import Path

import pytest

import datagen
from datagen.pool.harbor_env import image_of, render, task_plan
from datagen.sandbox.harness.profiles.registry import detect_profile

SAMPLES = Path(datagen.__file__).resolve().parents[1] / "sample_data"
REPOS = sorted(p.name for p in SAMPLES.iterdir() if p.is_dir())


def _tar(src: Path) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(src, arcname=".")
    return buf.getvalue()


@pytest.mark.parametrize("name", REPOS)
def test_setup_dockerfile_and_harbor_install_from_the_checkout(name, tmp_path):
    src = tmp_path / "snapshot-folder" / name
    shutil.copytree(SAMPLES / name, src)
    paths = sorted(p.relative_to(src).as_posix() for p in src.rglob("*") if p.is_file())
    profile = detect_profile(src, paths)
    assert profile is not None, name
    plan = profile.plan(src)
    texts = {"setup_script": profile.setup_script(plan), "dockerfile": profile.dockerfile(plan, name),
             "harbor": render(profile, task_plan(profile, _tar(src)), image_of(profile, plan) or "debian")}
    for what, text in texts.items():
        assert str(tmp_path) not in text and "snapshot-folder" not in text, (name, what)
        assert not re.search(r"\.cache/datagen|/envs/|\.work/git", text), (name, what, text)
    if any(s.kind == "project" for s in plan.install):  # a Python project: installed from the checkout
        assert re.search(r"\$PIP (-e )?'?\.'?", texts["setup_script"]), texts["setup_script"]
