"""A plan names every tool its env needs, and an env's key records the tools that built it.

The repo here is a PHP library with no runtime package (``require`` holds only PHP) whose
PHPUnit bootstrap requires Composer's autoloader (``vendor/autoload.php``): the plan must
ask for ``composer dump-autoload``, a machine without Composer must skip it saying so (not
with PHPUnit's bootstrap error), and an env built while Composer was missing must not be
reused once it is installed. Composer is "missing" by a PATH that holds php and phpunit only.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from datagen.config.sandbox import EnvConfig, SandboxLimits
from datagen.sandbox.envs.cache import EnvSetupError
from datagen.sandbox.envs.tools import tool_stamp
from datagen.sandbox.harness.profiles.registry import get_profile
from datagen.sandbox.harness.runners import ensure_env
from datagen.sandbox.isolation.select import bwrap_works, untrusted_sandbox
from datagen.synth.baseline import SuiteRunner, measure_baseline
from tests import tools
from tests.conftest import write_tree

pytestmark = tools.needs("php", "phpunit", "composer")

BOOTSTRAP = "<?php\nrequire __DIR__ . '/../vendor/autoload.php';\n"
PAD = {
    "composer.json": '{"name": "acme/pad", "require": {"php": ">=8.0"},\n'
                     ' "autoload": {"psr-4": {"Acme\\\\Pad\\\\": "src/"}}}\n',
    "phpunit.xml": '<?xml version="1.0"?>\n<phpunit bootstrap="tests/bootstrap.php">\n  <testsuites>\n'
                   '    <testsuite name="all"><directory>tests</directory></testsuite>\n  </testsuites>\n</phpunit>\n',
    "src/Pad.php": "<?php\nnamespace Acme\\Pad;\n\nfinal class Pad\n{\n"
                   "    public static function left(string $s, int $n): string\n    {\n"
                   "        return str_repeat(' ', max(0, $n - strlen($s))) . $s;\n    }\n}\n",
    "tests/bootstrap.php": BOOTSTRAP,
    "tests/PadTest.php": "<?php\nnamespace Acme\\Pad\\Tests;\n\nuse Acme\\Pad\\Pad;\n"
                         "use PHPUnit\\Framework\\TestCase;\n\n"
                         "final class PadTest extends TestCase\n{\n    public function testLeft(): void\n    {\n"
                         "        $this->assertSame('  ab', Pad::left('ab', 4));\n    }\n\n"
                         "    public function testLonger(): void\n    {\n"
                         "        $this->assertSame('abc', Pad::left('abc', 2));\n    }\n}\n",
}


def _without_composer(tmp_path: Path, monkeypatch) -> None:
    """PATH holds php and phpunit only: Composer is not installed as far as datagen can tell."""
    bin_dir = tmp_path / "bin-no-composer"
    bin_dir.mkdir()
    for tool in ("php", "phpunit"):
        (bin_dir / tool).symlink_to(shutil.which(tool))
    monkeypatch.setenv("PATH", str(bin_dir))


def _sandbox():
    ok, why = bwrap_works()
    if not ok:
        pytest.skip(f"bwrap unavailable: {why}")
    return untrusted_sandbox("auto"), SandboxLimits(timeout_s=180, processes=256)


def test_the_plan_names_composer_when_the_bootstrap_requires_its_autoloader(tmp_path):
    profile = get_profile("phpunit")
    plan = profile.plan(write_tree(tmp_path / "pad", PAD))
    step = next(s for s in plan.install if s.args[:1] == ["composer"])
    assert step.args[:2] == ["composer", "dump-autoload"] and not step.optional
    assert "tests/bootstrap.php requires vendor/autoload.php" in step.origin
    # a bootstrap with its own loader where the autoloader is absent does not need Composer
    guarded = {**PAD, "tests/bootstrap.php": "<?php\n$a = __DIR__ . '/../vendor/autoload.php';\n"
                                             "if (is_file($a)) { require $a; }\n"}
    plan = profile.plan(write_tree(tmp_path / "guarded", guarded))
    assert [s.optional for s in plan.install if s.args[:1] == ["composer"]] == [True]


def test_without_composer_the_skip_says_composer_is_missing(tmp_path, monkeypatch):
    sandbox, limits = _sandbox()
    src = write_tree(tmp_path / "pad", PAD)
    profile = get_profile("phpunit")
    setup = profile.setup_script(profile.plan(src))
    _without_composer(tmp_path, monkeypatch)
    with pytest.raises(EnvSetupError) as err:
        ensure_env(profile, src, EnvConfig(cache_dir=str(tmp_path / "envs")), sandbox, limits)
    assert err.value.reason == "toolchain_missing: composer (Debian package composer)"
    assert "Composer is missing" in str(err.value) and "tests/bootstrap.php" in str(err.value)
    assert "bootstrap" not in err.value.log_tail  # not PHPUnit's error: nothing ran
    # the task's setup script stops the same way, saying so
    run = subprocess.run(["/bin/bash", "-c", setup], cwd=src, capture_output=True, text=True,
                         env={**os.environ, "PATH": os.environ["PATH"]})
    assert run.returncode == 1 and "Composer is missing" in run.stderr


def test_an_env_built_without_a_tool_is_not_reused_once_it_is_installed(tmp_path, monkeypatch):
    """A repo whose autoloader is optional builds without Composer (the machine's PHPUnit);
    once Composer is on PATH the env's key differs and the new env holds the autoloader."""
    sandbox, limits = _sandbox()
    guarded = {**PAD, "tests/bootstrap.php": "<?php\n$a = __DIR__ . '/../vendor/autoload.php';\n"
                                             "if (is_file($a)) { require $a; return; }\n"
                                             "require __DIR__ . '/../src/Pad.php';\n"}
    src = write_tree(tmp_path / "pad", guarded)
    profile, config = get_profile("phpunit"), EnvConfig(cache_dir=str(tmp_path / "envs"))
    plan = profile.plan(src)
    with monkeypatch.context() as m:
        _without_composer(tmp_path, m)
        before = ensure_env(profile, src, config, sandbox, limits, plan=plan)
        key_before = profile.env_key(src, plan)
    assert not before.extra  # no autoloader: Composer was missing
    after = ensure_env(profile, src, config, sandbox, limits, plan=plan)
    assert profile.env_key(src, plan) != key_before and after.path != before.path
    assert after.extra and (after.path / "work" / "vendor" / "autoload.php").is_file()


def test_with_composer_the_repo_builds_and_its_tests_pass(tmp_path):
    sandbox, limits = _sandbox()
    src = write_tree(tmp_path / "pad", PAD)
    env = ensure_env(get_profile("phpunit"), src, EnvConfig(cache_dir=str(tmp_path / "envs")), sandbox, limits)
    (tmp_path / "scratch").mkdir()
    base = measure_baseline(SuiteRunner("phpunit", src, sandbox, limits, env, tmp_path / "scratch"), 1, False)
    assert base.reason is None and sorted(base.stable) == ["Acme\\Pad\\Tests\\PadTest::testLeft",
                                                           "Acme\\Pad\\Tests\\PadTest::testLonger"], base.detail


def test_the_tool_stamp_changes_when_a_tool_is_installed_or_upgraded(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    missing = tool_stamp(["zz-builder"])
    tool = tmp_path / "zz-builder"
    tool.write_text("#!/bin/sh\necho 1\n")
    tool.chmod(0o755)
    installed = tool_stamp(["zz-builder"])
    tool.write_text("#!/bin/sh\necho 2.0\n")
    assert len({missing, installed, tool_stamp(["zz-builder"])}) == 3
    # by name and version (machines with the same tools share a key); a repo's own script is no tool
    assert tool_stamp([str(tool), "./gradlew"]) == "tools:zz-builder=2.0"


def test_an_env_is_not_reused_once_the_stand_ins_datagen_writes_into_it_change(tmp_path, monkeypatch):
    """The Ruby envs hold datagen's gem stand-ins: adding one (a new wall fixed) must give new
    envs, not the cached ones without it."""
    from datagen.sandbox.harness.profiles import _ruby

    src = write_tree(tmp_path / "gem", {"Gemfile": 'source "https://rubygems.org"\n', "lib/x.rb": "X = 1\n",
                                        "spec/x_spec.rb": 'RSpec.describe("x") { it("is") { expect(1).to eq 1 } }\n'})
    profile = get_profile("rspec")
    plan = profile.plan(src)
    before = profile.env_key(src, plan)
    assert profile.env_key(src, plan) == before  # the same stand-ins: the same key
    monkeypatch.setitem(_ruby.SHIMS, "some-new-reporter", "SomeNewReporter = DatagenNoop\n")
    assert profile.env_key(src, plan) != before
