"""Tasks in Java, C++, C (make), Ruby and PHP replay outside datagen.

The consumer's path each time: a fresh clone of the sealed ``envs/<env_id>.git`` at ``base_commit``, the
task's ``setup_script``, its ``eval_script`` (fails), ``git apply`` of the patch, the
``eval_script`` again (passes). For CTest, make, RSpec, minitest and PHPUnit the task is made
as ``datagen build tasks`` makes it (env built in the sandbox, baseline, the hand-made bug
validated: FAIL_TO_PASS and PASS_TO_PASS come from the profile's runs and parser). Java's
task is written by hand (the ids are chosen, not measured): one Maven build test is what the
CI budget allows (each JVM start costs seconds). The tools run for real; a test skips where
its toolchain is missing."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from datagen.config.sandbox import EnvConfig, SandboxLimits
from datagen.records.tasks import TaskRecord
from datagen.sandbox.harness.profiles._ruby import bundler
from datagen.sandbox.harness.profiles.registry import get_profile
from datagen.sandbox.harness.runners import ensure_env, run_profile
from datagen.sandbox.isolation.select import bwrap_works, get_sandbox, untrusted_sandbox
from datagen.synth.baseline import SuiteRunner, measure_baseline
from datagen.synth.candidates import Candidate
from datagen.synth.check import check_changes
from tests import tools
from tests.sealed import assert_sealed, emit_sealed

pytestmark = pytest.mark.slow
SAMPLES = Path(__file__).parents[2] / "sample_data"
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"]
Bug = tuple[str, str, str]  # path, text, replacement


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run([*GIT, *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def _copy(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("target", "_datagen_build", "Gemfile.lock", "vendor"))
    return dest


def _broken(src: Path, bug: Bug) -> dict[str, str]:
    path, old, new = bug
    text = (src / path).read_text()
    assert text.count(old) == 1, f"bug site not unique in {path}"
    return {path: text.replace(old, new)}


def validated_task(root: Path, runner: str, src: Path, bug: Bug, config: EnvConfig | None = None) -> TaskRecord:
    """The task of ``bug`` in ``src``, validated and committed as ``datagen build tasks`` does
    (``config``: the env settings, the cache folder set here)."""
    ok, reason = bwrap_works()
    if not ok:
        pytest.skip(f"bwrap unavailable: {reason}")
    src = _copy(src, root / "src")
    profile = get_profile(runner)
    assert profile.detect(src, [p.relative_to(src).as_posix() for p in src.rglob("*") if p.is_file()])
    sandbox, limits = untrusted_sandbox("auto"), SandboxLimits(timeout_s=180, processes=256)
    config = (config or EnvConfig()).model_copy(update={"cache_dir": str(root / "envs")})
    env = ensure_env(profile, src, config, sandbox, limits)
    (root / "scratch").mkdir()
    suite = SuiteRunner(runner, src, sandbox, limits, env, root / "scratch")
    base = measure_baseline(suite, 1, False)
    assert base.reason is None, base.detail
    changes = _broken(src, bug)
    verdict = check_changes(suite, base, changes, [], 1)
    assert verdict.kept, verdict.reason
    c = Candidate(src.name, "hand_made_v1", "procedural", f"{bug[0]}::x", 0, changes)
    task = emit_sealed(root, src, c, verdict, runner, base)
    assert_sealed(root / "out" / task.repo_path, task, root)
    assert task.runner == runner and task.FAIL_TO_PASS and task.PASS_TO_PASS
    assert not re.search(r"^\s*(python3? -m )?datagen\b", task.setup_script + task.eval_script, re.M)
    return task


def replay(root: Path, repo: Path, base_commit: str, setup_script: str, eval_script: str, patch: str,
           timeout: float = 300) -> None:
    """Clone at the base, set up, eval fails; apply the patch, eval passes."""
    clone = root / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    _git(clone, "checkout", "-q", base_commit)

    def bash(script: str) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", "-c", script], cwd=clone, capture_output=True, text=True, timeout=timeout)

    setup = bash(setup_script)
    assert setup.returncode == 0, setup.stdout[-2000:] + setup.stderr[-2000:]
    before = bash(eval_script)
    assert before.returncode != 0 and "NOT PASSED" in before.stdout, before.stdout[-2000:]
    subprocess.run(["git", "apply", "-"], cwd=clone, input=patch, text=True, check=True)
    after = bash(eval_script)
    assert after.returncode == 0, after.stdout[-3000:] + after.stderr[-2000:]


def replay_validated(root: Path, runner: str, src: Path, bug: Bug, fail_to_pass: set[str]) -> TaskRecord:
    task = validated_task(root, runner, src, bug)
    assert fail_to_pass <= set(task.FAIL_TO_PASS), task.FAIL_TO_PASS
    replay(root, root / "out" / task.repo_path, task.base_commit, task.setup_script, task.eval_script, task.patch)
    return task


def needs(*names: str) -> pytest.MarkDecorator:
    return tools.needs(*names)


def _maven_offline_ready() -> bool:
    """The sample's pinned plugins are in the local repository (Maven Central is not reachable here)."""
    m2 = Path.home() / ".m2" / "repository" / "org" / "apache" / "maven" / "plugins"
    return (m2 / "maven-surefire-plugin" / "3.2.5").is_dir() and (m2 / "maven-compiler-plugin" / "3.11.0").is_dir()


