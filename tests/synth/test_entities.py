"""Golden tests of entity extraction for Python, JavaScript and TypeScript."""

from __future__ import annotations

from textwrap import dedent

import pytest

from datagen.synth.entities import extract_entities

PY = dedent('''
    import functools


    class Router(Base):
        """Routes."""

        @functools.cache
        def add_route(self, path, handler=None):
            if path and handler:
                return 1
            return 0

        def wrap(self):
            def inner(x):
                return [y for y in x if y]

            return inner


    @decorator
    def top(a):
        with open(a) as fh:
            return fh.read() if a else ""
    ''').lstrip()

JS = dedent('''
    import { x } from './x.js';

    export class Shape {
      constructor(n) {
        this.n = n;
      }

      static of(n) {
        return n > 0 && n < 9 ? new Shape(n) : null;
      }
    }

    export function area(s) {
      for (const p of s.parts) {
        if (p) { return p; }
      }
    }

    const half = (v) => v / 2;
    let notAFunction = 3;
    ''').lstrip()

TS = dedent('''
    interface Sized { size(): number }

    export const scale = function (v: number, k = 2): number {
      return v * k;
    };

    export abstract class Base<T> implements Sized {
      abstract size(): number;
      get label(): string {
        return `base ${this.size()}`;
      }
    }
    ''').lstrip()


def rows(path: str, text: str, lang: str) -> list[tuple]:
    return [(e.kind, e.qualname, e.start_line, e.end_line, e.n_lines, e.complexity)
            for e in extract_entities(path, text, lang)]


def test_python_entities() -> None:
    assert rows("pkg/router.py", PY, "python") == [
        ("class", "Router", 4, 17, 11, 5),
        ("method", "Router.add_route", 7, 11, 5, 3),
        ("method", "Router.wrap", 13, 17, 4, 3),
        ("function", "Router.wrap.inner", 14, 15, 2, 3),
        ("function", "top", 20, 23, 4, 3),
    ]


def test_python_entity_spans_are_byte_exact() -> None:
    for e in extract_entities("m.py", PY, "python"):
        body = PY.encode()[e.start_byte:e.end_byte].decode()
        assert body.lstrip("@").split("(")[0].split()[-1] in (e.name, "functools.cache", "decorator")
        assert e.path == "m.py" and e.lang == "python"


def test_javascript_entities() -> None:
    assert rows("src/shape.js", JS, "javascript") == [
        ("class", "Shape", 3, 11, 8, 3),
        ("method", "Shape.constructor", 4, 6, 3, 1),
        ("method", "Shape.of", 8, 10, 3, 3),
        ("function", "area", 13, 17, 5, 3),
        ("function", "half", 19, 19, 1, 1),
    ]


def test_typescript_entities() -> None:
    assert rows("src/base.ts", TS, "typescript") == [
        ("function", "scale", 3, 5, 3, 1),
        ("class", "Base", 7, 12, 6, 1),
        ("method", "Base.label", 9, 11, 3, 1),
    ]


def test_features_guide_applies_to() -> None:
    by_name = {e.qualname: e for e in extract_entities("m.py", PY, "python")}
    assert "superclasses" in by_name["Router"].node_types
    assert "if_statement" not in by_name["Router"].node_types  # method bodies are their own entities
    assert "boolean_operator:and" in by_name["Router.add_route"].node_types
    assert "docstring" in by_name["Router"].node_types


def test_extraction_is_deterministic_and_checks_language() -> None:
    assert extract_entities("m.py", PY, "python") == extract_entities("m.py", PY, "python")
    with pytest.raises(ValueError, match="unsupported language"):
        extract_entities("m.sh", "echo hi", "shell")
