"""A JS package whose tests load its build output (``require('../dist/index')``) is built by
its own script before every test run: in datagen's runs, after each patch, and in the eval script.

The fixture is a small package written for this test: its ``build`` script (plain node, no
dependency) writes ``dist/`` from ``src/``, the checkout holds no ``dist/``, and the tests
(``node --test``) load ``../dist/index``. Without the build every run fails with "Cannot find
module '../dist/index'" and the repo yields nothing."""

from __future__ import annotations

import pytest

from datagen.sandbox.harness.profiles.base import ProfileEnv
from datagen.sandbox.harness.profiles.registry import get_profile
from tests import tools
from tests.sandbox.test_profiles_replay_more import _write, replay_validated

BUILD_JS = """const fs = require('fs');
const path = require('path');
// the package's own build: every module of src/ into dist/, with a banner
fs.mkdirSync('dist', { recursive: true });
for (const name of fs.readdirSync('src')) {
  const code = fs.readFileSync(path.join('src', name), 'utf8');
  fs.writeFileSync(path.join('dist', name), '// built from src/' + name + '\\n' + code);
}
"""
BUILT_FIXTURE = {
    "package.json": '{\n  "name": "tallyjs",\n  "version": "1.0.0",\n  "main": "dist/index.js",\n'
                    '  "scripts": {\n    "build": "node scripts/build.js",\n    "test": "node --test"\n  }\n}\n',
    ".gitignore": "dist/\n",
    "scripts/build.js": BUILD_JS,
    "src/index.js": "function tally(words) {\n  const counts = {};\n  for (const w of words) {\n"
                    "    counts[w] = (counts[w] || 0) + 1;\n  }\n  return counts;\n}\n\n"
                    "function top(words) {\n  const counts = tally(words);\n"
                    "  return Object.keys(counts).sort((a, b) => counts[b] - counts[a] || (a < b ? -1 : 1))[0];\n}\n\n"
                    "module.exports = { tally, top };\n",
    "test/tally.test.js": "const test = require('node:test');\nconst assert = require('node:assert');\n"
                          "const { tally, top } = require('../dist/index');\n\n"
                          "test('counts each word', () => {\n"
                          "  assert.deepStrictEqual(tally(['a', 'b', 'a']), { a: 2, b: 1 });\n});\n\n"
                          "test('finds the most common word', () => {\n"
                          "  assert.strictEqual(top(['b', 'a', 'b']), 'b');\n});\n\n"
                          "test('breaks ties by name', () => {\n"
                          "  assert.strictEqual(top(['b', 'a']), 'a');\n});\n",
}
pytestmark = tools.needs("node", "npm")


def test_the_plan_builds_a_package_whose_tests_load_its_build_output(tmp_path):
    src = _write(tmp_path / "tallyjs", BUILT_FIXTURE)
    profile = get_profile("node")
    plan = profile.plan(src)
    assert plan.build == ["npm", "run", "--silent", "build"]
    assert any("test/tally.test.js: ../dist/index" in note for note in plan.notes)
    argv = profile.test_command(ProfileEnv("node", plan), src, None)
    assert argv[:2] == ["sh", "-c"] and "npm run --silent build" in argv[2] and argv[4:6] == ["node", "--test"]
    script = profile.eval_script(plan, ["counts each word"])
    assert script.index("npm run --silent build") < script.index("node --test")
    # a package whose tests load only what the checkout holds is not built
    (src / "test" / "tally.test.js").write_text(BUILT_FIXTURE["test/tally.test.js"].replace("../dist/", "../src/"))
    assert profile.plan(src).build == []
    # nor one whose TypeScript tests name a .ts module by its compiled name (NodeNext's './a.js')
    (src / "src" / "index.ts").write_text("export const n = 1;\n")
    (src / "test" / "tally.test.js").write_text("import { n } from '../src/index.js';\n")
    (src / "src" / "index.js").unlink()
    assert profile.plan(src).build == []


@pytest.mark.slow
def test_a_task_of_a_package_tested_through_its_build_output_validates_and_replays(tmp_path):
    src = _write(tmp_path / "fixture" / "tallyjs", BUILT_FIXTURE)
    bug = ("src/index.js", "(a < b ? -1 : 1)", "(a < b ? 1 : -1)")
    task = replay_validated(tmp_path, "node", src, bug, set())
    assert [t.rsplit(" > ", 1)[-1] for t in task.FAIL_TO_PASS] == ["breaks ties by name"]
    assert sorted(t.rsplit(" > ", 1)[-1] for t in task.PASS_TO_PASS) == ["counts each word",
                                                                         "finds the most common word"]
