"""The ``removal`` family: empty a function's body so that the task is "implement this".

Every language writes the stub its spec names (``LanguageSpec.stub``, the one stub table
the ``feature`` family uses too): Python raises ``NotImplementedError`` after the
docstring, JS/TS throws, Go panics, Rust calls ``todo!()``, ...
"""

from __future__ import annotations

import random
from typing import ClassVar

from datagen.synth.entities import LANGS, Entity
from datagen.synth.source import Edit, Node, Source, statements
from datagen.synth.strategies.base import FUNCS, Strategy, definition
from datagen.synth.strategies.registry import register


def is_docstring(node: Node) -> bool:
    kids = node.named_children
    return node.type == "expression_statement" and len(kids) == 1 and kids[0].type == "string"


def docstring_stub(src: Source, fn: Node) -> Edit | None:
    """Edit replacing a Python function body (after its docstring) by the stub."""
    stub = src.spec.stub.statement
    body = fn.child_by_field_name("body")
    stmts = statements(body)
    keep = stmts[0] if stmts and is_docstring(stmts[0]) else None
    rest = stmts[1:] if keep is not None else stmts
    if rest:
        return rest[0].start_byte, body.end_byte, stub
    if keep is None:
        return None
    return keep.end_byte, keep.end_byte, "\n" + src.indent_of(keep) + stub


def brace_stub(src: Source, body: Node, stub: str, unit: str) -> Edit | None:
    """Edit replacing what is between a body's braces by ``stub`` (indented like the old
    first statement, else one ``unit`` deeper than the closing brace)."""
    open_brace, close_brace = body.children[0], body.children[-1]
    if open_brace.type != "{" or close_brace.type != "}":
        return None
    if open_brace.start_point[0] == close_brace.start_point[0]:  # a one-line body
        return open_brace.end_byte, close_brace.start_byte, f" {stub} "
    outer = src.line_indent(close_brace.start_byte)
    first = body.named_children[0] if body.named_children else None
    on_own_line = first is not None and first.start_point[0] > open_brace.start_point[0]
    inner = src.line_indent(first.start_byte) if on_own_line else outer + unit
    return open_brace.end_byte, close_brace.start_byte, f"\n{inner}{stub}\n{outer}"


def body_stub(src: Source, fn: Node) -> Edit | None:
    """Edit replacing a function body between braces (or Ruby's statements) by its language's stub."""
    how = src.spec.stub
    body = fn.child_by_field_name("body")
    if body is None:
        return None  # abstract, declared only, or an empty Ruby method
    if how.body == "statements":
        if body.type != "body_statement":  # an endless method: ``def f(x) = expr``
            return body.start_byte, body.end_byte, f"raise({how.statement.split()[-1]})"
        return body.start_byte, body.end_byte, how.statement
    if how.expression_bodies and body.type != "statement_block":  # an arrow function's expression body
        return body.start_byte, body.end_byte, "{ " + how.statement + " }"
    return brace_stub(src, body, how.statement, src.spec.indent)


@register
class EmptyBody(Strategy):
    name = "empty_body_v1"
    explanation = "Replace the function's body with a stub that raises 'not implemented' (docstring kept)."
    family: ClassVar[str] = "removal"
    langs: ClassVar[frozenset[str]] = LANGS
    kinds: ClassVar[frozenset[str]] = FUNCS

    def transform(self, text: str, entity: Entity, rng: random.Random) -> str | None:
        src = Source.parse(entity.path, text, entity.lang)
        node = src.entity_node(entity)
        if node is None:
            return None
        fn = definition(node)
        edit = docstring_stub(src, fn) if src.spec.stub.body == "docstring" else body_stub(src, fn)
        return None if edit is None else src.accept(src.apply([edit]))