@needs("mvn", "javac")
@pytest.mark.skipif(not _maven_offline_ready(), reason="the sample's Maven plugins are not in ~/.m2 (no Central)")
def test_java_task_replays_with_maven(tmp_path):
    tests = ["org.example.fraction.FractionTest#floorRoundsTowardNegativeInfinity",  # breaks with the bug
             "org.example.fraction.FractionTest#parsesTextForms(String, long, long)[3]",
             "org.example.fraction.IntRangeTest#sumOfArithmeticSeries",
             "org.example.fraction.RunningStatsTest$WhenEmpty#sumIsZero"]
    src = _copy(SAMPLES / "fraction-java", tmp_path / "fraction-java")
    _git(src, "init", "-q", "-b", "main")
    _git(src, "add", "-A")
    _git(src, "commit", "-qm", "fixed")
    for path, text in _broken(src, ("src/main/java/org/example/fraction/Fraction.java", "q -= 1;", "q += 1;")).items():
        (src / path).write_text(text)
    _git(src, "commit", "-qam", "base")
    base, patch = _git(src, "rev-parse", "HEAD").strip(), _git(src, "diff", "HEAD", "HEAD~1")
    bare = tmp_path / "repos" / "fraction-java.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(src), str(bare)], check=True)
    profile = get_profile("maven")
    plan = profile.plan(src)
    replay(tmp_path, bare, base, profile.setup_script(plan), profile.eval_script(plan, tests), patch, timeout=240)


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
    src = _write(tmp_path / "fixture" / "clampx", CMAKE_FIXTURE)
    bug = ("clamp.cpp", "if (v > hi) return hi;", "if (v >= hi) return v;")
    replay_validated(tmp_path, "ctest", src, bug, {"clamp.high"})


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
    src = _write(tmp_path / "fixture" / "sumc", MAKE_FIXTURE)
    bug = ("sum.c", "i < n; i++) s += v[i];", "i < n - 1; i++) s += v[i];")
    replay_validated(tmp_path, "make", src, bug, {"tests/test_sum"})


@needs("ruby", "rspec")
def test_ruby_task_replays_with_rspec(tmp_path):
    bug = ("lib/ledger/money.rb", "i < extra ? base + 1 : base", "i <= extra ? base + 1 : base")
    replay_validated(tmp_path, "rspec", SAMPLES / "ledger-rb", bug,
                     {"spec/money_spec.rb::Ledger::Money allocates without losing a cent"})


# A Gemfile whose test group asks for a gem no registry here serves (the coveralls of
# necromancer and rainbow: RubyGems is unreachable): Bundler fails with and without the network.
UNREACHABLE_GROUP = 'group :test do\n  gem "zz-coverage-reporter-nowhere", require: false\nend\n'
no_bundler = pytest.mark.skipif(not bundler(), reason="needs bundler (apt-get install ruby: it brings bundle3.1)")


