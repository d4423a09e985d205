"""The strategy registry: names, metadata, look-ups and errors."""

from __future__ import annotations

import re
from typing import ClassVar

import pytest

from datagen.errors import UserError
from datagen.synth.entities import TABLE_LANGS, Entity
from datagen.synth.strategies.base import Strategy
from datagen.synth.strategies.registry import get_strategy, register, strategies_for, strategy_names


def test_unknown_name_lists_valid_ones() -> None:
    with pytest.raises(UserError) as err:
        get_strategy("py_no_such_thing_v9")
    message = str(err.value)
    assert "py_no_such_thing_v9" in message
    for name in ("py_op_change_v1", "js_compare_change_v1", "empty_body_v1", "remove_feature_v1"):
        assert name in message


def test_metadata_of_every_strategy() -> None:
    for name in strategy_names():
        s = get_strategy(name)
        assert s.name == name and re.fullmatch(r"[a-z][a-z0-9_]*_v\d+", name)
        assert s.explanation and "\n" not in s.explanation
        assert s.family in ("procedural", "removal", "feature_removal")
        assert s.langs and s.langs <= {"python", "javascript", "typescript", *TABLE_LANGS}
        assert s.kinds and s.kinds <= {"function", "method", "class"}


def test_counts_per_family_and_language() -> None:
    assert len(strategies_for("procedural", "python")) >= 16
    assert len(strategies_for("procedural", "javascript")) >= 8
    assert [s.name for s in strategies_for("removal")] == ["empty_body_v1"]
    assert [s.name for s in strategies_for("feature_removal", "python")] == ["remove_feature_v1"]
    assert all("typescript" in s.langs for s in strategies_for(lang="javascript"))


@pytest.mark.parametrize("lang", ["javascript", "typescript", *sorted(TABLE_LANGS)])
def test_every_grammar_has_ten_kinds(lang: str) -> None:
    kinds = strategies_for(lang=lang)
    assert len(kinds) >= 10, [s.name for s in kinds]
    for s in kinds:  # the generic kinds never reach the languages whose old strategies task ids name
        assert not ({"python", "javascript", "typescript"} & s.langs and set(TABLE_LANGS) & s.langs) \
            or s.name == "empty_body_v1"


def test_register_rejects_bad_family_and_duplicates() -> None:
    class Bad(Strategy):
        name = "bad_v1"
        explanation = "x"
        family = "nonsense"
        langs = frozenset({"python"})
        kinds = frozenset({"function"})

    with pytest.raises(ValueError, match="family"):
        register(Bad)

    class Dup(Bad):
        name = "py_op_change_v1"
        family = "procedural"

    strategy_names()  # load the built-ins first
    with pytest.raises(ValueError, match="twice"):
        register(Dup)


def entity(kind: str = "function", complexity: int = 3, lang: str = "python",
           types: frozenset[str] = frozenset()) -> Entity:
    return Entity("m.py", lang, kind, "f", "f", 1, 2, 0, 10, 2, complexity, types)


def test_applies_to_respects_bounds() -> None:
    class Bounded(Strategy):
        name = "bounded_v1"
        explanation = "test"
        family = "procedural"
        langs: ClassVar = frozenset({"python"})
        kinds: ClassVar = frozenset({"function"})
        min_complexity = 2
        max_complexity = 4
        requires: ClassVar = frozenset({"if_statement"})

    s, ifs = Bounded(), frozenset({"if_statement"})
    assert s.applies_to(entity(complexity=2, types=ifs)) and s.applies_to(entity(complexity=4, types=ifs))
    assert not s.applies_to(entity(complexity=1, types=ifs))
    assert not s.applies_to(entity(complexity=5, types=ifs))
    assert not s.applies_to(entity(kind="class", types=ifs))
    assert not s.applies_to(entity(lang="javascript", types=ifs))
    assert not s.applies_to(entity(types=frozenset({"for_statement"})))


def test_builtin_applies_to_uses_kind_and_features() -> None:
    defs = frozenset({"function_definition"})
    assert get_strategy("py_remove_method_v1").applies_to(entity("class", types=defs))
    assert not get_strategy("py_remove_method_v1").applies_to(entity("function", types=defs))
    assert not get_strategy("py_remove_assert_v1").applies_to(entity(types=frozenset({"if_statement"})))
    assert get_strategy("empty_body_v1").applies_to(entity("method", lang="typescript"))
