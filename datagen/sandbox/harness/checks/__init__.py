"""The eval scripts' report checks: one per report format, each the shell-side twin of a
Python parser, kept here as data files (they ship in the wheel beside this module).

A task's eval script runs the chosen tests with the repo's own runner, then one of these
checks reads the runner's report, so the script exits 0 only when every chosen id ran and
passed. They run wherever a task replays, with what an image with bash has: POSIX awk, and
node where the tests are JavaScript. Each reads the ids one a line from the file
``$IDS_FILE`` (``js_report.js``: its third argument) and prints ``NOT PASSED: <id>`` for each
that did not pass. ``tests/sandbox/test_checks.py`` runs every check and its twin on the same
golden reports and requires the same verdicts.

========================  ==============================================  ======================================
check                     reads                                           Python twin (``harness/parsers.py``)
========================  ==============================================  ======================================
``junit``                 JUnit XML of Surefire, Gradle, CTest, PHPUnit   ``parse_jvm_junit``, ``parse_phpunit_junit``
                          (``$FMT``: ``maven`` / ``ctest`` / ``phpunit``)
``ctest_cases``           ``ctest --output-junit`` with the cases each    ``parse_ctest_junit``
                          executable printed (``cases.awk`` shared)
``make_cases``            the make profile's ``id<TAB>status`` report     ``profiles.make.parse_make_tsv``
``rspec``                 rspec's JSON (``$KEYS_FILE``: a passed          ``parse_rspec_json``
                          example's JSON text, one a line)
``minitest``              minitest's ``--verbose`` output                 ``parse_minitest_verbose``
``cargo``                 ``cargo test`` output, to ``<id> pass|fail``    ``parse_cargo_test``
``js_report``             jest / vitest / mocha JSON, ava's TAP, node's   ``parse_jest_json``, ``parse_mocha_json``,
                          JUnit (its first argument names which)          ``parse_tap``, ``parse_node_junit``
========================  ==============================================  ======================================
"""

from __future__ import annotations

from functools import cache
from importlib import resources

# the files of each check, in the order they are joined into one program
CHECKS: dict[str, tuple[str, ...]] = {
    "junit": ("junit.awk",),
    "ctest_cases": ("cases.awk", "ctest_cases.awk", "cases_end.awk"),
    "make_cases": ("cases.awk", "make_cases.awk", "cases_end.awk"),
    "rspec": ("rspec.awk",),
    "minitest": ("minitest.awk",),
    "cargo": ("cargo.awk",),
    "js_report": ("js_report.js",),
}


@cache
def check_text(name: str) -> str:
    """The program of check ``name`` (its files joined), as the files hold it."""
    if name not in CHECKS:
        raise KeyError(f"no check {name!r}; known: {', '.join(sorted(CHECKS))}")
    folder = resources.files(__package__)
    return "".join(folder.joinpath(f).read_text(encoding="utf-8") for f in CHECKS[name])


def awk_program(name: str) -> str:
    """An awk check as an eval script quotes it: the program starting on the line after
    ``awk '`` (as the scripts have always written it)."""
    return "\n" + check_text(name)