def _replay_past_a_failed_gemfile(tmp_path: Path, runner: str, src: Path, bug: Bug, fail_to_pass: set[str],
                                  pass_to_pass: frozenset[str] | set[str] = frozenset()) -> None:
    """The env went on with the machine's gems (``fallback`` system); the task's setup
    script says so, runs no ``bundle install`` and exits 0, and its eval script runs the
    tests without ``bundle exec``, as validation did."""
    task = validated_task(tmp_path, runner, src, bug)
    assert fail_to_pass <= set(task.FAIL_TO_PASS), task.FAIL_TO_PASS
    assert pass_to_pass <= set(task.PASS_TO_PASS), task.PASS_TO_PASS
    assert "went on" in task.setup_script and "no bundle install" in task.setup_script
    assert "install --local" not in task.setup_script and "exec" not in task.eval_script.split("RUN=", 1)[1][:40]
    replay(tmp_path, tmp_path / "out" / task.repo_path, task.base_commit, task.setup_script, task.eval_script,
           task.patch)


@needs("ruby", "rspec")
@no_bundler
def test_ruby_task_replays_with_rspec_past_a_gemfile_group_bundler_cannot_install(tmp_path):
    src = _copy(SAMPLES / "ledger-rb", tmp_path / "fixture" / "ledger-rb")
    (src / "Gemfile").write_text((src / "Gemfile").read_text() + "\n" + UNREACHABLE_GROUP)
    # one-liners: their descriptions exist only once they ran (no ``-e`` selects them), and
    # they are PASS_TO_PASS tests the eval script must run; and, as many gems' spec helpers do, it
    # requires bundler/setup, which cannot resolve that Gemfile here
    (src / "spec" / "shape_spec.rb").write_text('require "bundler/setup"\n\nRSpec.describe Ledger::Money do\n'
                                                '  subject { described_class.new(5, "EUR") }\n\n'
                                                "  it { is_expected.to respond_to(:allocate) }\n"
                                                "  it { is_expected.not_to be_zero }\nend\n")
    bug = ("lib/ledger/money.rb", "i < extra ? base + 1 : base", "i <= extra ? base + 1 : base")
    _replay_past_a_failed_gemfile(tmp_path, "rspec", src, bug,
                                  {"spec/money_spec.rb::Ledger::Money allocates without losing a cent"},
                                  {"spec/shape_spec.rb::Ledger::Money is expected to respond to #allocate"})


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
    src = _write(tmp_path / "fixture" / "stack", MINITEST_FIXTURE)
    bug = ("lib/stack.rb", "def size = @items.size", "def size = @items.size - 1")
    replay_validated(tmp_path, "minitest", src, bug, {"StackTest#test_size"})


@needs("ruby")
@no_bundler
def test_ruby_task_replays_with_minitest_past_a_gemfile_group_bundler_cannot_install(tmp_path):
    gemfile = 'source "https://rubygems.org"\n\n' + UNREACHABLE_GROUP
    # the test file requires bundler/setup, as many do: it cannot resolve that Gemfile here
    test = 'require "bundler/setup"\n' + MINITEST_FIXTURE["test/stack_test.rb"]
    src = _write(tmp_path / "fixture" / "stack", {**MINITEST_FIXTURE, "test/stack_test.rb": test, "Gemfile": gemfile})
    bug = ("lib/stack.rb", "def size = @items.size", "def size = @items.size - 1")
    _replay_past_a_failed_gemfile(tmp_path, "minitest", src, bug, {"StackTest#test_size"})


# A spec helper that requires coverage, debugger, reporter, warning-filter and benchmark gems this
# machine does not have (simplecov, coveralls, pry, byebug, warning, rspec-benchmark; a JUnit
# formatter in .rspec): every spec file failed to
# load. The stand-ins on RUBYLIB let them load, in the validating runs and in the eval script.
COVERAGE_HELPER = ('require "simplecov"\nrequire "coveralls"\nSimpleCov.formatter = SimpleCov::Formatter::'
                   'MultiFormatter.new([SimpleCov::Formatter::HTMLFormatter, Coveralls::SimpleCov::Formatter])\n'
                   'SimpleCov.start do\n  add_filter "/spec/"\n  minimum_coverage 95\nend\n'
                   'require "pry"\nrequire "byebug"\nrequire "warning"\nWarning.ignore(/deprecated/)\n'
                   'require "rspec-benchmark"\nRSpec.configure { |c| c.include RSpec::Benchmark::Matchers }\n')
