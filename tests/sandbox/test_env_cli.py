"""`datagen env plan|build|dockerfile` for a repo of every ecosystem, on the bundled samples.

``plan`` prints the plan the repo's profile makes (the one the tasks build uses); ``dockerfile``
renders it on the ecosystem's official image with the task's ``setup_script`` as its RUN step;
``build`` builds the env in the sandbox and runs the suite once.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from datagen.cli.app import app
from datagen.records.env import EnvPlan
from datagen.sandbox.envs.docker import HEREDOC
from datagen.sandbox.harness.profiles.registry import get_profile
from tests import tools
from tests.sitekit import SITE

runner = CliRunner()
SAMPLES = Path(__file__).parents[2] / "sample_data"
# sample repo -> (the profile that runs it, the image its Dockerfile starts from, a version-free prefix)
CASES = {
    "kvstore-go": ("go", "golang:"),
    "ringbuf-rs": ("cargo", "rust:"),
    "fraction-java": ("maven", "maven:3-eclipse-temurin-"),
    "ledger-rb": ("rspec", "ruby:"),
    "tally-php": ("phpunit", "php:"),
    "geom-cpp": ("ctest", "gcc:"),
    "wordfreq-c": ("make", "gcc:"),
    "shapes-js": ("node", "node:"),
    "intervals-ts": ("vitest", "node:"),
}


def _copy(name: str, dest: Path) -> Path:
    """The sample in a folder of the test's (the plan and build must not write into sample_data)."""
    return Path(shutil.copytree(SAMPLES / name, dest / name, symlinks=True,
                                ignore=shutil.ignore_patterns("target", "node_modules", "_datagen_build", "vendor")))


@pytest.mark.parametrize("sample", sorted(CASES))
def test_plan_shows_the_profiles_plan(sample, tmp_path):
    src = _copy(sample, tmp_path)
    r = runner.invoke(app, ["env", "plan", str(src)])
    assert r.exit_code == 0, r.output
    shown = EnvPlan.model_validate_json(r.stdout)
    profile = get_profile(CASES[sample][0])
    assert shown.profile == profile.name
    assert shown == profile.plan(src)
    assert shown.test_command, "a plan names the suite's command"


@pytest.mark.parametrize("sample", sorted(CASES))
def test_dockerfile_runs_the_plans_setup_on_the_ecosystems_image(sample, tmp_path):
    src = _copy(sample, tmp_path)
    name, image = CASES[sample]
    profile = get_profile(name)
    plan = profile.plan(src)
    r = runner.invoke(app, ["env", "dockerfile", str(src)])
    assert r.exit_code == 0, r.output
    text = r.stdout
    lines = text.splitlines()
    assert lines[0] == "# syntax=docker/dockerfile:1"  # a parser directive: first, or it is a comment
    [base] = [line.removeprefix("FROM ") for line in lines if line.startswith("FROM ")]
    assert base.startswith(image) and base == profile.docker_image(plan)
    for key, value in plan.env.items():
        assert any(line.startswith(f"ENV {key}=") and value in line for line in lines), key
    # the RUN step's body is the task's setup script, byte for byte, and holds every setup line
    body = re.search(rf"^RUN <<'{HEREDOC}'\n(.*?)\n{HEREDOC}$", text, re.S | re.M)
    assert body, text
    assert body.group(1) + "\n" == profile.setup_script(plan)
    setup = body.group(1).splitlines()
    positions = [setup.index(line) for line in profile.setup_commands(plan)]
    assert positions == sorted(positions)
    assert lines[-1] == "CMD " + json.dumps(plan.test_command)


def test_dockerfile_of_each_ecosystem_adds_the_tools_its_image_lacks(tmp_path):
    cpp = runner.invoke(app, ["env", "dockerfile", str(_copy("geom-cpp", tmp_path))]).stdout
    assert re.search(r"^RUN apt-get update .*install .*\bcmake\b", cpp, re.M)
    php = runner.invoke(app, ["env", "dockerfile", str(_copy("tally-php", tmp_path))]).stdout
    assert "COPY --from=composer:2 /usr/bin/composer /usr/local/bin/composer" in php
    # the tools come before the source, so the image layer is shared by every repo of the ecosystem
    assert php.index("composer:2") < php.index("COPY . /repo")


