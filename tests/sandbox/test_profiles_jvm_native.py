"""The Maven, Gradle, CTest, make, RSpec, minitest and PHPUnit profiles without running a build:
report parsers on golden reports of real runs (tests/sandbox/golden/), the eval scripts' awk
checks on the same reports, plans read from repo files, and missing toolchains."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from datagen.sandbox.harness.checks import awk_program
from datagen.sandbox.harness.parsers import (
    ReportError,
    parse_ctest_junit,
    parse_jvm_junit,
    parse_minitest_verbose,
    parse_phpunit_junit,
    parse_rspec_json,
)
from datagen.sandbox.harness.profiles._replay import cmake_regex
from datagen.sandbox.harness.profiles.gradle import gradle_filters
from datagen.sandbox.harness.profiles.make import parse_make_tsv, suite_target
from datagen.sandbox.harness.profiles.maven import java_request, release_major, surefire_selection
from datagen.sandbox.harness.profiles.phpunit import php_fits
from datagen.sandbox.harness.profiles.registry import detect_profile, get_profile
from datagen.sandbox.harness.profiles.rspec import passed_key
from tests import tools
from tests.conftest import write_tree
from tests.sandbox.checkrun import run_awk

GOLDEN = Path(__file__).parent / "golden"
SAMPLES = Path(__file__).parents[2] / "sample_data"


def surefire_text() -> str:
    return "".join(p.read_text() for p in sorted((GOLDEN / "surefire").glob("TEST-*.xml")))


SUREFIRE = {
    "demo.BrokenSetupTest": "error",
    "demo.CalcTest#adds": "pass",
    "demo.CalcTest#addsWrong": "fail",
    "demo.CalcTest#throwsUnexpected": "error",
    "demo.CalcTest#skipped": "skip",
    "demo.CalcTest#named": "pass",
    "demo.CalcTest#positive(int)[1]": "pass",
    "demo.CalcTest#positive(int)[2]": "pass",
    "demo.CalcTest#positive(int)[3]": "fail",
    "demo.CalcTest$Inner#innerOk": "pass",
}
CTEST = {"math.adds": "pass", "math.adds_wrong": "fail", "math.crashes": "fail", "math.skipped": "skip",
         "math.disabled": "skip", "math.missing_exe": "error", "math.slow": "fail"}
RSPEC = {
    "spec/calc_spec.rb::Calc adds": "pass",  # two examples share it; both passed
    "spec/calc_spec.rb::Calc adds wrong": "fail",
    "spec/calc_spec.rb::Calc raises unexpectedly": "error",
    "spec/calc_spec.rb::Calc is pending": "skip",
    "spec/calc_spec.rb::Calc is skipped": "skip",
    "spec/calc_spec.rb::Calc with a context works": "pass",
    "spec/calc_spec.rb::Calc with a context handles 1": "pass",
    "spec/calc_spec.rb::Calc with a context handles 2": "fail",
}
MINITEST = {"CalcTest#test_raises": "error", "CalcTest#test_skipped": "skip", "CalcTest#test_adds": "pass",
            "CalcTest#test_adds_wrong": "fail", "Spec style#test_0001_works in spec style": "pass",
            "Outer::InnerTest#test_inner_ok": "pass"}
PHPUNIT = {
    "Demo\\Tests\\CalcTest::testAdds": "pass",
    "Demo\\Tests\\CalcTest::testAddsWrong": "fail",
    "Demo\\Tests\\CalcTest::testRaises": "error",
    "Demo\\Tests\\CalcTest::testSkipped": "skip",
    "Demo\\Tests\\CalcTest::testIncomplete": "skip",
    "Demo\\Tests\\CalcTest::testRisky": "pass",
    'Demo\\Tests\\CalcTest::testPairs with data set "small"': "pass",
    'Demo\\Tests\\CalcTest::testPairs with data set "equal"': "fail",
    "Demo\\Tests\\CalcTest::testPairs with data set #0": "pass",
    "OtherTest::testOk": "pass",
    "OtherTest::testWarns": "pass",
}


def test_surefire_reports_give_class_hash_method_ids():
    assert parse_jvm_junit(surefire_text()) == SUREFIRE


def test_gradle_style_method_names_lose_their_parentheses():
    xml = ('<?xml version="1.0"?><testsuite><testcase name="adds()" classname="p.T" time="0"/>'
           '<testcase name="m(int)[1]" classname="p.T" time="0"><failure message="x"/></testcase></testsuite>')
    assert parse_jvm_junit(xml) == {"p.T#adds": "pass", "p.T#m(int)[1]": "fail"}


def test_ctest_junit_missing_executable_is_an_error_and_disabled_a_skip():
    assert parse_ctest_junit((GOLDEN / "ctest_junit.xml").read_text()) == CTEST


def test_rspec_json_ids_and_load_errors():
    assert parse_rspec_json((GOLDEN / "rspec.json").read_text()) == RSPEC
    assert parse_rspec_json((GOLDEN / "rspec_load_error.json").read_text()) == {"spec/nested/broken_spec.rb": "error"}


def test_minitest_verbose_lines():
    assert parse_minitest_verbose((GOLDEN / "minitest_verbose.txt").read_text()) == MINITEST


@tools.needs("ruby")
def test_a_suite_needing_a_missing_gem_says_which(tmp_path):
    """jeremyevans/ruby-warning's helper requires minitest-global_expectations (RubyGems only):
    the baseline's words name the library instead of "no minitest run"."""
    (tmp_path / "test_helper.rb").write_text("require 'minitest/global_expectations/autorun'\n")
    run = subprocess.run(["ruby", "-I.", "-e", "require 'test_helper'"], cwd=tmp_path, capture_output=True, text=True)
    with pytest.raises(ReportError, match="require 'minitest/global_expectations/autorun', which is not installed"):
        parse_minitest_verbose(run.stdout + run.stderr)


