"""Per-repo Python environments, built once and reused across tasks.

An environment is a virtual env holding the repo's dependencies and its test tools. It is
keyed by a hash of the repo's dependency files (plus the interpreter and env options), so
every task of one repo version shares it. It is built inside the sandbox with the network
on (the only step that gets it); the repo under test is imported from its working copy
through ``PYTHONPATH``. A failed build is recorded (``failed.json`` with the log tail) and
is not retried unless asked.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from datagen.config.sandbox import EnvConfig, SandboxLimits
from datagen.errors import SkipItem, UserError
from datagen.resources import cache_root
from datagen.sandbox.base import DEFAULT_PATH, Sandbox

DEP_FILES = ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "Pipfile")
LOG_TAIL = 4000


class EnvSetupError(SkipItem):
    """The environment could not be built; the task is skipped with this reason."""

    def __init__(self, detail: str, log_tail: str = ""):
        super().__init__("env_setup_failed", detail)
        self.log_tail = log_tail


@dataclass(frozen=True)
class PythonEnv:
    """A ready environment: what a sandboxed run needs to use it."""

    path: Path
    python: str
    ro_paths: tuple[Path, ...]
    env: dict[str, str] = field(default_factory=dict)

    def run_env(self, workdir: Path) -> dict[str, str]:
        """Variables for a test run in ``workdir`` (the repo imports from the working copy)."""
        paths = [str(workdir / "src"), str(workdir)] if (workdir / "src").is_dir() else [str(workdir)]
        return {**self.env, "PYTHONPATH": os.pathsep.join(paths)}


def dependency_files(repo: Path) -> list[Path]:
    """The files whose content decides the environment (root level, sorted)."""
    found = [repo / name for name in DEP_FILES if (repo / name).is_file()]
    found += sorted(p for p in repo.glob("requirements*.txt") if p.name != "requirements.txt")
    found += sorted((repo / "requirements").glob("*.txt")) if (repo / "requirements").is_dir() else []
    return found


def _interpreter(python: str) -> tuple[str, str, str]:
    """(base executable, base prefix, version) of an interpreter (it may itself be a venv's)."""
    code = "import sys; print(sys._base_executable); print(sys.base_prefix); print(sys.version)"
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
    exe, prefix, version = out.stdout.splitlines()[:3]
    return exe, prefix, version


def default_cache_dir() -> Path:
    return cache_root() / "envs"


class EnvManager:
    """Builds and caches environments under ``cache_dir/<key>``."""

    def __init__(self, config: EnvConfig, sandbox: Sandbox, limits: SandboxLimits):
        self.config = config
        self.sandbox = sandbox
        self.limits = limits.model_copy(update={"network": True, "timeout_s": config.setup_timeout_s})
        self.cache_dir = Path(config.cache_dir) if config.cache_dir else default_cache_dir()
        self.python, self.base_prefix, self.version = _interpreter(config.python or sys.executable)

    def key(self, repo: Path) -> str:
        h = hashlib.sha256()
        h.update(json.dumps([self.version, self.config.model_dump(
            include={"system_site_packages", "inherit_site_packages", "test_requirements"})],
            sort_keys=True).encode())
        for path in dependency_files(repo):
            h.update(str(path.relative_to(repo)).encode() + b"\0" + path.read_bytes() + b"\0")
        return h.hexdigest()[:16]

    def ensure(self, repo: Path, retry_failed: bool = False) -> PythonEnv:
        """The environment for ``repo``, building it on first use."""
        key = self.key(repo)
        target = self.cache_dir / key
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        with open(self.cache_dir / f"{key}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one builder per key; others wait, then reuse
            failed = target / "failed.json"
            if failed.exists() and not retry_failed:
                info = json.loads(failed.read_text())
                raise EnvSetupError(f"{info['error']} (recorded in {failed}; not retried)",
                                    info.get("log_tail", ""))
            if not (target / "ok.json").exists():
                shutil.rmtree(target, ignore_errors=True)
                target.mkdir()
                self._build(repo, target)
        return self._env(target)

    def _env(self, target: Path) -> PythonEnv:
        venv = target / "venv"
        ro = (target, Path(self.base_prefix), *map(Path, self.config.inherit_site_packages))
        env = {"VIRTUAL_ENV": str(venv), "PATH": f"{venv}/bin:{DEFAULT_PATH}",
               "PYTHONDONTWRITEBYTECODE": "1"}
        return PythonEnv(path=target, python=str(venv / "bin" / "python"), ro_paths=ro, env=env)

    def _build(self, repo: Path, target: Path) -> None:
        deps = dependency_files(repo)
        log: list[str] = []
        started = time.time()
        ro = [Path(self.base_prefix), *map(Path, self.config.inherit_site_packages)]

        # pip's downloads and builds go to disk in the env folder, not the small tmpfs /tmp
        scratch = {"TMPDIR": str(target / ".tmp"), "PIP_CACHE_DIR": str(target / ".pip-cache")}
        (target / ".tmp").mkdir()

        def step(name: str, cmd: list[str], check: bool = True) -> bool:
            result = self.sandbox.run(cmd, target, self.limits,
                                      env={"PIP_NO_INPUT": "1", **scratch}, ro_paths=ro)
            log.append(f"$ {' '.join(cmd)}\n{result.stdout}{result.stderr}")
            ok = result.exit_code == 0 and result.limit_hit is None
            if not ok and check:
                why = f"limit {result.limit_hit}" if result.limit_hit else f"exit {result.exit_code}"
                tail = "\n".join(log)[-LOG_TAIL:]
                last = last_error(result.stdout + "\n" + result.stderr)
                error = f"{name} failed ({why})" + (f": {last}" if last else "")
                (target / "failed.json").write_text(json.dumps(
                    {"error": error, "log_tail": tail, "at": started}))
                raise EnvSetupError(error, tail)
            return ok

        venv = target / "venv"
        py = str(venv / "bin" / "python")
        install = [py, "-m", "pip", "install", "--disable-pip-version-check", "-q"]
        venv_cmd = [self.python, "-m", "venv", "--without-pip", str(venv)]
        if self.config.system_site_packages:
            venv_cmd.insert(3, "--system-site-packages")
        step("venv", venv_cmd)
        if self.config.inherit_site_packages:
            step("inherit", [py, "-c", _INHERIT, "\n".join(self.config.inherit_site_packages)])
        tools = [_module_name(r) for r in self.config.test_requirements]
        tools_ok = step("check test tools", [py, "-c", f"import {', '.join(tools)}"], check=False) \
            if tools else True
        if deps or not tools_ok:
            step("ensurepip", [py, "-m", "ensurepip"])
        if deps:
            # pip may write build files into the source: give it a copy inside the env folder
            shutil.copytree(repo, target / "src", symlinks=True,
                            ignore=shutil.ignore_patterns(".git"))
        if any(p.name in ("pyproject.toml", "setup.py") for p in deps):
            step("install repo", [*install, str(target / "src")])
        for req in (p for p in deps if p.suffix == ".txt"):
            step(f"install {req.name}", [*install, "-r", str(target / "src" / req.relative_to(repo))])
        if not tools_ok:
            step("install test tools", [*install, *self.config.test_requirements])
        for leftover in ("src", ".tmp", ".pip-cache"):
            shutil.rmtree(target / leftover, ignore_errors=True)
        (target / "ok.json").write_text(json.dumps(
            {"dependency_files": [str(p.relative_to(repo)) for p in deps],
             "python": self.version, "seconds": round(time.time() - started, 2)}))


def last_error(output: str, lines: int = 2, width: int = 300) -> str:
    """The lines of a failed step that say why: pip's ``ERROR:`` lines (the last
    ``lines`` of them), else the last non-empty line; joined with " | "."""
    text = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in text if line.startswith("ERROR:")] or text[-1:]
    return " | ".join(line[:width] for line in errors[-lines:])


def env_at(folder: Path, inherit_site_packages: list[str] = ()) -> PythonEnv:
    """An existing environment given by hand: a cache entry (``<key>/venv``) or a venv."""
    folder = folder.resolve()
    venv = folder / "venv" if (folder / "venv" / "bin" / "python").exists() else folder
    python = venv / "bin" / "python"
    if not python.exists():
        raise UserError(f"--env {folder}: no bin/python or venv/bin/python in it")
    _, base_prefix, _ = _interpreter(str(python))
    inherited = [*inherit_site_packages]
    for pth in venv.glob("lib/python*/site-packages/_datagen_inherit.pth"):
        inherited += [line for line in pth.read_text().splitlines() if line.strip()]
    env = {"VIRTUAL_ENV": str(venv), "PATH": f"{venv}/bin:{DEFAULT_PATH}",
           "PYTHONDONTWRITEBYTECODE": "1"}
    ro = (folder, Path(base_prefix), *map(Path, dict.fromkeys(inherited)))
    return PythonEnv(path=folder, python=str(python), ro_paths=ro, env=env)


_INHERIT = (
    "import sys, pathlib; v = sys.version_info; pathlib.Path(sys.prefix, 'lib', "
    "f'python{v[0]}.{v[1]}', 'site-packages', '_datagen_inherit.pth').write_text(sys.argv[1])"
)


def _module_name(requirement: str) -> str:
    """'pytest-xdist>=3' -> 'pytest_xdist' (the import name, for the usual packages)."""
    for sep in "[=<>!~; ":
        requirement = requirement.split(sep)[0]
    return requirement.strip().replace("-", "_").lower()
