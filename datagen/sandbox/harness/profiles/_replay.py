"""Shell pieces shared by the eval scripts of the JVM, C/C++, Ruby and PHP profiles.

An eval script runs the chosen tests with the repo's own tool, then checks the tool's report
for every chosen id, so it exits 0 only when each of them ran and passed (a runner's exit
status alone would pass a test that was never selected, and fail on one outside the list).
The checks use POSIX awk, which every image with bash has; no Python, no datagen.
"""

from __future__ import annotations

import shlex

# Reads JUnit XML reports (one <testcase ...> start tag per line, as Surefire, Gradle, CTest
# and PHPUnit write them) and prints "NOT PASSED: <id>" for each id of $IDS (one a line)
# that has no passing case or any failing one. $FMT names the id shape: maven / ctest / phpunit.
JUNIT_CHECK_AWK = r"""
function unxml(v) { gsub(/&quot;/, "\"", v); gsub(/&apos;/, "'", v); gsub(/&lt;/, "<", v);
  gsub(/&gt;/, ">", v); gsub(/&#10;/, "\n", v); gsub(/&amp;/, "\\&", v); return v }
function attr(s, k,   n) { if (match(s, " " k "=\"[^\"]*\"")) { n = length(k) + 3;
  return unxml(substr(s, RSTART + n, RLENGTH - n - 1)) } return "" }
function caseid(s,   name, cls) {
  name = attr(s, "name")
  if (ENVIRON["FMT"] == "ctest") return name
  if (ENVIRON["FMT"] == "phpunit") { cls = attr(s, "class"); return cls "::" name }
  cls = attr(s, "classname"); sub(/\(\)$/, "", name)
  return name == "" ? cls : cls "#" name }
function done() { if (cur != "") { if (bad) failed[cur] = 1; else ok[cur] = 1 } cur = "" }
/<testcase[ >]/ { done(); tag = substr($0, index($0, "<testcase")); cur = caseid(tag); bad = 0
  if (ENVIRON["FMT"] == "ctest" && tag ~ /status="(disabled|notrun)"/) bad = 1
  if (tag ~ /^<testcase[^>]*\/>/) done(); next }
cur != "" && /<(failure|skipped)[ >\/]/ { bad = 1 }
cur != "" && /<error[ >\/]/ && !/RiskyTestError/ { bad = 1 }
/<\/testcase>/ { done() }
END { done(); n = split(ENVIRON["IDS"], want, "\n"); rc = 0
  for (i = 1; i <= n; i++) if (want[i] != "" && (!(want[i] in ok) || (want[i] in failed))) {
    print "NOT PASSED: " want[i]; rc = 1 }
  exit rc }
"""


def ids_assignment(tests: list[str]) -> str:
    """``export IDS=...`` holding the ids one a line (single-quoted, safe for any id)."""
    return "export IDS=" + shlex.quote("\n".join(tests))


def junit_check(fmt: str, reports: str, tests: list[str]) -> list[str]:
    """Bash lines: check the JUnit XML ``reports`` (a shell glob or file list) for ``tests``
    and exit with the result."""
    return [ids_assignment(tests), f"export FMT={fmt}",
            f"cat {reports} 2>/dev/null | awk {shlex.quote(JUNIT_CHECK_AWK)}", "exit $?"]


def cmake_regex(names: list[str]) -> str:
    """An anchored regex (CMake / POSIX ERE / PCRE alike) matching exactly ``names``."""
    special = set(".^$*+?()[]{}|\\/")
    escaped = ["".join("\\" + c if c in special else c for c in n) for n in names]
    return "^(" + "|".join(escaped) + ")$"
