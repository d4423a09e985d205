"""The teacher repairs a plan the rules could not make work: each answer is built and run
for real in the sandbox; malformed and useless answers cost a round, a good one is kept."""

from __future__ import annotations

import json

import pytest

from datagen.config.sandbox import EnvConfig, SandboxLimits
from datagen.records.env import EnvPlan, InstallStep
from datagen.sandbox.harness.profiles.registry import get_profile
from datagen.sandbox.isolation.select import untrusted_sandbox
from datagen.synth.env_repair import Failure, apply_answer, repair, try_plan
from datagen.teachers import make_teacher
from tests.synth.buildkit import SITE
from tests.teachers.fake_server import FakeOpenAI
from tests.teachers.helpers import fast_config

TEST = '''import os
from calc import add


def test_add():
    assert os.environ.get("CALC_MODE") == "on", "the suite needs CALC_MODE=on"
    assert add(2, 3) == 5
'''
GOOD = {"add": [], "pin": [], "drop": [], "env": {"CALC_MODE": "on"}, "pytest_args": [], "reason": "needs CALC_MODE"}
USELESS = {"add": [], "pin": [], "drop": [], "env": {"OTHER": "1"}, "pytest_args": [], "reason": "guess"}


def _answers():
    """Round 1: prose three times (the ask and two re-asks); round 2: useless; then good."""
    script = ["I think you should set some variable."] * 3 + [json.dumps(USELESS), json.dumps(GOOD)]
    calls = []

    def answer(body: dict) -> str:
        calls.append(body)
        return script[min(len(calls), len(script)) - 1]
    return answer, calls


@pytest.mark.slow
def test_teacher_rounds_until_a_plan_works(tmp_path, monkeypatch):
    monkeypatch.setenv("DATAGEN_TEST_KEY", "x")
    src = tmp_path / "calc"
    (src / "tests").mkdir(parents=True)
    (src / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (src / "tests" / "test_calc.py").write_text(TEST)
    sandbox = untrusted_sandbox("auto")
    limits = SandboxLimits(timeout_s=60)
    config = EnvConfig(cache_dir=str(tmp_path / "envs"), inherit_site_packages=[SITE], test_requirements=["pytest"])
    profile = get_profile("pytest")
    plan = profile.configured_plan(src, config)

    def attempt(p):
        return try_plan(profile, src, p, config, sandbox, limits, tmp_path / "scratch")

    first = attempt(plan)
    assert first is not None and first.kind == "no_passing_tests"
    answer, calls = _answers()
    with FakeOpenAI(answer=answer) as server:
        teacher = make_teacher(fast_config(server.base_url, None, max_reasks=2, timeout_s=5))
        result = repair("calc", src, plan, first, teacher, 3, attempt)
    assert [r["outcome"] for r in result.rounds][0] == "no usable answer"
    assert result.rounds[1]["outcome"].startswith("no_passing_tests")
    assert result.rounds[2]["outcome"] == "works"
    assert result.plan is not None and result.plan.env["CALC_MODE"] == "on"
    assert "CALC_MODE" in calls[-1]["messages"][0]["content"]  # the teacher saw the failing output


def test_no_round_is_spent_when_the_teacher_only_fails(tmp_path, monkeypatch):
    monkeypatch.setenv("DATAGEN_TEST_KEY", "x")
    plan = EnvPlan(profile="pytest", install=[InstallStep(name="deps", kind="requirements", args=["a"])])
    tried = []
    with FakeOpenAI(answer=lambda body: "{not json") as server:
        teacher = make_teacher(fast_config(server.base_url, None, max_reasks=1, timeout_s=5))
        result = repair("r", tmp_path, plan, Failure("env_setup_failed", "boom"), teacher, 2, tried.append)
    assert result.plan is None and not tried and len(result.rounds) == 2


def test_apply_answer_adds_pins_drops_and_marks_teacher_steps():
    plan = EnvPlan(profile="pytest", install=[
        InstallStep(name="deps", kind="requirements", args=["numpy>=1", "attrs"]),
        InstallStep(name="project", kind="project", optional=True),
        InstallStep(name="tests", kind="requirements", args=["pytest", "nose"])], project_install="plain")
    new = apply_answer(plan, {"add": ["pytest-mock>=3", "not a spec!!"], "pin": ["numpy<2", "setuptools<70"],
                              "drop": ["nose"], "env": {"PATH": "/evil", "TZ": "UTC"},
                              "pytest_args": ["--ignore=docs"], "project_install": "none", "reason": "r"})
    by_name = {s.name: s for s in new.install}
    assert by_name["deps"].args == ["numpy<2", "attrs"] and by_name["deps"].source == "teacher"
    assert by_name["tests"].args == ["pytest"]
    assert by_name["teacher additions"].args == ["pytest-mock>=3", "setuptools<70"]
    assert "project" not in by_name and new.project_install == "none"
    assert new.env == {"TZ": "UTC", "PYTEST_ADDOPTS": "--ignore=docs"}  # PATH is not the teacher's to set
    assert plan.install[0].args == ["numpy>=1", "attrs"]  # the old plan is left as it was
