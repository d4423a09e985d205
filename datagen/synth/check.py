"""Does a candidate change prove a task? Run it in the sandbox and read the tests.

1. run only the stable tests that reach the changed lines (the whole suite when coverage
   does not say); nothing fails -> ``no_test_breaks``; none of them even ran (every test
   module fails to import) -> ``breaks_collection``;
2. run the whole suite ``full_runs`` times: FAIL_TO_PASS are stable tests that fail in
   every run, PASS_TO_PASS stable tests that pass in every run; a test that changes
   between runs is in neither;
3. keep when FAIL_TO_PASS >= 1 and PASS_TO_PASS >= 1 (the clean source passes every
   stable test, as the baseline showed, so reverting the change restores them all).

The failure output kept for the problem statement is the first run's (hash seed fixed,
run times removed), so the same candidate always gets the same statement prompt.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from datagen.sandbox.harness.runners import TestRun
from datagen.synth.baseline import Baseline, SuiteRunner

FAILED = ("fail", "error")
_PYTEST_TIME = re.compile(r"^(=* ?\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?)\b.*?)"
                          r" in \d+(?:\.\d+)?s(?: \(\d+:\d\d:\d\d\))?", re.M)
_NODE_MS = re.compile(r"duration_ms[: ]+\d+(?:\.\d+)?")
# go test's "(0.01s)" and "ok  pkg 0.011s", node's spec reporter's "(363.5ms)", libtest's
# "finished in 0.27s", cargo's hashed binary names, the thread ids of Rust panics and the
# object addresses Ruby's and Python's inspect print (``#<Money:0x00007f9c...``,
# ``<Point object at 0x7f3a...>``): they change from run to run
_OTHER_TIMES = [(re.compile(r"\((\d+\.\d+)s\)"), "(0.00s)"), (re.compile(r"\(\d+(?:\.\d+)?ms\)"), "(0ms)"),
                (re.compile(r"\t\d+\.\d+s$", re.M), "\t0.000s"),
                (re.compile(r"finished in \d+\.\d+s"), "finished in 0.00s"),
                (re.compile(r"target\(s\) in \d+(?:\.\d+)?m?s"), "target(s) in 0.00s"),
                (re.compile(r"(target/\S+/deps/[\w-]+?)-[0-9a-f]{16}\b"), r"\1"),
                (re.compile(r"(thread '[^']*') \(\d+\)"), r"\1"),
                (re.compile(r"((?:#<[\w:]+:| object at )0x)[0-9a-f]{6,}\b"), r"\1...")]


@dataclass
class Verdict:
    """What validation found; ``stage`` is the furthest step the candidate reached."""

    kept: bool
    reason: str | None
    stage: str  # applied, broke_tests, valid
    fail_to_pass: list[str] = field(default_factory=list)
    pass_to_pass: list[str] = field(default_factory=list)
    sandbox_s: float = 0.0
    failure_output: str = ""  # the failing tests' output, for the problem statement


def stable_output(text: str) -> str:
    """Test output without run times, so the same failure always reads the same (statement
    prompts are cached by content, and templates quote the output)."""
    text = _NODE_MS.sub("duration_ms 0", _PYTEST_TIME.sub(r"\1 in 0.00s", text))
    for pattern, repl in _OTHER_TIMES:
        text = pattern.sub(repl, text)
    return text


def selected_tests(tests: list[str]) -> list[str]:
    """Node ids without parameters (``f[1]`` -> ``f``), deduplicated: robust on a command
    line, and a superset of what was asked."""
    return sorted({t.split("[", 1)[0] for t in tests})


def _run_problem(run: TestRun) -> str | None:
    if run.run.limit_hit == "timeout":
        return "timeout"
    if run.run.limit_hit:
        return f"limit_{run.run.limit_hit}"
    if not run.results:
        return "breaks_collection"
    return None


def check_changes(suite: SuiteRunner, base: Baseline, changes: dict[str, str],
                  covering: list[str], full_runs: int) -> Verdict:
    """Validate one candidate (``changes``: path -> new text) against ``base``."""
    start = time.monotonic()
    stable = set(base.stable)

    def done(kept: bool, reason: str | None, stage: str, **kw) -> Verdict:
        return Verdict(kept, reason, stage, sandbox_s=round(time.monotonic() - start, 3), **kw)

    chosen = selected_tests(covering)
    # a fixed hash seed here: its output is what statements quote, and pytest prints set
    # differences in hash order (the whole-suite runs keep a random seed, to catch flakes)
    first = suite.run(changes, chosen or None, fixed_hash=True)
    if problem := _run_problem(first):
        return done(False, problem, "applied")
    asked = [t for t in stable if not chosen or t.split("[", 1)[0] in chosen]
    if not any(t in first.results for t in asked):  # e.g. an import error in every test module
        return done(False, "breaks_collection", "applied")
    if all(first.results.get(t) == "pass" for t in asked):
        return done(False, "no_test_breaks", "applied")
    runs = [suite.run(changes) for _ in range(full_runs)]
    for run in runs:
        if problem := _run_problem(run):
            return done(False, problem, "broke_tests")
    states = [{t: r.results.get(t, "missing") for t in stable} for r in runs]
    f2p = sorted(t for t in stable if all(s[t] in (*FAILED, "missing") for s in states))
    p2p = sorted(t for t in stable if all(s[t] == "pass" for s in states))
    flipped = stable - set(f2p) - set(p2p)
    if not f2p:
        return done(False, "only_flaky_breaks" if flipped else "no_test_breaks", "broke_tests")
    if not p2p:
        return done(False, "breaks_every_test", "broke_tests", fail_to_pass=f2p)
    output = stable_output(first.run.stdout + first.run.stderr)
    return done(True, None, "valid", fail_to_pass=f2p, pass_to_pass=p2p, failure_output=output)
