"""C and C++ with a Makefile: the suite's target (``check`` or ``test``) graded per prerequisite.

``check: tests/test_a tests/test_b`` gives two tests, ``tests/test_a`` and ``tests/test_b``:
each is built with ``make <target>`` and, when that yields an executable file, run; it passes
when both succeed (a phony prerequisite passes when its ``make`` does). A suite target with
no prerequisites, or with ones only ``make`` itself can expand (``$(TESTS)``), is one test
named after it. The report is one ``<id><TAB><status>`` line per test, written by the run's
shell loop; a target that did not build counts as ``error``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from datagen.records.env import EnvPlan
from datagen.sandbox.harness.parsers import CASE_SEP, ReportError, add_cases
from datagen.sandbox.harness.profiles._replay import ctest_check
from datagen.sandbox.harness.profiles.base import Profile, ProfileEnv, TestResults, fitting
from datagen.sandbox.harness.profiles.cmake import _CXX_EXTS
from datagen.sandbox.harness.profiles.registry import register

if TYPE_CHECKING:
    from datagen.config.sandbox import SandboxLimits
    from datagen.sandbox.isolation.base import Sandbox

MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
SUITE_TARGETS = ("check", "test", "tests")
_STATUSES = {"pass", "fail", "error", "skip"}


def makefile_of(src: Path) -> Path | None:
    return next((src / n for n in MAKEFILES if (src / n).is_file()), None)


def suite_target(text: str) -> tuple[str, list[str]] | None:
    """(suite target, its prerequisites) from a Makefile's text; None when it has none."""
    text = re.sub(r"\\\n", " ", text)
    for target in SUITE_TARGETS:
        m = re.search(rf"^{target}\s*::?(?!=)([^;\n#]*)", text, re.M)
        if m:
            prereqs = m.group(1).split("|", 1)[0].split()
            return target, ([] if any("$" in p for p in prereqs) else prereqs)
    return None


def suite_ids(src: Path) -> tuple[str, list[str]]:
    """(suite target, test ids): the prerequisites, or the target itself."""
    makefile = makefile_of(src)
    found = suite_target(makefile.read_text(encoding="utf-8", errors="replace")) if makefile else None
    if found is None:
        return "check", ["check"]
    target, prereqs = found
    return target, prereqs or [target]


OUTPUT = ".datagen-out.txt"  # one executable's output, while the loop runs it
OUTPUT_BYTES = 8 << 20  # of it kept in the report


def grade_loop(ids: list[str], report: str) -> str:
    """Shell: build (and run, when it is an executable file) each id; one status line per id,
    then the executable's output lines, a TAB before each (the cases it reports are tests:
    ``parsers.add_cases``). The build's errors stay on stderr: where nothing passes, they say why."""
    return (f": > {report}; for t in {shlex.join(ids)}; do : > {OUTPUT}; "
            'if make -k "$t" >/dev/null; then '
            'if [ -f "$t" ] && [ -x "$t" ]; then (case "$t" in /*) "$t";; *) "./$t";; esac) '
            f'>{OUTPUT} 2>&1 && s=pass || s=fail; else s=pass; fi; '
            'elif [ -e "$t" ]; then s=fail; else s=error; fi; '
            f'printf \'%s\\t%s\\n\' "$t" "$s" >> {report}; '
            f"head -c {OUTPUT_BYTES} {OUTPUT} | awk '{{ print \"\\t\" $0 }}' >> {report}; done; rm -f {OUTPUT}")


GCOV_DIR = ".datagen-gcov"


def cover_loop(ids: list[str]) -> str:
    """Shell: per id, fresh counters, a coverage build and run, its status and gcov's JSON."""
    return (f'D="$(pwd)/{GCOV_DIR}"; mkdir -p "$D"; n=0; for t in {shlex.join(ids)}; do n=$((n+1)); '
            "find . -name '*.gcda' -delete; "
            'if make -k CC="${CC:-cc} --coverage" CXX="${CXX:-c++} --coverage" "$t" >/dev/null 2>&1; then '
            'if [ -f "$t" ] && [ -x "$t" ]; then (case "$t" in /*) "$t";; *) "./$t";; esac) '
            '>/dev/null 2>&1 && s=pass || s=fail; else s=pass; fi; else s=fail; fi; '
            'printf \'%s\\t%s\\n\' "$t" "$s" > "$D/$n.status"; '
            "find . -name '*.gcda' | while read -r f; do d=$(dirname \"$f\"); echo \"# dir $d\"; "
            '(cd "$d" && gcov --json-format --stdout "$(basename "$f")" 2>/dev/null); done > "$D/$n.json"; done')


