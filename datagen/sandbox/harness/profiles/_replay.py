"""Shell pieces shared by the eval scripts of the JVM, C/C++, Ruby and PHP profiles.

An eval script runs the chosen tests with the repo's own tool, then checks the tool's report
for every chosen id, so it exits 0 only when each of them ran and passed (a runner's exit
status alone would pass a test that was never selected, and fail on one outside the list).
The checks use POSIX awk, which every image with bash has; no Python, no datagen.
"""

from __future__ import annotations

import shlex

from datagen.sandbox.harness.profiles.base import IDS_FILE, ids_file

# Reads JUnit XML reports (one <testcase ...> start tag per line, as Surefire, Gradle, CTest
# and PHPUnit write them) and prints "NOT PASSED: <id>" for each id of $IDS_FILE (one a line)
# that has no passing case or any failing one. $FMT names the id shape: maven / ctest / phpunit.
JUNIT_CHECK_AWK = r"""
function wanted(want,   n, l) { while ((getline l < ENVIRON["IDS_FILE"]) > 0) want[++n] = l; return n }
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
END { done(); n = wanted(want); rc = 0
  for (i = 1; i <= n; i++) if (want[i] != "" && (!(want[i] in ok) || (want[i] in failed))) {
    print "NOT PASSED: " want[i]; rc = 1 }
  exit rc }
"""


def ids_lines(tests: list[str]) -> list[str]:
    """Bash lines: the ids one a line in ``IDS_FILE`` (a here-document, any number fits), and
    ``$IDS_FILE`` naming it for the checks."""
    return [*ids_file(tests), f"export IDS_FILE={IDS_FILE}"]


def junit_check(fmt: str, reports: str, tests: list[str]) -> list[str]:
    """Bash lines: check the JUnit XML ``reports`` (a shell glob or file list) for ``tests``
    and exit with the result."""
    return [*ids_lines(tests), f"export FMT={fmt}",
            f"cat {reports} 2>/dev/null | awk {shlex.quote(JUNIT_CHECK_AWK)}", "exit $?"]


def cmake_regex(names: list[str]) -> str:
    """An anchored regex (CMake / POSIX ERE / PCRE alike) matching exactly ``names``."""
    special = set(".^$*+?()[]{}|\\/")
    escaped = ["".join("\\" + c if c in special else c for c in n) for n in names]
    return "^(" + "|".join(escaped) + ")$"


