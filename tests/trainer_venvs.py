"""The trainers' own tools (Harbor, verifiers, NeMo-Gym) in the Python >= 3.12 venvs that
``tests/run`` makes under ``.venv-trainers/``; the tests call them by subprocess."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VENVS = ROOT / ".venv-trainers"


def trainer_python(venv: str) -> Path:
    """``.venv-trainers/<venv>/bin/python``; the test skips, naming python3.12, when absent."""
    python = VENVS / venv / "bin" / "python"
    if not python.is_file():
        pytest.skip(f"no {python.relative_to(ROOT)}: harbor, nemo-gym and verifiers need python3.12 or newer "
                    "(tests/run makes the venv where python3.12 or python3.13 is on PATH or in pyenv)")
    return python


def version_of(venv: str, dist: str) -> str:
    """The installed version of ``dist`` in that venv."""
    python = trainer_python(venv)
    return subprocess.run([str(python), "-c", f"import importlib.metadata as m; print(m.version({dist!r}))"],
                          capture_output=True, text=True, check=True).stdout.strip()


def run_script(venv: str, script: str, *args: str, timeout: float = 300, env: dict | None = None,
               cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``script`` (Python source) run by that venv's interpreter with ``args``."""
    python = trainer_python(venv)
    return subprocess.run([str(python), "-c", script, *args], capture_output=True, text=True, timeout=timeout,
                          env=env, cwd=cwd)
