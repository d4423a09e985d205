"""What synth knows of one language, in one value: ``LanguageSpec``.

A spec holds every table the synth room reads per language: how entities are found and
named (``walk``, ``defs``, ``name_of``), what counts as a branch, how a body is stubbed
(``Stub``: the one stub table, for the ``removal`` and ``feature`` families alike), the
roles the generic strategies mutate (``grammar``), and how a mutated file is judged
(``tolerant_parse``, ``unused_is_error``, ``compiles``). Code outside the language modules
asks the spec, never compares a language's name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from datagen.synth.strategies.grammar_tables import Grammar


@dataclass(frozen=True)
class Stub:
    """How one language writes "not written yet" in place of a body."""

    statement: str
    body: str = "braces"  # braces: ``{ ... }`` replaced; docstring: Python's block after its docstring;
    # statements: Ruby's statements between the signature and ``end``
    expression_bodies: bool = False  # an arrow function's expression body becomes a braced stub
    drops_unused_imports: bool = False  # Go: an import only the removed bodies used must go
    # C / C++: the parameters and the file's static functions the body called are cast to
    # void, so -Wunused-parameter / -Wunused-function under -Werror still build
    void_uses: bool = False


def node_text(node: Any) -> str:
    return node.text.decode("utf-8") if node is not None else ""


def field_name(node: Any) -> str | None:
    """A definition's own ``name`` field (most grammars name their definitions so)."""
    return node_text(node.child_by_field_name("name")) or None


def first_type_name(node: Any) -> str | None:
    """The first type name in ``node``, in source order, outside type arguments
    (``RingBuffer`` in ``&'a RingBuffer<T>``, ``Set`` in Go's ``(s *Set[T])``)."""
    if node is None or node.type in ("type_arguments", "type_parameter_list"):
        return None
    if node.type == "type_identifier":
        return node_text(node)
    for child in node.named_children:
        found = first_type_name(child)
        if found:
            return found
    return None


@dataclass(frozen=True)
class LanguageSpec:
    """One language's synth tables (see the module docstring)."""

    name: str
    branches: frozenset[str]  # node types that add one to an entity's complexity (a branch point)
    stub: Stub
    indent: str = "    "  # one level of indentation
    # how entities are found: a hand-written walk (python, js) or the table walk over ``defs``
    walk: Literal["python", "js", "table"] = "table"
    # the table walk: node type -> "function" (a method when inside a class), "method",
    # "class", or "scope" (names a qualname part without being an entity, e.g. a namespace)
    defs: Mapping[str, str] = field(default_factory=dict)
    # a definition's name ("Owner.name" for a Go method or a C++ ``S::f``); None: not an entity
    name_of: Callable[[Any], str | None] = field_name
    grammar: Grammar | None = None  # the roles the generic strategies mutate (table languages)
    grammars: Mapping[str, str] = field(default_factory=dict)  # file suffix -> another grammar (``.tsx``)
    # words in a function's head that let the compiler evaluate it (C++ ``constexpr``, Rust
    # ``const fn``): a stub there breaks every constant expression that calls it
    compile_time: re.Pattern[str] | None = None
    inline_tests: bool = False  # test items inside code files (Rust's ``#[test]``, ``#[cfg(test)]``)
    runs_on_load: bool = False  # its files run top-level code when loaded, calling the repo's functions
    # a mutated file may keep the ERROR / MISSING nodes its original had (files of the table
    # languages often hold some: a macro, a newer syntax) but add none; False: it must parse cleanly
    tolerant_parse: bool = True
    compiles: bool = False  # checked by compiling it (Python's ``compile``), not by a parse
    unused_is_error: bool = False  # Go: a local or an import left unused does not build
    blocks: frozenset[str] = frozenset()  # the blocks a deletion may empty (non-table languages)
    empty_block: str | None = None  # what an emptied block holds (Python's ``pass``)