TALLY_RB = {
    ".rspec": "--require spec_helper\n--format RspecJunitFormatter --out junit.xml\n",
    "lib/tally.rb": "module Tally\n  def self.count(words)\n    words.each_with_object(Hash.new(0)) "
                    "{ |w, h| h[w.downcase] += 1 }\n  end\n\n  def self.top(words, n)\n"
                    "    count(words).sort_by { |w, c| [-c, w] }.first(n).map(&:first)\n  end\nend\n",
    "spec/spec_helper.rb": COVERAGE_HELPER + 'require_relative "../lib/tally"\n',
    "spec/tally_spec.rb": 'RSpec.describe Tally do\n  it "counts case-insensitively" do\n'
                          '    expect(Tally.count(%w[a A b])).to eq("a" => 2, "b" => 1)\n  end\n\n'
                          '  it "ranks the most frequent first" do\n'
                          '    expect(Tally.top(%w[b a b c a b], 2)).to eq(%w[b a])\n  end\nend\n',
}


@needs("ruby", "rspec")
def test_a_spec_helper_requiring_missing_coverage_and_debug_gems_still_loads(tmp_path):
    assert not tools.present("coveralls")  # the gems are missing here, as they were for the wall
    src = _write(tmp_path / "fixture" / "tally", TALLY_RB)
    bug = ("lib/tally.rb", "h[w.downcase] += 1", "h[w] += 1")
    task = replay_validated(tmp_path, "rspec", src, bug, {"spec/tally_spec.rb::Tally counts case-insensitively"})
    assert "spec/tally_spec.rb::Tally ranks the most frequent first" in task.PASS_TO_PASS


@needs("ruby")
def test_a_minitest_helper_requiring_a_missing_reporter_gem_still_loads(tmp_path):
    helper = 'require "simplecov"\nSimpleCov.start\nrequire "minitest/autorun"\nrequire "minitest/reporters"\n' \
             "Minitest::Reporters.use! [Minitest::Reporters::SpecReporter.new]\nrequire \"debug\"\n"
    test = MINITEST_FIXTURE["test/stack_test.rb"].replace('require "minitest/autorun"', 'require "test_helper"')
    src = _write(tmp_path / "fixture" / "stack", {**MINITEST_FIXTURE, "test/test_helper.rb": helper,
                                                   "test/stack_test.rb": test})
    bug = ("lib/stack.rb", "def size = @items.size", "def size = @items.size - 1")
    replay_validated(tmp_path, "minitest", src, bug, {"StackTest#test_size"})


@needs("php", "phpunit")
def test_php_task_replays_with_phpunit(tmp_path):
    bug = ("src/Roman.php", "while ($n >= $value)", "while ($n > $value)")
    replay_validated(tmp_path, "phpunit", SAMPLES / "tally-php", bug,
                     {"Tally\\Tests\\RomanTest::testToRoman with data set #0"})


