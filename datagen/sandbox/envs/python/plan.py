"""The rules that derive a Python repo's ``EnvPlan`` from its own files (no teacher, no network).

Sources, in order (each found one becomes an install step that names its origin):

1. the project's runtime dependencies: PEP 621 ``[project] dependencies``, else
   ``setup.cfg [options] install_requires``, else ``setup.py`` ``install_requires`` (read with
   ``ast``), else poetry's ``[tool.poetry.dependencies]``, else ``requirements.txt``,
   else Pipfile ``[packages]``;
2. the project itself (``project_install: plain``, without its dependencies, optional: when
   its build fails the env goes on with the source on PYTHONPATH, and says so);
3. test-only dependencies: test-ish extras (``test``, ``tests``, ``testing``, ``dev``, ...)
   from PEP 621 / setup.cfg / setup.py, PEP 735 ``[dependency-groups]``, poetry groups,
   pdm / uv dev dependencies, hatch test envs, ``requirements/*test*.txt`` and friends,
   ``tox.ini`` ``deps`` / ``extras``, ``noxfile.py`` ``session.install`` of test sessions,
   Pipfile ``[dev-packages]``, ``tests_require``;
4. pytest plugins the test configuration names (``--cov`` -> pytest-cov, ``-n`` ->
   pytest-xdist, ``required_plugins``, ``asyncio_mode``, ...) and well-known test libraries
   the test files import but nothing declares (hypothesis, freezegun, ...), optional;
5. datagen's own test tools (``env.test_requirements``: pytest, coverage).

The test command is ``python -m pytest`` with the suite's ``testpaths`` (pytest config
in pytest.ini, pyproject, setup.cfg or tox.ini), else the paths of a tox ``pytest``
command, else the usual test folders; unittest suites run through pytest too.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from datagen.records.env import EnvPlan, InstallStep
from datagen.sandbox.envs.python.sources import (
    clean_specs,
    ini_list,
    is_test_name,
    nox_installs,
    poetry_specs,
    read_ini,
    read_requirements,
    read_toml,
    requirement_names,
    setup_py_calls,
    split_install_args,
)

# tox factors that name a pure-Python variant of the test env (no C extension built)
PURE_FACTORS = frozenset({"python", "pure", "purepython", "nocext", "noext"})
DEFAULT_PYTHONS = ("python3.13", "python3.12", "python3.11", "python3.10", "python3")
# Where the rules look for the imports of a repo's tests (the test dependencies a plan adds):
# wider than the test-file rule (``harness/protect.py``, a floor above), since a module that
# only unittest discovery finds (``test*.py``) or a ``t/`` folder also names what tests import.
_TEST_IMPORT_DIRS = ("tests", "test", "testing", "t")
# Options in pytest's addopts (or tox commands) that need a plugin.
_ADDOPT_PLUGINS = {"--cov": "pytest-cov", "-n": "pytest-xdist", "--numprocesses": "pytest-xdist",
                   "--timeout": "pytest-timeout", "--benchmark": "pytest-benchmark", "--mypy": "pytest-mypy",
                   "--doctest-plus": "pytest-doctestplus", "--reruns": "pytest-rerunfailures",
                   "--random-order": "pytest-random-order", "--flake8": "pytest-flake8", "--mpl": "pytest-mpl",
                   "--snapshot-update": "syrupy", "--hypothesis": "hypothesis", "--forked": "pytest-forked"}
_INI_PLUGINS = {"asyncio_mode": "pytest-asyncio", "timeout": "pytest-timeout", "env": "pytest-env",
                "mock_use_standalone_module": "pytest-mock", "django_settings_module": "pytest-django",
                "trio_mode": "pytest-trio", "anyio_mode": "anyio"}
# Test libraries imported by test files -> the distribution that provides them; only these
# well-known names are ever installed from an import (an unknown import is not guessed).
KNOWN_TEST_IMPORTS = {
    "hypothesis": "hypothesis", "freezegun": "freezegun", "time_machine": "time-machine", "mock": "mock",
    "pytest_mock": "pytest-mock", "responses": "responses", "requests_mock": "requests-mock",
    "pytest_asyncio": "pytest-asyncio", "pytest_benchmark": "pytest-benchmark", "pretend": "pretend",
    "pytest_lazyfixture": "pytest-lazy-fixture", "pytest_cases": "pytest-cases", "faker": "Faker",
    "testfixtures": "testfixtures", "parameterized": "parameterized", "nose": "pynose", "toml": "toml",
    "pytest_httpserver": "pytest-httpserver", "httpretty": "httpretty", "syrupy": "syrupy", "yaml": "PyYAML",
    "dateutil": "python-dateutil", "pytz": "pytz", "numpy": "numpy", "trustme": "trustme", "attr": "attrs",
    "attrs": "attrs", "cloudpickle": "cloudpickle", "pytest_subtests": "pytest-subtests", "tomli": "tomli",
    "jinja2": "Jinja2", "docutils": "docutils", "pygments": "Pygments", "six": "six", "flaky": "flaky",
    "pytest_timeout": "pytest-timeout", "typing_extensions": "typing-extensions", "zope": "zope.interface",
    "tzdata": "tzdata", "pytest_randomly": "pytest-randomly", "coverage": "coverage", "pyfakefs": "pyfakefs",
    "sortedcontainers": "sortedcontainers", "click": "click", "packaging": "packaging", "requests": "requests",
    "simplejson": "simplejson", "ujson": "ujson", "anyio": "anyio", "trio": "trio", "mypy": "mypy",
    "pytest_xdist": "pytest-xdist", "xdist": "pytest-xdist", "execnet": "execnet",
}


def python_plan(src: Path, pythons: list[str] | tuple[str, ...] = (), test_requirements: list[str] = (),
                project_name: str = "") -> EnvPlan:
    """The plan for ``src`` by the rules above; ``pythons``: interpreters to choose from
    (names on PATH or paths; the first that fits the repo's request wins, newest first)."""
    src = Path(src)
    meta = _Meta(src, project_name)
    plan = EnvPlan(profile="pytest", project_install="plain")
    _choose_python(plan, meta, list(pythons) or list(DEFAULT_PYTHONS))
    meta.python_version = interpreter_version(plan.toolchain) if plan.toolchain else None
    runtime = meta.runtime()
    if runtime:
        plan.install.append(InstallStep(name="dependencies", kind="requirements", args=runtime[1], origin=runtime[0]))
    plan.install.append(InstallStep(name="project", kind="project", args=[], origin="the repo's build backend",
                                    optional=True))
    declared = set(requirement_names(runtime[1] if runtime else []))
    for origin, specs in meta.test_sources():
        specs = [s for s in specs if not requirement_names([s]) <= declared]
        if specs:
            declared |= requirement_names(specs)
            plan.install.append(InstallStep(name="test dependencies", kind="requirements", args=specs,
                                            origin=origin, optional=True))
    extra = [s for s in meta.implied_tests() if not requirement_names([s]) <= declared]
    if extra:
        declared |= requirement_names(extra)
        plan.install.append(InstallStep(name="implied test tools", kind="requirements", args=extra,
                                        origin="pytest options and test-file imports", optional=True))
    # every test tool, even one an optional step above names: that step may fail or be
    # dropped spec by spec, and a pin it installs stays (an unpinned name is satisfied by it)
    if test_requirements:
        plan.install.append(InstallStep(name="test tools", kind="requirements", args=list(test_requirements),
                                        origin="env.test_requirements"))
    plan.env = meta.tox_env()
    if meta.unittest_named() and "python_files" not in meta.pytest_config():
        # unittest discovery's names (`test.py`, `tests.py`, `testfoo.py`) are not pytest's default
        plan.env["PYTEST_ADDOPTS"] = f'-o "python_files={UNITTEST_FILES}"'
        plan.notes.append("test files named the unittest way (test*.py): pytest told to collect them (python_files)")
    if main := meta.unittest_main_at_import():
        plan.env["UNITTEST_MAIN_AT_IMPORT"] = "skip"  # the pytest profile's start reads it (UNITTEST_MAIN)
        plan.notes.append(f"{main} calls unittest.main() at import: pytest starts with it a no-op")
    plan.write_files = meta.generated_files()
    if plan.write_files:
        plan.notes.append(f"build-generated files written into the source: {', '.join(sorted(plan.write_files))}")
    plan.test_paths = meta.test_paths()
    if not plan.test_paths and (own := nested_suites(src)):
        # a suite folder with its own conftest.py and pytest config (``src/tests/pytest.ini``): pytest
        # reads that config when the folder is its test path; ids stay relative to the repo's root
        plan.test_paths = own
        plan.env["PYTEST_ADDOPTS"] = " ".join([plan.env.get("PYTEST_ADDOPTS", ""), "--rootdir=."]).strip()
        plan.notes.append(f"suite folders with their own conftest.py and pytest config: {', '.join(own)}")
    plan.test_command = ["python", "-m", "pytest", *plan.test_paths]
    if not runtime:
        plan.notes.append("no runtime dependencies declared in any file read")
    return plan


def pytest_config(src: Path) -> dict[str, str]:
    """The repo's pytest ini options, from the file pytest itself would pick first."""
    return _Meta(Path(src), "").pytest_config()


UNITTEST_FILES = "test*.py *_test.py"  # unittest discovery's pattern, and pytest's suffix one
_PYTEST_INIS = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")


def nested_suites(src: Path) -> list[str]:
    """Folders below the root (at most 3 deep) that hold a ``conftest.py`` and a pytest
    config of their own, the top-most ones, sorted: a suite the repo runs from its folder."""
    found = []
    for conftest in sorted(Path(src).glob("*/conftest.py")) + sorted(Path(src).glob("*/*/conftest.py")) + \
            sorted(Path(src).glob("*/*/*/conftest.py")):
        folder = conftest.parent
        rel = folder.relative_to(src).as_posix()
        if any(rel.startswith(f + "/") for f in found) or any(part.startswith(".") for part in folder.parts):
            continue
        if any((folder / name).is_file() for name in _PYTEST_INIS) and _Meta(folder, "").pytest_config():
            found.append(rel)
    return sorted(found)


def unittest_style(path: Path) -> bool:
    """Whether a ``test*.py`` file that pytest's default names miss (``testfoo.py``) holds
    unittest tests (it uses ``unittest`` or has a ``def test...``), as unittest discovery would run it."""
    if not re.fullmatch(r"test\w*\.py", path.name) or re.fullmatch(r"test_\w*\.py|\w*_test\.py", path.name):
        return False
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return re.search(r"\bTestCase\b|\bunittest\b|^\s*def test\w*\(", text, re.M) is not None


def generated_files(src: Path) -> dict[str, str]:
    """Build-generated files (VCS version files) the repo's source lacks: path -> text."""
    return _Meta(Path(src), "").generated_files()


class _Meta:
    """The repo's dependency files, read once."""

    def __init__(self, src: Path, project_name: str):
        self.src = src
        self.py = read_toml(src / "pyproject.toml") if (src / "pyproject.toml").is_file() else {}
        self.cfg = read_ini(src / "setup.cfg") if (src / "setup.cfg").is_file() else None
        self.tox = read_ini(src / "tox.ini") if (src / "tox.ini").is_file() else None
        ini = next((src / n for n in ("pytest.ini", ".pytest.ini") if (src / n).is_file()), None)
        self.pytest_ini = read_ini(ini) if ini is not None else None
        self.setup = setup_py_calls(src / "setup.py") if (src / "setup.py").is_file() else {}
        self.pipfile = read_toml(src / "Pipfile") if (src / "Pipfile").is_file() else {}
        self.project = self.py.get("project", {}) if isinstance(self.py.get("project"), dict) else {}
        self.tool = self.py.get("tool", {}) if isinstance(self.py.get("tool"), dict) else {}
        self.name = project_name or self.project.get("name") or self._cfg("metadata", "name") \
            or str(self.setup.get("name", "")) or self.tool.get("poetry", {}).get("name", "")
        self.python_version: tuple[int, int] | None = None  # the chosen interpreter's, for tox factors

    def _cfg(self, section: str, key: str) -> str:
        if self.cfg is None or not self.cfg.has_option(section, key):
            return ""
        return self.cfg.get(section, key)

    # -- runtime ------------------------------------------------------------------------
    def runtime(self) -> tuple[str, list[str]] | None:
        """(origin, specs) of the first source that declares runtime dependencies."""
        candidates = [
            ("pyproject.toml [project] dependencies", self.project.get("dependencies")),
            ("setup.cfg [options] install_requires", ini_list(self._cfg("options", "install_requires"))),
            ("setup.py install_requires", _as_list(self.setup.get("install_requires"))),
            ("pyproject.toml [tool.poetry.dependencies]",
             poetry_specs(self.tool.get("poetry", {}).get("dependencies", {}))),
            ("requirements.txt", read_requirements(self.src / "requirements.txt", self.src)),
            ("Pipfile [packages]", _pipfile(self.pipfile.get("packages", {}))),
        ]
        for origin, specs in candidates:
            specs = clean_specs(specs or [], self.name)
            if specs:
                return origin, specs
        return None

    # -- tests --------------------------------------------------------------------------
    def test_sources(self) -> list[tuple[str, list[str]]]:
        """(origin, specs) of every test-only source found, in the module's order."""
        out: list[tuple[str, list[str]]] = []
        extras = self.project.get("optional-dependencies") or {}
        for name in sorted(extras):
            if is_test_name(name):
                out.append((f"pyproject.toml [project.optional-dependencies] {name}", self._expand(extras[name])))
        if self.cfg is not None and self.cfg.has_section("options.extras_require"):
            for name, value in self.cfg.items("options.extras_require"):
                if is_test_name(name):
                    out.append((f"setup.cfg [options.extras_require] {name}", self._expand(ini_list(value))))
        for name, value in sorted((self.setup.get("extras_require") or {}).items()):
            if isinstance(name, str) and is_test_name(name.split(":")[0]):
                out.append((f"setup.py extras_require {name}", self._expand(_as_list(value))))
        tests_require = _as_list(self.setup.get("tests_require")) or ini_list(self._cfg("options", "tests_require"))
        if tests_require:
            out.append(("setup tests_require", clean_specs(tests_require, self.name)))
        groups = self.py.get("dependency-groups") or {}
        for name in sorted(groups):
            if is_test_name(name):
                out.append((f"pyproject.toml [dependency-groups] {name}", self._group(groups, name, set())))
        out += self._tool_tables()
        out += self._requirement_files()
        out += self._tox_deps()
        for fn, args in nox_installs(self.src / "noxfile.py") if (self.src / "noxfile.py").is_file() else []:
            if is_test_name(fn) or fn.startswith("test"):
                specs, extra = split_install_args(args, self.src)
                out.append((f"noxfile.py session {fn}", specs + self._extras(extra)))
        if self.pipfile.get("dev-packages"):
            out.append(("Pipfile [dev-packages]", _pipfile(self.pipfile["dev-packages"])))
        return [(o, clean_specs(s, self.name)) for o, s in out]

    def _tool_tables(self) -> list[tuple[str, list[str]]]:
        out = []
        poetry = self.tool.get("poetry", {})
        if isinstance(poetry.get("dev-dependencies"), dict):
            out.append(("pyproject.toml [tool.poetry.dev-dependencies]", poetry_specs(poetry["dev-dependencies"])))
        for name, group in sorted((poetry.get("group") or {}).items()):
            if is_test_name(name) and isinstance(group, dict):
                out.append((f"pyproject.toml [tool.poetry.group.{name}]", poetry_specs(group.get("dependencies", {}))))
        pdm = self.tool.get("pdm", {}).get("dev-dependencies") or {}
        for name in sorted(pdm):
            if is_test_name(name) and isinstance(pdm[name], list):
                out.append((f"pyproject.toml [tool.pdm.dev-dependencies] {name}", pdm[name]))
        uv = self.tool.get("uv", {}).get("dev-dependencies")
        if isinstance(uv, list):
            out.append(("pyproject.toml [tool.uv] dev-dependencies", uv))
        envs = self.tool.get("hatch", {}).get("envs") or {}
        for name in sorted(envs):
            env = envs[name] if isinstance(envs[name], dict) else {}
            if name in ("default", "hatch-test") or is_test_name(name):
                specs = _as_list(env.get("dependencies")) + _as_list(env.get("extra-dependencies"))
                specs += self._extras(_as_list(env.get("features")))
                if specs:
                    out.append((f"pyproject.toml [tool.hatch.envs.{name}]", specs))
        return out

    def _requirement_files(self) -> list[tuple[str, list[str]]]:
        files = sorted(self.src.glob("requirements*.txt")) + sorted(self.src.glob("*requirements*.txt"))
        for folder in ("requirements", "reqs", "requirements.d"):
            if (self.src / folder).is_dir():
                files += sorted((self.src / folder).glob("*.txt")) + sorted((self.src / folder).glob("*.in"))
        out = []
        for path in dict.fromkeys(files):
            rel = path.relative_to(self.src).as_posix()
            stem = path.stem.lower().replace("requirements", "").strip("-_.") or "base"
            if rel == "requirements.txt" or "doc" in stem or "lint" in stem:
                continue
            if stem == "base" or is_test_name(stem) or any(w in stem for w in ("test", "dev", "ci")):
                out.append((rel, read_requirements(path, self.src)))
        return out

    def _tox_deps(self) -> list[tuple[str, list[str]]]:
        if self.tox is None:
            return []
        out = []
        for section in ("testenv", *(s for s in self.tox.sections() if s.startswith("testenv:") and
                                    is_test_name(s.split(":", 1)[1].split("-")[0]))):
            if not self.tox.has_section(section):
                continue
            deps = self._tox_values(section, "deps")
            specs, extras = split_install_args([p for d in deps for p in d.split(None, 1)], self.src)
            given = self.tox.get(section, "extras", fallback="")
            extras += [e.strip() for e in re.split(r"[,\s]+", given) if e.strip()]
            specs += self._extras(extras)
            if specs:
                out.append((f"tox.ini [{section}] deps", specs))
        return out

    def _tox_values(self, section: str, key: str, seen: frozenset[str] = frozenset()) -> list[str]:
        """The lines of tox's ``[section] key`` that apply to the env datagen stands in for:
        ``{[other]key}`` references expanded, and a factor-conditional line (``py38,py39: x``,
        ``py{27,py2}-cov: y``, ``!py27: z``) kept only when its condition holds for that env
        (hyperlink's ``py{26,27,34,py2}: pytest==4.6.11`` and ``py{35,...,39,py3}:
        pytest==5.2.4``, both installed, left pytest 5.2 on Python 3.11, which cannot start)."""
        out: list[str] = []
        for line in ini_list(self.tox.get(section, key, fallback="")):
            ref = re.fullmatch(r"\{\[([^\]]+)\]([\w-]+)\}", line)
            if ref:
                name = f"{ref.group(1)}\0{ref.group(2)}"
                if self.tox.has_section(ref.group(1)) and name not in seen:
                    out += self._tox_values(ref.group(1), ref.group(2), seen | {name})
                continue
            cond = re.match(r"^(!?[\w.{},!\-]+):(?!//)\s*(\S.*)$", line)  # not a URL's scheme
            if cond is not None and not _balanced(cond.group(1)):
                cond = None  # ``{posargs: tests}`` on a line of its own is no factor condition
            if cond is None:
                out.append(line)
            elif _factors_hold(cond.group(1), self._tox_factors()):
                out.append(cond.group(2).strip())
        return out

    def _tox_factors(self) -> set[str]:
        """The factors of the tox env datagen's run stands in for: the chosen interpreter's
        (``py``, ``py3``, ``py311``, ``py3.11``) and every factor that all the envlist's
        Python envs share (``test`` of ``test-py{38,39}``)."""
        factors = {"py"}
        if self.python_version is not None:
            major, minor = self.python_version
            factors |= {f"py{major}", f"py{major}{minor}", f"py{major}.{minor}", f"python{major}.{minor}"}
        envs = [set(e.split("-")) for e in _expand_braces(self.tox.get("tox", "envlist", fallback=""))]
        python_envs = [e for e in envs if any(_PY_FACTOR.fullmatch(f) for f in e)]
        if python_envs:
            factors |= {f for f in set.intersection(*python_envs) if not _PY_FACTOR.fullmatch(f)}
        return factors

    def _extras(self, names: list[str]) -> list[str]:
        """The specs of the project's own extras ``names`` (from whichever file declares them)."""
        pep621 = self.project.get("optional-dependencies") or {}
        cfg = dict(self.cfg.items("options.extras_require")) if self.cfg is not None and \
            self.cfg.has_section("options.extras_require") else {}
        setup = self.setup.get("extras_require") or {}
        out: list[str] = []
        for n in names:
            out += self._expand(pep621.get(n) or ini_list(cfg.get(n, "")) or _as_list(setup.get(n)))
        return out

    def _expand(self, specs) -> list[str]:
        """Specs with self-references (``pkg[other]``) replaced by those extras' specs."""
        out = []
        for s in _as_list(specs):
            m = re.match(r"^\s*([\w.\-]+)\s*\[([\w,\s\-]+)\]", s)
            if m and self.name and re.sub(r"[-_.]+", "-", m.group(1)).lower() == \
                    re.sub(r"[-_.]+", "-", self.name).lower():
                pep621 = self.project.get("optional-dependencies") or {}
                for e in m.group(2).split(","):
                    out += [x for x in _as_list(pep621.get(e.strip())) if self.name not in x]
            else:
                out.append(s)
        return out

    def _group(self, groups: dict, name: str, seen: set[str]) -> list[str]:
        if name in seen:
            return []
        seen.add(name)
        out = []
        for item in groups.get(name) or []:
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, dict) and isinstance(item.get("include-group"), str):
                out += self._group(groups, item["include-group"], seen)
        return out

    # -- pytest configuration -----------------------------------------------------------
    def pytest_config(self) -> dict[str, str]:
        """The suite's pytest ini options, from the file pytest itself would pick first."""
        if self.pytest_ini is not None:
            for section in ("pytest", "tool:pytest"):
                if self.pytest_ini.has_section(section):
                    return dict(self.pytest_ini.items(section))
        opts = self.tool.get("pytest", {}).get("ini_options")
        if isinstance(opts, dict):
            return {k: " ".join(map(str, v)) if isinstance(v, list) else str(v) for k, v in opts.items()}
        for cp, section in ((self.tox, "pytest"), (self.cfg, "tool:pytest")):
            if cp is not None and cp.has_section(section):
                return dict(cp.items(section))
        return {}

    def implied_tests(self) -> list[str]:
        """Plugins the pytest options and tox commands name, and known test libraries the
        test files import."""
        conf = self.pytest_config()
        found: list[str] = []
        opts = conf.get("addopts", "") + " " + " ".join(self.tox_commands())
        for flag, dist in _ADDOPT_PLUGINS.items():
            if re.search(rf"(?:^|\s){re.escape(flag)}(?:[=\s]|$)", opts):
                found.append(dist)
        found += [dist for key, dist in _INI_PLUGINS.items() if key in conf]
        found += re.split(r"[\s,]+", conf.get("required_plugins", "").strip()) if conf.get("required_plugins") else []
        own = _own_modules(self.src)
        for module in sorted(_test_imports(self.src) - own):
            if module in KNOWN_TEST_IMPORTS:
                found.append(KNOWN_TEST_IMPORTS[module])
        return clean_specs(found, self.name)

    def generated_files(self) -> dict[str, str]:
        """VCS version files the build backend writes (hatch-vcs ``version-file``, setuptools-scm
        ``write_to`` / ``version_file``) that the source lacks: the package imports them."""
        paths = [self.tool.get("hatch", {}).get("build", {}).get("hooks", {}).get("vcs", {}).get("version-file"),
                 self.tool.get("setuptools_scm", {}).get("write_to"),
                 self.tool.get("setuptools_scm", {}).get("version_file")]
        version = "0.0.0"
        try:
            pkg_info = (self.src / "PKG-INFO").read_text(encoding="utf-8", errors="replace")
            version = re.search(r"^Version:\s*(\S+)", pkg_info, re.M).group(1)
        except (OSError, AttributeError):
            pass
        parts = ", ".join(p if p.isdigit() else repr(p) for p in re.split(r"[.+]", version))
        text = (f'__version__ = version = "{version}"\n__version_tuple__ = version_tuple = ({parts},)\n'
                f'__all__ = ["__version__", "__version_tuple__", "version", "version_tuple"]\n')
        out = {}
        for p in paths:
            if isinstance(p, str) and p.endswith(".py") and ".." not in p and not p.startswith("/") \
                    and not (self.src / p).exists():
                out[p] = text
        return out

    def unittest_named(self) -> bool:
        """Whether some of the repo's tests live in files unittest discovery runs and
        pytest's default names miss (``test.py``, ``tests.py``, ``pkg/tests/testfoo.py``)."""
        return any(unittest_style(p) for p in _test_files(self.src))

    def unittest_main_at_import(self) -> str:
        """The first test file that calls ``unittest.main()`` at module level, unguarded by
        ``if __name__ == "__main__"`` ('' when none does)."""
        for path in _test_files(self.src):
            try:
                tree = ast.parse(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
                continue
            for node in tree.body:
                call = node.value if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) else None
                func = call.func if call is not None else None
                if isinstance(func, ast.Attribute) and func.attr == "main" and \
                        isinstance(func.value, ast.Name) and func.value.id == "unittest":
                    return path.relative_to(self.src).as_posix()
        return ""

    def tox_commands(self) -> list[str]:
        if self.tox is None or not self.tox.has_section("testenv"):
            return []
        lines, joined = self._tox_values("testenv", "commands"), []
        for line in lines:  # a line ending in a backslash goes on on the next (tox joins them)
            if joined and joined[-1].endswith("\\"):
                joined[-1] = joined[-1][:-1].rstrip() + " " + line
            else:
                joined.append(line)
        return joined

    def tox_env(self) -> dict[str, str]:
        """``setenv`` of tox's ``[testenv]`` that holds plain values (no substitutions), then
        that of a pure-Python variant env (a factor such as ``py314-python`` or ``pure``).

        datagen never runs tox's ``commands_pre`` (an in-place ``build_ext`` of a C
        extension lands in no working copy), so a project that tests its extension by
        default and its Python fallback in such a variant is tested the variant's way:
        wcwidth asserts the extension is loaded unless ``WCWIDTH_PYTHON=1``."""
        if self.tox is None:
            return {}
        sections = ["testenv"] if self.tox.has_section("testenv") else []
        sections += sorted(name for name in self.tox.sections() if name.startswith("testenv:")
                           and set(re.split(r"[-,{}]", name[len("testenv:"):])) & PURE_FACTORS)[:1]
        env = {}
        for section in sections:
            for line in self._tox_values(section, "setenv"):
                key, sep, value = line.partition("=")
                if sep and "{" not in value and re.fullmatch(r"[A-Z_][A-Z0-9_]*", key.strip()):
                    env[key.strip()] = value.strip()
        return env

    def _tox_substitute(self, word: str) -> str:
        """A tox command word with ``{env:NAME}`` / ``{env:NAME:default}`` (from setenv) and
        ``{posargs:default}`` replaced: hyperlink's ``{posargs:src/{env:PY_MODULE}}`` is
        ``src/hyperlink``, its test folder."""
        env = self.tox_env()
        for _ in range(4):  # inner substitutions first
            new = re.sub(r"\{env:([\w]+)(?::([^{}]*))?\}", lambda m: env.get(m.group(1), m.group(2) or ""), word)
            new = re.sub(r"\{posargs(?::([^{}]*))?\}", lambda m: (m.group(1) or "").strip(), new)
            if new == word:
                break
            word = new
        return word

    def test_paths(self) -> list[str]:
        """Where the suite lives: pytest ``testpaths``, a tox pytest command's paths, else
        the usual folders that exist (empty: pytest's own discovery from the root)."""
        given = self.pytest_config().get("testpaths", "").split()
        if given:
            return [p for p in given if (self.src / p).exists()] or given
        for cmd in self.tox_commands():
            words = self._tox_substitute(cmd).split()
            if "pytest" in words or "py.test" in words:
                paths = [w for w in _positional(words[words.index("pytest" if "pytest" in words else "py.test") + 1:])
                         if not w.startswith("{") and self._suite_path(w)]
                if paths:
                    return paths
        return []

    def _suite_path(self, word: str) -> bool:
        """A folder or a Python file of the repo: a tox command that runs only documents
        (natsort's ``pytest README.rst docs/examples.rst``, their doctests) is not the suite."""
        path = self.src / word
        return path.is_dir() or path.is_file() and path.suffix == ".py"


