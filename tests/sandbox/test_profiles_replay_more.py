"""Tasks in Java, C++, C (make), Ruby and PHP replay outside datagen, and the profiles run
in the sandbox.

Each replay is the consumer's path: a fresh clone of ``repos/<repo>.git`` at ``base_commit``
(a commit that breaks one function of a sample repo), the profile's ``setup_script``, its
``eval_script`` (fails), ``git apply`` of the patch (the fix), ``eval_script`` again (passes).
The tools run for real (mvn, cmake + ctest, make, rspec, ruby, phpunit); a test skips where
its toolchain is missing."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from datagen.config.sandbox import EnvConfig, SandboxLimits
from datagen.sandbox.profiles.registry import get_profile
from datagen.sandbox.runners import ensure_env, run_profile
from datagen.sandbox.select import get_sandbox

SAMPLES = Path(__file__).parents[2] / "sample_data"
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"]


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run([*GIT, *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def make_task(tmp: Path, src: Path, bug: tuple[str, str, str]) -> tuple[Path, str, str]:
    """(bare repo, base_commit, patch): the fixed repo committed, the bug committed on top as
    the base, the patch the diff that undoes it (what a task stores)."""
    work = tmp / "work"
    shutil.copytree(src, work, ignore=shutil.ignore_patterns("target", "_datagen_build", "Gemfile.lock"))
    _git(work, "init", "-q", "-b", "main")
    _git(work, "add", "-A")
    _git(work, "commit", "-qm", "fixed")
    path, old, new = bug
    text = (work / path).read_text()
    assert text.count(old) == 1, f"bug site not unique in {path}"
    (work / path).write_text(text.replace(old, new))
    _git(work, "commit", "-qam", "base")
    base = _git(work, "rev-parse", "HEAD").strip()
    patch = _git(work, "diff", "HEAD", "HEAD~1")
    bare = tmp / "repos" / f"{src.name}.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    return bare, base, patch


def replay(tmp: Path, profile_name: str, src: Path, bug: tuple[str, str, str], tests: list[str],
           timeout: float = 300) -> None:
    bare, base, patch = make_task(tmp, src, bug)
    clone = tmp / "clone"
    subprocess.run(["git", "clone", "-q", str(bare), str(clone)], check=True)
    _git(clone, "checkout", "-q", base)
    profile = get_profile(profile_name)
    plan = profile.plan(clone)
    (tmp / "setup.sh").write_text(profile.setup_script(plan))
    (tmp / "eval.sh").write_text(profile.eval_script(plan, tests))

    def bash(script: str) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", str(tmp / script)], cwd=clone, capture_output=True, text=True, timeout=timeout)

    setup = bash("setup.sh")
    assert setup.returncode == 0, setup.stdout[-2000:] + setup.stderr[-2000:]
    before = bash("eval.sh")
    assert before.returncode != 0, "eval_script passed on the buggy base commit"
    subprocess.run(["git", "apply", "-"], cwd=clone, input=patch, text=True, check=True)
    after = bash("eval.sh")
    assert after.returncode == 0, after.stdout[-3000:] + after.stderr[-2000:]


def needs(*tools: str) -> pytest.MarkDecorator:
    missing = [t for t in tools if shutil.which(t) is None]
    return pytest.mark.skipif(bool(missing), reason=f"toolchain missing: {', '.join(missing)}")


def _maven_offline_ready() -> bool:
    """The sample's pinned plugins are in the local repository (Maven Central is not reachable here)."""
    m2 = Path.home() / ".m2" / "repository" / "org" / "apache" / "maven" / "plugins"
    return (m2 / "maven-surefire-plugin" / "3.2.5").is_dir() and (m2 / "maven-compiler-plugin" / "3.11.0").is_dir()


@needs("mvn", "javac")
@pytest.mark.skipif(not _maven_offline_ready(), reason="the sample's Maven plugins are not in ~/.m2 (no Central)")
def test_java_task_replays_with_maven(tmp_path):
    tests = ["org.example.fraction.FractionTest#floorRoundsTowardNegativeInfinity",  # FAIL_TO_PASS
             "org.example.fraction.FractionTest#parsesTextForms(String, long, long)[3]",
             "org.example.fraction.IntRangeTest#sumOfArithmeticSeries",
             "org.example.fraction.RunningStatsTest$WhenEmpty#sumIsZero"]
    bug = ("src/main/java/org/example/fraction/Fraction.java", "q -= 1;", "q += 1;")
    replay(tmp_path, "maven", SAMPLES / "fraction-java", bug, tests, timeout=240)


CMAKE_FIXTURE = {
    "CMakeLists.txt": "cmake_minimum_required(VERSION 3.16)\nproject(clampx LANGUAGES CXX)\nenable_testing()\n"
                      "add_library(clampx clamp.cpp)\nadd_executable(t t.cpp)\ntarget_link_libraries(t clampx)\n"
                      "foreach(c low high mid)\n  add_test(NAME clamp.${c} COMMAND t ${c})\nendforeach()\n",
    "clamp.hpp": "int clamp(int v, int lo, int hi);\n",
    "clamp.cpp": "#include \"clamp.hpp\"\nint clamp(int v, int lo, int hi) {\n"
                 "    if (v < lo) return lo;\n    if (v > hi) return hi;\n    return v;\n}\n",
    "t.cpp": "#include <cstring>\n#include \"clamp.hpp\"\nint main(int, char** argv) {\n"
             "    if (!std::strcmp(argv[1], \"low\")) return clamp(-5, 0, 9) != 0;\n"
             "    if (!std::strcmp(argv[1], \"high\")) return clamp(12, 0, 9) != 9;\n"
             "    return clamp(4, 0, 9) != 4;\n}\n",
}


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