# Shared by the eval scripts' checks of executables that report their own cases: ``line(s)``
# reads one output line the way ``parsers.case_lines`` does; ``done()`` files the test ``cur``
# (its own status ``exe``) under ``<cur>::<case>`` ids, or its own name, as
# ``parsers.add_cases`` does; END prints "NOT PASSED: <id>" for each id of $IDS_FILE (one a line)
# that did not pass.
_CASES_AWK = r"""
function wanted(want,   n, l) { while ((getline l < ENVIRON["IDS_FILE"]) > 0) want[++n] = l; return n }
function unxml(v) { gsub(/&quot;/, "\"", v); gsub(/&apos;/, "'", v); gsub(/&lt;/, "<", v);
  gsub(/&gt;/, ">", v); gsub(/&#10;/, "\n", v); gsub(/&#13;/, "\r", v); gsub(/&amp;/, "\\&", v); return v }
function attr(s, k,   n) { if (match(s, " " k "=\"[^\"]*\"")) { n = length(k) + 3;
  return unxml(substr(s, RSTART + n, RLENGTH - n - 1)) } return "" }
function trim(v) { gsub(/^[ \t\r\n]+|[ \t\r\n]+$/, "", v); return v }
function addcase(nm, st) { nm = trim(nm); seen[nm]++; if (seen[nm] > 1) nm = nm " (" seen[nm] ")"
  if (!(nm in cst)) order[++ncase] = nm; cst[nm] = st }
function checkname(nm,   i, rest) { for (i = 2; i < length(nm); i++) { rest = substr(nm, i)
    if (substr(nm, i - 1, 1) !~ /[ \t]/ && rest ~ /^[ \t]+\[.*\]\[.*\]$/) return substr(nm, 1, i - 1) }
  return nm }
function line(s,   lc, p, n, rest, st) { sub(/\r$/, "", s); lc = tolower(s)
  if (s ~ /^\[ RUN +\] [^ \t]+$/) { running[++nrun] = substr(s, index(s, "] ") + 2); return }
  if (s ~ /^[^:]+:[0-9]+:[A-Za-z_][A-Za-z0-9_]*:(PASS|FAIL|IGNORE)([^A-Za-z0-9_]|$)/) { split(s, p, ":")
    addcase(p[3], p[4] ~ /^PASS/ ? "pass" : p[4] ~ /^FAIL/ ? "fail" : "skip"); return }
  if (s ~ /^\[ +(OK|FAILED|SKIPPED) +\] [^ \t]+ \([0-9]+ ms\)$/) { rest = substr(s, index(s, "] ") + 2)
    rest = substr(rest, 1, index(rest, " (") - 1)
    for (n = 1; n <= nrun; n++) if (running[n] == rest) { running[n] = ""; break }
    addcase(rest, s ~ /^\[ +OK/ ? "pass" : s ~ /^\[ +FAILED/ ? "fail" : "skip"); return }
  if (lc ~ /^(not ok|ok) [0-9]+ /) { st = lc ~ /^not/ ? "fail" : "pass"; rest = s; sub(/^[^ ]+( ok)? [0-9]+/, "", rest)
    if (rest ~ /^ - ./) rest = substr(rest, 4); else rest = substr(rest, 2)
    if (match(tolower(rest), / # (skip|todo)([^a-z0-9_]|$)/) && RSTART > 1) {
      rest = substr(rest, 1, RSTART - 1); st = "skip" }
    if (rest != "") addcase(rest, st); return }
  if (lc ~ /^\[(pass|fail)\] ./) { addcase(checkname(trim(substr(s, 8))), lc ~ /^\[pass/ ? "pass" : "fail"); return }
  if (s ~ /^Testing [^ \t].*: (OK|FAILED)$/) { st = s ~ /: OK$/ ? "pass" : "fail"; jend = 1
    addcase(substr(s, 9, length(s) - 8 - (st == "pass" ? 4 : 8)), st); return }
  if (nrun && match(s, /\[ +(OK|FAILED|SKIPPED) +\] [^ \t]+( \([0-9]+ ms\))?$/)) { rest = substr(s, RSTART)
    st = rest ~ /^\[ +OK/ ? "pass" : rest ~ /^\[ +FAILED/ ? "fail" : "skip"
    rest = substr(rest, index(rest, "] ") + 2); sub(/ \([0-9]+ ms\)$/, "", rest)
    for (n = 1; n <= nrun; n++) if (running[n] == rest) { running[n] = ""; addcase(rest, st); return } }
  if (s ~ /^Testing [^ \t:][^:]*: /) jrun[++njrun] = trim(substr(s, 9, index(s, ": ") - 9)) }
function put(id, st) { if (!(id in res) || rank[st] > rank[res[id]]) res[id] = st }
function done(   i, bad, nm) { if (cur == "") return
  for (i = 1; exe != "pass" && i <= nrun; i++) if (running[i] != "" && !(running[i] in cst)) {
    order[++ncase] = running[i]; cst[running[i]] = "error" }
  for (i = 1; exe != "pass" && jend && i <= njrun; i++) if (!(jrun[i] in cst)) {
    order[++ncase] = jrun[i]; cst[jrun[i]] = "error" }
  if (exe == "skip") ncase = 0
  for (i = 1; i <= ncase; i++) { nm = order[i]; put(cur "::" nm, cst[nm])
    if (cst[nm] != "pass" && cst[nm] != "skip") bad = 1 }
  if (ncase == 0 || ((exe == "fail" || exe == "error") && !bad)) put(cur, exe)
  cur = ""; ncase = 0; nrun = 0; njrun = 0; jend = 0; inout = 0
  split("", cst); split("", seen); split("", order); split("", running); split("", jrun) }
BEGIN { rank["skip"] = 0; rank["pass"] = 1; rank["fail"] = 2; rank["error"] = 3 }
"""
_CASES_END = r"""END { done(); n = wanted(want); rc = 0
  for (i = 1; i <= n; i++) if (want[i] != "" && res[want[i]] != "pass") { print "NOT PASSED: " want[i]; rc = 1 }
  exit rc }
"""

# Reads ``ctest --output-junit`` the way ``parsers.parse_ctest_junit`` does.
CTEST_CASES_AWK = _CASES_AWK + r"""inout { s = $0; end = index(s, "</system-out>"); if (end) s = substr(s, 1, end - 1)
  line(unxml(s)); if (end) inout = 0; next }
/<testcase[ >]/ { done(); tag = substr($0, index($0, "<testcase")); cur = attr(tag, "name")
  exe = tag ~ /status="disabled"/ ? "skip" : "pass" }
cur != "" && /<error[ >\/]/ { exe = "error" }
cur != "" && /<failure[ >\/]/ && exe != "error" { exe = "fail" }
cur != "" && /<skipped[ >\/]/ { exe = $0 ~ /Unable to find executable/ ? "error" : exe == "pass" ? "skip" : exe }
cur != "" && /<system-out>/ { s = substr($0, index($0, "<system-out>") + 12); end = index(s, "</system-out>")
  if (end) s = substr(s, 1, end - 1); else inout = 1
  if (s != "" || inout) line(unxml(s)) }
/<\/testcase>/ { done() }
""" + _CASES_END

# Reads the make profile's report (``make.grade_loop``): ``<id><TAB><status>`` lines, each
# followed by its executable's output lines, a TAB before each.
MAKE_CASES_AWK = _CASES_AWK + r"""
/^\t/ { if (cur != "") line(substr($0, 2)); next }
{ done(); n = length($0); while (n > 0 && substr($0, n, 1) != "\t") n--
  if (n > 1) { cur = substr($0, 1, n - 1); exe = substr($0, n + 1) } }
""" + _CASES_END


def ctest_check(report: str, tests: list[str], program: str = "") -> list[str]:
    """Bash lines: check the ``ctest --output-junit`` ``report`` (or with ``program``, the
    make profile's) for ``tests`` (test names and ``<test>::<case>`` ids) and exit with the result."""
    return [*ids_lines(tests), f"awk {shlex.quote(program or CTEST_CASES_AWK)} {report}", "exit $?"]