# A Packagist-era library: its tests find ``src/`` only through Composer's autoloader (the
# bootstrap uses a class without a require), and require-dev asks for tools Packagist would
# give (unreachable here).
COMPOSER_FIXTURE = {
    "composer.json": '{"name": "acme/clamp", "require": {"php": ">=8.0", "ext-json": "*"},\n'
                     ' "require-dev": {"phpunit/phpunit": "^9.5", "vimeo/psalm": "^5.0"},\n'
                     ' "autoload": {"psr-4": {"Acme\\\\Clamp\\\\": "src/"}},\n'
                     ' "autoload-dev": {"psr-4": {"Acme\\\\Clamp\\\\Tests\\\\": "tests/"}}}\n',
    "phpunit.xml": '<?xml version="1.0"?>\n<phpunit bootstrap="tests/bootstrap.php">\n  <testsuites>\n'
                   '    <testsuite name="all"><directory>tests</directory></testsuite>\n  </testsuites>\n</phpunit>\n',
    "src/Range.php": "<?php\nnamespace Acme\\Clamp;\n\nfinal class Range\n{\n"
                     "    public function __construct(public int $lo, public int $hi) {}\n\n"
                     "    public function clamp(int $v): int\n    {\n        if ($v < $this->lo) return $this->lo;\n"
                     "        if ($v > $this->hi) return $this->hi;\n        return $v;\n    }\n}\n",
    "tests/bootstrap.php": "<?php\n\\Acme\\Clamp\\Tests\\Fixtures::$unit = new \\Acme\\Clamp\\Range(0, 10);\n",
    "tests/Fixtures.php": "<?php\nnamespace Acme\\Clamp\\Tests;\n\nfinal class Fixtures\n{\n"
                          "    public static ?\\Acme\\Clamp\\Range $unit = null;\n}\n",
    "tests/RangeTest.php": "<?php\nnamespace Acme\\Clamp\\Tests;\n\nuse PHPUnit\\Framework\\TestCase;\n\n"
                           "final class RangeTest extends TestCase\n{\n"
                           "    public function testInside(): void\n"
                           "    { $this->assertSame(5, Fixtures::$unit->clamp(5)); }\n"
                           "    public function testHigh(): void\n"
                           "    { $this->assertSame(10, Fixtures::$unit->clamp(12)); }\n"
                           "    public function testLow(): void\n"
                           "    { $this->assertSame(0, Fixtures::$unit->clamp(-3)); }\n}\n",
}


@needs("php", "phpunit", "composer")
def test_php_task_replays_with_the_projects_autoloader_when_packagist_is_unreachable(tmp_path):
    """``composer install`` fails (Packagist is unreachable here and in the sandbox); the env
    falls back to ``composer dump-autoload`` and the machine's PHPUnit with that autoloader
    prepended, and the task's own scripts do the same outside datagen."""
    src = _write(tmp_path / "fixture" / "clamp", COMPOSER_FIXTURE)
    bug = ("src/Range.php", "if ($v > $this->hi) return $this->hi;", "if ($v >= $this->hi) return $v;")
    task = validated_task(tmp_path, "phpunit", src, bug)
    assert "Acme\\Clamp\\Tests\\RangeTest::testHigh" in task.FAIL_TO_PASS
    # the setup goes on as the env did, and says so: no composer install where a phpunit is here
    assert "went on" in task.setup_script and "if command -v phpunit" in task.setup_script
    replay(tmp_path, tmp_path / "out" / task.repo_path, task.base_commit, task.setup_script, task.eval_script,
           task.patch)


# A suite whose ids make a ``--filter`` regex longer than PHP's PCRE2 compiles (about 34 000
# characters of these ids): 400 named data sets, each id about 150 characters. As one regex,
# PHPUnit ran no test ("No tests executed!"), so inflector's 981-test task failed its replay.
MANY_CASES = {
    "phpunit.xml": '<?xml version="1.0"?>\n<phpunit bootstrap="tests/bootstrap.php">\n  <testsuites>\n'
                   '    <testsuite name="all"><directory>tests</directory></testsuite>\n  </testsuites>\n</phpunit>\n',
    "src/Scale.php": "<?php\nnamespace Acme\\Scale;\n\nfinal class Scale\n{\n"
                     "    public static function twice(int $v): int { return $v * 2; }\n"
                     "    public static function negate(int $v): int { return -$v; }\n}\n",
    "tests/bootstrap.php": "<?php\nrequire __DIR__ . '/../src/Scale.php';\n",
    "tests/ScaleTest.php": "<?php\nnamespace Acme\\Scale\\Tests;\n\nuse Acme\\Scale\\Scale;\n"
                           "use PHPUnit\\Framework\\TestCase;\n\nfinal class ScaleTest extends TestCase\n{\n"
                           "    public static function cases(): iterable\n    {\n"
                           "        for ($i = 1; $i <= 400; $i++) {\n"
                           "            yield sprintf('doubling the value %04d, one of the many cases whose long names "
                           "make the filter long', $i) => [$i];\n        }\n    }\n\n"
                           "    /** @dataProvider cases */\n    public function testTwice(int $v): void\n"
                           "    { $this->assertSame($v + $v, Scale::twice($v)); }\n"
                           "    public function testNegate(): void\n"
                           "    { $this->assertSame(-3, Scale::negate(3)); }\n}\n",
}


