"""Per-repo Python environments, built once from the repo's ``EnvPlan`` and reused across tasks.

An environment is a virtual env holding the repo's dependencies and its test tools, made by
running the plan's install steps (``datagen/sandbox/envs/python/plan.py`` derives the
plan by rules; a user plan file or a teacher's repair replaces it). It is keyed by a hash
of the plan, the repo's dependency files and the interpreter, so every task of one repo
version shares it. It is built inside the sandbox with the network on (the only step that
gets it), by ``uv`` (``uv venv`` + ``uv pip install``, one wheel cache shared by all envs)
or pip as the fallback; the repo under test is imported from its working copy through
``PYTHONPATH``. The manager is one builder of the env cache (``datagen/sandbox/envs/cache.py``:
the lock, ``attempt.json`` with each step's outcome and seconds, ``ok.json`` / ``failed.json``,
the leak guard), as every profile's env is.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from datagen.config.sandbox import EnvConfig, SandboxLimits
from datagen.errors import UserError
from datagen.records.env import EnvPlan, InstallStep
from datagen.resources import env_cache_dir
from datagen.sandbox.envs.cache import (
    Attempt,
    BuildLog,
    ensure_cached,
    load_plan,
    read_attempt,
)
from datagen.sandbox.envs.mirrors import mirror_env, mirrors_key
from datagen.sandbox.envs.python.own import import_roots, strip_project
from datagen.sandbox.envs.python.plan import python_plan, resolve_python
from datagen.sandbox.envs.tools import tool_stamp
from datagen.sandbox.isolation.base import DEFAULT_PATH, Sandbox

DEP_FILES = ("pyproject.toml", "setup.py", "setup.cfg", "requirements.txt", "Pipfile", "tox.ini", "pytest.ini",
             ".pytest.ini", "noxfile.py")
UV_CACHE = ".uv-cache"
# What an env folder holds, in its key: 2 = the project's own files taken out (``own.py``);
# an env of before (the project installed into site-packages) is never reused.
LAYOUT = 2


@dataclass(frozen=True)
class PythonEnv:
    """A ready environment: what a sandboxed run needs to use it."""

    path: Path
    python: str
    ro_paths: tuple[Path, ...]
    env: dict[str, str] = field(default_factory=dict)
    pins: list[str] = field(default_factory=list)  # name==version of what it holds (``EnvPlan.pins``)
    version: str = ""  # the interpreter's X.Y
    import_roots: tuple[str, ...] = ()  # repo folders besides the root and src/ the project imports from

    def run_env(self, workdir: Path) -> dict[str, str]:
        """Variables for a test run in ``workdir`` (the repo imports from the working copy:
        the env holds no copy of its code)."""
        paths = [str(workdir / r) for r in self.import_roots if (workdir / r).is_dir()]
        paths += [str(workdir / "src"), str(workdir)] if (workdir / "src").is_dir() else [str(workdir)]
        return {**self.env, "PYTHONPATH": os.pathsep.join(paths)}


def dependency_files(repo: Path) -> list[Path]:
    """The files whose content decides the environment (root level, sorted)."""
    found = [repo / name for name in DEP_FILES if (repo / name).is_file()]
    found += sorted(p for p in repo.glob("requirements*.txt") if p.name != "requirements.txt")
    found += sorted((repo / "requirements").glob("*.txt")) if (repo / "requirements").is_dir() else []
    return found


@functools.cache
def _interpreter(python: str) -> tuple[str, str, str]:
    """(base executable, base prefix, version) of an interpreter (it may itself be a venv's)."""
    code = "import sys; print(sys._base_executable); print(sys.base_prefix); print(sys.version)"
    out = subprocess.run([resolve_python(python), "-c", code], capture_output=True, text=True, check=True)
    exe, prefix, version = out.stdout.splitlines()[:3]
    return exe, prefix, version


def uv_binary() -> str | None:
    """The uv executable: the one beside this interpreter (the ``uv`` PyPI package), else on PATH."""
    beside = Path(sys.executable).parent / "uv"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    try:
        from uv import find_uv_bin

        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        return shutil.which("uv")


class EnvManager:
    """Builds and caches environments under ``cache_dir/<key>``."""

    def __init__(self, config: EnvConfig, sandbox: Sandbox, limits: SandboxLimits):
        self.config = config
        self.sandbox = sandbox
        self.limits = limits.model_copy(update={"network": True, "timeout_s": config.setup_timeout_s})
        self.cache_dir = Path(config.cache_dir) if config.cache_dir else env_cache_dir()
        self.python, self.base_prefix, self.version = _interpreter(config.python or sys.executable)
        self.uv = uv_binary() if config.installer == "uv" else None

    # -- the plan ------------------------------------------------------------------------
    def plan(self, repo: Path, name: str = "") -> EnvPlan:
        """The plan for ``repo``: a user's (``env.plan``, ``env.overrides[name]``), else the rules'."""
        user = self.config.plan or self.config.overrides.get(name or repo.name)
        if user:
            return load_plan(user)
        # the running interpreter by its real path: `venv/bin/python` and `venv/bin/python3`
        # (a build and its Slurm jobs) must give one plan, one env key and the same scripts
        pythons = self.config.pythons or [os.path.realpath(self.python)]
        plan = python_plan(repo, pythons=pythons, test_requirements=self.config.test_requirements)
        if not any((repo / f).is_file() for f in ("pyproject.toml", "setup.py", "setup.cfg")):
            plan.install = [s for s in plan.install if s.kind != "project"]
            plan.project_install = "none"
        return plan

    def key(self, repo: Path, plan: EnvPlan | None = None) -> str:
        plan = plan or self.plan(repo)
        _, _, version = self._base(plan)
        h = hashlib.sha256()
        h.update(json.dumps([version, LAYOUT, self.config.model_dump(
            include={"system_site_packages", "inherit_site_packages", "test_requirements", "installer"}),
            plan.key_material(), *([mirrors_key(self.config.mirrors)] if self.config.mirrors.any() else []),
            tool_stamp([self.uv] if self.uv else [])], sort_keys=True).encode())  # the installer that builds it
        for path in dependency_files(repo):
            h.update(str(path.relative_to(repo)).encode() + b"\0" + path.read_bytes() + b"\0")
        return h.hexdigest()[:16]

    def _base(self, plan: EnvPlan) -> tuple[str, str, str]:
        """(executable, base prefix, version) of the plan's interpreter (default: env.python)."""
        if plan.toolchain:
            try:
                return _interpreter(plan.toolchain)
            except (OSError, subprocess.CalledProcessError):
                pass
        return self.python, self.base_prefix, self.version

    # -- building ------------------------------------------------------------------------
    def ensure(self, repo: Path, retry_failed: bool = False, plan: EnvPlan | None = None,
               name: str = "") -> PythonEnv:
        """The environment for ``repo`` (built from ``plan``, default ``self.plan(repo)``) on first
        use, in the env cache (``datagen/sandbox/envs/cache.py``) under its key."""
        plan = plan or self.plan(repo, name)
        target = ensure_cached(self.cache_dir, self.key(repo, plan), repo, plan,
                               lambda target, attempt: self.build(repo, target, plan, attempt), retry_failed)
        return self._env(target)

    def attempt_of(self, repo: Path, plan: EnvPlan | None = None) -> dict | None:
        """The stored ``attempt.json`` of the env ``repo`` (with ``plan``) has or would have."""
        return read_attempt(self.cache_dir / self.key(repo, plan))

    def _env(self, target: Path) -> PythonEnv:
        venv = target / "venv"
        info = json.loads((target / "ok.json").read_text()) if (target / "ok.json").exists() else {}
        prefix = info.get("base_prefix") or self.base_prefix
        ro = (target, Path(prefix), *map(Path, self.config.inherit_site_packages))
        env = {**info.get("env", {}), "VIRTUAL_ENV": str(venv), "PATH": f"{venv}/bin:{DEFAULT_PATH}",
               "PYTHONDONTWRITEBYTECODE": "1"}
        version = ".".join(str(info.get("python", "")).split(".")[:2])
        return PythonEnv(path=target, python=str(venv / "bin" / "python"), ro_paths=ro, env=env,
                         pins=list(info.get("pins", [])), version=version,
                         import_roots=tuple(info.get("import_roots", [])))

    def build(self, repo: Path, target: Path, plan: EnvPlan, attempt: Attempt) -> dict:
        """Run ``plan`` into ``target`` (an empty folder), each step kept in ``attempt``; what
        ``ok.json`` keeps of a ready env (the cache writes it, or ``failed.json``)."""
        builder = _Builder(self, repo, target, plan, attempt)
        builder.run()
        return {"dependency_files": [str(p.relative_to(repo)) for p in dependency_files(repo)],
                "python": builder.version, "base_prefix": builder.prefix, "env": plan.env,
                "installer": attempt.installer, "pins": builder.pins, "import_roots": builder.import_roots}


class _Builder:
    """One build of one plan (uv, or pip when uv is missing or not wanted)."""

    def __init__(self, manager: EnvManager, repo: Path, target: Path, plan: EnvPlan, attempt: Attempt):
        self.m, self.repo, self.target, self.plan = manager, repo, target, plan
        self.exe, self.prefix, self.version = manager._base(plan)
        self.uv = manager.uv
        self.log = BuildLog(manager.sandbox, manager.limits, target, attempt)
        self.pins: list[str] = []
        self.import_roots: list[str] = []
        self.attempt = attempt
        attempt.installer = "uv" if self.uv else "pip"
        self.venv = target / "venv"
        self.py = str(self.venv / "bin" / "python")
        self.ro = [Path(self.prefix), *map(Path, manager.config.inherit_site_packages)]
        if self.uv:
            self.ro.append(Path(self.uv).resolve().parent)
        self.scratch = {"TMPDIR": str(target / ".tmp"), "PIP_NO_INPUT": "1", **mirror_env(manager.config.mirrors),
                        **plan.env}
        if self.uv:
            self.scratch.update({"UV_CACHE_DIR": str(target / UV_CACHE), "UV_LINK_MODE": "copy",
                                 "UV_PYTHON_DOWNLOADS": "never", "UV_NO_PROGRESS": "1", "UV_NO_CONFIG": "1",
                                 "UV_SYSTEM_CERTS": "1"})
        for var in ("SSL_CERT_FILE", "SSL_CERT_DIR"):  # a site's own CA (a TLS-inspecting proxy)
            if os.environ.get(var):
                self.scratch[var] = os.environ[var]
        else:
            self.scratch["PIP_CACHE_DIR"] = str(target / ".pip-cache")

    def _run(self, name: str, cmd: list[str]) -> tuple[bool, str]:
        result, why = self.log.run(name, cmd, self.scratch, self.ro)
        out = f"{result.stdout}{result.stderr}"
        return not why, why + (f": {last_error(out)}" if why and last_error(out) else "")

    def _fail(self, name: str, why: str) -> Attempt:
        error = f"{name} failed ({why.split(':')[0]})" + (f": {why.split(': ', 1)[1]}" if ": " in why else "")
        self.log.fail(name, error, self.log.lines[-1] if self.log.lines else "")
        return self.attempt

    def _install(self, args: list[str]) -> list[str]:
        if self.uv:
            return [self.uv, "pip", "install", "--python", self.py, *args]
        return [self.py, "-m", "pip", "install", "--disable-pip-version-check", "-q", *args]

    def run(self) -> Attempt:
        (self.target / ".tmp").mkdir(exist_ok=True)
        cache = _SharedCache(self.m.cache_dir, self.target) if self.uv else None
        try:
            result = self._steps()
        finally:
            if cache is not None:
                cache.give_back()
            for leftover in ("src", ".tmp", ".pip-cache", UV_CACHE):
                shutil.rmtree(self.target / leftover, ignore_errors=True)
        return result

    def _steps(self) -> Attempt:
        cfg = self.m.config
        if self.uv:
            venv_cmd = [self.uv, "venv", "--python", self.exe, "--no-project", str(self.venv)]
            if cfg.system_site_packages:
                venv_cmd.insert(2, "--system-site-packages")
        else:
            venv_cmd = [self.exe, "-m", "venv", "--without-pip", str(self.venv)]
            if cfg.system_site_packages:
                venv_cmd.insert(3, "--system-site-packages")
        ok, why = self._run("venv", venv_cmd)
        if not ok and self.uv:  # uv cannot make this interpreter's venv: the pip path
            self.uv, self.attempt.installer = None, "pip"
            self.scratch = {k: v for k, v in self.scratch.items() if not k.startswith("UV_")}
            self.scratch["PIP_CACHE_DIR"] = str(self.target / ".pip-cache")
            shutil.rmtree(self.venv, ignore_errors=True)
            self.plan.notes.append(f"uv venv failed ({why[:200]}); built with pip")
            return self._steps()
        if not ok:
            return self._fail("venv", why)
        if cfg.inherit_site_packages:
            ok, why = self._run("inherit", [self.py, "-c", _INHERIT, "\n".join(cfg.inherit_site_packages)])
            if not ok:
                return self._fail("inherit", why)
        steps = list(self.plan.install)
        if cfg.inherit_site_packages:  # the inherited folders may hold the test tools already
            tools = [_module_name(r) for r in cfg.test_requirements]
            have, _ = self._run("check test tools", [self.py, "-c", f"import {', '.join(tools)}"]) \
                if tools else (True, "")
            if have:
                steps = [s for s in steps if s.origin != "env.test_requirements"]
        if not self.uv and steps:
            ok, why = self._run("ensurepip", [self.py, "-m", "ensurepip"])
            if not ok:
                return self._fail("ensurepip", why)
        if steps:
            # installs may write build files into the source: give them a copy in the env folder
            shutil.copytree(self.repo, self.target / "src", symlinks=True, ignore=shutil.ignore_patterns(".git"))
        for step in steps:
            failed = self._step(step)
            if failed is not None:
                return failed
        if any(s.kind == "project" for s in steps):
            self._strip_project()
        pins = self.m.sandbox.run([self.py, "-c", _PINS], self.target, self.m.limits, env=self.scratch,
                                  ro_paths=self.ro)
        self.pins = sorted(set(pins.stdout.split())) if pins.exit_code == 0 else []
        return self.attempt

    def _strip_project(self) -> None:
        """Take the project's own files out of the venv (``own.py``) and its built wheel out of
        the wheel cache: every task of the repo breaks that code, and runs can read the env."""
        removed, tops = strip_project(self.venv, self.target / "src")
        self.import_roots = [r for r in import_roots(self.target / "src", tops) if r not in ("", "src")]
        if removed:
            self.plan.notes.append(f"the project's own files taken out of the env ({len(removed)} files): "
                                   "its code is imported from the working copy")
        # the wheels uv built from local trees (the clean one: plain, editable) stay out of the
        # shared cache; its buckets of registry downloads stay
        cache = self.target / UV_CACHE
        for bucket in sorted(cache.glob("*-v*/")):
            for local in ("local", "editable", "path", "directory"):
                shutil.rmtree(bucket / local, ignore_errors=True)
        if self.uv and cache.is_dir():  # the unpacked wheels only those entries pointed to
            self._run("uv cache prune", [self.uv, "cache", "prune"])

    def _step(self, step: InstallStep) -> Attempt | None:
        """One install step; an optional one that fails is retried spec by spec, and what
        still fails is dropped with a note."""
        label = f"{step.name} ({step.origin})" if step.origin else step.name
        if step.kind == "project":
            flag = ["-e"] if self.plan.project_install == "editable" else []
            ok, why = self._run(label, self._install(["--no-deps", *flag, str(self.target / "src")]))
            if not ok:
                self.plan.notes.append(f"project install failed ({why[:200]}); deps only, source on PYTHONPATH")
            return None
        if step.kind == "command":
            ok, why = self._run(label, step.args)
        else:
            ok, why = self._run(label, self._install(self._args(step.args)))
        if ok:
            return None
        if not step.optional:
            return self._fail(label, why)
        if step.kind == "requirements" and len(step.args) > 1:
            dropped = [a for a in step.args if not a.startswith("-")
                       and not self._run(f"{label}: {a}", self._install(self._args([a])))[0]]
            if dropped:
                self.plan.notes.append(f"{label}: dropped {', '.join(dropped)} (would not install)")
        else:
            self.plan.notes.append(f"{label}: failed, skipped ({why[:200]})")
        return None

    def _args(self, args: list[str]) -> list[str]:
        """``-r FILE`` paths read from the env's copy of the repo."""
        out, follow = [], False
        for a in args:
            if follow:
                out.append(str(self.target / "src" / a))
                follow = False
            elif a in ("-r", "-c", "--requirement", "--constraint"):
                out.append(a)
                follow = True
            else:
                out.append(a)
        return out


class _SharedCache:
    """The wheel cache all envs share (``<cache_dir>/.uv-cache``), moved into the env folder
    for one build (the sandbox writes only there) and back after. A build that finds it
    taken by another builds with a cache of its own."""

    def __init__(self, cache_dir: Path, target: Path):
        self.shared, self.here = cache_dir / UV_CACHE, target / UV_CACHE
        self.lock = open(cache_dir / f"{UV_CACHE}.lock", "w")
        try:
            fcntl.flock(self.lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.lock.close()
            self.lock = None
            return
        if self.shared.is_dir():
            self.shared.rename(self.here)

    def give_back(self) -> None:
        if self.lock is None:
            return
        try:
            if self.here.is_dir():
                shutil.rmtree(self.shared, ignore_errors=True)
                self.here.rename(self.shared)
        finally:
            self.lock.close()


def last_error(output: str, lines: int = 2, width: int = 300) -> str:
    """The lines of a failed step that say why: pip's ``ERROR:`` lines (the last
    ``lines`` of them), else the last non-empty line; joined with " | "."""
    text = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in text if line.startswith(("ERROR:", "error:", "×", "╰─▶"))] or text[-1:]
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


# What the env holds, as ``name==version`` on one line: every distribution its interpreter
# sees (inherited folders too) but the project itself (installed from a local folder) and
# local version labels (``2.13.0+cpu`` is not on an index: ``2.13.0`` is).
_PINS = (
    "import importlib.metadata as m, json\n"
    "out = set()\n"
    "for d in m.distributions():\n"
    "    name = d.metadata['Name']\n"
    "    url = d.read_text('direct_url.json')\n"
    "    if not name or url and json.loads(url).get('url', '').startswith('file:'):\n"
    "        continue\n"
    "    out.add(f\"{name.lower().replace('_', '-')}=={d.version.split('+')[0]}\")\n"
    "print(' '.join(sorted(out)))"
)


_INHERIT = (
    "import sys, pathlib; v = sys.version_info; pathlib.Path(sys.prefix, 'lib', "
    "f'python{v[0]}.{v[1]}', 'site-packages', '_datagen_inherit.pth').write_text(sys.argv[1])"
)


def _module_name(requirement: str) -> str:
    """'pytest-xdist>=3' -> 'pytest_xdist' (the import name, for the usual packages)."""
    for sep in "[=<>!~; ":
        requirement = requirement.split(sep)[0]
    return requirement.strip().replace("-", "_").lower()
