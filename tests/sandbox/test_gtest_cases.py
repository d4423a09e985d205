"""GoogleTest executables under ctest are graded by the cases they print, and only by those.

The fixture is a small C++ library written for this test, with two GoogleTest executables
(Debian's ``libgtest-dev``) registered by ``add_test``: their ``main`` turns the time of each
end line off (``[       OK ] Span.Empty``, no ``(0 ms)``), and one case prints text without a
newline, so its end line reads ``checked[       OK ] Span.Talks``. Every ctest test passes;
so must every case, and a bug in one case fails that case alone."""

from __future__ import annotations

import pytest

from datagen.config.sandbox import EnvConfig, SandboxLimits
from datagen.sandbox.harness.profiles.registry import get_profile
from datagen.sandbox.harness.runners import ensure_env, run_profile
from datagen.sandbox.isolation.select import bwrap_works, untrusted_sandbox
from tests.sandbox.test_profiles_replay_more import _write, needs, replay_validated

_MAIN = ("int main(int argc, char **argv) {\n    testing::InitGoogleTest(&argc, argv);\n"
         "    GTEST_FLAG_SET(print_time, false);\n    return RUN_ALL_TESTS();\n}\n")
GTEST_FIXTURE = {
    "CMakeLists.txt": "cmake_minimum_required(VERSION 3.16)\nproject(spanx LANGUAGES CXX)\nenable_testing()\n"
                      "find_package(GTest REQUIRED)\nadd_library(spanx span.cpp)\n"
                      "foreach(name span_test width_test)\n  add_executable(${name} tests/${name}.cpp)\n"
                      "  target_link_libraries(${name} spanx GTest::gtest)\n"
                      "  add_test(NAME ${name} COMMAND ${name})\nendforeach()\n",
    "span.h": "int span(int lo, int hi);\nint width(int lo, int hi);\n",
    "span.cpp": "#include \"span.h\"\nint span(int lo, int hi) {\n    return hi - lo;\n}\n"
                "int width(int lo, int hi) {\n    return span(lo, hi) + 1;\n}\n",
    "tests/span_test.cpp": "#include <gtest/gtest.h>\n#include <iostream>\n#include \"../span.h\"\n"
                           "TEST(Span, Positive) { EXPECT_EQ(span(2, 7), 5); }\n"
                           "TEST(Span, Empty) { EXPECT_EQ(span(3, 3), 0); }\n"
                           "TEST(Span, Talks) { std::cout << \"checked\"; EXPECT_EQ(span(-2, 2), 4); }\n" + _MAIN,
    "tests/width_test.cpp": "#include <gtest/gtest.h>\n#include \"../span.h\"\n"
                            "TEST(Width, Inclusive) { EXPECT_EQ(width(2, 7), 6); }\n"
                            "TEST(Width, Single) { EXPECT_EQ(width(4, 4), 1); }\n" + _MAIN,
}
CASES = {"span_test::Span.Positive", "span_test::Span.Empty", "span_test::Span.Talks",
         "width_test::Width.Inclusive", "width_test::Width.Single"}
pytestmark = [pytest.mark.slow, needs("cmake", "ctest", "c++", "make", "/usr/include/gtest/gtest.h")]


def test_every_case_of_passing_executables_passes(tmp_path):
    ok, reason = bwrap_works()
    if not ok:
        pytest.skip(f"bwrap unavailable: {reason}")
    src = _write(tmp_path / "spanx", GTEST_FIXTURE)
    profile, sandbox, limits = get_profile("ctest"), untrusted_sandbox("auto"), SandboxLimits(timeout_s=180)
    env = ensure_env(profile, src, EnvConfig(cache_dir=str(tmp_path / "envs")), sandbox, limits)
    run = run_profile(profile, env, sandbox, src, limits)
    assert run.results == dict.fromkeys(CASES, "pass"), run.run.stdout[-2000:]


def test_a_bug_fails_its_case_and_no_other(tmp_path):
    src = _write(tmp_path / "fixture" / "spanx", GTEST_FIXTURE)
    bug = ("span.cpp", "    return span(lo, hi) + 1;", "    return span(lo, hi) + (lo == hi);")
    task = replay_validated(tmp_path, "ctest", src, bug, {"width_test::Width.Inclusive"})
    assert task.FAIL_TO_PASS == ["width_test::Width.Inclusive"]
    assert set(task.PASS_TO_PASS) == CASES - {"width_test::Width.Inclusive"}
