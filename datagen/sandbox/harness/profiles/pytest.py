"""pytest: Python suites. The environment is ``EnvManager``'s (``datagen/sandbox/envs/python/manager.py``),
wrapped; per-test line coverage is coverage.py with each test's node id as its context.

Test ids are pytest node ids (``tests/test_x.py::TestA::test_b[1]``).
"""

from __future__ import annotations

import fnmatch
import json
import re
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from datagen.records.env import EnvPlan, InstallStep
from datagen.sandbox.harness import protect
from datagen.sandbox.harness.profiles.base import (
    ARGS_BUDGET,
    EnvContext,
    Profile,
    ProfileEnv,
    TestResults,
    chunks,
    fitting,
)
from datagen.sandbox.harness.profiles.registry import register

if TYPE_CHECKING:
    from datagen.config.sandbox import EnvConfig, SandboxLimits
    from datagen.sandbox.envs.docker import ImageSetup
    from datagen.sandbox.envs.python.manager import EnvManager, PythonEnv
    from datagen.sandbox.isolation.base import Sandbox

COVERAGE_DATA = ".datagen.coverage"
COVERAGE_JSON = ".datagen-coverage.json"
COVERAGE_RC = ".datagen-coveragerc"
CONTEXT_PLUGIN = "datagen_test_context"
# datagen's own coverage.py settings, so none of the repo's shape the per-test map (its
# ``plugins``, ``patch``, ``parallel``, ``source_pkgs``, ...): ``core = "sysmon"`` (humanize's
# pyproject; the default from Python 3.14) cannot switch contexts per test and warns from
# inside the first test, which the suite's ``filterwarnings = error`` turns into an internal
# error, so no test ran under coverage and no entity was covered. ``ignore_errors``: code
# a test compiles under a file name that does not exist (attrs: ``<copy>/__init__``) made
# the whole report fail ("No source for code") and the map empty.
_COVERAGE_RC_SOURCE = """[run]
source = .
parallel = False
branch = False
core = ctrace
disable_warnings = no-ctracer, no-sysmon, no-sysmon-context, module-not-measured, no-data-collected,
    module-not-imported, couldnt-parse, include-ignored

[report]
ignore_errors = True
"""
# A pytest plugin written into the working copy of the coverage run: each test's lines are
# recorded under its node id (what pytest-cov's --cov-context=test does, in four lines).
_PLUGIN_SOURCE = '''import coverage
import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    cov = coverage.Coverage.current()
    if cov is not None:
        cov.switch_context(item.nodeid)
'''
_VENV = '"${VENV_DIR:-.venv}"'
# A suite over its time budget whose env has Hypothesis runs with fewer examples per property
# test: pytest is started by a few lines that first load a Hypothesis settings profile with
# this variable's ``max_examples`` (no conftest or file is added; a profile the suite's own
# conftest registers afterwards inherits it, as cattrs' ``tests`` profile does; a test's own
# ``@settings(max_examples=...)`` keeps its number).
HYPOTHESIS_EXAMPLES = "HYPOTHESIS_MAX_EXAMPLES"
BUDGET_EXAMPLES = 10
# (Loaded from pytest's first hook that runs before any conftest, not before pytest: a module
# imported before pytest marks its plugins for assertion rewriting gets a warning, an error
# under ``filterwarnings = error``.)
_HYPOTHESIS_BOOT = """import os, sys
import pytest
class Budget:
    @pytest.hookimpl(tryfirst=True)
    def pytest_load_initial_conftests(self):
        try:
            from hypothesis import settings
        except ImportError:
            return
        settings.register_profile("budget", max_examples=int(os.environ["HYPOTHESIS_MAX_EXAMPLES"]))
        settings.load_profile("budget")
sys.exit(pytest.main(sys.argv[1:], plugins=[Budget()]))
"""