# pytest options whose value is the next word: ``--ignore benchmark`` names a folder not to collect
_VALUED_OPTIONS = frozenset({
    "--ignore", "--ignore-glob", "--deselect", "-k", "-m", "-p", "-c", "--rootdir", "--confcutdir", "-o",
    "--override-ini", "-W", "--pythonwarnings", "--tb", "--junitxml", "--junit-xml", "--basetemp", "--maxfail",
    "--durations", "-n", "--numprocesses", "--dist", "--cov", "--cov-report", "--cov-config", "--doctest-glob",
    "--log-level", "--import-mode", "-r", "--timeout", "--reruns", "--random-order-seed", "--color"})


def _positional(args: list[str]) -> list[str]:
    """The words of a pytest command line that are paths (not options or their values)."""
    out, skip = [], False
    for w in args:
        if skip:
            skip = False
        elif w.startswith("-"):
            skip = w in _VALUED_OPTIONS  # ``--opt=value`` and flags take nothing more
        else:
            out.append(w)
    return out


_PY_FACTOR = re.compile(r"(?:py|pypy|python)\d*(?:\.\d+)?")


def _expand_braces(text: str) -> list[str]:
    """tox's generative names: ``test-py{38,39}, lint`` -> test-py38, test-py39, lint."""
    out: list[str] = []
    for part in re.split(r",(?![^{]*\})|\n", text):
        items, done = [part.strip()], []
        while items:  # each pass expands one {...} of every item; an item without one is done
            nxt = []
            for i in items:
                m = re.search(r"\{([^{}]*)\}", i)
                if m is None:
                    done.append(i)
                else:
                    nxt += [i[:m.start()] + alt.strip() + i[m.end():] for alt in m.group(1).split(",")]
            items = nxt
        out += [i for i in done if i]
    return out


