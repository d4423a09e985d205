"""Shell pieces shared by the eval scripts of the JVM, C/C++, Ruby and PHP profiles.

An eval script runs the chosen tests with the repo's own tool, then checks the tool's report
for every chosen id, so it exits 0 only when each of them ran and passed (a runner's exit
status alone would pass a test that was never selected, and fail on one outside the list).
The checks use POSIX awk, which every image with bash has; no Python, no datagen.
"""

from __future__ import annotations

import shlex

from datagen.sandbox.harness.checks import awk_program
from datagen.sandbox.harness.profiles.base import IDS_FILE, ids_file


def ids_lines(tests: list[str]) -> list[str]:
    """Bash lines: the ids one a line in ``IDS_FILE`` (a here-document, any number fits), and
    ``$IDS_FILE`` naming it for the checks."""
    return [*ids_file(tests), f"export IDS_FILE={IDS_FILE}"]


def junit_check(fmt: str, reports: str, tests: list[str]) -> list[str]:
    """Bash lines: check the JUnit XML ``reports`` (a shell glob or file list) for ``tests``
    and exit with the result."""
    return [*ids_lines(tests), f"export FMT={fmt}",
            f"cat {reports} 2>/dev/null | awk {shlex.quote(awk_program('junit'))}", "exit $?"]


def cmake_regex(names: list[str]) -> str:
    """An anchored regex (CMake / POSIX ERE / PCRE alike) matching exactly ``names``."""
    special = set(".^$*+?()[]{}|\\/")
    escaped = ["".join("\\" + c if c in special else c for c in n) for n in names]
    return "^(" + "|".join(escaped) + ")$"


def ctest_check(report: str, tests: list[str], check: str = "ctest_cases") -> list[str]:
    """Bash lines: check the ``ctest --output-junit`` ``report`` (or with ``check``
    ``make_cases``, the make profile's) for ``tests`` (test names and ``<test>::<case>`` ids)
    and exit with the result (``harness/checks/``)."""
    return [*ids_lines(tests), f"awk {shlex.quote(awk_program(check))} {report}", "exit $?"]
