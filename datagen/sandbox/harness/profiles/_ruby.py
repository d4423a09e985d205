"""What the RSpec and minitest profiles share: the Ruby version a repo asks for and its gems.

Gems come from Bundler where the repo has a ``Gemfile``: at setup, ``bundle install --local``
first (the Gemfile resolved against the gems already on the machine, e.g. Debian's
``ruby-rspec``, with ``GEM_HOME`` in the env folder), then, when those do not satisfy it,
``bundle install`` from RubyGems (network on) into the env folder (``BUNDLE_PATH``). Either
way the resolved ``Gemfile.lock`` is kept in the env and linked into working copies that lack
one, and runs go through ``bundle exec``. Without a Gemfile (or when neither install works)
the tests run on the machine's gems, and the plan says so; where a Gemfile could not be
installed, the plan's ``fallback`` is ``system`` and the task's replay scripts go on the same
way (no ``bundle install``, no ``bundle exec``), saying so in a comment. A spec helper's own
``require "bundler/setup"`` would then fail on the Gemfile the machine cannot satisfy, so such runs
(and the replays) put a folder first on ``RUBYLIB`` whose ``bundler/setup.rb`` does nothing.

Coverage, debugger, reporter, warning-filter and benchmark gems (simplecov, coveralls, codecov,
pry, byebug, debug, rspec_junit_formatter, minitest-reporters, warning, rspec-benchmark, ...) do
not change what a test checks (a benchmark example fails and is left out), yet a
spec helper that requires one that is not installed fails every spec file. Every test run
(and every eval script) has a folder of stand-ins on ``RUBYLIB`` (``SHIMS``): requiring one
defines the gem's constants as a no-op. The repo's own ``lib/`` comes first (``-I``), so a
repo that is one of these gems still tests its own code.
"""

from __future__ import annotations

import glob
import json
import re
import shlex
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

from datagen.records.env import EnvPlan, InstallStep
from datagen.sandbox.harness.profiles._env import cached_env, copy_source
from datagen.sandbox.harness.profiles.base import EnvContext, Profile, ProfileEnv

MODE_FILE = "mode.json"
SYSTEM = "system"  # the plan's ``fallback`` when a Gemfile could not be installed: the machine's gems
NO_BUNDLER = "no-bundler"  # the env's folder whose bundler/setup.rb is a no-op (``fallback`` system)
_NO_BUNDLER_SETUP = ("# datagen: Bundler could not install this repo's Gemfile, so its tests run on the machine's\n"
                     "# gems; this file stands in for bundler/setup, which would fail to resolve that Gemfile.\n")


SHIM_DIR = "gem-shims"  # the env's folder of stand-ins for coverage, debug and reporter gems
_NOOP = """# datagen: a stand-in for coverage, debugger and reporter gems that are not installed: they
# do not change what a test checks. Every call, constant and block on it does nothing.
module DatagenNoop
  def self.method_missing(*_args, **_opts, &_blk)
    self
  end

  def self.respond_to_missing?(*_args)
    true
  end

  def self.const_missing(_name)
    self
  end
end
"""
_PRY = 'Pry = DatagenNoop unless defined?(Pry)\nclass Binding\n  def pry(*); end\nend\n'
_BYEBUG = 'Byebug = DatagenNoop unless defined?(Byebug)\nmodule Kernel\n  private def byebug(*); end\n' \
          '  private def debugger(*); end\nend\n'
_DEBUG = ('DEBUGGER__ = DatagenNoop unless defined?(DEBUGGER__)\nclass Binding\n  def break(*); end\n'
          '  def b(*); end\nend\nmodule Kernel\n  private def debugger(*); end\nend\n')
_JUNIT = ("if defined?(RSpec::Core)\n  require \"rspec/core/formatters/base_formatter\"\n"
          "  class RspecJunitFormatter < RSpec::Core::Formatters::BaseFormatter\n"
          "    RSpec::Core::Formatters.register self\n  end\nelse\n  RspecJunitFormatter = DatagenNoop\nend\n")
# the warning gem filters Ruby's warnings (Warning.ignore / process): no test checks them
_WARNING = ("module Warning\n  def self.ignore(*); end\n  def self.process(*); end\n  def self.clear(*); end\n"
            "  def self.dedup(*); end\nend\n")
# rspec-benchmark's matchers (perform_under, ...): examples that use them fail (left out as
# failing in every run); the others load
_RSPEC_BENCHMARK = ("module RSpec\n  module Benchmark\n    module Matchers; end\n"
                    "    def self.configure(*)\n      yield DatagenNoop if block_given?\n    end\n  end\nend\n")