def test_phpunit_junit_data_sets_and_risky():
    assert parse_phpunit_junit((GOLDEN / "phpunit_junit.xml").read_text()) == PHPUNIT


def test_make_report_lines():
    assert parse_make_tsv("tests/a\tpass\ntests/b\terror\n") == {"tests/a": "pass", "tests/b": "error"}
    with pytest.raises(ReportError):
        parse_make_tsv("tests/a passed\n")


@pytest.mark.parametrize("parse", [parse_jvm_junit, parse_ctest_junit, parse_phpunit_junit, parse_rspec_json])
@pytest.mark.parametrize("text", ["", "not a report", "<testsuite><testcase"])
def test_broken_reports_are_clear_errors(parse, text):
    with pytest.raises(ReportError):
        parse(text)


def _awk(program: str, text: str, **env: str | list[str]) -> tuple[int, list[str]]:
    return run_awk(program, text, **env)


@pytest.mark.parametrize(("fmt", "text", "expected"), [
    ("maven", surefire_text(), SUREFIRE),
    ("ctest", (GOLDEN / "ctest_junit.xml").read_text(), CTEST),
    ("phpunit", (GOLDEN / "phpunit_junit.xml").read_text(), PHPUNIT),
])
def test_eval_script_check_agrees_with_the_parser(fmt, text, expected):
    """The awk check of eval scripts passes exactly the ids the parser calls passed."""
    passing = [t for t, s in expected.items() if s == "pass"]
    assert _awk(awk_program("junit"), text, FMT=fmt, IDS=passing) == (0, [])
    others = sorted([t for t, s in expected.items() if s != "pass"] + ["no.such#test"])
    rc, missed = _awk(awk_program("junit"), text, FMT=fmt, IDS=[*passing, *others])
    assert rc == 1 and sorted(m.strip() for m in missed) == others


def test_rspec_and_minitest_checks_agree_with_their_parsers():
    rspec = (GOLDEN / "rspec.json").read_text()
    ids = list(RSPEC)
    rc, missed = _awk(awk_program("rspec"), rspec, IDS=ids, KEYS=[passed_key(t) for t in ids])
    assert rc == 1 and sorted(m.strip() for m in missed) == sorted(t for t in ids if RSPEC[t] != "pass")
    minitest = (GOLDEN / "minitest_verbose.txt").read_text()
    rc, missed = _awk(awk_program("minitest"), minitest, IDS=list(MINITEST))
    assert rc == 1 and sorted(m.strip() for m in missed) == sorted(t for t, s in MINITEST.items() if s != "pass")


def test_subset_selections():
    assert surefire_selection(["p.A#m(int)[1]", "p.A#m(int)[2]", "p.A#n", "p.B$In#x", "p.C"]) == "p.A#m+n,p.B$In#x,p.C"
    assert gradle_filters(["p.A#m(int)[1]", "p.B$In#x"]) == ["--tests", "p.A.m", "--tests", "p.B.In.x"]
    assert cmake_regex(["vec.add", "a+b"]) == r"^(vec\.add|a\+b)$"


def test_java_release_requests():
    assert java_request("<properties><maven.compiler.release>21</maven.compiler.release></properties>") == "21"
    assert java_request("<maven.compiler.source>1.8</maven.compiler.source>") == "1.8"
    assert java_request("java { toolchain { languageVersion = JavaLanguageVersion.of(17) } }") == "17"
    assert java_request("sourceCompatibility = JavaVersion.VERSION_11") == "11"
    assert release_major("1.8") == 8 and release_major("21") == 21


def test_php_constraints():
    assert php_fits(">=8.1", "8.2.36") and php_fits("^8.0", "8.2.1") and php_fits("^7.4 || ^8.1", "8.2.0")
    assert not php_fits("^8.3", "8.2.36") and not php_fits("^7.4", "8.2.0") and not php_fits("~8.1.0", "8.2.0")


def test_make_suite_target_prerequisites():
    assert suite_target("all: x\ncheck: tests/a tests/b | dir\n\t./run\n") == ("check", ["tests/a", "tests/b"])
    assert suite_target("test: $(TESTS)\n") == ("test", [])
    assert suite_target("CHECK := 1\nall: x\n") is None


