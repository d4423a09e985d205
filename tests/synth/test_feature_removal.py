"""remove_feature_v1 across files: imports pruned, call statements deleted, tests untouched."""

from __future__ import annotations

import random
from textwrap import dedent

from datagen.synth.strategies.registry import get_strategy
from tests.synth.helpers import entity_named

UTIL = dedent('''
    """Helpers."""


    def log_event(name):
        print(name)


    def double(x):
        return 2 * x


    def audit():
        log_event("audit")
    ''').lstrip()

PKG_INIT = dedent('''
    from .util import double, log_event

    __all__ = ["double", "log_event"]
    ''').lstrip()

APP = dedent('''
    from pkg.util import log_event as emit
    from pkg import double


    def run(x):
        emit("run")
        if x:
            emit("x")
        return double(x)
    ''').lstrip()

TEST = dedent('''
    from pkg.util import log_event


    def test_log():
        log_event("t")
    ''').lstrip()

FILES = {"pkg/util.py": UTIL, "pkg/__init__.py": PKG_INIT, "app.py": APP, "tests/test_util.py": TEST}


def remove(qualname: str, files: dict[str, str] = FILES) -> dict[str, str] | None:
    e = entity_named(files["pkg/util.py"], qualname, path="pkg/util.py")
    return get_strategy("remove_feature_v1").transform_repo(files, e, random.Random(0))


def test_function_and_its_uses_go_everywhere_but_tests() -> None:
    out = remove("log_event")
    assert out == {
        "pkg/util.py": '"""Helpers."""\n\n\ndef double(x):\n    return 2 * x\n\n\ndef audit():\n    pass\n',
        "pkg/__init__.py": 'from .util import double\n\n__all__ = ["double"]\n',
        "app.py": ("from pkg import double\n\n\ndef run(x):\n    if x:\n        pass\n"
                   "    return double(x)\n"),
    }


def test_use_inside_an_expression_offers_nothing() -> None:
    assert remove("double") is None


def test_transform_edits_the_entity_file_only() -> None:
    e = entity_named(UTIL, "audit", path="pkg/util.py")
    new = get_strategy("remove_feature_v1").transform(UTIL, e, random.Random(0))
    assert new == UTIL[: UTIL.index("\n\n\ndef audit")] + "\n"


