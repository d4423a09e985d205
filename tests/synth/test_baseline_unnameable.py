"""A test whose name a bash script cannot hold (a NUL byte: unjs/ufo's vitest titles such as
``"\\0https://"``) joins no task, as a flaky one: its task's eval script could not name it."""

from __future__ import annotations

import subprocess

import pytest

from datagen.synth.baseline import unnameable


def test_names_with_a_nul_byte_are_unnameable():
    ids = ["test/parse.test.ts > parseURL > \x00https://invalid.com", "test/parse.test.ts > parseURL > https://a.b",
           "tests/test_a.py::test_b[\\x00]"]  # pytest escapes the byte in its ids: nameable
    assert unnameable(ids) == {ids[0]}


def test_bash_cannot_take_such_a_script():
    with pytest.raises(ValueError, match="null byte"):
        subprocess.run(["bash", "-c", "echo 'parseURL > \x00https://invalid.com'"], check=False)
