"""Golden tests of entity extraction for Python, JavaScript and TypeScript."""

from __future__ import annotations

from textwrap import dedent

import pytest

from datagen.synth.entities import extract_entities, inline_test_spans

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


COMMONJS = """\
module.exports = function (num) {
  if (typeof num === 'number') {
    return num - num === 0;
  }
  return false;
};
exports.twice = (a) => {
  return a * 2;
};
module.exports.same = function named(x) { return x; };
const helper = 1;
"""


def test_commonjs_and_default_exports_are_entities() -> None:
    """A package whose one function is ``module.exports = function (...)`` (is-number's
    shape) or an anonymous ``export default function``: the function is an entity, named
    by what exports it."""
    assert rows("index.js", COMMONJS, "javascript") == [
        ("function", "module.exports", 1, 6, 6, 2),  # one branch
        ("function", "twice", 7, 9, 3, 1),
        ("function", "same", 10, 10, 1, 1),
    ]
    assert rows("index.mjs", "export default function (a) {\n  return a;\n}\n", "javascript") == [
        ("function", "default", 1, 3, 3, 1)]


MEMBERS = """\
const braces = (input, options = {}) => {
  return braces.expand(input, options);
};
braces.expand = (input, options = {}) => {
  return input.split(',');
};
function Router() {}
Router.prototype.route = function route(path) {
  return path;
};
this.local = () => 1;
"""


def test_functions_made_members_of_a_function_or_class_are_entities() -> None:
    """CommonJS libraries hang their API on their main function (``braces.expand = ...``) or
    a constructor's prototype (``Router.prototype.route = function``): each is an entity
    named by its member name, its owner in the qualname (a method for a prototype)."""
    got = [(e.kind, e.name, e.qualname, e.start_line) for e in extract_entities("index.js", MEMBERS, "javascript")]
    assert got == [("function", "braces", "braces", 1), ("function", "expand", "braces.expand", 4),
                   ("function", "Router", "Router", 7), ("method", "route", "Router.route", 8)]


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


# one file per table language: (path, source, expected (kind, qualname, first line, last line, complexity))
GRAMMAR_FILES = {
    "go": ("kv/store.go", """\
package kv

import "strings"

type Store struct{ m map[string]string }

func New() *Store {
\treturn &Store{m: map[string]string{}}
}

func (s *Store) Get(k string) (string, bool) {
\tv, ok := s.m[strings.ToLower(k)]
\tif !ok || v == "" {
\t\treturn "", false
\t}
\treturn v, true
}
""", [
        ('function', 'New', 7, 9, 1),
        ('method', 'Store.Get', 11, 17, 3),
    ]),
    "rust": ("src/lib.rs", """\
pub struct Ring<T> { items: Vec<T> }

impl<T: Clone> Ring<T> {
    pub fn len(&self) -> usize {
        self.items.len()
    }
}

impl<T> std::fmt::Debug for Ring<T> {}

pub fn make() -> Ring<u8> {
    Ring { items: vec![] }
}

#[cfg(test)]
mod tests {
    #[test]
    fn len_is_zero() {
        assert_eq!(super::make().len(), 0);
    }
}
""", [
        ('class', 'Ring', 3, 7, 1),
        ('method', 'Ring.len', 4, 6, 1),
        ('function', 'make', 11, 13, 1),
    ]),
    "java": ("src/main/java/a/Calc.java", """\
package a;

public class Calc {
  private int total;

  public Calc() {
    total = 0;
  }

  public int add(int x) {
    if (x < 0 && total > 0) {
      return total;
    }
    return total += x;
  }

  interface Op { int apply(int x); }
}
""", [
        ('class', 'Calc', 3, 18, 3),
        ('method', 'Calc.Calc', 6, 8, 1),
        ('method', 'Calc.add', 10, 15, 3),
        ('class', 'Calc.Op', 17, 17, 1),
    ]),
    "c": ("src/calc.c", """\
#include <string.h>

static int *find(int *xs, int n, int y) {
    for (int i = 0; i < n; i++) {
        if (xs[i] == y) return &xs[i];
    }
    return NULL;
}

int sum(const int *xs, int n);
""", [
        ('function', 'find', 3, 8, 3),
    ]),
    "cpp": ("src/calc.cpp", """\
namespace calc {
class Stack {
 public:
  int top() const { return items_.back(); }
 private:
  std::vector<int> items_;
};

void Stack::push(int x) {
  items_.push_back(x);
}

template <typename T>
T twice(T x) { return x + x; }
}  // namespace calc
""", [
        ('class', 'calc.Stack', 2, 7, 1),
        ('method', 'calc.Stack.top', 4, 4, 1),
        ('method', 'calc.Stack.push', 9, 11, 1),
        ('function', 'calc.twice', 14, 14, 1),
    ]),
    "ruby": ("lib/calc.rb", """\
module Calc
  class Stack
    def push(x)
      @items << x unless x.nil?
    end

    def self.build = new
  end

  def self.version
    "1"
  end
end
""", [
        ('class', 'Calc', 1, 13, 3),
        ('class', 'Calc.Stack', 2, 8, 3),
        ('method', 'Calc.Stack.push', 3, 5, 3),
        ('method', 'Calc.Stack.build', 7, 7, 1),
        ('method', 'Calc.version', 10, 12, 1),
    ]),
    "php": ("src/Calc.php", """\
<?php
namespace App;

function helper($x) { return $x; }

final class Calc extends Base {
    public function add(int $x): int {
        return $x > 0 ? $x : 0;
    }
}

trait Loud { public function shout() { return "!"; } }
""", [
        ('function', 'helper', 4, 4, 1),
        ('class', 'Calc', 6, 10, 2),
        ('method', 'Calc.add', 7, 9, 2),
        ('class', 'Loud', 12, 12, 1),
        ('method', 'Loud.shout', 12, 12, 1),
    ]),
}


@pytest.mark.parametrize("lang", sorted(GRAMMAR_FILES))
def test_table_language_entities(lang: str) -> None:
    path, text, expected = GRAMMAR_FILES[lang]
    found = extract_entities(path, text, lang)
    assert [(e.kind, e.qualname, e.start_line, e.end_line, e.complexity) for e in found] == expected
    for e in found:  # spans are byte-exact: the entity's text names it
        assert e.name.split(".")[-1] in text.encode()[e.start_byte:e.end_byte].decode()


def test_rust_test_items_are_no_entities() -> None:
    path, text, _ = GRAMMAR_FILES["rust"]
    names = {e.name for e in extract_entities(path, text, "rust")}
    assert "len_is_zero" not in names and "tests" not in names
    assert inline_test_spans(text, "rust")[0][0] == text.encode().index(b"#[cfg(test)]")
