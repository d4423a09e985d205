"""Each language's synth tables live in its spec (``synth/languages/``): nothing else in
synth compares a language's name, and one stub table serves both families that stub a
body (``removal``'s ``empty_body_v1`` and the ``feature`` family)."""

from __future__ import annotations

import ast
import random
from pathlib import Path

import pytest

import datagen.synth
from datagen.synth.entities import extract_entities
from datagen.synth.languages import LANGS, SPECS, TABLE_LANGS, spec
from datagen.synth.strategies.registry import get_strategy
from datagen.synth.stubs import stub_file

SYNTH = Path(datagen.synth.__file__).parent
LANGUAGES = SYNTH / "languages"


def _names(node: ast.AST) -> set[str]:
    """The language names a comparison's operand spells (a string, or a tuple / set of them)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value} & LANGS
    if isinstance(node, (ast.Tuple, ast.Set, ast.List)):
        return set().union(*(_names(e) for e in node.elts)) if node.elts else set()
    return set()


def _is_language(node: ast.AST) -> bool:
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
    return name in ("lang", "language") or name.endswith(("_lang", "_language"))


def language_tests(text: str) -> list[tuple[int, str]]:
    """(line, language) of each comparison of a language variable with a language's name."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_is_language(s) for s in sides):
                found += [(node.lineno, name) for s in sides for name in sorted(_names(s))]
    return found


def test_the_scan_finds_a_planted_language_test() -> None:
    planted = 'if lang == "go":\n    pass\nif src.lang in ("c", "cpp"):\n    pass\nif e.lang != "python":\n    pass\n'
    assert language_tests(planted) == [(1, "go"), (3, "c"), (3, "cpp"), (5, "python")]
    assert language_tests('if kind == "go":\n    pass\nif lang == other:\n    pass\n') == []


def test_no_language_name_is_compared_outside_the_language_specs() -> None:
    offences = [f"{path.relative_to(SYNTH.parent)}:{line}: {name}"
                for path in sorted(SYNTH.rglob("*.py")) if LANGUAGES not in path.parents
                for line, name in language_tests(path.read_text(encoding="utf-8"))]
    assert not offences, "language names compared outside synth/languages/ (give the spec a field):\n" + \
        "\n".join(offences)


def test_every_language_has_one_spec_and_the_table_languages_a_grammar() -> None:
    assert set(SPECS) == LANGS == {"python", "javascript", "typescript", "go", "rust", "java", "c", "cpp", "ruby",
                                   "php"}
    assert all(SPECS[lang].grammar is not None and SPECS[lang].defs for lang in TABLE_LANGS)
    with pytest.raises(ValueError, match="unsupported language 'cobol'"):
        spec("cobol")


# one function per table language, with a body both families can stub
BODIES = {
    "go": ("a.go", "package a\n\nfunc twice(n int) int {\n\tm := n * 2\n\treturn m\n}\n"),
    "rust": ("src/a.rs", "pub fn twice(n: i32) -> i32 {\n    let m = n * 2;\n    m\n}\n"),
    "java": ("A.java", "class A {\n    int twice(int n) {\n        int m = n * 2;\n        return m;\n    }\n}\n"),
    "c": ("a.c", "int twice(int n) {\n    int m = n * 2;\n    return m;\n}\n"),
    "cpp": ("a.cpp", "int twice(int n) {\n    int m = n * 2;\n    return m;\n}\n"),
    "ruby": ("a.rb", "def twice(n)\n  m = n * 2\n  m\nend\n"),
    "php": ("a.php", "<?php\nfunction twice($n) {\n    $m = $n * 2;\n    return $m;\n}\n"),
}


@pytest.mark.parametrize("lang", sorted(BODIES))
def test_both_families_write_the_one_stub_of_the_language(lang: str) -> None:
    path, text = BODIES[lang]
    [entity] = [e for e in extract_entities(path, text, lang) if e.name == "twice"]
    emptied = get_strategy("empty_body_v1").transform(text, entity, random.Random(0))
    featured, _ = stub_file(path, text, [entity])
    statement = spec(lang).stub.statement
    assert emptied is not None and statement in emptied and "n * 2" not in emptied
    assert statement in featured and "n * 2" not in featured