def _balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def _factors_hold(condition: str, factors: set[str]) -> bool:
    """Whether a tox factor condition (``a,b`` any of, ``a-b`` all of, ``!a`` not) holds."""
    for alt in _expand_braces(condition):
        if all((f[1:] not in factors) if f.startswith("!") else (f in factors) for f in alt.split("-") if f):
            return True
    return False


def _as_list(value) -> list[str]:
    if isinstance(value, str):
        return [line.strip() for line in value.splitlines() if line.strip()]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, str)]
    return []


def _pipfile(table: dict) -> list[str]:
    out = []
    for name, value in (table or {}).items():
        if isinstance(value, str):
            out.append(name if value.strip() == "*" else f"{name}{value}")
        elif isinstance(value, dict) and "version" in value and "path" not in value:
            out.append(name if value["version"] == "*" else f"{name}{value['version']}")
        elif isinstance(value, dict) and not value.keys() & {"path", "git", "file"}:
            out.append(name)
    return clean_specs(out)


def _test_files(src: Path) -> list[Path]:
    out = []
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src).parts
        if any(p.startswith(".") or p in ("build", "dist", "venv", ".venv", "node_modules") for p in rel):
            continue
        name = path.name
        if name.startswith("test") or name.endswith("_test.py") or name == "conftest.py" or \
                any(p in _TEST_IMPORT_DIRS for p in rel[:-1]):
            out.append(path)
    return out[:2000]


