"""The slim site-packages the tests' sandboxed pytest runs inherit (tests/sitekit.py)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.sitekit import SITE

ROOT = Path(__file__).resolve().parents[1]
CALC_TEST = "def test_add():\n    assert 1 + 1 == 2\n"


def _venv_on(site: str, root: Path) -> Path:
    """A bare venv that imports from ``site`` (how EnvManager inherits: one .pth line)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    py = root / "bin" / "python"
    purelib = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    Path(purelib, "_inherit.pth").write_text(site + "\n", encoding="utf-8")
    return py


def _make(cache: Path, count: int) -> list[str]:
    """``count`` processes importing the kit at once, with ``cache`` as its folder."""
    env = {**os.environ, "DATAGEN_TEST_CACHE": str(cache), "PYTHONPATH": str(ROOT)}
    code = "from tests.sitekit import SITE; print(SITE)"
    procs = [subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(count)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in outs]
    return [out.strip() for out, _ in outs]


def test_the_slim_site_holds_copies_of_the_test_tools_and_nothing_else():
    site = Path(SITE)
    names = {p.name for p in site.iterdir()}
    for module in ("pytest", "_pytest", "pluggy", "iniconfig", "packaging"):
        assert module in names, module
        assert any(n.startswith(f"{module.lstrip('_')}-") and n.endswith(".dist-info") for n in names), module
    assert ("coverage" in names) == (importlib.util.find_spec("coverage") is not None), "as in the whole site"
    for plugin in ("xdist", "hypothesis", "pytest_benchmark", "anyio", "torch", "datagen"):
        assert plugin not in names, plugin
    links = [p for p in site.rglob("*") if p.is_symlink()]
    assert not links, links[:5]  # the sandbox mounts only this folder: a link out of it would dangle
    assert list((site / "_pytest" / "__pycache__").glob("main.cpython-*.pyc")), "bytecode, made once"


def test_a_venv_on_the_slim_site_runs_pytest_with_no_plugin(tmp_path):
    py = _venv_on(SITE, tmp_path / "venv")
    (tmp_path / "proj" / "tests").mkdir(parents=True)
    (tmp_path / "proj" / "tests" / "test_calc.py").write_text(CALC_TEST, encoding="utf-8")
    plugins = subprocess.run([str(py), "-c", "import importlib.metadata as m; "
                              "print(sorted(e.value for e in m.entry_points(group='pytest11')))"],
                             check=True, capture_output=True, text=True).stdout.strip()
    assert plugins == "[]", plugins  # what made each sandboxed run of the whole venv's site slow
    run = subprocess.run([str(py), "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=tmp_path / "proj",
                         capture_output=True, text=True)
    assert run.returncode == 0 and "1 passed" in run.stdout, run.stdout + run.stderr
    version = subprocess.run([str(py), "-m", "pytest", "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and f"pytest {pytest.__version__}" in version.stdout + version.stderr


def test_workers_at_once_make_one_folder_and_a_half_made_one_is_made_again(tmp_path):
    cache = tmp_path / "cache"
    paths = _make(cache, 3)
    assert len(set(paths)) == 1 and Path(paths[0]).parent == cache, paths
    made = Path(paths[0])
    assert sorted(p.name for p in cache.iterdir()) == [made.name, f"{made.name}.lock"], "no temporary folder left"
    pins = (made / ".complete").read_text(encoding="utf-8").split()
    assert any(p.startswith("pytest==") for p in pins) and any(p.startswith("pluggy==") for p in pins), pins
    # a session killed mid-copy leaves no .complete: the next one makes the folder again
    (made / ".complete").unlink()
    (made / "pytest" / "__init__.py").unlink()
    assert _make(cache, 1) == paths[:1]
    assert (made / ".complete").is_file() and (made / "pytest" / "__init__.py").is_file()


def test_an_env_on_the_slim_site_installs_nothing_and_runs_its_tests_in_the_sandbox(tmp_path):
    """The sandbox's user reads the folder (mkdtemp's 0700 shut it out, and every env then
    installed pytest itself), and the env finds its test tool there."""
    from datagen.config.sandbox import EnvConfig, SandboxLimits
    from datagen.sandbox.envs.python.manager import EnvManager
    from datagen.sandbox.harness.runners import run_tests
    from datagen.sandbox.isolation.select import bwrap_works, untrusted_sandbox

    ok, reason = bwrap_works()
    if not ok:
        pytest.skip(f"bwrap unavailable: {reason}")
    src = tmp_path / "repo"
    (src / "tests").mkdir(parents=True)
    (src / "tests" / "test_calc.py").write_text(CALC_TEST, encoding="utf-8")
    sandbox, limits = untrusted_sandbox("auto"), SandboxLimits(timeout_s=120)
    manager = EnvManager(EnvConfig(cache_dir=str(tmp_path / "envs"), inherit_site_packages=[SITE]), sandbox, limits)
    env = manager.ensure(src)
    steps = [s["name"] for s in manager.attempt_of(src)["steps"]]
    assert "test tools" not in steps, steps  # pytest came from the slim site, not an install
    assert not list(Path(env.path).glob("venv/lib/python*/site-packages/pytest")), "no copy of its own"
    run = run_tests("pytest", sandbox, src, limits, [], env)
    assert run.results == {"tests/test_calc.py::test_add": "pass"}, run
