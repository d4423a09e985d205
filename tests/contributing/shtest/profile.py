"""A toy runner profile written outside datagen: each ``tests/*.sh`` script is a test that
passes when it exits 0 (a repo says it is tested so by a ``shtest.conf`` at its root).

The whole of a new runner: this one module (the profile, registered when imported), its
parser (``parser.py``) and a golden report of the real run (``golden/report.jsonl``)."""

from __future__ import annotations

import shlex
from pathlib import Path

from datagen.records.env import EnvPlan
from datagen.sandbox.harness.profiles.base import Profile, ProfileEnv, TestResults
from datagen.sandbox.harness.profiles.registry import register
from tests.contributing.shtest.parser import parse_shtest_jsonl

# one line per script: {"test": "tests/a.sh", "exit": 0}; no script named: every tests/*.sh
RUN = ('report=$1; shift; [ $# -gt 0 ] || set -- tests/*.sh; : > "$report"; '
       'for t in "$@"; do bash "$t" >/dev/null 2>&1; printf \'{"test": "%s", "exit": %d}\\n\' "$t" $? >> "$report"; '
       "done")


@register
class ShtestProfile(Profile):
    """A shtest.conf at the root: tests/*.sh scripts, each passing when it exits 0."""

    name = "shtest"
    language = "shell"
    source_langs = ("shell",)
    tools = {"bash": "bash"}
    priority = 5  # asked before the built-in profiles: only a shtest.conf claims a repo
    report = ".datagen-report.jsonl"

    def detect(self, src: Path, paths: list[str]) -> bool:
        return "shtest.conf" in paths

    def plan(self, src: Path) -> EnvPlan:
        return EnvPlan(profile=self.name)  # nothing to install: bash runs the scripts

    def test_command(self, env: ProfileEnv, workdir: Path, tests: list[str] | None) -> list[str]:
        return ["bash", "-c", RUN, "shtest", self.report, *(tests or [])]

    def parse(self, text: str) -> TestResults:
        return parse_shtest_jsonl(text)

    def eval_commands(self, plan: EnvPlan, tests: list[str]) -> list[str]:
        return ["failed=0", *(f"bash {shlex.quote(t)} || failed=1" for t in tests), 'exit "$failed"']