def test_the_image_follows_the_toolchain_or_what_the_repo_asks():
    plan = EnvPlan(profile="go", toolchain="go1.19.8", toolchain_request="go1.18")
    assert get_profile("go").docker_image(plan) == "golang:1.19"
    asked = plan.model_copy(update={"toolchain_request": "go1.22.1", "toolchain_mismatch": "go.mod asks go1.22.1"})
    assert get_profile("go").docker_image(asked) == "golang:1.22"
    assert get_profile("cargo").docker_image(EnvPlan(profile="cargo", toolchain="rust")) == "rust:1"
    nightly = EnvPlan(profile="cargo", toolchain="rust", toolchain_request="nightly-2023-01-01",
                      toolchain_mismatch="not installed")
    assert get_profile("cargo").docker_image(nightly) == "rust:1"  # a date is no version
    java = EnvPlan(profile="maven", toolchain="java17", toolchain_request="1.8")
    assert get_profile("maven").docker_image(java) == "maven:3-eclipse-temurin-17"
    newer = java.model_copy(update={"toolchain_request": "21", "toolchain_mismatch": "asks 21"})
    assert get_profile("gradle").docker_image(newer) == "gradle:jdk21"
    assert get_profile("phpunit").docker_image(EnvPlan(profile="phpunit", toolchain="php8.2.7")) == "php:8.2-cli"


def test_python_keeps_its_pip_rendering(tmp_path):
    src = _copy("tinyhttp", tmp_path)
    r = runner.invoke(app, ["env", "dockerfile", str(src)])
    assert r.exit_code == 0, r.output
    assert re.search(r"^FROM python:\d[\d.]*-slim$", r.stdout, re.M)
    assert "RUN pip install" in r.stdout


def test_a_repo_no_profile_runs_and_an_unknown_runner_are_clear_errors(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "README.md").write_text("# nothing to test\n")
    r = runner.invoke(app, ["env", "plan", str(tmp_path / "docs")])
    assert r.exit_code == 2 and "no profile runs this repo's tests" in r.output
    r = runner.invoke(app, ["env", "plan", str(tmp_path / "docs"), "--runner", "nope"])
    assert r.exit_code == 2 and "unknown test runner 'nope'" in r.output


@pytest.mark.slow
def test_build_makes_a_go_env_and_runs_its_suite(bwrap, tmp_path):
    tools.skip_unless("go")
    src = _copy("kvstore-go", tmp_path)
    r = runner.invoke(app, ["env", "build", str(src), "--set", "sandbox.backend=bwrap",
                            "--set", f"env.cache_dir={tmp_path / 'envs'}"])
    assert r.exit_code == 0, r.output
    counts = re.search(r"^tests: (\{.*\})", r.stdout, re.M)
    assert counts and "'pass'" in counts.group(1), r.stdout
    assert list((tmp_path / "envs").glob("go-*/ok.json")), "the env is the go profile's, cached by its key"


@pytest.mark.slow
def test_build_makes_a_python_env_with_its_recorded_steps(bwrap, tmp_path):
    src = _copy("tinyhttp", tmp_path)
    r = runner.invoke(app, ["env", "build", str(src), "--set", "sandbox.backend=bwrap",
                            "--set", f"env.cache_dir={tmp_path / 'envs'}",
                            "--set", f"env.inherit_site_packages=[{SITE}]"])
    assert r.exit_code == 0, r.output
    assert re.search(r"^  ok +\d+\.\d+s  ", r.stdout, re.M), r.stdout  # EnvManager's attempt, step by step
    counts = re.search(r"^tests: (\{.*\})", r.stdout, re.M)
    assert counts and "'pass'" in counts.group(1), r.stdout