# A test module that calls ``unittest.main()`` at import, unguarded (ply's ``test/testlex.py``,
# run as ``python testlex.py``), makes unittest parse pytest's arguments and exit while pytest
# collects it: where the plan says so (``UNITTEST_MAIN``), pytest starts with ``unittest.main``
# a no-op, and pytest runs the module's tests itself.
UNITTEST_MAIN = "UNITTEST_MAIN_AT_IMPORT"
_NO_UNITTEST_MAIN = "import unittest\nunittest.main = lambda *args, **kwargs: None\n"
_PLAIN_BOOT = "import sys\nimport pytest\nsys.exit(pytest.main(sys.argv[1:]))\n"


def pytest_start(python: str, plan: EnvPlan | None = None) -> list[str]:
    """``python -m pytest``, or a start of a few lines where the plan sets a Hypothesis budget
    or has test modules that call ``unittest.main()`` at import."""
    env = plan.env if plan is not None else {}
    if HYPOTHESIS_EXAMPLES not in env and UNITTEST_MAIN not in env:
        return [python, "-m", "pytest"]
    boot = _HYPOTHESIS_BOOT if HYPOTHESIS_EXAMPLES in env else _PLAIN_BOOT
    return [python, "-c", (_NO_UNITTEST_MAIN if UNITTEST_MAIN in env else "") + boot]


def pytest_command(python: str, report: str, tests: list[str], plan: EnvPlan | None = None) -> list[str]:
    """pytest with a JUnit report (xunit1: it names each test's file) and no cache writes;
    the default verbosity in the classic style, whose one line per test file (``tests/test_a.py ..F``)
    tells which files a run cut off by its time limit had finished."""
    return [*pytest_start(python, plan), "-p", "no:cacheprovider", "-o", "junit_family=xunit1",
            "-o", "console_output_style=classic", f"--junitxml={report}", "--continue-on-collection-errors",
            "-rN", *tests]


# a progress line of pytest's default verbosity: the file, then one mark per test
_FILE_LINE = re.compile(r"^(\S+?\.py) [.sFEXx]*\s*$")


def finished_test_files(stdout: str) -> list[str]:
    """The files of a pytest run's progress lines that a later file's line follows (the
    last one may have been cut off), up to any gap the sandbox cut out of the output."""
    files: list[str] = []
    for line in stdout.split("\n[... ", 1)[0].splitlines():
        m = _FILE_LINE.match(line)
        if m and m.group(1) not in files:
            files.append(m.group(1))
    return files[:-1]