@needs("php", "phpunit")
def test_php_task_with_a_filter_too_long_for_one_regex_replays(tmp_path):
    """400 FAIL_TO_PASS ids: the eval script and datagen's own subset run split the ids over
    several ``--filter`` runs, each regex short enough to compile, and every id is checked."""
    src = _write(tmp_path / "fixture" / "scale", MANY_CASES)
    bug = ("src/Scale.php", "return $v * 2;", "return $v * 3;")
    task = validated_task(tmp_path, "phpunit", src, bug)
    assert len(task.FAIL_TO_PASS) == 400 and task.PASS_TO_PASS == ["Acme\\Scale\\Tests\\ScaleTest::testNegate"]
    replay(tmp_path, tmp_path / "out" / task.repo_path, task.base_commit, task.setup_script, task.eval_script,
           task.patch)
    assert task.eval_script.count("--filter") > 1
    # the sandboxed subset path: every chosen id runs (and a broken one fails) in one report
    sandbox = get_sandbox("auto", warn=False)
    limits = SandboxLimits(timeout_s=120, memory_mb=2048, processes=256)
    profile = get_profile("phpunit")
    env = ensure_env(profile, src, EnvConfig(cache_dir=str(tmp_path / "envs")), sandbox, limits)
    work = _copy(src, tmp_path / "subset")
    ids = [*task.FAIL_TO_PASS, *task.PASS_TO_PASS]
    run = run_profile(profile, env, sandbox, work, limits, ids)
    assert run.report_error is None and run.results == {t: "pass" for t in ids}
    (work / "src/Scale.php").write_text(_broken(src, bug)["src/Scale.php"])
    run = run_profile(profile, env, sandbox, work, limits, ids)
    assert run.results == {**{t: "fail" for t in task.FAIL_TO_PASS}, task.PASS_TO_PASS[0]: "pass"}


@needs("php", "phpunit")
def test_a_subset_runs_in_the_sandbox(tmp_path):
    """datagen's own subset path (``test_command`` with ids): only the chosen data set runs."""
    sandbox = get_sandbox("auto", warn=False)
    limits = SandboxLimits(timeout_s=120, memory_mb=2048, processes=256)
    profile, src = get_profile("phpunit"), SAMPLES / "tally-php"
    env = ensure_env(profile, src, EnvConfig(cache_dir=str(tmp_path / "envs")), sandbox, limits)
    chosen = ['Tally\\Tests\\HistogramTest::testRejectsBadShapes with data set "reversed"',
              "Tally\\Tests\\RomanTest::testToRoman with data set #5"]
    run = run_profile(profile, env, sandbox, _copy(src, tmp_path / "work"), limits, chosen)
    assert run.report_error is None and run.results == {t: "pass" for t in chosen}


@needs("ruby")
def test_ruby_fallback_eval_prefix_leaves_no_temp_folder(tmp_path):
    """The no-op ``bundler/setup`` is found by Ruby while the script runs and its folder is
    gone when the script ends (one eval script run leaves nothing in TMPDIR)."""
    from datagen.records.env import EnvPlan
    from datagen.sandbox.harness.profiles._ruby import ruby_eval_prefix

    (tmp_path / "tmp").mkdir()
    script = "\n".join([*ruby_eval_prefix(EnvPlan(profile="rspec", fallback="system")),
                        'ruby -e \'require "bundler/setup"; puts $LOADED_FEATURES.grep(/bundler\\/setup/)\''])
    run = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env={
        "PATH": "/usr/bin:/bin", "TMPDIR": str(tmp_path / "tmp"), "HOME": str(tmp_path)})
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().startswith(str(tmp_path / "tmp")), run.stdout
    assert list((tmp_path / "tmp").iterdir()) == []