def _test_imports(src: Path) -> set[str]:
    """Top-level modules imported by the repo's test files (and conftest.py)."""
    found: set[str] = set()
    for path in _test_files(src):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.add(node.module.split(".")[0])
    return found


def _own_modules(src: Path) -> set[str]:
    """Top-level module names the repo itself provides (root and src/ layouts)."""
    out: set[str] = set()
    for base in (src, src / "src"):
        if not base.is_dir():
            continue
        for p in base.iterdir():
            if p.is_dir() and (p / "__init__.py").exists():
                out.add(p.name)
            elif p.suffix == ".py":
                out.add(p.stem)
    return out


# -- interpreter -------------------------------------------------------------------------
def resolve_python(python: str) -> str:
    """An interpreter name or path as a path that runs: on PATH (a pyenv shim that says
    "command not found" does not count), else in a pyenv ``versions/*/bin`` folder."""
    found = shutil.which(python)
    candidates = [found] if found and "/shims/" not in found else []
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    if "/" not in python and (root / "versions").is_dir():
        candidates += sorted(str(p) for p in (root / "versions").glob(f"*/bin/{python}"))
    candidates += [found] if found and "/shims/" in found else []
    for c in candidates:
        if _version_of(c) is not None:
            return c
    return python


@lru_cache(maxsize=64)
def interpreter_version(python: str) -> tuple[int, int] | None:
    """(major, minor) of an interpreter name or path; None when it does not run here."""
    return _version_of(resolve_python(python))