def parse_coverage_json(path: Path) -> dict[str, dict[int, list[str]]]:
    """coverage.py's ``json --show-contexts`` report -> path -> line -> test ids (the
    empty context, code run at import time, is no test's)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}
    out: dict[str, dict[int, list[str]]] = {}
    for file, info in sorted(data.get("files", {}).items()):
        lines = {int(n): sorted(c for c in ctxs if c) for n, ctxs in info.get("contexts", {}).items()}
        out[file.replace("\\", "/")] = {n: t for n, t in lines.items() if t}
    return out


def _single_tracer(env: ProfileEnv) -> list[str]:
    """Options that keep this run's coverage the only tracer: a repo whose pytest options
    turn on pytest-cov (``addopts = --cov``) or xdist (``-n auto``) would otherwise record
    each test's lines in pytest-cov's data or in worker processes, not under its node id."""
    site = [] if env.path is None else list(Path(env.path).glob("venv/lib/python*/site-packages"))
    has = lambda module: any((d / module).is_dir() for d in site)  # noqa: E731
    return [*(["--no-cov"] if has("pytest_cov") else []), *(["-n", "0"] if has("xdist") else [])]


# A code module named on pytest's command line is an "initial path", and pytest rewrites the
# asserts of initial paths: zipp's ``glob.py`` doctest expects ``AssertionError: Invalid
# separators`` and got pytest's rewritten explanation instead, so it failed in a replay that
# named it while it passes in the whole-suite runs that validated the task. A run that names
# a code module's doctests keeps asserts as Python runs them.
PLAIN_ASSERTS = "--assert=plain"


def names_code_doctests(tests: list[str]) -> bool:
    """Whether ``tests`` hold a doctest of a code module (not of a test file)."""
    return any(is_doctest_id(t) and not protect.is_test_file(t.split("::", 1)[0]) for t in tests)


def is_doctest_id(test_id: str) -> bool:
    """Whether a pytest id is a doctest of a Python module: its name is the module's dotted
    name, or that name, a dot and a qualified name (``pkg/mod.py::pkg.mod.func``; a module
    found from a ``src/`` folder or by its folder alone gives a shorter dotted name)."""
    path, _, name = test_id.partition("::")
    if not path.endswith(".py") or "::" in name or "[" in name:
        return False
    dotted = path[:-3].replace("/", ".").removesuffix(".__init__")
    parts = name.split(".")
    return any(dotted == ".".join(parts[:i]) or dotted.endswith("." + ".".join(parts[:i]))
               for i in range(1, len(parts) + 1))


def _manager(config: EnvConfig, sandbox: Sandbox | None = None, limits: SandboxLimits | None = None) -> EnvManager:
    """The builder of Python envs (``datagen/sandbox/envs/python/manager.py``) for ``config``."""
    from datagen.config.sandbox import SandboxLimits
    from datagen.sandbox.envs.python.manager import EnvManager

    return EnvManager(config, sandbox, limits or SandboxLimits())


@register
class PytestProfile(Profile):
    """Python repos with pytest-style test files."""

    name = "pytest"
    language = "python"
    source_langs = ("python",)
    tools = {"python3": "python3"}
    priority = 10
    report = ".datagen-report.xml"
    covers_lines = True
    repairable = needs_built_env = True  # EnvManager's PythonEnv

    def docker_image(self, plan: EnvPlan) -> str:
        """python's slim image at the plan's interpreter."""
        from datagen.sandbox.envs.python.docker import python_tag

        return f"python:{python_tag(plan)}-slim"

    def image_setup(self, plan: EnvPlan, workdir: str = "/repo") -> ImageSetup:
        """pip steps one by one on python's image (``datagen/sandbox/envs/python/docker.py``)."""
        from datagen.sandbox.envs.python.docker import image_setup

        return image_setup(plan, self.docker_image(plan), workdir)

    def detect(self, src: Path, paths: list[str]) -> bool:
        """A file pytest collects by the repo's config (default ``test_*.py`` / ``*_test.py``),
        by the config of a suite folder with its own conftest.py (``src/tests/pytest.ini``), or
        a unittest file pytest's names miss (``pkg/tests/testfoo.py``, see ``unittest_style``):
        a Python helper script in a C or JS repo's ``tests/`` folder (e.g. a vendored test
        framework's tools) does not make the repo a pytest repo."""
        from datagen.sandbox.envs.python.plan import unittest_style

        patterns = python_files(src)
        if any(_pytest_collects(p, patterns) for p in paths):
            return True
        for folder in nested_suite_patterns(src):
            if any(p.startswith(folder[0] + "/") and _pytest_collects(p, folder[1]) for p in paths):
                return True
        return any(unittest_style(src / p) for p in paths if p.endswith(".py") and "/test" in f"/{p}")

    def looks_for(self) -> str:
        patterns = " ".join(DEFAULT_PYTHON_FILES)
        return f"Python test files ({patterns}, unittest test*.py, or the config's python_files)"

    def plan(self, src: Path) -> EnvPlan:
        from datagen.sandbox.envs.python.plan import python_plan

        return python_plan(src)

    def dependency_files(self, src: Path) -> list[str]:
        from datagen.sandbox.envs.python.manager import dependency_files

        return [p.relative_to(src).as_posix() for p in dependency_files(src)]

    def configured_plan(self, src: Path, config: EnvConfig, name: str = "") -> EnvPlan:
        """A user's plan (``env.plan``, ``env.overrides[name]``), else the rules' with the
        recipe's interpreters and test requirements (``EnvManager.plan``)."""
        return _manager(config).plan(src, name or src.name)

    def env_name(self, src: Path, plan: EnvPlan, config: EnvConfig) -> str:
        return _manager(config).key(src, plan)

    def ensure_env(self, src: Path, plan: EnvPlan, ctx: EnvContext) -> ProfileEnv:
        """``EnvManager``'s venv of ``plan``, in the env cache, with ``plan`` as given (its
        interpreter and the pins of what the env holds added): what a build notes about its
        steps stays in its record, so a run's plan is the same whether the env was built now
        or found in the cache."""
        manager = _manager(ctx.config, ctx.sandbox, ctx.limits)
        env = manager.ensure(src, retry_failed=ctx.retry_failed, plan=plan.model_copy(deep=True))
        return self.wrap_env(env, plan)

    def wrap_env(self, env: PythonEnv, plan: EnvPlan) -> ProfileEnv:
        """A ``PythonEnv`` (``EnvManager``'s, or one named by hand) as this profile's env."""
        toolchain = plan.toolchain or (f"python{env.version}" if env.version else "")
        plan = plan.model_copy(update={"pins": env.pins, "toolchain": toolchain})
        return ProfileEnv(self.name, plan, path=env.path, env=dict(env.env), ro_paths=tuple(env.ro_paths), extra=env)

    def run_env(self, env: ProfileEnv, workdir: Path) -> dict[str, str]:
        base = env.extra.run_env(workdir)
        # unbuffered: a run killed at its time limit still shows the files it finished
        return {**base, **{k: v for k, v in env.env.items() if k not in base}, "PYTHONUNBUFFERED": "1"}

    def python(self, env: ProfileEnv) -> str:
        return env.extra.python if env.extra is not None else "python3"  # an env not built here (a stub plan)

    def finished_files(self, run) -> list[str]:
        return finished_test_files(run.stdout)

    def test_command(self, env: ProfileEnv, workdir: Path, tests: list[str] | None) -> list[str]:
        # the whole suite: the plan's test paths (the ini's ``testpaths``, or a tox pytest
        # command's folders where the ini names none), as the repo's own runs collect it
        ids = sorted(set(tests or []))
        args = [PLAIN_ASSERTS, *ids] if names_code_doctests(ids) else ids
        # ids too many for one command line: their whole files (the report is read per id)
        files = sorted({t.split("::", 1)[0] for t in ids})
        args = fitting(args, [PLAIN_ASSERTS, *files] if args[:1] == [PLAIN_ASSERTS] else files, [])
        return pytest_command(self.python(env), self.report, args or suite_paths(env.plan, workdir), env.plan)

    def budget_vars(self, env: ProfileEnv) -> dict[str, str]:
        """Where the env has them (its plan installs them, or its site-packages hold them):
        fewer Hypothesis examples (``BUDGET_EXAMPLES``), and pytest-benchmark's benchmarks run
        once each, as plain tests (``--benchmark-disable`` in ``PYTEST_ADDOPTS``: cattrs'
        ``bench/`` files, collected first, took the whole budget with their warm-ups)."""
        addopts = env.plan.env.get("PYTEST_ADDOPTS", "")
        if HYPOTHESIS_EXAMPLES in env.plan.env or "--benchmark-disable" in addopts:
            return {}
        site = [] if env.path is None else list(Path(env.path).glob("venv/lib/python*/site-packages"))

        def has(requirement: str, module: str) -> bool:
            planned = any(re.match(rf"(?i){requirement}(?![\w.-])", a) for s in env.plan.install for a in s.args)
            return planned or any((Path(d) / module).is_dir() for d in [*site, *env.ro_paths])  # ro: inherited

        out = {HYPOTHESIS_EXAMPLES: str(BUDGET_EXAMPLES)} if has("hypothesis", "hypothesis") else {}
        bench = has("pytest[-_]benchmark", "pytest_benchmark")
        # added to the plan's own options (a repo's python_files), never in place of them
        return out | ({"PYTEST_ADDOPTS": f"{addopts} --benchmark-disable".strip()} if bench else {})

    def marked_flaky(self, src: Path, tests: list[str]) -> set[str]:
        """Tests under ``@pytest.mark.flaky`` (on the function or its class): zipp's big-O
        timing tests, which failed a replay on a busy machine after passing every datagen run."""
        out = set()
        for file in sorted({t.split("::", 1)[0] for t in tests if t.endswith("]") or "::" in t}):
            marked = flaky_marked(src / file)
            out |= {t for t in tests if t.split("::", 1)[0] == file
                    and any(t.split("[", 1)[0] == f"{file}::{q}" or t.startswith(f"{file}::{q}::") for q in marked)}
        return out

    def test_files(self, tests: list[str]) -> list[str]:
        """The files that hold ``tests``, less the code modules that hold only doctests: a
        doctest's module is the code it documents (``parse/__init__.py::parse.with_pattern``)."""
        return sorted({path for t in tests if "::" in t
                       for path in [t.split("::", 1)[0]] if self.is_test_file(path) or not is_doctest_id(t)})

    def grading_targets(self, tests: list[str]) -> list[str]:
        """The files holding ``tests``: whole files, so a missing test does not abort the run."""
        return list(dict.fromkeys(t.split("::")[0] for t in tests))

    def parse(self, text: str) -> TestResults:
        from datagen.sandbox.harness.parsers import parse_pytest_junit

        return parse_pytest_junit(text)

    def coverage(self, env: ProfileEnv, sandbox: Sandbox, workdir: Path, limits: SandboxLimits,
                 ro_paths: tuple[Path, ...] = ()) -> dict[str, dict[int, list[str]]]:
        """coverage.py over the suite, each test's lines under its node id (a plugin written
        into the copy switches the context per test; loaded before collection, it also makes
        ``unittest.main`` a no-op where the plan says the test modules call it at import)."""
        no_main = _NO_UNITTEST_MAIN if UNITTEST_MAIN in env.plan.env else ""
        (workdir / f"{CONTEXT_PLUGIN}.py").write_text(_PLUGIN_SOURCE + no_main, encoding="utf-8")
        (workdir / COVERAGE_RC).write_text(_COVERAGE_RC_SOURCE, encoding="utf-8")
        py, ro, run_env = self.python(env), (*env.ro_paths, *ro_paths), self.run_env(env, workdir)
        run_env = {k: v for k, v in run_env.items() if not k.startswith("COVERAGE_")}
        settings = [f"--rcfile={COVERAGE_RC}", f"--data-file={COVERAGE_DATA}"]
        # --continue-on-collection-errors as in every test run: one module that does not
        # collect (markdown's, under filterwarnings = error) must not stop the whole map
        run = [py, "-m", "coverage", "run", *settings, "--source=.", "-m", "pytest", "-p", CONTEXT_PLUGIN,
               "-p", "no:cacheprovider", "--continue-on-collection-errors", "-q", *_single_tracer(env),
               *suite_paths(env.plan, workdir)]
        sandbox.run(run, workdir, limits, env=run_env, ro_paths=ro)
        report = [py, "-m", "coverage", "json", *settings, "--show-contexts", "-o", COVERAGE_JSON]
        sandbox.run(report, workdir, limits, env=run_env, ro_paths=ro)
        return parse_coverage_json(workdir / COVERAGE_JSON)

    # --- replay outside datagen --------------------------------------------------------------
    def setup_commands(self, plan: EnvPlan) -> list[str]:
        python = Path(plan.toolchain).name if Path(plan.toolchain).name.startswith("python") else "python3"
        q = shlex.quote(python)
        # the first interpreter that runs: $PYTHON, the plan's (a pyenv shim of a version
        # that is not selected fails to run, so pyenv's own install of it), else python3
        lines = ['PY="${PYTHON:-}"',
                 f'if [ -z "$PY" ] && {q} -c "" >/dev/null 2>&1; then PY="$(command -v {q})"; fi',
                 f'if [ -z "$PY" ] && command -v pyenv >/dev/null 2>&1; then for v in $(pyenv versions --bare); do '
                 f'[ -x "$(pyenv root)/versions/$v/bin/{python}" ] && PY="$(pyenv root)/versions/$v/bin/{python}"; '
                 'done; fi',
                 'PY="${PY:-$(command -v python3)}"',
                 # uv where it is installed (much faster), else the interpreter's venv and pip
                 "if command -v uv >/dev/null 2>&1; then",
                 f'  uv venv -q --python "$PY" {_VENV} || exit 2; PIP="uv pip install -q"',
                 f'else "$PY" -m venv {_VENV} || exit 2; PIP="python -m pip install -q"; fi',
                 f". {_VENV}/bin/activate || exit 2", "export PIP_DISABLE_PIP_VERSION_CHECK=1"]
        if plan.pins:  # the versions the validating env held: every install below keeps to them
            lines += [f"printf '%s\\n' {shlex.join(plan.pins)} > {_VENV}/pins.txt",
                      f'export PIP_CONSTRAINT="$PWD/{_VENV}/pins.txt" UV_CONSTRAINT="$PWD/{_VENV}/pins.txt"']
        for step in plan.install:
            if step.kind == "project":
                spec = "." + (f"[{','.join(step.args)}]" if step.args else "")
                editable = "-e " if plan.project_install == "editable" else ""
                cmd = f"$PIP {editable}{shlex.quote(spec)}"
            elif step.kind == "requirements":
                cmd = f"$PIP {shlex.join(step.args)}"
            else:
                cmd = shlex.join(step.args)
            lines += optional_step(step, cmd) if step.optional else [f"{cmd} || exit 1"]
        return lines

    def pins_of(self, setup_script: str) -> list[str]:
        """The pins ``setup_commands`` wrote (its ``printf ... > pins.txt`` line)."""
        for line in setup_script.splitlines():
            if line.startswith("printf '%s\\n' ") and line.endswith(f"> {_VENV}/pins.txt"):
                words = shlex.split(line.removesuffix(f" > {_VENV}/pins.txt"))
                return sorted(w for w in words[2:] if "==" in w)
        return []

    def eval_commands(self, plan: EnvPlan, tests: list[str]) -> list[str]:
        # pytest exits 0 only when every node id given ran and passed (an unknown id is exit 4).
        # A long list is split over several runs, each within the shared ARGS_BUDGET: a
        # 64 000-test suite's ids (packaging's) are 6 MB, and one command line holds 2 MB.
        # as the sandboxed runs had it: a fixed hash seed (set orders in doctest output), no
        # user site folder, no inherited PYTHON* variables that change how tests run
        lines = [f"if [ -f {_VENV}/bin/activate ]; then . {_VENV}/bin/activate; fi",
                 "unset PYTHONSTARTUP PYTHONWARNINGS PYTHONOPTIMIZE PYTHONDEVMODE",
                 'export PYTHONDONTWRITEBYTECODE=1 PYTHONHASHSEED=0 PYTHONNOUSERSITE=1 '
                 'PYTHONPATH="$PWD/src:$PWD${PYTHONPATH:+:$PYTHONPATH}"']
        start = shlex.join(pytest_start("python", plan))  # the validating runs' Hypothesis budget, if any
        # A part that fails runs its failed tests again (``--lf``, pytest's cache in a temporary
        # folder, never in the tree), up to EVAL_RERUNS times: mistune's near-linear timing
        # tests (``tests/perf_utils.py``) passed every validating run and failed a replay on a
        # machine at load 5-12. A test the fix does not make pass fails every try.
        plain = f" {PLAIN_ASSERTS}" if names_code_doctests(tests) else ""
        run = f'{start} -o cache_dir="$cache" -q -rN{plain}'
        tries = " || ".join([f'{run} "$@"', *[f'{run} --lf "$@"'] * EVAL_RERUNS])
        lines += ['cache="$(mktemp -d)" || exit 2', """trap 'rm -rf "$cache"' EXIT""", f"tries() {{ {tries}; }}"]
        runs = [f"tries {shlex.join(part)} || status=1"
                for part in chunks(in_testpaths_order(tests, plan.test_paths), EVAL_ARGS_BYTES)]
        return [*lines, "status=0", *runs, 'exit "$status"']


