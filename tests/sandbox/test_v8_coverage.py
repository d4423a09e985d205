"""Line coverage from a real node run's V8 counters (``NODE_V8_COVERAGE``)."""

from __future__ import annotations

import os
import subprocess

from datagen.sandbox.harness.profiles._v8 import covered_lines
from tests import tools

pytestmark = tools.needs("node")

LIB = """\
const banner = "\U0001F600 shapes";  // one character, two UTF-16 units: offsets after it shift

export function used(x) {
  if (x > 0) {
    return x * 2;
  }
  return -x;
}

export function unused(x) {
  return x + 1;
}
"""
MAIN = "import { used } from './src/lib.mjs';\nconsole.log(used(3));\n"


def test_lines_that_ran_and_lines_that_did_not(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "lib.mjs").write_text(LIB, encoding="utf-8")
    (tmp_path / "main.mjs").write_text(MAIN)
    (tmp_path / "node_modules").mkdir()
    folder = tmp_path / "v8"
    out = subprocess.run(["node", "main.mjs"], cwd=tmp_path, capture_output=True, text=True,
                         env={**os.environ, "NODE_V8_COVERAGE": str(folder)})
    assert out.stdout == "6\n", out.stderr
    lines = covered_lines(folder, tmp_path)
    assert set(lines) == {"main.mjs", "src/lib.mjs"}  # node's own scripts left out
    ran = lines["src/lib.mjs"]
    assert {1, 3, 4, 5} <= ran  # the module body, the call, the branch taken
    assert not ran & {7, 10, 11}  # the branch not taken, the function never called (its
    # first line starts in the module body, which ran)


SHAPES = "export const area = (w, h) => w * h;\n\nexport function perimeter(w, h) {\n  return 2 * (w + h);\n}\n"
SHAPES_TEST = ("import test from 'node:test';\nimport assert from 'node:assert/strict';\n"
               "import { area } from '../src/shapes.mjs';\n\n"
               "test('area', () => assert.equal(area(2, 3), 6));\n"
               "test('broken', () => assert.equal(area(2, 3), 7));\n")


def test_the_node_profile_maps_the_lines_its_suite_runs_to_the_tests_that_passed(any_sandbox, tmp_path):
    from datagen.config.sandbox import SandboxLimits
    from datagen.sandbox.harness.profiles.registry import get_profile

    work = tmp_path / "repo"
    (work / "src").mkdir(parents=True)
    (work / "test").mkdir()
    (work / "package.json").write_text('{"name": "s", "type": "module", "scripts": {"test": "node --test"}}')
    (work / "src" / "shapes.mjs").write_text(SHAPES)
    (work / "test" / "shapes.test.mjs").write_text(SHAPES_TEST)
    profile = get_profile("node")
    env = profile.ensure_env(work, profile.plan(work), None)  # nothing to install
    limits = SandboxLimits(timeout_s=60, cpu_s=60, memory_mb=2048, processes=64)
    lines = profile.coverage(env, any_sandbox, work, limits)
    assert lines["src/shapes.mjs"] == {1: ["area"]}  # perimeter never ran; "broken" failed
    assert set(lines) == {"src/shapes.mjs", "test/shapes.test.mjs"}
