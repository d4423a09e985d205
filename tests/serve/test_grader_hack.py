"""`datagen serve grader` on a task whose repo installs as a package (a real env, the
project built by setuptools): the patch that leaves the stub and runs the env's installed
copy of the module instead is graded unresolved, the gold patch resolved (issue 37)."""

from __future__ import annotations

import pytest

from datagen.config.base import load_recipe
from datagen.config.sandbox import ValidateRecipe
from datagen.pool.exports import write_pool
from datagen.pool.rows import rows_from_tasks
from datagen.sandbox.isolation.select import bwrap_works, untrusted_sandbox
from tests.sandbox import leakkit
from tests.serve.conftest import Server, request
from tests.sitekit import SITE

pytestmark = pytest.mark.slow  # a real server, a real env build (network for setuptools)


def test_the_exec_from_site_packages_hack_is_unresolved(tmp_path):
    if not bwrap_works()[0]:
        pytest.skip(f"bwrap unavailable: {bwrap_works()[1]}")
    fields = leakkit.make_task(tmp_path)
    pool = tmp_path / "pool"
    write_pool(rows_from_tasks(leakkit.write_tasks(tmp_path, fields), group_size=2), [], pool)
    sets = [f"env.inherit_site_packages=[{SITE}]", f"env.cache_dir={tmp_path / 'envs'}",
            "sandbox.limits.processes=128", "sandbox.limits.memory_mb=2048"]
    # the env a build leaves: made from the clean tree, in the cache the grader reads (same key)
    cfg, _ = load_recipe(ValidateRecipe, None, "validate", sets)
    leakkit.build_clean_env(tmp_path, cfg.env, untrusted_sandbox("bwrap"), cfg.sandbox.limits)
    server = Server("grader", str(pool), "-w", "1", "--timeout-s", "120",
                    *(arg for s in sets for arg in ("--set", s)), extra_env={"DATAGEN_CACHE": str(tmp_path / "cache")})
    with server:
        def grade(patch: str) -> dict:
            status, body, _ = request(server.port, "/v1/grade", {"instance_id": "durkit__parse", "patch": patch},
                                      timeout=300)
            assert status == 200, body
            return body

        gold = grade(fields["patch"])
        assert (gold["status"], gold["reward"]) == ("resolved", 1.0), gold
        hack = grade(fields["hack"])
        assert (hack["status"], hack["reward"], hack["resolved"]) == ("unresolved", 0.0, False), hack
        assert set(hack["fail_to_pass"].values()) == {"fail"}, hack
    assert leakkit.installed_copy(tmp_path / "envs") == []