def optional_step(step: InstallStep, cmd: str) -> list[str]:
    """Replay lines of an optional install step, going on as the validating env did: a
    failed one is skipped, and a failed list of requirements is retried one by one, the ones
    that still fail left out (``EnvManager``'s rule), so the others are installed as they were."""
    specs = step.args if step.kind == "requirements" else []
    lines = [f"# optional ({step.origin or step.name}): where it fails, the env that validated the task "
             "went on without it, and so does this script"]
    if len(specs) > 1 and not any(a.startswith("-") for a in specs):
        return [*lines, f'{cmd} || for spec in {shlex.join(specs)}; do $PIP "$spec" || '
                        'echo "went on without $spec" >&2; done']
    return [*lines, f'{cmd} || echo "went on without: {step.name}" >&2']

def flaky_marked(path: Path) -> set[str]:
    """``Class::test`` / ``test`` / ``Class`` names a test file marks ``pytest.mark.flaky``
    (read with ``ast``, never run; a file that does not parse marks nothing)."""
    import ast

    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return set()

    def flaky(node: ast.AST) -> bool:
        for deco in getattr(node, "decorator_list", []):
            target = deco.func if isinstance(deco, ast.Call) else deco
            if isinstance(target, ast.Attribute) and target.attr == "flaky" and \
                    isinstance(target.value, ast.Attribute) and target.value.attr == "mark":
                return True
        return False

    out: set[str] = set()

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and flaky(node):
                out.add(prefix + node.name)
            elif isinstance(node, ast.ClassDef):
                walk(node.body, f"{prefix}{node.name}::")

    walk(tree.body, "")
    return out


