"""The test-file rule every eval path shares (``datagen.sandbox.harness.protect``): a superset of
what each profile calls test code, the same answers in Python and in ``grep -E``, and the
eval-script guard in a real git checkout (edits, deletions and added tests fail; build
output and setup folders do not)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from datagen.sandbox.harness.profiles.registry import profiles
from datagen.sandbox.harness.protect import (
    TEST_FILE_ERE,
    TEST_PATH_ERE,
    added_is_protected,
    guard_lines,
    is_protected,
    is_test_file,
)

PATHS = [
    "tests/test_calc.py", "pkg/tests/unit/test_x.py", "src/pkg/test/test_io.py", "conftest.py", "pkg/conftest.py",
    "calc_test.py", "pytest.ini", "tox.ini", "calc/calc_test.go", "calc/testdata/in.txt", "tests/api.rs",
    "src/test/java/org/x/CalcTest.java", "src/it/java/Smoke.java", "lib/FooTest.java", "spec/calc_spec.rb",
    "test/calc_test.rb", "tests/CalcTest.php", "phpunit.xml.dist", "lib/calc.test.ts", "src/a.spec.mjs",
    "__tests__/calc.js", "jest.config.js", "vitest.config.mts", ".mocharc.yml", "karma.conf.js",
    "test/sum_test.c", "src/geom_unittest.cc", ".rspec", "noxfile.py",
    # not tests
    "calc.py", "src/lib.rs", "src/main/java/org/x/Calc.java", "lib/calc.ts", "pkg/testing_utils.py",
    "contest.py", "src/attest.go", "README.md", "package.json", "pyproject.toml", "Cargo.toml", "latest/x.py",
]
NOT_TESTS = PATHS[PATHS.index("calc.py"):]


def test_protects_every_profiles_test_files():
    for path in PATHS:
        for profile in profiles():
            if profile.is_test_file(path):
                assert is_protected(path), (profile.name, path)
        if is_test_file(path):
            assert is_protected(path), path
    assert [p for p in PATHS if not is_protected(p)] == NOT_TESTS


def test_one_test_file_rule_that_profiles_only_narrow():
    """``is_test_file`` is test code (no config but ``conftest.py``); every profile's rule lies within it."""
    config = {"pytest.ini", "tox.ini", "phpunit.xml.dist", "jest.config.js", "vitest.config.mts", ".mocharc.yml",
              "karma.conf.js", ".rspec", "noxfile.py"}
    assert [p for p in PATHS if is_protected(p) and not is_test_file(p)] == [p for p in PATHS if p in config]
    for path in ["pkg/test_b.py", "test/x.test.js", "src/y.spec.ts", "a_test.py", *PATHS]:
        for profile in profiles():
            assert not profile.is_test_file(path) or is_test_file(path), (profile.name, path)
    for path in ["pkg/testing_utils.py", "src/contest.js", "latest.py", "benches/speed.rs"]:
        assert not is_test_file(path), path


def test_grep_and_python_agree():
    proc = subprocess.run(["grep", "-E", TEST_PATH_ERE], input="\n".join(PATHS) + "\n", text=True,
                          capture_output=True)
    assert proc.stdout.split() == [p for p in PATHS if is_protected(p)]
    proc = subprocess.run(["grep", "-E", TEST_FILE_ERE], input="\n".join(PATHS) + "\n", text=True,
                          capture_output=True)
    assert proc.stdout.split() == [p for p in PATHS if is_test_file(p) and not p.endswith("conftest.py")]


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@x.invalid", *args], cwd=cwd, check=True,
                   capture_output=True)


@pytest.fixture
def checkout(tmp_path) -> tuple[Path, str]:
    repo = tmp_path / "repo"
    for rel, text in {"calc.py": "x = 1\n", "tests/test_calc.py": "def test(): pass\n",
                      ".gitignore": "ignored/\n"}.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "Initial commit")
    base = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    return repo, base


def _guard(repo: Path, base: str) -> subprocess.CompletedProcess:
    script = "\n".join(["set -uo pipefail", *guard_lines(base), "echo ran tests"])
    return subprocess.run(["bash", "-c", script], cwd=repo, capture_output=True, text=True)


@pytest.mark.parametrize(("change", "blocked"), [
    (lambda r: (r / "calc.py").write_text("x = 2\n"), False),  # the fix itself
    (lambda r: (r / "tests" / "test_calc.py").write_text("def test(): assert 1\n"), True),
    (lambda r: (r / "tests" / "test_calc.py").unlink(), True),
    (lambda r: (r / "conftest.py").write_text("collect_ignore = ['tests']\n"), True),
    (lambda r: (r / "tests" / "calc.py").write_text("x = 2\n"), True),  # a module shadowing the real one
    (lambda r: (r / "tests" / "test_sum").write_bytes(b"\x7fELF"), False),  # a test binary a build made
    (lambda r: (r / "tests" / "out.json").write_text("{}"), False),  # data a test run wrote
    (lambda r: ((r / "node_modules" / "x" / "test").mkdir(parents=True),
                (r / "node_modules" / "x" / "test" / "a.js").write_text("")), False),
    (lambda r: ((r / "ignored").mkdir(), (r / "ignored" / "test_x.py").write_text("")), False),
])
def test_eval_guard(checkout, change, blocked):
    repo, base = checkout
    change(repo)
    proc = _guard(repo, base)
    assert (proc.returncode == 3) == blocked, proc.stderr
    assert ("ran tests" in proc.stdout) != blocked


def test_guard_is_a_no_op_outside_the_tasks_checkout(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("")
    proc = _guard(tmp_path, "0" * 40)
    assert proc.returncode == 0 and "ran tests" in proc.stdout


def test_added_files_rule():
    assert added_is_protected("tests/helpers.py") and added_is_protected("jest.config.cjs")
    assert not added_is_protected("tests/test_sum") and not added_is_protected("node_modules/a/test/x.js")
