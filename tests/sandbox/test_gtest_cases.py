"""GoogleTest executables under ctest are graded by the cases they print, and only by those.

The fixture is a small C++ library written for this test, with a GoogleTest executable
(Debian's ``libgtest-dev``) registered by ``add_test``: its ``main`` turns the time of each end
line off (``[       OK ] Span.Empty``, no ``(0 ms)``), and one case prints text without a
newline, so its end line reads ``checked[       OK ] Span.Talks``. Its ctest test passes; so
must every case (the baseline: before, all five were errors and the repo yielded nothing),
and a bug in one case fails that case alone, in datagen's runs and in the eval script's check."""

from __future__ import annotations

import shutil

import pytest

from datagen.config.sandbox import EnvConfig, SandboxLimits
from datagen.sandbox.harness.checks import awk_program
from datagen.sandbox.harness.profiles.registry import get_profile
from datagen.sandbox.harness.runners import ensure_env, run_profile
from datagen.sandbox.isolation.select import bwrap_works, untrusted_sandbox
from tests.sandbox.checkrun import run_awk
from tests.sandbox.test_profiles_replay_more import _write, needs

GTEST_FIXTURE = {
    "CMakeLists.txt": "cmake_minimum_required(VERSION 3.16)\nproject(spanx LANGUAGES CXX)\nenable_testing()\n"
                      "find_package(GTest REQUIRED)\nadd_library(spanx span.cpp)\n"
                      "add_executable(span_test tests/span_test.cpp)\n"
                      "target_link_libraries(span_test spanx GTest::gtest)\n"
                      "add_test(NAME span_test COMMAND span_test)\n",
    "span.h": "int span(int lo, int hi);\nint width(int lo, int hi);\n",
    "span.cpp": "#include \"span.h\"\nint span(int lo, int hi) {\n    return hi - lo;\n}\n"
                "int width(int lo, int hi) {\n    return span(lo, hi) + 1;\n}\n",
    "tests/span_test.cpp": "#include <gtest/gtest.h>\n#include <iostream>\n#include \"../span.h\"\n"
                           "TEST(Span, Positive) { EXPECT_EQ(span(2, 7), 5); }\n"
                           "TEST(Span, Empty) { EXPECT_EQ(span(3, 3), 0); }\n"
                           "TEST(Span, Talks) { std::cout << \"checked\"; EXPECT_EQ(span(-2, 2), 4); }\n"
                           "TEST(Width, Inclusive) { EXPECT_EQ(width(2, 7), 6); }\n"
                           "TEST(Width, Single) { EXPECT_EQ(width(4, 4), 1); }\n"
                           "int main(int argc, char **argv) {\n    testing::InitGoogleTest(&argc, argv);\n"
                           "    GTEST_FLAG_SET(print_time, false);\n    return RUN_ALL_TESTS();\n}\n",
}
CASES = {"span_test::Span.Positive", "span_test::Span.Empty", "span_test::Span.Talks",
         "span_test::Width.Inclusive", "span_test::Width.Single"}
pytestmark = [pytest.mark.slow, needs("cmake", "ctest", "c++", "make", "/usr/include/gtest/gtest.h")]


def test_cases_are_read_from_what_the_executable_printed(tmp_path):
    """In the sandbox, as every run of the tasks build: the clean copy passes every case, a
    copy with a bug in ``width`` fails ``Width.Inclusive`` alone; the eval script's check reads
    the same real reports the same way."""
    ok, reason = bwrap_works()
    if not ok:
        pytest.skip(f"bwrap unavailable: {reason}")
    src = _write(tmp_path / "spanx", GTEST_FIXTURE)
    profile, sandbox, limits = get_profile("ctest"), untrusted_sandbox("auto"), SandboxLimits(timeout_s=300)
    env = ensure_env(profile, src, EnvConfig(cache_dir=str(tmp_path / "envs")), sandbox, limits)
    broken = tmp_path / "broken"
    shutil.copytree(src, broken)
    span = broken / "span.cpp"
    span.write_text(span.read_text().replace("return span(lo, hi) + 1;", "return span(lo, hi) + (lo == hi);"))
    for work, failing in ((src, set()), (broken, {"span_test::Width.Inclusive"})):
        run = run_profile(profile, env, sandbox, work, limits)
        assert run.results == {t: "fail" if t in failing else "pass" for t in CASES}, run.run.stdout[-2000:]
        report = (work / profile.report).read_text()
        assert run_awk(awk_program("ctest_cases"), report, IDS=sorted(CASES)) == (1 if failing else 0, sorted(failing))