@needs("cmake", "ctest", "c++", "make")
def test_cpp_task_replays_with_cmake_and_ctest(tmp_path):
    src = _write(tmp_path / "clampx", CMAKE_FIXTURE)
    bug = ("clamp.cpp", "if (v > hi) return hi;", "if (v >= hi) return v;")
    replay(tmp_path, "ctest", src, bug, ["clamp.high", "clamp.low", "clamp.mid"])


MAKE_FIXTURE = {
    "Makefile": "CC ?= cc\ntests/%: tests/%.c sum.c\n\t$(CC) -o $@ $^\n\ncheck: tests/test_sum tests/test_max\n"
                "\t./tests/test_sum && ./tests/test_max\n.PHONY: check\n",
    "sum.c": "int sum(const int *v, int n) {\n    int s = 0;\n    for (int i = 0; i < n; i++) s += v[i];\n"
             "    return s;\n}\nint max(const int *v, int n) {\n    int m = v[0];\n"
             "    for (int i = 1; i < n; i++) if (v[i] > m) m = v[i];\n    return m;\n}\n",
    "tests/test_sum.c": "int sum(const int *v, int n);\n"
                        "int main(void) { int v[] = {1, 2, 3}; return sum(v, 3) - 6; }\n",
    "tests/test_max.c": "int max(const int *v, int n);\n"
                        "int main(void) { int v[] = {4, 9, 2}; return max(v, 3) - 9; }\n",
}


@needs("make", "cc")
def test_c_task_replays_with_make_graded_per_target(tmp_path):
    src = _write(tmp_path / "sumc", MAKE_FIXTURE)
    bug = ("sum.c", "i < n; i++) s += v[i];", "i < n - 1; i++) s += v[i];")
    replay(tmp_path, "make", src, bug, ["tests/test_max", "tests/test_sum"])


@needs("ruby", "rspec")
def test_ruby_task_replays_with_rspec(tmp_path):
    tests = ["spec/money_spec.rb::Ledger::Money allocates without losing a cent",  # FAIL_TO_PASS
             "spec/book_spec.rb::Ledger::Book when transferring moves money and keeps the total",
             "spec/money_spec.rb::Ledger::Money.parse reads whole and fractional amounts"]
    bug = ("lib/ledger/money.rb", "i < extra ? base + 1 : base", "i <= extra ? base + 1 : base")
    replay(tmp_path, "rspec", SAMPLES / "ledger-rb", bug, tests)


MINITEST_FIXTURE = {
    "lib/stack.rb": "class Stack\n  def initialize = @items = []\n  def push(x) = @items.push(x) && self\n"
                    "  def pop = @items.pop\n  def size = @items.size\n  def empty? = @items.empty?\nend\n",
    "test/stack_test.rb": "require \"minitest/autorun\"\nrequire \"stack\"\n\nclass StackTest < Minitest::Test\n"
                          "  def test_push_pop\n    assert_equal 2, Stack.new.push(1).push(2).pop\n  end\n\n"
                          "  def test_size\n    assert_equal 2, Stack.new.push(1).push(1).size\n  end\n\n"
                          "  def test_empty\n    assert Stack.new.empty?\n  end\nend\n",
}


@needs("ruby")
def test_ruby_task_replays_with_minitest(tmp_path):
    src = _write(tmp_path / "stack", MINITEST_FIXTURE)
    bug = ("lib/stack.rb", "def size = @items.size", "def size = @items.size - 1")
    replay(tmp_path, "minitest", src, bug, ["StackTest#test_empty", "StackTest#test_size"])


@needs("php", "phpunit")
def test_php_task_replays_with_phpunit(tmp_path):
    tests = ["Tally\\Tests\\RomanTest::testToRoman with data set #0",  # FAIL_TO_PASS
             'Tally\\Tests\\HistogramTest::testRejectsBadShapes with data set "no bins"',
             "Tally\\Tests\\VersionTest::testBump"]
    bug = ("src/Roman.php", "while ($n >= $value)", "while ($n > $value)")
    replay(tmp_path, "phpunit", SAMPLES / "tally-php", bug, tests)


@needs("ruby", "rspec", "php", "phpunit")
def test_profiles_run_suites_and_subsets_in_the_sandbox(tmp_path):
    """datagen's own path: env built in the sandbox, the suite run offline, then a subset."""
    sandbox = get_sandbox("auto", warn=False)
    limits = SandboxLimits(timeout_s=120, memory_mb=2048, processes=256)
    config = EnvConfig(cache_dir=str(tmp_path / "envs"))
    for name, repo, subset in [
        ("rspec", "ledger-rb", ["spec/book_spec.rb::Ledger::Book when transferring refuses to overdraw"]),
        ("phpunit", "tally-php", ['Tally\\Tests\\HistogramTest::testRejectsBadShapes with data set "reversed"']),
    ]:
        profile, src = get_profile(name), SAMPLES / repo
        env = ensure_env(profile, src, config, sandbox, limits)
        runs = []
        for tests in (None, subset):
            work = tmp_path / f"{name}-{len(runs)}"
            shutil.copytree(src, work)
            runs.append(run_profile(profile, env, sandbox, work, limits, tests))
        full, part = runs
        assert full.report_error is None and len(full.results) >= 25
        assert set(full.results.values()) == {"pass"}
        assert part.results == {subset[0]: "pass"}