@lru_cache(maxsize=64)
def _version_of(python: str) -> tuple[int, int] | None:
    try:
        out = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:2])"], capture_output=True,
                             text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    parts = out.stdout.split()
    return (int(parts[0]), int(parts[1])) if out.returncode == 0 and len(parts) == 2 else None


def _choose_python(plan: EnvPlan, meta: _Meta, pythons: list[str]) -> None:
    """The best interpreter of ``pythons`` for the repo: it satisfies ``requires-python`` and,
    when classifiers list versions, is one of them (newest first). None fits: the newest one
    found, and the mismatch recorded."""
    request = meta.project.get("requires-python") or meta._cfg("options", "python_requires") or \
        str(meta.setup.get("python_requires", "")) or \
        str(meta.tool.get("poetry", {}).get("dependencies", {}).get("python", ""))
    request = request.strip()
    plan.toolchain_request = request
    classifiers = _as_list(meta.project.get("classifiers")) or ini_list(meta._cfg("metadata", "classifiers")) or \
        _as_list(meta.setup.get("classifiers"))
    listed = {m.group(1) for c in classifiers if (m := re.match(r"Programming Language :: Python :: (3\.\d+)$", c))}
    try:
        spec = SpecifierSet(request.replace("^", ">=").replace("~", ">=")) if request and "*" not in request \
            else SpecifierSet()
    except InvalidSpecifier:
        spec = SpecifierSet()
        plan.notes.append(f"requires-python {request!r} does not parse; ignored")
    found = [(v, p) for p in pythons if (v := interpreter_version(p)) is not None]
    found.sort(key=lambda vp: vp[0], reverse=True)
    if not found:
        plan.toolchain, plan.toolchain_mismatch = pythons[0], "no interpreter of env.pythons runs here"
        return
    fits = [(v, p) for v, p in found if spec.contains(f"{v[0]}.{v[1]}", prereleases=True)]
    preferred = [(v, p) for v, p in fits if f"{v[0]}.{v[1]}" in listed]
    best = (preferred or fits or found)[0]
    plan.toolchain = best[1]
    if not fits:
        have = ", ".join(f"{v[0]}.{v[1]}" for v, _ in found)
        plan.toolchain_mismatch = f"requires-python {request!r}: none of {have} fits; using {best[1]}"
