"""Ruby with RSpec: ``rspec --format json``; ids ``spec/x_spec.rb::Full description``.

A subset runs the files of the chosen ids whole (only the chosen ids are read: a one-liner's
description exists only once it ran, so ``-e`` could not select it). Gems: see ``_ruby.py``.

Per-example line coverage comes from Ruby's own ``Coverage`` module: started by ``RUBYOPT``
before any file of the repo loads, read and cleared around each example by a hook file that
``rspec --require`` adds, so every line is mapped to the examples that passed through it
(what the ``feature`` family groups by spec file, and what picks each candidate's tests).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from datagen.config.sandbox import SandboxLimits

from datagen.records.env import EnvPlan
from datagen.sandbox.harness.checks import awk_program
from datagen.sandbox.harness.parsers import parse_rspec_json
from datagen.sandbox.harness.profiles._replay import ids_lines
from datagen.sandbox.harness.profiles._ruby import RubyProfile, ruby_eval_prefix, ruby_plan, ruby_prefix
from datagen.sandbox.harness.profiles.base import ProfileEnv, TestResults, fitting, ids_file
from datagen.sandbox.harness.profiles.registry import register
from datagen.sandbox.isolation.base import Sandbox


def rspec_selection(tests: list[str]) -> list[str]:
    """The files of ids ``file::description``, each run whole: a one-liner's description
    (``it { is_expected.to respond_to(:copy=) }`` -> "is expected to respond to #copy=") is
    made as the example runs, so ``-e <description>`` never selects it (necromancer's replays
    failed so while the whole-suite runs that validated them had passed)."""
    return sorted({t.split("::", 1)[0] for t in tests})


COVER_START = ".datagen_cover_start.rb"  # RUBYOPT -r: Coverage on before the repo's files load
COVER_HOOKS = ".datagen_cover_hooks.rb"  # rspec --require: each passed example's lines
COVER_JSON = ".datagen-cover.json"
_COVER_START_SOURCE = """# datagen: line coverage from the start of the process, so the repo's files are counted
require "coverage"
Coverage.start(lines: true) unless Coverage.running?
"""
# the config's before hook runs first of all of an example's hooks, its after hook last: the
# lines between them are the example's (its groups' hooks included), load time left out
_COVER_HOOKS_SOURCE = """# datagen: each passed example's lines, as path -> line -> example ids (the JSON report's ids)
require "coverage"
require "json"
module DatagenCover
  ROOTS = [Dir.pwd, File.realpath(Dir.pwd)].uniq.map { |d| d.end_with?("/") ? d : d + "/" }
  LINES = Hash.new { |h, k| h[k] = Hash.new { |hh, kk| hh[kk] = [] } }

  def self.take
    Coverage.running? ? Coverage.result(stop: false, clear: true) : {}
  end

  def self.record(id)
    take.each do |path, counts|
      root = ROOTS.find { |r| path.start_with?(r) }
      next unless root
      counts = counts[:lines] if counts.is_a?(Hash)
      rel = path.delete_prefix(root)
      (counts || []).each_with_index { |n, i| LINES[rel][i + 1] << id if n && n > 0 }
    end
  end
end
RSpec.configure do |c|
  c.before(:each) { DatagenCover.take }
  c.after(:each) do |ex|
    path = ex.metadata[:file_path].to_s.delete_prefix("./")
    DatagenCover.record("#{path}::#{ex.full_description}") if ex.exception.nil?
  end
  c.after(:suite) { File.write(".datagen-cover.json", JSON.generate(DatagenCover::LINES)) }
end
"""


def read_rspec_coverage(path: Path) -> dict[str, dict[int, list[str]]]:
    """The hook file's JSON -> path -> line -> sorted example ids ({} when no run wrote it)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {p: {int(n): sorted(set(ids)) for n, ids in lines.items()} for p, lines in sorted(data.items())
            if not p.startswith(".datagen")}


KEYS_FILE = ".datagen-eval-keys"  # the eval script's passed-example keys, one a line


def passed_key(test_id: str) -> str:
    """The text rspec's JSON holds for ``test_id`` as a passed example (its key order is fixed)."""
    path, _, description = test_id.partition("::")
    return (f'"full_description":{json.dumps(description, ensure_ascii=False)},"status":"passed",'
            f'"file_path":{json.dumps("./" + path, ensure_ascii=False)}')


@register
class RSpecProfile(RubyProfile):
    """A Ruby repo with an RSpec suite (``spec/**/*_spec.rb``)."""

    name = "rspec"
    tools = {"ruby": "ruby", "rspec": "ruby-rspec"}
    priority = 70
    report = ".datagen-report.json"
    tool_gem = "rspec"

    def detect(self, src: Path, paths: list[str]) -> bool:
        return any(p.endswith("_spec.rb") for p in paths)

    def is_test_file(self, path: str) -> bool:
        return path.endswith("_spec.rb") or path.startswith("spec/")

    def plan(self, src: Path) -> EnvPlan:
        return ruby_plan(self.name, src, ["rspec"], ["spec"])

    def test_command(self, env: ProfileEnv, workdir: Path, tests: list[str] | None) -> list[str]:
        return [*ruby_prefix(env), "rspec", "--no-color", "--format", "json", "--out", self.report,
                "--format", "progress", *fitting(rspec_selection(tests or []), [])]

    def parse(self, text: str) -> TestResults:
        return parse_rspec_json(text)

    covers_lines = True

    def coverage(self, env: ProfileEnv, sandbox: Sandbox, workdir: Path, limits: SandboxLimits,
                 ro_paths: tuple[Path, ...] = ()) -> dict[str, dict[int, list[str]]]:
        """Each passed example's lines (Ruby's ``Coverage``), from one whole-suite run."""
        (workdir / COVER_START).write_text(_COVER_START_SOURCE, encoding="utf-8")
        (workdir / COVER_HOOKS).write_text(_COVER_HOOKS_SOURCE, encoding="utf-8")
        run_env = self.run_env(env, workdir)
        run_env["RUBYOPT"] = " ".join(x for x in (run_env.get("RUBYOPT", ""), f"-r./{COVER_START}") if x)
        argv = self.test_command(env, workdir, None)
        at = argv.index("rspec") + 1
        sandbox.run([*argv[:at], "--require", f"./{COVER_HOOKS}", *argv[at:]], workdir, limits, env=run_env,
                    ro_paths=(*env.ro_paths, *ro_paths))
        return read_rspec_coverage(workdir / COVER_JSON)

    def test_files(self, tests: list[str]) -> list[str]:
        return sorted({t.split("::", 1)[0] for t in tests})

    def test_group(self, test: str) -> str:
        """The spec file (a description holds ``::`` and ``#`` of its own: ``TTY::Which#which``)."""
        return test.split("::", 1)[0]

    # --- replay -------------------------------------------------------------------------
    def eval_commands(self, plan: EnvPlan, tests: list[str]) -> list[str]:
        run = ["rspec", "--no-color", "--format", "json", "--out", ".datagen-eval.json", "--format", "progress",
               *fitting(rspec_selection(tests), [])]
        keys = [passed_key(t) for t in tests]
        return [*ruby_eval_prefix(plan), f"$RUN {shlex.join(run)}",
                *ids_lines(tests), *ids_file(keys, KEYS_FILE), f"export KEYS_FILE={KEYS_FILE}",
                f"awk {shlex.quote(awk_program('rspec'))} .datagen-eval.json", "exit $?"]
