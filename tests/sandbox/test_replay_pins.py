"""The environment that validates a task is the one its scripts rebuild: the setup script
installs under the versions the validating env held (``EnvPlan.pins``), and the eval
script runs with the sandbox's time zone, locale and hash seed, so a doctest whose output
depends on them, and a test that checks the test tool's version, pass in a replay from a
shell with another time zone, as they did inside datagen."""

from __future__ import annotations

import os
import subprocess

import pytest

from datagen.config.sandbox import EnvConfig, SandboxLimits
from datagen.sandbox.harness.profiles.registry import get_profile
from datagen.sandbox.harness.runners import ensure_env
from datagen.sandbox.isolation.select import bwrap_works, untrusted_sandbox
from datagen.synth.baseline import SuiteRunner, measure_baseline
from datagen.synth.candidates import Candidate
from datagen.synth.check import check_changes
from tests.conftest import write_tree
from tests.sealed import emit_sealed
from tests.sitekit import SITE

CLOCK = '''import time


def stamp(t):
    """The moment ``t`` in the local time zone.

    >>> stamp(0)
    '1970-01-01 00:00 UTC'
    """
    return time.strftime("%Y-%m-%d %H:%M %Z", time.localtime(t))


def add(a, b):
    return a + b
'''


def _repo() -> dict[str, str]:
    return {
        "clock.py": CLOCK,
        "pyproject.toml": '[project]\nname = "clock"\nversion = "0.1"\n\n'
                          '[tool.pytest.ini_options]\naddopts = "--doctest-modules"\n',
        "tests/test_clock.py": "import pytest\n\nfrom clock import add\n\n\ndef test_add():\n"
                               "    assert add(2, 3) == 5\n\n\ndef test_the_test_tool_is_the_one_that_validated():\n"
                               f"    assert pytest.__version__ == {pytest.__version__!r}\n",
    }


def test_a_replay_from_another_time_zone_gets_the_validating_env(tmp_path):
    ok, reason = bwrap_works()
    if not ok:
        pytest.skip(f"bwrap unavailable: {reason}")
    src = write_tree(tmp_path / "src", _repo())
    profile = get_profile("pytest")
    sandbox, limits = untrusted_sandbox("auto"), SandboxLimits(timeout_s=120)
    env = ensure_env(profile, src, EnvConfig(cache_dir=str(tmp_path / "envs"), inherit_site_packages=[SITE]),
                     sandbox, limits)
    assert f"pytest=={pytest.__version__}" in env.plan.pins
    (tmp_path / "scratch").mkdir()
    suite = SuiteRunner("pytest", src, sandbox, limits, env, tmp_path / "scratch")
    base = measure_baseline(suite, 1, False)
    assert base.reason is None, base.detail
    assert "clock.py::clock.stamp" in base.stable  # the doctest passed in the sandbox
    changes = {"clock.py": CLOCK.replace("return a + b", "return a - b")}
    verdict = check_changes(suite, base, changes, [], 1)
    assert verdict.kept, verdict.reason
    task = emit_sealed(tmp_path, src, Candidate("clock", "hand_made_v1", "procedural", "clock.py::add", 0, changes),
                       verdict, "pytest", base)
    assert "clock.py::clock.stamp" in task.PASS_TO_PASS
    assert f"pytest=={pytest.__version__}" in task.setup_script

    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(tmp_path / "out" / task.repo_path), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", task.base_commit], check=True)
    shell = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "DATAGEN", "LC_"))}
    shell.update(TZ="XYZ5", LANG="C", PYTHONHASHSEED="random")  # five hours west of UTC, a plain locale

    def bash(script: str) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", "-c", script], cwd=clone, env=shell, capture_output=True, text=True,
                              timeout=600)

    zone = subprocess.run(["python3", "-c", "import time; print(time.strftime('%Z', time.localtime(0)))"],
                          env=shell, capture_output=True, text=True)
    assert zone.stdout.strip() == "XYZ"  # the shell's own zone would break the doctest
    setup = bash(task.setup_script)
    assert setup.returncode == 0, setup.stdout + setup.stderr
    assert bash(task.eval_script).returncode != 0  # the bug
    subprocess.run(["git", "-C", str(clone), "apply", "-"], input=task.patch, text=True, check=True)
    after = bash(task.eval_script)
    assert after.returncode == 0, after.stdout + after.stderr
