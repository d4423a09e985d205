"""Ruby with minitest: every ``test/**/*_test.rb`` / ``test_*.rb`` loaded in one process with
``--verbose`` (one ``Class#test_name = 0.00 s = .`` line per test, the report datagen reads).

A subset is minitest's ``-n /^(A#test_x|B#test_y)$/``. The seed is fixed, so the order is
the same run to run. Gems: see ``_ruby.py``.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from datagen.records.env import EnvPlan
from datagen.sandbox.harness import protect
from datagen.sandbox.harness.checks import awk_program
from datagen.sandbox.harness.parsers import parse_minitest_verbose
from datagen.sandbox.harness.profiles._replay import ids_lines
from datagen.sandbox.harness.profiles._ruby import RubyProfile, ruby_eval_prefix, ruby_plan, ruby_prefix
from datagen.sandbox.harness.profiles.base import ProfileEnv, TestResults, fitting
from datagen.sandbox.harness.profiles.registry import register

LOADER = 'Dir["test/**/{*_test,test_*}.rb"].sort.each { |f| require File.expand_path(f) }'
SEED = "1"
_USES_MINITEST = re.compile(r"\bminitest\b|Minitest::", re.I)


def minitest_argv(tests: list[str] | None) -> list[str]:
    cmd = ["ruby", "-Ilib", "-Itest", "-e", LOADER, "--", "--verbose", "--seed", SEED]
    if tests:  # a name pattern too long for one argument: the whole suite (the report is read per id)
        names = "|".join(re.escape(t).replace("/", "\\/") for t in sorted(set(tests)))
        cmd += fitting(["-n", f"/^({names})$/"], [])
    return cmd


@register
class MinitestProfile(RubyProfile):
    """A Ruby repo whose tests under ``test/`` use minitest."""

    name = "minitest"
    tools = {"ruby": "ruby"}
    priority = 75
    report = ".datagen-report.txt"
    tool_gem = ""  # none to install on a replay: minitest ships with Ruby

    def detect(self, src: Path, paths: list[str]) -> bool:
        tests = [p for p in paths if p.startswith("test/") and p.endswith(".rb")]
        for rel in tests[:40]:
            try:
                if _USES_MINITEST.search((src / rel).read_text(encoding="utf-8", errors="replace")):
                    return True
            except OSError:
                continue
        return False

    def is_test_file(self, path: str) -> bool:
        return path.startswith("test/") or protect.is_test_file(path)

    def plan(self, src: Path) -> EnvPlan:
        return ruby_plan(self.name, src, ["ruby", "-Ilib", "-Itest", "-e", LOADER], ["test"])

    def test_command(self, env: ProfileEnv, workdir: Path, tests: list[str] | None) -> list[str]:
        return ["sh", "-c", f"{shlex.join([*ruby_prefix(env), *minitest_argv(tests)])} > {self.report} 2>&1"]

    def parse(self, text: str) -> TestResults:
        return parse_minitest_verbose(text)

    def test_files(self, tests: list[str]) -> list[str]:
        return []

    # --- replay -------------------------------------------------------------------------
    def eval_commands(self, plan: EnvPlan, tests: list[str]) -> list[str]:
        return [*ruby_eval_prefix(plan), f"$RUN {shlex.join(minitest_argv(tests))} > .datagen-eval.txt 2>&1",
                *ids_lines(tests),
                f"awk {shlex.quote(awk_program('minitest'))} .datagen-eval.txt", "exit $?"]