def _paths(src: Path) -> list[str]:
    return [p.relative_to(src).as_posix() for p in src.rglob("*") if p.is_file()]


def test_a_c_library_with_cpp_test_programs_is_c(tmp_path):
    src = write_tree(tmp_path / "lib", {"CMakeLists.txt": "project(j C)\n", "src/value.c": "int v;\n",
                                        "test/ossfuzz/load_fuzzer.cc": "int f();\n"})
    profile = get_profile("ctest")
    assert profile.task_language(src) == "c"
    (src / "src" / "wrap.cpp").write_text("int w;\n")
    assert profile.task_language(src) == "cpp"


@pytest.mark.parametrize(("repo", "profile", "language", "request_", "toolchain"), [
    ("fraction-java", "maven", "java", "17", "java"),
    ("geom-cpp", "ctest", "cpp", "3.16", "cmake"),
    ("ledger-rb", "rspec", "ruby", "3.1", "ruby"),
    ("tally-php", "phpunit", "php", ">=8.1", "php"),
])
def test_sample_repos_are_detected_with_their_toolchain_requests(repo, profile, language, request_, toolchain):
    src = SAMPLES / repo
    found = detect_profile(src, _paths(src))
    assert found is not None and found.name == profile and found.task_language(src) == language
    plan = found.plan(src)
    assert plan.toolchain_request == request_ and plan.toolchain.startswith(toolchain)
    assert plan.toolchain_mismatch is None  # this machine has what they ask for


@tools.needs("cmake", "ruby")  # a mismatch is against the version the tool says it is
def test_a_newer_toolchain_request_is_a_recorded_mismatch(tmp_path):
    (tmp_path / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 99.1)\nenable_testing()\n")
    plan = get_profile("ctest").plan(tmp_path)
    assert plan.toolchain_request == "99.1" and "cmake_minimum_required 99.1" in plan.toolchain_mismatch
    (tmp_path / ".ruby-version").write_text("ruby-9.9.0\n")
    plan = get_profile("rspec").plan(tmp_path)
    assert plan.toolchain_request == "9.9.0" and plan.toolchain_mismatch


@pytest.mark.parametrize(("profile", "tool", "package"), [
    ("maven", "mvn", "maven"), ("ctest", "cmake", "cmake"), ("rspec", "ruby", "ruby"), ("phpunit", "php", "php-cli"),
    ("make", "make", "make"), ("gradle", "java", "default-jdk-headless"),
])
def test_missing_toolchain_names_its_debian_package(monkeypatch, tmp_path, profile, tool, package):
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing on PATH
    missing = get_profile(profile).missing_tool()
    assert missing is not None and (missing.tool, missing.package) == (tool, package)
    assert missing.reason == f"toolchain_missing: {tool} (Debian package {package})"


def test_gradle_without_wrapper_or_gradle_is_toolchain_missing(tmp_path, monkeypatch):
    from datagen.sandbox.envs.cache import EnvSetupError

    (tmp_path / "build.gradle").write_text("plugins { id 'java' }\njava { sourceCompatibility = '17' }\n")
    monkeypatch.setattr(shutil, "which", lambda name: None if name == "gradle" else f"/usr/bin/{name}")
    profile = get_profile("gradle")
    plan = profile.plan(tmp_path)
    assert plan.test_command == ["gradle", "test"] and plan.toolchain_request == "17"
    with pytest.raises(EnvSetupError, match="toolchain_missing: gradle"):
        profile.ensure_env(tmp_path, plan, None)  # type: ignore[arg-type]
    (tmp_path / "gradlew").write_text("#!/bin/sh\n")
    assert profile.plan(tmp_path).test_command == ["./gradlew", "test"]


def test_maven_seed_is_a_readable_linked_copy_made_once(tmp_path, monkeypatch):
    from datagen.sandbox.harness.profiles.maven import mirror_settings, seed_repository

    repo = tmp_path / "m2" / "repository"
    jar = repo / "org" / "x" / "x-1.jar"
    jar.parent.mkdir(parents=True)
    jar.write_bytes(b"jar")
    for d in (repo, repo / "org", jar.parent):
        d.chmod(0o750)  # as ~/.m2 is here: the sandbox's uid could not enter it
    monkeypatch.setenv("DATAGEN_MAVEN_SEED", str(repo))
    seed = seed_repository(tmp_path / "cache")
    copied = seed / "org" / "x" / "x-1.jar"
    assert copied.read_bytes() == b"jar" and copied.stat().st_ino == jar.stat().st_ino  # a hard link
    assert all((p.stat().st_mode & 0o777) == 0o755 for p in (seed, seed / "org", copied.parent))
    jar.with_name("x-2.jar").write_bytes(b"new")
    assert seed_repository(tmp_path / "cache") == seed and not (seed / "org" / "x" / "x-2.jar").exists()
    assert f"<url>{seed.resolve().as_uri()}</url>" in mirror_settings(seed)
