"""C and C++ with CMake + CTest: configure, build, ``ctest --output-junit``.

Every run configures and builds the working copy from scratch in ``_datagen_build/`` (a
mutation may touch any source; CMake build trees hold absolute paths, so one cannot be
reused across copies) and runs ctest only when the whole build succeeded: a candidate that
does not compile leaves no report and is dropped. (In an eval script a test whose executable
was not built is an ``error``, see ``harness/parsers.py``.) The
env step (network on) configures and builds once, so a project that cannot build here is
recorded at setup (``find_package`` of a library that is not installed, say) rather than
per candidate. Ids are ctest test names; a subset is ``-R '^(a|b)$'``.

A test executable that reports its own cases (Unity, GoogleTest, TAP, ``[pass] name`` checks:
``parsers.case_lines``) gives one id per case, ``<ctest name>::<case>``, read from its output
in the JUnit report (kept whole: ``--test-output-size-passed``), so a break is judged by the
cases it fails, as pytest's are; running such an id runs its whole executable.

The project is configured as a user who wants its tests would configure it
(``configure_options``): its own options that build the tests are turned on
(``BUILD_TESTING``, ``option(<X>_BUILD_TESTS ... OFF)``), and those that run the tests at
build time (``<X>_WITH_POST_BUILD_UNITTEST``: a broken candidate would fail the *build*) or
build the documentation (a tool the tests do not need, often not installed) turned off. The
plan's configure step carries these ``-D`` flags, and every run, setup and eval script
configures with the flags of its plan (``plan_options``), so a replay builds what validation built.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path, PurePosixPath

from datagen.records.env import EnvPlan, InstallStep
from datagen.sandbox.harness import protect
from datagen.sandbox.harness.parsers import CASE_SEP, parse_ctest_junit
from datagen.sandbox.harness.profiles._env import cached_env, copy_source
from datagen.sandbox.harness.profiles._replay import cmake_regex, ctest_check
from datagen.sandbox.harness.profiles.base import EnvContext, Profile, ProfileEnv, TestResults, fitting
from datagen.sandbox.harness.profiles.registry import register

BUILD = "_datagen_build"
_TESTING = re.compile(r"\b(enable_testing|add_test|include\s*\(\s*CTest|gtest_discover_tests|gtest_add_tests|"
                      r"catch_discover_tests|doctest_discover_tests)\b", re.I)
_MINIMUM = re.compile(r"cmake_minimum_required\s*\(\s*VERSION\s+([0-9.]+)", re.I)
_TEST_WORDS = frozenset({"test", "tests", "testing", "unittest", "unittests", "gtest", "gtests"})
_CXX_EXTS = (".cpp", ".cc", ".cxx", ".c++", ".hpp", ".hh", ".hxx")


@lru_cache(maxsize=1)
def cmake_version() -> str:
    """The local cmake's version ('' when there is none)."""
    if shutil.which("cmake") is None:
        return ""
    out = subprocess.run(["cmake", "--version"], capture_output=True, text=True).stdout
    m = re.search(r"version\s+(\d+\.\d+(?:\.\d+)?)", out)
    return m.group(1) if m else ""


