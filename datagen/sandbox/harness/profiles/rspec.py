"""Ruby with RSpec: ``rspec --format json``; ids ``spec/x_spec.rb::Full description``.

A subset runs the files of the chosen ids whole (only the chosen ids are read: a one-liner's
description exists only once it ran, so ``-e`` could not select it). Gems: see ``_ruby.py``.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from datagen.records.env import EnvPlan
from datagen.sandbox.harness.checks import awk_program
from datagen.sandbox.harness.parsers import parse_rspec_json
from datagen.sandbox.harness.profiles._replay import ids_lines
from datagen.sandbox.harness.profiles._ruby import RubyProfile, ruby_eval_prefix, ruby_plan, ruby_prefix
from datagen.sandbox.harness.profiles.base import ProfileEnv, TestResults, fitting, ids_file
from datagen.sandbox.harness.profiles.registry import register


def rspec_selection(tests: list[str]) -> list[str]:
    """The files of ids ``file::description``, each run whole: a one-liner's description
    (``it { is_expected.to respond_to(:copy=) }`` -> "is expected to respond to #copy=") is
    made as the example runs, so ``-e <description>`` never selects it (necromancer's replays
    failed so while the whole-suite runs that validated them had passed)."""
    return sorted({t.split("::", 1)[0] for t in tests})


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

    def test_files(self, tests: list[str]) -> list[str]:
        return sorted({t.split("::", 1)[0] for t in tests})

    # --- replay -------------------------------------------------------------------------
    def eval_commands(self, plan: EnvPlan, tests: list[str]) -> list[str]:
        run = ["rspec", "--no-color", "--format", "json", "--out", ".datagen-eval.json", "--format", "progress",
               *fitting(rspec_selection(tests), [])]
        keys = [passed_key(t) for t in tests]
        return [*ruby_eval_prefix(plan), f"$RUN {shlex.join(run)}",
                *ids_lines(tests), *ids_file(keys, KEYS_FILE), f"export KEYS_FILE={KEYS_FILE}",
                f"awk {shlex.quote(awk_program('rspec'))} .datagen-eval.json", "exit $?"]
