"""Which files of a task belong to its tests, so that no eval path lets a patch change them.

A task is proven by its own tests. A patch that edits, adds or deletes a test file or the
test runner's configuration (``conftest.py``, ``pytest.ini``, ``jest.config.*``,
``*_test.go``, ``src/test/**``, ...) could make the tests pass without fixing anything, so
every eval path rejects it: the grader (``datagen.score.patches``), the task's own
``eval_script`` and the Harbor / SkyRL exports.

This module owns datagen's one answer to "is this a test file?": :func:`is_test_file` (test
code: :data:`TEST_FILE_ERE`, and ``conftest.py``) and :func:`is_protected` (test code or test
configuration: :data:`TEST_PATH_ERE`). Each is one POSIX extended regular expression, so the
same rule runs in Python (``re``) and in the bash of an ``eval_script`` (``grep -E``) on
machines where datagen is not installed. It is the union of every ecosystem's conventions (a
test folder of one language is a test folder in all of them); a profile's ``is_test_file``
may only narrow it (``go``: ``*_test.go`` and ``testdata/``), and synthesis never targets a
file it protects.
"""

from __future__ import annotations

import re
import shlex

# Test code: test folders at any depth, and test file names of each ecosystem (Python's:
# pytest's ``test_*.py`` and unittest discovery's ``testfoo.py``; not a ``testing_utils.py``).
_TEST_DIRS = r"(^|/)(tests?|testing|__tests__|spec|specs|testdata|src/test|src/it)/"
_TEST_NAMES = (r"(^|/)(test(_[^/]*|[^/_]*)\.py|[^/]*_test\.(py|go|rb|c|cc|cpp|cxx)|[^/]*_spec\.rb|"
               r"[^/]*Tests?\.(java|kt|php|cs)|[^/]*_unittest\.[^/]*|[^/]*\.(test|spec)\.[cm]?[jt]sx?)$")
# Test configuration: what decides which tests run and how.
_TEST_CONFIG = (r"(^|/)(conftest\.py|pytest\.ini|tox\.ini|noxfile\.py|\.coveragerc|"
                r"(jest|vitest|ava|karma)\.config\.[^/]*|vitest\.workspace\.[^/]*|karma\.conf\.[^/]*|"
                r"\.mocharc(\.[^/]*)?|phpunit\.xml(\.dist)?|\.rspec)$")
TEST_FILE_ERE = f"{_TEST_DIRS}|{_TEST_NAMES}"
TEST_PATH_ERE = f"{TEST_FILE_ERE}|{_TEST_CONFIG}"
# A new (untracked) file counts as an added test only when it is code or test config: test
# runs and builds leave data files and binaries in test folders (``tests/test_sum``, a
# fixture's output), a patch that adds a test or a module shadowing one adds code.
ADDED_ERE = (r"\.(py|pyi|js|mjs|cjs|ts|tsx|jsx|mts|cts|go|rs|java|kt|scala|rb|php|c|cc|cpp|cxx|h|hh|hpp|cs)$|"
             + _TEST_CONFIG)
_TEST_PATH = re.compile(TEST_PATH_ERE)
_TEST_FILE = re.compile(TEST_FILE_ERE)

# Folders an environment's setup writes into the checkout (installed packages, build output):
# never the task's, so new files there are not "added tests".
SETUP_DIRS = ("node_modules", ".venv", "venv", ".tox", "target", "vendor", "build", "dist", ".gradle",
              "__pycache__", ".pytest_cache", ".mypy_cache", ".bundle", ".cargo", "_datagen_build")


def is_test_file(path: str) -> bool:
    """Whether ``path`` (repo-relative, ``/``-separated) is test code: in a test folder of any
    ecosystem, named as a test file of any, or a ``conftest.py`` (pytest's fixtures)."""
    return _TEST_FILE.search(path) is not None or path.rsplit("/", 1)[-1] == "conftest.py"


def is_protected(path: str) -> bool:
    """Whether ``path`` (repo-relative, ``/``-separated) is test code or test configuration."""
    return _TEST_PATH.search(path) is not None


def guard_lines(base_commit: str) -> list[str]:
    """Bash lines, run in the task's checkout after the patch and before its tests, that fail
    (exit 3, the files named on stderr) when the checkout's test files differ from
    ``base_commit``'s: a tracked test file or test config edited or deleted, or a new code
    or config file added among them. Outside a git checkout of the task they do nothing."""
    setup = "|".join(re.escape(d) for d in SETUP_DIRS)
    q = shlex.quote
    return [
        "# A patch may not edit, add or delete the task's test files or test config.",
        f"base={q(base_commit)}",
        'if git rev-parse --verify -q "$base^{commit}" >/dev/null 2>&1; then',
        "  touched=$( { git -c core.quotepath=off diff --name-only --no-renames \"$base\" --"
        f" | grep -E {q(TEST_PATH_ERE)};"
        " git -c core.quotepath=off ls-files --others --exclude-standard"
        f" | grep -Ev {q(f'(^|/)({setup})/')} | grep -E {q(TEST_PATH_ERE)} | grep -E {q(ADDED_ERE)}; }}"
        " | sort -u)",
        '  if [ -n "$touched" ]; then',
        '    echo "eval: the patch changes test files (not allowed):" >&2; echo "$touched" >&2; exit 3',
        "  fi",
        "fi",
    ]


def added_is_protected(path: str) -> bool:
    """Whether a new file at ``path`` counts as an added test (what ``guard_lines`` checks
    for untracked files): test code or config, outside the folders setup writes into."""
    parts = path.split("/")[:-1]
    return (is_protected(path) and not any(p in SETUP_DIRS for p in parts)
            and re.search(ADDED_ERE, path) is not None)