# the file a ``require`` names -> what it defines (after the no-op module)
SHIMS: dict[str, str] = {
    "simplecov": "SimpleCov = DatagenNoop unless defined?(SimpleCov)\n",
    **{name: 'require "simplecov"\n' for name in (
        "simplecov-lcov", "simplecov-cobertura", "simplecov-json", "simplecov-console", "simplecov_json_formatter",
        "simplecov-html", "codecov", "simplecov-rcov")},
    "coveralls": 'require "simplecov"\nCoveralls = DatagenNoop unless defined?(Coveralls)\n',
    "codeclimate-test-reporter": "CodeClimate = DatagenNoop unless defined?(CodeClimate)\n",
    "pry": _PRY, "pry-byebug": 'require "pry"\nrequire "byebug"\n', "pry-nav": 'require "pry"\n',
    "byebug": _BYEBUG, "debug": _DEBUG, "debug/prelude": 'require "debug"\n', "debug/open": 'require "debug"\n',
    "rspec_junit_formatter": _JUNIT,
    "minitest/reporters": "module Minitest\n  Reporters = DatagenNoop unless defined?(Reporters)\nend\n",
    "warning": _WARNING, "rspec-benchmark": _RSPEC_BENCHMARK,
}


def write_shims(folder: Path) -> Path:
    """The stand-in gems (``SHIMS``) as files under ``folder``: the RUBYLIB entry of a test run."""
    (folder / "datagen_noop.rb").parent.mkdir(parents=True, exist_ok=True)
    (folder / "datagen_noop.rb").write_text(_NOOP, encoding="utf-8")
    for name, body in SHIMS.items():
        (folder / f"{name}.rb").parent.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.rb").write_text(f"# datagen: a no-op stand-in for {name} (see datagen_noop.rb)\n"
                                           f'require "datagen_noop"\n{body}', encoding="utf-8")
    return folder


def shim_lines() -> list[str]:
    """Replay: the same stand-ins in a temporary folder put first on ``RUBYLIB`` (``$SH``)."""
    lines = ['SH="$(mktemp -d)" || exit 2', "trap 'rm -rf \"$SH\" \"${NB:-}\"' EXIT",
             'mkdir -p "$SH/debug" "$SH/minitest"',
             f'printf %s {shlex.quote(_NOOP)} > "$SH/datagen_noop.rb"']
    for name, body in SHIMS.items():
        text = f'require "datagen_noop"\n{body}'
        lines.append(f'printf %s {shlex.quote(text)} > "$SH/{name}.rb"')
    return [*lines, 'export RUBYLIB="$SH${RUBYLIB:+:$RUBYLIB}"']


@lru_cache(maxsize=1)
def bundler() -> str:
    """The Bundler executable: ``bundle``, or Debian's versioned ``bundle3.x`` ('' when none)."""
    found = shutil.which("bundle")
    if found:
        return found
    versioned = sorted(glob.glob("/usr/bin/bundle[0-9]*"))
    return versioned[-1] if versioned else ""


@lru_cache(maxsize=1)
def ruby_version() -> str:
    if shutil.which("ruby") is None:
        return ""
    return subprocess.run(["ruby", "-e", "print RUBY_VERSION"], capture_output=True, text=True).stdout.strip()


def ruby_request(src: Path) -> str:
    """The Ruby version the repo asks for: ``.ruby-version``, the Gemfile's ``ruby``, a gemspec's
    ``required_ruby_version``; '' when none says."""
    version_file = src / ".ruby-version"
    if version_file.is_file():
        return version_file.read_text(encoding="utf-8", errors="replace").strip().removeprefix("ruby-")
    gemfile = src / "Gemfile"
    if gemfile.is_file():
        m = re.search(r"^\s*ruby\s+['\"]([^'\"]+)['\"]", gemfile.read_text(encoding="utf-8", errors="replace"), re.M)
        if m:
            return m.group(1)
    for spec in sorted(src.glob("*.gemspec")):
        m = re.search(r"required_ruby_version\s*=\s*['\"]([^'\"]+)['\"]", spec.read_text(encoding="utf-8",
                                                                                       errors="replace"))
        if m:
            return m.group(1)
    return ""


