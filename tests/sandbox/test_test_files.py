"""Which files hold a task's tests (what every grader forbids a patch to edit): a profile's
``test_files``. Code files whose own tests the suite runs (Python doctests, Rust's inline
``mod tests``) stay code, so their functions can be a task's fix."""

from __future__ import annotations

import pytest

from datagen.sandbox.harness.profiles.pytest import is_doctest_id
from datagen.sandbox.harness.profiles.registry import get_profile


@pytest.mark.parametrize(("test_id", "doctest"), [
    ("parse/__init__.py::parse.with_pattern", True),         # a package's doctest
    ("boltons/strutils.py::boltons.strutils.slugify", True),
    ("src/pkg/mod.py::pkg.mod.Thing.run", True),             # src layout: the import name is shorter
    ("rootlib.py::rootlib", True),                           # the module docstring's
    ("tests.py::Helpers::test_double", False),               # a unittest method
    ("tests/test_a.py::test_b[a.b]", False),                 # a parameter with a dot
    ("tests/test_a.py::test_other", False),
    ("README.rst::README.rst", False),                       # a text file's doctests: not a module
])
def test_doctest_ids(test_id, doctest):
    assert is_doctest_id(test_id) is doctest


def test_pytest_test_files_leave_doctest_modules_as_code():
    ids = ["parse/__init__.py::parse.with_pattern", "tests/test_parse.py::test_int",
           "tests.py::Helpers::test_double", "tests/test_x.py::test_x"]
    # tests/test_x.py::test_x reads like a module docstring's doctest, but the file is named as tests are
    assert get_profile("pytest").test_files(ids) == ["tests.py", "tests/test_parse.py", "tests/test_x.py"]


def test_cargo_inline_unit_tests_leave_the_code_file_as_code():
    ids = ["src/lib.rs::tests::hamming_empty", "tests/lib.rs::levenshtein_diff"]
    assert get_profile("cargo").test_files(ids) == ["tests/lib.rs"]