def suite_paths(plan: EnvPlan, workdir: Path) -> list[str]:
    """The plan's test paths that exist in ``workdir`` (none: pytest's own discovery)."""
    return [p for p in plan.test_paths if (workdir / p).exists()]


def in_testpaths_order(tests: list[str], test_paths: list[str]) -> list[str]:
    """``tests`` in the order of the suite's ``testpaths`` (then by id), the order of a whole
    run: semver's ``docs/*.rst`` doctests pass only after a ``tests/`` test's autouse fixture
    has filled the session's ``doctest_namespace``, and ``testpaths = tests docs``."""
    roots = [p.rstrip("/") for p in test_paths]

    def rank(test: str) -> tuple[int, str]:
        path = test.split("::")[0]
        hit = next((i for i, r in enumerate(roots) if path == r or path.startswith(r + "/")), len(roots))
        return hit, test

    return sorted(tests, key=rank)


EVAL_ARGS_BYTES = ARGS_BUDGET  # node ids on one pytest command line of an eval_script
EVAL_RERUNS = 2  # an eval_script's reruns of the tests that failed (validation runs each side 3 times)


def nested_suite_patterns(src: Path) -> list[tuple[str, tuple[str, ...]]]:
    """(folder, python_files) of each suite folder with its own conftest.py and pytest config."""
    from datagen.sandbox.envs.python.plan import nested_suites

    return [(f, python_files(src / f)) for f in nested_suites(src)]


