"""C with a Makefile: each suite prerequisite is built with ``--coverage`` and run alone, and
gcov's counters map every line to the tests that ran it (jsmn's candidates all landed in its
untested example/ code before). Real make, cc and gcov in the real sandbox."""

from __future__ import annotations

import pytest

from datagen.config.sandbox import EnvConfig, SandboxLimits
from datagen.sandbox.harness.profiles.registry import get_profile
from datagen.sandbox.harness.runners import ensure_env
from datagen.sandbox.isolation.select import bwrap_works, untrusted_sandbox
from datagen.synth.baseline import SuiteRunner, measure_baseline
from tests import tools

REPO = {
    "Makefile": "CC = cc\nCFLAGS = -O0\n\ncheck: test_add test_mul\n\n"
                "test_add: tests/test_add.c lib.c lib.h\n\t$(CC) $(CFLAGS) -o $@ tests/test_add.c lib.c\n\n"
                "test_mul: tests/test_mul.c lib.c lib.h\n\t$(CC) $(CFLAGS) -o $@ tests/test_mul.c lib.c\n",
    "lib.h": "int add(int a, int b);\nint mul(int a, int b);\nint unused(int a);\n",
    "lib.c": '#include "lib.h"\n\nint add(int a, int b) {\n    return a + b;\n}\n\n'
             "int mul(int a, int b) {\n    return a * b;\n}\n\nint unused(int a) {\n    return a * 7;\n}\n",
    "tests/test_add.c": '#include "../lib.h"\n\nint main(void) {\n    return add(2, 3) == 5 ? 0 : 1;\n}\n',
    "tests/test_mul.c": '#include "../lib.h"\n\nint main(void) {\n    return mul(2, 3) == 6 ? 0 : 1;\n}\n',
}


@tools.needs("make", "cc", "gcov")
def test_each_make_test_maps_the_lines_it_runs(tmp_path):
    ok, reason = bwrap_works()
    if not ok:
        pytest.skip(f"bwrap unavailable: {reason}")
    src = tmp_path / "calc"
    for rel, text in REPO.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    sandbox, limits = untrusted_sandbox("auto"), SandboxLimits(timeout_s=120, processes=128)
    env = ensure_env(get_profile("make"), src, EnvConfig(cache_dir=str(tmp_path / "envs")), sandbox, limits)
    (tmp_path / "scratch").mkdir()
    base = measure_baseline(SuiteRunner("make", src, sandbox, limits, env, tmp_path / "scratch"), 1, True)
    assert base.reason is None and base.stable == ["test_add", "test_mul"], base.detail
    assert base.tests_reaching("lib.c", 3, 5) == ["test_add"]
    assert base.tests_reaching("lib.c", 7, 9) == ["test_mul"]
    assert base.tests_reaching("lib.c", 11, 13) == []
