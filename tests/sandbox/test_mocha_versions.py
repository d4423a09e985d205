"""mocha's report across its versions: mocha 3 (jonschlinkert/is-number's) knows only
``--reporter-options`` and prints its json report on stdout; mocha 10 writes it to the
``output`` file. Both give the same results. Real mocha from the npm registry, real sandbox."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from datagen.sandbox.harness.profiles.registry import get_profile
from datagen.sandbox.harness.runners import run_profile
from tests.sandbox.test_js_package_managers import _env, _needs_npm_and_bwrap  # noqa: F401 (autouse)

TEST = ("var assert = require('assert');\nvar isOdd = require('./');\n\n"
        "describe('isOdd', function() {\n  it('knows 3', function() {\n    console.log('{ not the report');\n"
        "    assert(isOdd(3));\n  });\n  it('knows 4', function() {\n    assert(!isOdd(4));\n  });\n});\n")


@pytest.mark.parametrize("mocha", ["3.5.3", "10.8.2"])
def test_every_mocha_gives_its_report(tmp_path, mocha):
    src = tmp_path / "repo"
    src.mkdir()
    (src / "package.json").write_text(json.dumps({"name": "odd", "version": "1.0.0", "scripts": {"test": "mocha"},
                                                  "devDependencies": {"mocha": mocha}}))
    (src / "index.js").write_text("module.exports = function(n) { return n % 2 === 1; };\n")
    (src / "test.js").write_text(TEST)
    assert get_profile("mocha").detect(src, ["package.json", "index.js", "test.js"])
    profile, sandbox, limits, env = _env(src, tmp_path, "mocha")
    work = tmp_path / "work"
    shutil.copytree(src, work)
    run = run_profile(profile, env, sandbox, work, limits)
    assert run.report_error is None, run.run.stdout[-1500:] + run.run.stderr[-1500:]
    assert sorted(run.results.values()) == ["pass", "pass"]
    assert all(t.endswith(("isOdd knows 3", "isOdd knows 4")) for t in run.results)
    assert Path(work / profile.report).is_file()


def test_a_bailing_script_still_reports_every_test(tmp_path):
    """``mocha --bail`` (jshttp's scripts) stops at the first failure; datagen drops the flag,
    so a bug's run still says which tests keep passing."""
    src = tmp_path / "repo"
    (src / "test").mkdir(parents=True)
    (src / "package.json").write_text(json.dumps({"name": "odd", "version": "1.0.0",
                                                  "scripts": {"test": "mocha --bail --check-leaks test/"},
                                                  "devDependencies": {"mocha": "10.8.2"}}))
    (src / "index.js").write_text("module.exports = function(n) { return n % 2 === 0; };\n")  # wrong for odd n
    (src / "test" / "odd.js").write_text(TEST.replace("require('./')", "require('../')"))
    profile, sandbox, limits, env = _env(src, tmp_path, "mocha")
    assert "--bail" in env.plan.test_command
    work = tmp_path / "work"
    shutil.copytree(src, work)
    run = run_profile(profile, env, sandbox, work, limits)
    assert run.report_error is None, run.run.stdout[-1500:] + run.run.stderr[-1500:]
    assert sorted(run.results.values()) == ["fail", "fail"]


def test_a_task_replays_where_the_projects_own_build_would_fail_on_the_bug(tmp_path):
    """jshttp/content-type's ``prepare`` compiles the sources (``tsc --build``); npm runs it on
    install, so the replay's setup failed on the bug before any test ran. The project's own
    lifecycle scripts are off (``--ignore-scripts``; ``npm rebuild`` runs the dependencies')."""
    from tests.sandbox.test_profiles_replay_more import replay_validated

    src = tmp_path / "fixture" / "odd"
    src.mkdir(parents=True)
    (src / "package.json").write_text(json.dumps({
        "name": "odd", "version": "1.0.0", "scripts": {"test": "mocha test.js", "prepare": "node build.js"},
        "devDependencies": {"mocha": "10.8.2"}}))
    (src / "index.js").write_text("module.exports = function(n) { return n % 2 === 1; };\n")
    (src / "build.js").write_text("if (require('./index.js')(3) !== true) { console.error('build: bad'); "
                                  "process.exit(1); }\n")  # a build that checks what it builds
    (src / "test.js").write_text(TEST)
    bug = ("index.js", "return n % 2 === 1", "return n !== 3 && n % 2 === 1")  # breaks one test of two
    replay_validated(tmp_path, "mocha", src, bug, set())
