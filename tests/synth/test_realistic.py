"""Every strategy on realistic modules: valid, different, deterministic output."""

from __future__ import annotations

import random

import pytest

from datagen.synth.entities import extract_entities, parse
from datagen.synth.strategies.registry import get_strategy, strategies_for
from tests.synth.helpers import DATA

MODULES = {"python": "textkit.py", "javascript": "inventory.js"}


def module(lang: str) -> tuple[str, str]:
    name = MODULES[lang]
    return name, (DATA / name).read_text(encoding="utf-8")


def outputs(name: str, lang: str, seed: int) -> list[str]:
    """The mutations strategy ``name`` makes of each applicable entity of the module."""
    path, text = module(lang)
    strategy = get_strategy(name)
    results = []
    for e in extract_entities(path, text, lang):
        if strategy.applies_to(e):
            changed = strategy.transform_repo({path: text}, e, random.Random(seed))
            results += list((changed or {}).values())
    return results


def assert_valid(text: str, lang: str, before: str) -> None:
    assert text != before
    if lang == "python":
        compile(text, "textkit.py", "exec")
    else:
        assert not parse(text, lang).root_node.has_error


@pytest.mark.parametrize("name", [s.name for s in strategies_for(lang="python")])
def test_every_python_strategy_mutates_textkit(name: str) -> None:
    results = outputs(name, "python", seed=0)
    assert results, f"{name} found nothing to mutate"
    for text in results:
        assert_valid(text, "python", module("python")[1])


@pytest.mark.parametrize("name", [s.name for s in strategies_for(lang="javascript")])
def test_every_js_strategy_mutates_inventory(name: str) -> None:
    results = outputs(name, "javascript", seed=0)
    assert results, f"{name} found nothing to mutate"
    for text in results:
        assert_valid(text, "javascript", module("javascript")[1])


def test_mutations_only_touch_the_entity() -> None:
    path, text = module("python")
    before = text.splitlines()
    for e in extract_entities(path, text, "python"):
        for s in strategies_for("procedural", "python"):
            new = s.transform(text, e, random.Random(3)) if s.applies_to(e) else None
            if new is None:
                continue
            after = new.splitlines()
            assert before[: e.start_line - 1] == after[: e.start_line - 1], (s.name, e.qualname)
            tail = len(before) - e.end_line
            assert before[len(before) - tail:] == after[len(after) - tail:], (s.name, e.qualname)


@pytest.mark.parametrize("lang", ["python", "javascript"])
def test_same_seed_same_output(lang: str) -> None:
    for s in strategies_for(lang=lang):
        assert outputs(s.name, lang, seed=7) == outputs(s.name, lang, seed=7)


def test_different_seeds_can_differ() -> None:
    for name in ("py_op_change_v1", "py_constant_change_v1", "py_remove_assign_v1", "js_off_by_one_v1"):
        lang = "javascript" if name.startswith("js_") else "python"
        assert len({tuple(outputs(name, lang, seed)) for seed in range(4)}) > 1, name
