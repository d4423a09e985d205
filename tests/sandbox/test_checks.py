"""Every eval-script check (``datagen/sandbox/harness/checks/``) gives the verdicts of its
Python twin on the same golden reports (``tests/sandbox/golden/``).

For each report: the twin parses it; the check, given the ids the twin calls passed, must
pass (exit 0, nothing printed); given every id the twin names and one it does not, it must
print ``NOT PASSED`` for exactly the ids the twin did not call passed, and exit 1."""

from __future__ import annotations

import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import pytest

from datagen.sandbox.harness import parsers
from datagen.sandbox.harness.checks import CHECKS, awk_program, check_text
from datagen.sandbox.harness.profiles.make import parse_make_tsv
from datagen.sandbox.harness.profiles.rspec import passed_key
from tests import tools
from tests.sandbox.checkrun import run_awk

GOLDEN = Path(__file__).parent / "golden"
MISSING = "no.such::test"


def _read(*names: str) -> str:
    return "".join((GOLDEN / n).read_text() for n in names)


def _make_report(junit: str) -> str:
    """The ctest golden's executables as the make profile's report (``id<TAB>status``, then the
    executable's output lines, a TAB before each)."""
    lines = []
    for case in ET.fromstring(junit).iter("testcase"):
        status = "fail" if case.find("failure") is not None else "pass"
        lines.append(f"{case.get('name')}\t{status}")
        lines += [f"\t{line}" for line in (case.findtext("system-out") or "").splitlines()]
    return "\n".join(lines) + "\n"


def _awk_verdict(check: str, **env: str) -> Callable[[str, list[str]], tuple[int, list[str]]]:
    return lambda text, ids: run_awk(awk_program(check), text, IDS=ids, **env)


def _rspec_verdict(text: str, ids: list[str]) -> tuple[int, list[str]]:
    return run_awk(awk_program("rspec"), text, IDS=ids, KEYS=[passed_key(t) for t in ids])


def _cargo_verdict(text: str, ids: list[str]) -> tuple[int, list[str]]:
    """The cargo eval's awk turns the output into ``<id> pass|fail`` lines; an id passes when
    its ``<id> pass`` line is there (the script's ``grep -qxF``)."""
    out = subprocess.run(["awk", check_text("cargo")], input=text, capture_output=True, text=True, check=True)
    got = set(out.stdout.splitlines())
    missed = [t for t in ids if f"{t} pass" not in got]
    return (1 if missed else 0), missed


def _js_verdict(fmt: str) -> Callable[[str, list[str]], tuple[int, list[str]]]:
    def verdict(text: str, ids: list[str]) -> tuple[int, list[str]]:
        return _node_check(fmt, text, ids)
    return verdict


def _node_check(fmt: str, text: str, ids: list[str]) -> tuple[int, list[str]]:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "report").write_text(text)
        (Path(tmp) / "ids").write_text("".join(f"{i}\n" for i in ids))
        proc = subprocess.run(["node", "-", fmt, "report", "ids"], input=check_text("js_report"), cwd=tmp,
                              capture_output=True, text=True)
    missed = [line.removeprefix("NOT PASSED: ").rsplit(" (", 1)[0] for line in proc.stdout.splitlines()
              if line.startswith("NOT PASSED: ")]
    return proc.returncode, missed


# check -> [(golden report text, its Python twin, the check's verdict)]
CASES: dict[str, list[tuple[str, Callable, Callable]]] = {
    "junit": [(_read(*[f"surefire/{p.name}" for p in sorted((GOLDEN / "surefire").glob("TEST-*.xml"))]),
               parsers.parse_jvm_junit, _awk_verdict("junit", FMT="maven")),
              (_read("ctest_junit.xml"), parsers.parse_ctest_junit, _awk_verdict("junit", FMT="ctest")),
              (_read("phpunit_junit.xml"), parsers.parse_phpunit_junit, _awk_verdict("junit", FMT="phpunit"))],
    "ctest_cases": [(_read(n), parsers.parse_ctest_junit, _awk_verdict("ctest_cases"))
                    for n in ("ctest_cases_junit.xml", "ctest_junit.xml")],
    "make_cases": [(_make_report(_read("ctest_cases_junit.xml")), parse_make_tsv, _awk_verdict("make_cases"))],
    "rspec": [(_read(n), parsers.parse_rspec_json, _rspec_verdict) for n in ("rspec.json", "rspec_load_error.json")],
    "minitest": [(_read("minitest_verbose.txt"), parsers.parse_minitest_verbose, _awk_verdict("minitest"))],
    "cargo": [(_read("cargo_test.txt"), parsers.parse_cargo_test, _cargo_verdict)],
    "js_report": [(_read("jest.json"), parsers.parse_jest_json, _js_verdict("jest")),
                  (_read("vitest.json"), parsers.parse_jest_json, _js_verdict("vitest")),
                  (_read("mocha.json"), parsers.parse_mocha_json, _js_verdict("mocha")),
                  (_read("ava.tap"), parsers.parse_tap, _js_verdict("ava")),
                  (_read("node_junit.xml"), parsers.parse_node_junit, _js_verdict("node"))],
}


def test_every_check_file_belongs_to_a_check_and_every_check_is_compared():
    folder = resources.files("datagen.sandbox.harness.checks")
    files = {p.name for p in folder.iterdir() if p.name.endswith((".awk", ".js"))}
    assert files == {f for names in CHECKS.values() for f in names}
    assert set(CASES) == set(CHECKS)


@pytest.mark.parametrize(("check", "index"), [(c, i) for c, cases in CASES.items() for i in range(len(cases))])
def test_each_check_gives_its_twins_verdicts(check, index):
    if check == "js_report" and tools.missing("node"):
        pytest.skip(tools.why(["node"]))
    text, twin, verdict = CASES[check][index]
    results = twin(text)
    passing = sorted(t for t, s in results.items() if s == "pass")
    others = sorted([*(t for t, s in results.items() if s != "pass"), MISSING])
    assert len(others) > 1, "a golden report with tests that did not pass"
    assert verdict(text, passing) == (0, [])
    rc, missed = verdict(text, [*passing, *others])
    assert rc == 1 and sorted(missed) == others