def python_files(src: Path) -> tuple[str, ...]:
    """The file patterns pytest collects in ``src``: its config's ``python_files``
    (``check_*.py``, ``*_tests.py``), else pytest's default."""
    from datagen.sandbox.envs.python.plan import pytest_config

    given = tuple(pytest_config(src).get("python_files", "").split())
    return given or DEFAULT_PYTHON_FILES


DEFAULT_PYTHON_FILES = ("test_*.py", "*_test.py")


def _pytest_collects(path: str, patterns: tuple[str, ...] = DEFAULT_PYTHON_FILES) -> bool:
    """Whether ``python_files`` (default ``test_*.py``, ``*_test.py``) matches ``path``,
    or it is a unittest-style ``test.py`` / ``tests.py`` (the Python plan has pytest collect those).
    A pattern with a ``/`` (``src/tests/test_*.py``) matches the end of the path, as pytest's own
    matching of such a pattern against a file's absolute path does."""
    name = path.rsplit("/", 1)[-1]
    return name.endswith(".py") and (any(_matches(path, name, pat) for pat in patterns)
                                     or name in ("test.py", "tests.py"))


def _matches(path: str, name: str, pattern: str) -> bool:
    if "/" not in pattern:
        return fnmatch.fnmatchcase(name, pattern)
    return fnmatch.fnmatchcase(path, pattern) or fnmatch.fnmatchcase(path, f"*/{pattern}")
