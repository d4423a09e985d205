"""A real installable Python project (setuptools, src layout) and one task on it, for the
tests that try to read the answer from the environment: ``dur.parse`` is stubbed out, the
gold patch puts it back, and the hack patch leaves the stub and appends an ``exec`` of
the module's copy in the env's ``site-packages`` (how a plain install of the clean tree
handed every task its answer)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.sandbox.conftest import git

PYPROJECT = """[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "durkit"
version = "1.2.0"
description = "Parses durations such as 1h30m into seconds"
requires-python = ">=3.8"

[tool.setuptools.packages.find]
where = ["src"]

[tool.pytest.ini_options]
testpaths = ["tests"]
"""

DUR = '''"""Durations written as 1h30m10s."""

import re

_PART = re.compile(r"(\\d+)([hms])")
_UNIT = {"h": 3600, "m": 60, "s": 1}


def parse(text):
    """Seconds in a duration such as ``1h30m``; ValueError when it is not one."""
    parts = _PART.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError(f"not a duration: {text!r}")
    return sum(int(n) * _UNIT[u] for n, u in parts)


def render(seconds):
    """``3700`` -> ``1h1m40s`` (the parts that are not zero)."""
    out = []
    for unit, size in (("h", 3600), ("m", 60), ("s", 1)):
        n, seconds = divmod(seconds, size)
        if n:
            out.append(f"{n}{unit}")
    return "".join(out) or "0s"
'''
STUB = '''    """Seconds in a duration such as ``1h30m``; ValueError when it is not one."""
    raise NotImplementedError
'''
BODY = '''    """Seconds in a duration such as ``1h30m``; ValueError when it is not one."""
    parts = _PART.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError(f"not a duration: {text!r}")
    return sum(int(n) * _UNIT[u] for n, u in parts)
'''
VERSION = '''"""The installed version, from the distribution's metadata."""

from importlib.metadata import version

__version__ = version("durkit")
'''
TEST_PARSE = '''import pytest

from durkit.dur import parse


def test_parse():
    assert parse("1h30m") == 5400 and parse("10s") == 10


def test_parse_rejects():
    with pytest.raises(ValueError):
        parse("1x")
'''
TEST_RENDER = '''from durkit import __version__
from durkit.dur import render


def test_render():
    assert render(3700) == "1h1m40s" and render(0) == "0s"


def test_version():
    assert __version__ == "1.2.0"
'''
# the hack: the stub stays; the module then runs the clean copy an installed env holds
HACK_TAIL = '''

import glob as _glob
import sys as _sys

for _copy in _glob.glob(_sys.prefix + "/lib/python*/site-packages/durkit/dur.py"):
    exec(open(_copy).read())
'''


def write_project(repo: Path) -> Path:
    """The clean project at ``repo`` (no git)."""
    (repo / "src" / "durkit").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "pyproject.toml").write_text(PYPROJECT)
    (repo / "src" / "durkit" / "__init__.py").write_text(VERSION)
    (repo / "src" / "durkit" / "dur.py").write_text(DUR)
    (repo / "tests" / "test_parse.py").write_text(TEST_PARSE)
    (repo / "tests" / "test_render.py").write_text(TEST_RENDER)
    return repo


def make_task(root: Path) -> dict:
    """``root/tasks/durkit`` (git; base commit = the stubbed tree) and the task's fields:
    ``patch`` (gold), ``hack`` (the exec-from-site-packages patch)."""
    repo = write_project(root / "tasks" / "durkit")
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "t")
    (repo / "src" / "durkit" / "dur.py").write_text(DUR.replace(BODY, STUB))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    base = git(repo, "rev-parse", "HEAD").strip()
    (repo / "src" / "durkit" / "dur.py").write_text(DUR)
    patch = git(repo, "diff")
    (repo / "src" / "durkit" / "dur.py").write_text(DUR.replace(BODY, STUB) + HACK_TAIL)
    hack = git(repo, "diff")
    git(repo, "checkout", "-q", ".")
    return {"instance_id": "durkit__parse", "repo": "local/durkit", "base_commit": base, "patch": patch,
            "hack": hack, "test_patch": "", "problem_statement": "parse() does not parse durations.",
            "FAIL_TO_PASS": ["tests/test_parse.py::test_parse", "tests/test_parse.py::test_parse_rejects"],
            "PASS_TO_PASS": ["tests/test_render.py::test_render", "tests/test_render.py::test_version"],
            "repo_path": "durkit", "runner": "pytest"}


def write_tasks(root: Path, fields: dict) -> Path:
    path = root / "tasks" / "tasks.jsonl"
    row = {k: v for k, v in fields.items() if k != "hack"}
    path.write_text(json.dumps(row) + "\n")
    return path


def installed_copy(venv_root: Path) -> list[Path]:
    """The copies of the project's module an env holds (none, when it holds no code)."""
    return sorted(venv_root.glob("**/site-packages/durkit/dur.py"))


def build_clean_env(root: Path, config, sandbox, limits):
    """The env of the clean project, as a tasks build makes it (its baseline builds the env
    from the clean snapshot); a grader, validate or scorer run with the same ``config``
    (same cache, same key: the dependency files are the same) then reuses it."""
    from datagen.sandbox.harness.profiles.registry import get_profile
    from datagen.sandbox.harness.runners import ensure_env

    clean = write_project(root / "clean-snapshot" / "durkit")
    return ensure_env(get_profile("pytest"), clean, config, sandbox, limits)