def _tuple(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", version)[:3])


def ruby_plan(profile: str, src: Path, test_command: list[str], test_paths: list[str]) -> EnvPlan:
    request, have = ruby_request(src), ruby_version()
    bare = re.sub(r"^[~>=<^ ]+", "", request)
    mismatch = None
    if bare and have and not request.startswith("<"):
        # ">= 3.0" and "~> 3.1" are floors; a bare "3.2.1" (.ruby-version) asks for that minor line
        floor = _tuple(bare)
        if _tuple(have)[:len(floor)] < floor or (request == bare and _tuple(have)[:2] != floor[:2]):
            mismatch = f"the repo asks Ruby {request}; Ruby {have} here"
    install = []
    if (src / "Gemfile").is_file():
        install.append(InstallStep(name="bundle install", kind="command", args=["bundle", "install"],
                                   origin="Gemfile", optional=True))
    notes = [] if install else ["no Gemfile: the tests run on the machine's gems"]
    return EnvPlan(profile=profile, toolchain=f"ruby{have}" if have else "ruby", toolchain_request=request,
                   toolchain_mismatch=mismatch, install=install, test_command=test_command,
                   test_paths=test_paths, notes=notes)


def ruby_dependency_files(src: Path) -> list[str]:
    names = ["Gemfile", "Gemfile.lock", ".ruby-version", *(p.name for p in sorted(src.glob("*.gemspec")))]
    return [n for n in names if (src / n).is_file()]


def ensure_ruby_env(profile, src: Path, plan: EnvPlan, ctx: EnvContext) -> ProfileEnv:
    """Bundler into the env (network), else Bundler on the machine's gems, else no Bundler."""
    def build(target: Path, step) -> None:
        mode = "system"
        bundle = bundler()
        if plan.install and bundle:
            copy_source(src, target / "work")
            env = {"BUNDLE_GEMFILE": str(target / "work" / "Gemfile"), "BUNDLE_APP_CONFIG": str(target / "config")}
            # the machine's gems first (no network wait where they satisfy the Gemfile), then RubyGems
            if step("bundle install --local", [bundle, "install", "--local"], target,
                    env={**env, "GEM_HOME": str(target / "gemhome")}, check=False):
                mode = "bundle-system"
            elif step("bundle install", [bundle, "install"], target, env={**env, "BUNDLE_PATH": str(target / "gems")},
                      check=False):
                mode = "bundle-path"
            if mode != "system" and (target / "work" / "Gemfile.lock").is_file():
                shutil.copy2(target / "work" / "Gemfile.lock", target / "Gemfile.lock")
            shutil.rmtree(target / "work", ignore_errors=True)
        if mode == "system" and plan.install:
            (target / NO_BUNDLER / "bundler").mkdir(parents=True, exist_ok=True)
            (target / NO_BUNDLER / "bundler" / "setup.rb").write_text(_NO_BUNDLER_SETUP, encoding="utf-8")
        write_shims(target / SHIM_DIR)
        (target / MODE_FILE).write_text(json.dumps({"mode": mode}), encoding="utf-8")

    target = cached_env(profile, src, plan, ctx, build)
    mode = json.loads((target / MODE_FILE).read_text(encoding="utf-8"))["mode"]
    env: dict[str, str] = {"BUNDLE_APP_CONFIG": str(target / "config"), "RUBYLIB": str(target / SHIM_DIR)}
    links: dict[str, str] = {}
    if mode != "system":
        env["BUNDLE_FROZEN"] = "true"
        if (target / "Gemfile.lock").is_file():
            links["Gemfile.lock"] = str(target / "Gemfile.lock")
    if mode == "bundle-path":
        env["BUNDLE_PATH"] = str(target / "gems")
    if mode == "bundle-system":  # Bundler writes into GEM_HOME even when every gem is installed
        env["GEM_HOME"] = str(target / "gemhome")
    notes = {"system": "the machine's gems (no Gemfile, or Bundler could not install)",
             "bundle-system": "bundle install --local: the Gemfile resolved against the machine's gems",
             "bundle-path": "bundle install into the env"}
    # a Gemfile Bundler could not install (RubyGems unreachable, a group it cannot fetch): the
    # env went on with the machine's gems, and so do the task's replay scripts
    went_on = SYSTEM if mode == "system" and plan.install else ""
    update: dict = {"notes": [*plan.notes, notes[mode]], "fallback": went_on}
    if went_on:
        update["pins"] = machine_gems(profile.tool_gem)
        env["RUBYLIB"] = f"{target / NO_BUNDLER}:{target / SHIM_DIR}"
    plan = plan.model_copy(update=update)
    return ProfileEnv(profile.name, plan, path=target, env=env, ro_paths=(target,), links=links, extra=mode)


def ruby_prefix(env: ProfileEnv) -> list[str]:
    """``bundle exec`` where the env resolved the Gemfile, else nothing."""
    return [bundler(), "exec"] if env.extra in ("bundle-path", "bundle-system") and bundler() else []


def machine_gems(gem: str) -> list[str]:
    """The test tool's gem on this machine, as ``name==version`` (``rspec==3.12.0``): what a
    replay installs where the machine it runs on lacks it ([] for no gem, e.g. minitest's,
    which ships with Ruby, or when the gem is not here)."""
    if not gem or shutil.which("gem") is None:
        return []
    out = subprocess.run(["gem", "list", "--exact", "--local", gem], capture_output=True, text=True).stdout
    m = re.search(rf"^{re.escape(gem)} \((?:default: )?([\w.]+)", out, re.M)
    return [f"{gem}=={m.group(1)}"] if m else []


def ruby_setup_lines(plan: EnvPlan) -> list[str]:
    """Replay: Bundler over the network, else on the machine's gems; no Gemfile, nothing.
    Where the env that validated the task could not install the Gemfile (``fallback``
    ``system``), the replay does not try: it runs on the machine's gems, as that env did,
    and installs only the test tool where it is missing (the version that env had)."""
    find = 'B="$(command -v bundle || ls /usr/bin/bundle[0-9]* 2>/dev/null | tail -n 1)"'
    if plan.fallback == SYSTEM:
        lines = ["# bundle install failed where this task was validated (RubyGems unreachable, or a Gemfile",
                 "# group it could not fetch) and that env went on: its tests ran on the machine's gems,",
                 "# without bundle exec. This script goes on the same way: no bundle install, and the",
                 "# eval script runs the tests without bundle exec."]
        for pin in plan.pins:
            name, _, version = pin.partition("==")
            lines.append(f"command -v {shlex.quote(name)} >/dev/null 2>&1 || "
                         f"gem install --no-document {shlex.quote(name)} -v {shlex.quote(version)} || exit 1")
        return lines
    if not plan.install:
        return [find]
    return [find, 'if [ -n "$B" ]; then "$B" install --local || "$B" install || exit 1; fi']


def ruby_eval_prefix(plan: EnvPlan) -> list[str]:
    """Replay: sets ``$RUN`` to ``bundle exec`` where a Gemfile.lock was resolved, as the
    validating env did (never where that env went on with the machine's gems); the stand-ins
    for coverage, debug and reporter gems on ``RUBYLIB``, as in every validating run (the
    folders go when the script ends)."""
    shims = ["# coverage, debugger and reporter gems a spec helper requires: no-op stand-ins first on",
             "# RUBYLIB, as in the runs that validated the task (they do not change what a test checks)",
             *shim_lines()]
    if plan.fallback == SYSTEM:
        setup = shlex.quote(_NO_BUNDLER_SETUP.replace("datagen: ", ""))
        return [*shims, 'RUN=""  # as where the task was validated: the machine\'s gems, no bundle exec',
                "# and, as there, a no-op bundler/setup first on RUBYLIB: the repo's own require of it",
                "# would fail on the Gemfile this machine could not install",
                'NB="$(mktemp -d)" && mkdir -p "$NB/bundler" && printf %s ' + setup + ' > "$NB/bundler/setup.rb"',
                'export RUBYLIB="$NB${RUBYLIB:+:$RUBYLIB}"']
    return [*shims, 'B="$(command -v bundle || ls /usr/bin/bundle[0-9]* 2>/dev/null | tail -n 1)"',
            'RUN=""; if [ -f Gemfile.lock ] && [ -n "$B" ]; then RUN="$B exec"; fi']


class RubyProfile(Profile):
    """What the RSpec and minitest profiles share: the language, the image, the env (Bundler's,
    with the gem stand-ins) and its setup lines (a base, not registered itself)."""

    language = "ruby"
    source_langs = ("ruby",)
    env_tools = ("bundle", "gem")
    image, image_default = "ruby:{version}", "ruby:3"
    env_version = 2  # 2: the env holds the stand-ins for coverage, debug and reporter gems
    tool_gem = ""  # the gem of the test tool a replay on the machine's gems installs where missing

    def dependency_files(self, src: Path) -> list[str]:
        return ruby_dependency_files(src)

    def env_files(self) -> str:
        return _NOOP + json.dumps(SHIMS, sort_keys=True)  # the stand-ins every env holds

    def ensure_env(self, src: Path, plan: EnvPlan, ctx: EnvContext) -> ProfileEnv:
        return ensure_ruby_env(self, src, plan, ctx)

    def setup_commands(self, plan: EnvPlan) -> list[str]:
        return ruby_setup_lines(plan)