def read_gcov(folder: Path, workdir: Path) -> dict[str, dict[int, list[str]]]:
    """The coverage loop's files -> repo-relative path -> line -> the passing ids that ran it."""
    out: dict[str, dict[int, set[str]]] = {}
    for status in sorted(folder.glob("*.status")):
        test_id, _, state = status.read_text(encoding="utf-8", errors="replace").strip().rpartition("\t")
        if state != "pass":
            continue
        base = "."
        for line in status.with_suffix(".json").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("# dir "):
                base = line[len("# dir "):].strip()
                continue
            try:
                files = json.loads(line).get("files", [])
            except ValueError:
                continue
            for f in files:
                rel = _repo_rel(str(f.get("file", "")), base, workdir)
                if rel is None:
                    continue
                lines = out.setdefault(rel, {})
                for ln in f.get("lines", []):
                    if ln.get("count", 0) > 0:
                        lines.setdefault(int(ln["line_number"]), set()).add(test_id)
    return {p: {n: sorted(t) for n, t in sorted(lines.items())} for p, lines in sorted(out.items()) if lines}


def _repo_rel(file: str, base: str, workdir: Path) -> str | None:
    """gcov's source name (relative to where it was compiled, or absolute) -> repo path."""
    for candidate in (Path(file), workdir / base / file, workdir / file):
        path = Path(os.path.normpath(candidate if candidate.is_absolute() else workdir / candidate))
        try:
            rel = path.relative_to(workdir).as_posix()
        except ValueError:
            continue
        if (workdir / rel).is_file():
            return rel
    return None


def parse_make_tsv(text: str) -> TestResults:
    """The grading loop's ``id<TAB>status`` lines (each followed by its output's lines, a TAB
    before each) -> ``{id: status}``, or ``{id::case: status}`` for the cases an executable
    reports itself (``parsers.add_cases``)."""
    results: TestResults = {}
    tests: list[tuple[str, str, list[str]]] = []
    for line in text.split("\n"):
        if line.startswith("\t"):
            if tests:
                tests[-1][2].append(line[1:])
            continue
        if not line.strip():
            continue
        test_id, _, status = line.rpartition("\t")
        if not test_id or status not in _STATUSES:
            raise ReportError(f"not a make report line: {line[:80]!r}")
        tests.append((test_id, status, []))
    for test_id, status, output in tests:
        add_cases(results, test_id, status, "\n".join(output))  # type: ignore[arg-type]
    return results


@register
class MakeProfile(Profile):
    """A C/C++ repo whose Makefile has a ``check`` / ``test`` target (and no CMake suite)."""

    name = "make"
    language = "c"
    source_langs = ("c", "cpp")
    tools = {"make": "make", "cc": "gcc"}
    priority = 65
    report = ".datagen-report.tsv"
    image_default = "gcc:13"  # gcc and make (the plan names no compiler version)
    covers_lines = True

    def coverage(self, env: ProfileEnv, sandbox: Sandbox, workdir: Path, limits: SandboxLimits,
                 ro_paths: tuple[Path, ...] = ()) -> dict[str, dict[int, list[str]]]:
        """path -> line -> the suite's tests (make prerequisites) that ran it: each one built
        with ``CC``/``CXX`` given ``--coverage`` and run alone, then gcov's JSON of its
        counters (a Makefile that names its compiler literally gives no counters: {})."""
        ids = suite_ids(workdir)[1]
        sandbox.run(["sh", "-c", cover_loop(ids)], workdir, limits, env=self.run_env(env, workdir),
                    ro_paths=(*env.ro_paths, *ro_paths))
        return read_gcov(workdir / GCOV_DIR, workdir)

    def detect(self, src: Path, paths: list[str]) -> bool:
        makefile = makefile_of(src)
        has_c = any(p.endswith((".c", *_CXX_EXTS)) for p in paths)
        return bool(makefile and has_c and suite_target(makefile.read_text(encoding="utf-8", errors="replace")))

    def task_language(self, src: Path | None = None) -> str:
        if src is None:
            return self.language
        return "cpp" if any(p.suffix in _CXX_EXTS for p in src.rglob("*")) else "c"

    def dependency_files(self, src: Path) -> list[str]:
        makefile = makefile_of(src)
        return [makefile.name] if makefile else []

    def plan(self, src: Path) -> EnvPlan:
        target, ids = suite_ids(src)
        notes = [] if ids != [target] else [f"`{target}` is graded as one test (no literal prerequisites)"]
        return EnvPlan(profile=self.name, toolchain="make", test_command=["make", target], notes=notes)

    def test_command(self, env: ProfileEnv, workdir: Path, tests: list[str] | None) -> list[str]:
        ids = sorted({t.split(CASE_SEP, 1)[0] for t in tests or []})
        ids = fitting(ids, suite_ids(workdir)[1]) if ids else suite_ids(workdir)[1]  # a script fits one argument
        return ["sh", "-c", grade_loop(ids, self.report)]

    def parse(self, text: str) -> TestResults:
        return parse_make_tsv(text)

    def test_files(self, tests: list[str]) -> list[str]:
        return []

    # --- replay -------------------------------------------------------------------------
    def setup_commands(self, plan: EnvPlan) -> list[str]:
        return []

    def eval_commands(self, plan: EnvPlan, tests: list[str]) -> list[str]:
        ids = sorted({t.split(CASE_SEP, 1)[0] for t in tests})  # a case id runs its executable
        return [grade_loop(ids, ".datagen-eval.tsv"), *ctest_check(".datagen-eval.tsv", tests, "make_cases")]