def _tuple(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", version)[:3])


def jobs() -> int:
    return max(1, min(4, os.cpu_count() or 1))


def configure_build(options: list[str] | None = None, build: str = BUILD) -> str:
    """Shell: configure (Debug, Makefiles, the ``-D`` ``options``) and build, going on past a
    failed target; their output goes to ``<build>/datagen-build.log``, whose last lines go to
    stderr when either fails (the compiler's own error, for a baseline or a setup that did not build)."""
    configure = ["cmake", "-S", ".", "-B", build, "-G", "Unix Makefiles", "-DCMAKE_BUILD_TYPE=Debug", *(options or [])]
    log = shlex.quote(f"{build}/datagen-build.log")
    return (f"mkdir -p {shlex.quote(build)} && {{ {shlex.join(configure)} > {log} 2>&1 && "
            f"cmake --build {shlex.quote(build)} -j{jobs()} -- -k >> {log} 2>&1 || "
            f"{{ tail -n 40 {log} >&2; false; }}; }}")


# option(<name> "<help>" [<value>]) in a CMakeLists.txt (no value: OFF), and
# cmake_dependent_option(<name> "<help>" <value> "<condition>" <forced value>): its <value>
# holds where the condition does (a top-level build, the way a user builds the tests)
_OPTION = re.compile(r'^[ \t]*(?:cmake_dependent_)?option[ \t]*\([ \t\n]*([A-Za-z_][A-Za-z0-9_]*)[ \t\n]+'
                     r'("(?:[^"\\]|\\.)*"|[^\s)]+)[ \t\n]*([^\s)]*)[^)]*\)', re.I | re.M)
_TRUE, _FALSE = {"ON", "TRUE", "YES", "Y", "1"}, {"", "OFF", "FALSE", "NO", "N", "0"}
# an option that builds the tests: BUILD_TESTING, X_BUILD_TESTS, X_TESTS, X_ENABLE_TESTING, X_WITH_UNIT_TESTS ...
_BUILDS_TESTS = re.compile(r"(?:^|_)(?:BUILD_|ENABLE_|WITH_)?(?:UNIT_?)?TEST(?:S|ING)?$")
# ... unless another word says it does something else with them
# ... or that it leaves them out (X_WITHOUT_TESTS, X_DISABLE_TESTS: ON must become OFF)
_LEAVES_OUT = {"WITHOUT", "DISABLE", "SKIP", "NO", "EXCLUDE"}
_NOT_BUILDING = {"INSTALL", "RUN", "POST", "POSTBUILD", "FUZZ", "BENCH", "COVERAGE", "ONLY", *_LEAVES_OUT}
# an option that runs the tests as part of the build (a failing test fails the build)
_RUNS_TESTS = re.compile(r"POST_?BUILD.*TEST|TEST.*POST_?BUILD")
# an option that builds the documentation (Doxygen, Sphinx: tools the tests do not need)
_BUILDS_DOCS = re.compile(r"(?:^|_)(?:BUILD_|ENABLE_|WITH_|GENERATE_)?(?:API_)?(?:DOCS?|DOCUMENTATION|DOXYGEN)$")


def configure_options(text: str) -> list[tuple[str, str]]:
    """The ``-D`` flags that configure the project whose top ``CMakeLists.txt`` is ``text``
    the way a user who wants its tests would, each with why: ``("-DX_BUILD_TESTS=ON", "builds
    the tests")``. Only flags that change an option's default are given (an option whose
    default is a variable is set either way); ``BUILD_TESTING=ON`` where the file uses it."""
    text = re.sub(r"^[ \t]*#.*$", "", text, flags=re.M)
    found: dict[str, tuple[str, str]] = {}
    for m in _OPTION.finditer(text):
        name, value = m.group(1), m.group(3).upper()
        words = set(name.upper().split("_"))
        if _RUNS_TESTS.search(name.upper()):
            if value not in _FALSE:
                found.setdefault(name, (f"-D{name}=OFF", "runs the tests at build time"))
        elif _BUILDS_TESTS.search(name.upper()) and not words & _NOT_BUILDING:
            if value not in _TRUE:
                found.setdefault(name, (f"-D{name}=ON", "builds the tests"))
        elif _BUILDS_TESTS.search(name.upper()) and words & _LEAVES_OUT and not words & (_NOT_BUILDING - _LEAVES_OUT):
            if value not in _FALSE:
                found.setdefault(name, (f"-D{name}=OFF", "would leave the tests out"))
        elif _BUILDS_DOCS.search(name.upper()) and value not in _FALSE:
            found.setdefault(name, (f"-D{name}=OFF", "builds the documentation"))
    if re.search(r"\bBUILD_TESTING\b", text) and "BUILD_TESTING" not in found:
        declared = any(m.group(1) == "BUILD_TESTING" for m in _OPTION.finditer(text))
        if not declared:
            found["BUILD_TESTING"] = ("-DBUILD_TESTING=ON", "builds the tests")
    return list(found.values())


# find_package names whose Debian package a replay image needs (the tests' own tools and libraries)
DEBIAN_PACKAGES = {"GTest": "libgtest-dev", "GMock": "libgmock-dev", "Catch2": "catch2", "doctest": "doctest-dev",
                   "Python3": "python3", "Python": "python3", "PythonInterp": "python3",
                   "benchmark": "libbenchmark-dev", "ZLIB": "zlib1g-dev", "PkgConfig": "pkg-config",
                   "Boost": "libboost-dev", "fmt": "libfmt-dev"}
_FIND_PACKAGE = re.compile(r"^[ \t]*find_package[ \t]*\([ \t]*([A-Za-z0-9_]+)", re.I | re.M)
_DEBIAN_NOTE = "Debian packages: "


def debian_packages(src: Path, cmake_files: list[str]) -> list[tuple[str, str]]:
    """(package, where) for each ``find_package`` in ``cmake_files`` (paths under ``src``)
    whose Debian package ``DEBIAN_PACKAGES`` knows, first place each."""
    found: dict[str, str] = {}
    for rel in cmake_files:
        try:
            text = (src / rel).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for m in _FIND_PACKAGE.finditer(re.sub(r"^[ \t]*#.*$", "", text, flags=re.M)):
            if (package := DEBIAN_PACKAGES.get(m.group(1))) is not None:
                found.setdefault(package, f"find_package({m.group(1)}) in {rel}")
    return sorted(found.items())


def plan_options(plan: EnvPlan) -> list[str]:
    """The ``-D`` flags (other than the build type) of the plan's configure step: what the plan
    says, so a plan a user edited configures every run and both replay scripts alike."""
    for step in plan.install:
        if step.kind != "command" or step.args[:2] != ["sh", "-c"] or len(step.args) < 3:
            continue
        try:
            words = shlex.split(step.args[2])
        except ValueError:
            continue
        if "cmake" in words:
            return [w for w in words if w.startswith("-D") and not w.startswith("-DCMAKE_BUILD_TYPE=")]
    return []


OUTPUT_BYTES = 8 << 20  # of each test's output kept in the report (ctest keeps 1 KiB of a passed one)


def ctest_names(tests: list[str]) -> list[str]:
    """The ctest tests that run ``tests`` (test names and ``<test>::<case>`` ids; the whole
    id is kept too, for a test whose own name holds ``::``)."""
    return sorted({n for t in tests for n in (t, t.split(CASE_SEP, 1)[0])})


def ctest_argv(report: str, tests: list[str] | None, build: str = BUILD) -> list[str]:
    # each test's whole output goes into the report: the cases it prints are read from it
    cmd = ["ctest", "--test-dir", build, "--output-junit", report, "--timeout", "120",
           "--test-output-size-passed", str(OUTPUT_BYTES), "--test-output-size-failed", str(OUTPUT_BYTES)]
    # a regex too long for one argument: the whole suite (the report is read per id)
    return [*cmd, *fitting(["-R", cmake_regex(ctest_names(tests))], [])] if tests else cmd


@register
class CMakeProfile(Profile):
    """A CMake project whose root ``CMakeLists.txt`` (or an included one) registers ctest tests."""

    name = "ctest"
    language = "cpp"
    source_langs = ("c", "cpp")
    tools = {"cmake": "cmake", "ctest": "cmake", "c++": "g++", "make": "make"}
    priority = 60
    report = ".datagen-report.xml"
    image_default = "gcc:13"  # gcc and make (the plan names cmake's version, not the compiler's)

    def detect(self, src: Path, paths: list[str]) -> bool:
        if not (src / "CMakeLists.txt").is_file():
            return False
        for rel in [p for p in paths if p.endswith(("CMakeLists.txt", ".cmake"))][:50]:
            try:
                if _TESTING.search((src / rel).read_text(encoding="utf-8", errors="replace")):
                    return True
            except OSError:
                continue
        return False

    def is_test_file(self, path: str) -> bool:
        """Test code by the common conventions, and any file in a folder one of whose
        ``_``/``-``/``.``-separated words is a test word (``src/test_lib_json/``, ``unit-tests/``):
        C/C++ projects name their test folders so, and a break there is fixed in the tests."""
        folders = PurePosixPath(path).parts[:-1]
        return protect.is_test_file(path) or any(
            _TEST_WORDS.intersection(re.split(r"[_.\-]", part.lower())) for part in folders)

    def task_language(self, src: Path | None = None) -> str:
        """``c`` for a project without C++ sources outside its tests, else ``cpp`` (jansson, a C
        library, has C++ fuzzers under ``test/ossfuzz/``)."""
        if src is None:
            return self.language
        cxx = any(p.suffix in _CXX_EXTS and not self.is_test_file(p.relative_to(src).as_posix())
                  for p in src.rglob("*") if BUILD not in p.parts)
        return "cpp" if cxx else "c"

    def dependency_files(self, src: Path) -> list[str]:
        return sorted(p.relative_to(src).as_posix() for p in src.rglob("CMakeLists.txt"))

    def plan(self, src: Path) -> EnvPlan:
        text = (src / "CMakeLists.txt").read_text(encoding="utf-8", errors="replace")
        want = m.group(1) if (m := _MINIMUM.search(text)) else ""
        have = cmake_version()
        mismatch = f"cmake_minimum_required {want}; cmake {have} here" if want and have and \
            _tuple(want) > _tuple(have) else None
        options = configure_options(text)
        flags = [flag for flag, _ in options]
        origin = "CMakeLists.txt" + (f" (options: {' '.join(flags)})" if flags else "")
        install = [InstallStep(name="configure and build", kind="command", args=["sh", "-c", configure_build(flags)],
                               origin=origin)]
        notes = [f"configured with {flag}: CMakeLists.txt's option {why}" for flag, why in options]
        if packages := debian_packages(src, self.dependency_files(src)):
            notes.append(_DEBIAN_NOTE + "; ".join(f"{pkg} ({where})" for pkg, where in packages))
        return EnvPlan(profile=self.name, toolchain=f"cmake{have}" if have else "cmake", toolchain_request=want,
                       toolchain_mismatch=mismatch, install=install, test_command=["ctest"], notes=notes)

    def ensure_env(self, src: Path, plan: EnvPlan, ctx: EnvContext) -> ProfileEnv:
        def build(target: Path, step) -> None:
            work = copy_source(src, target / "work")
            step("configure and build", ["sh", "-c", configure_build(plan_options(plan))], work)
            shutil.rmtree(work, ignore_errors=True)

        return ProfileEnv(self.name, plan, path=cached_env(self, src, plan, ctx, build))

    def test_command(self, env: ProfileEnv, workdir: Path, tests: list[str] | None) -> list[str]:
        report = str(workdir / self.report)
        # no report when the build fails: a candidate that does not compile is dropped
        # (``breaks_collection``), not a task whose tests "fail" for want of a binary
        build = configure_build(plan_options(env.plan))
        return ["sh", "-c", f"rm -rf {BUILD}; {build} && {shlex.join(ctest_argv(report, tests))}"]

    def parse(self, text: str) -> TestResults:
        return parse_ctest_junit(text)

    def test_files(self, tests: list[str]) -> list[str]:
        return []

    # --- replay -------------------------------------------------------------------------
    def image_tools(self, plan: EnvPlan) -> list[str]:
        from datagen.sandbox.envs.docker import apt_install

        # the packages the plan's note names (the tests' find_package libraries and tools)
        extra = [part.split(" ", 1)[0] for note in plan.notes if note.startswith(_DEBIAN_NOTE)
                 for part in note.removeprefix(_DEBIAN_NOTE).split("; ")]
        return [apt_install("cmake", *extra)]

    def setup_commands(self, plan: EnvPlan) -> list[str]:
        return [f"{configure_build(plan_options(plan))} || exit 1"]

    def eval_commands(self, plan: EnvPlan, tests: list[str]) -> list[str]:
        # the setup's build tree is reused (make rebuilds what the patch touched); a relative
        # --output-junit lands in the build folder
        return [configure_build(plan_options(plan)), f"rm -f {BUILD}/eval.xml",
                shlex.join(ctest_argv("eval.xml", tests)) + " >/dev/null", *ctest_check(f"{BUILD}/eval.xml", tests)]
