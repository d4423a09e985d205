"""The node tags of an entity: what mutation sites it holds, decided without its text.

``Entity.node_types`` is this set. It holds the tree-sitter node types found in the
entity's code (type annotations, decorators and, for classes, method bodies left out)
and a few derived tags, so that ``Strategy.applies_to`` can decline an entity that
offers no site:

- ``<type>:<operator>`` for operator nodes, e.g. ``binary_operator:-``,
  ``comparison_operator:<=``, ``binary_expression:===``;
- ``docstring`` and ``fstring`` instead of ``string`` for those strings;
- ``args2``: a call with at least two leading positional arguments;
- ``stmt_run``: two adjacent simple statements in one block (shuffle material);
- ``superclasses``: a Python class with a base class;
- ``except_removable``: an except clause whose try keeps another handler or a finally;
- ``if_statement:else`` / ``:exit`` (no else, the body leaves early) / ``:plain``;
- ``expression_statement:assign``: an assignment statement;
- ``number:int`` (a JS integer literal) and ``member_expression:length`` (``x.length``);
- ``template_string:dynamic`` instead of ``template_string`` when it has substitutions.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

_SKIP = frozenset({"type", "decorator", "type_annotation", "type_arguments", "type_parameters",
                   "type_alias_declaration", "interface_declaration"})
_NESTED_DEFS = frozenset({"function_definition", "method_definition"})
_SIMPLE = frozenset({"expression_statement", "import_statement", "import_from_statement",
                     "assert_statement", "delete_statement", "lexical_declaration"})
_NOT_POSITIONAL = frozenset({"keyword_argument", "list_splat", "dictionary_splat", "spread_element", "comment"})


def node_tags(node: Any, is_class: bool) -> set[str]:
    """The node tags of the entity whose span node is ``node``."""
    out: set[str] = set()
    for n in _walk(node, skip_defs=is_class):
        out.update(_tags(n))
    return out


def _walk(node: Any, skip_defs: bool) -> Iterator[Any]:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in _SKIP and n is not node:
            continue
        yield n
        if skip_defs and n is not node and n.type in _NESTED_DEFS:
            continue
        stack.extend(reversed(n.children))


def _tags(n: Any) -> Iterator[str]:
    yield _string_kind(n) if n.type in ("string", "template_string") else n.type
    op = n.child_by_field_name("operator")
    if op is not None:
        yield f"{n.type}:{op.text.decode()}"
    if n.type == "comparison_operator":
        yield from (f"{n.type}:{c.text.decode()}" for c in n.children if not c.is_named)
    if n.type in ("argument_list", "arguments") and _positional(n) >= 2 and n.parent.type != "class_definition":
        yield "args2"
    if n.type == "class_definition" and n.child_by_field_name("superclasses") is not None:
        yield "superclasses"
    if n.type in ("block", "statement_block") and _has_run(n):
        yield "stmt_run"
    if n.type == "except_clause" and _removable_except(n):
        yield "except_removable"
    if n.type == "if_statement":
        yield f"if_statement:{_if_kind(n)}"
    extra = _EXTRA.get(n.type)
    if extra is not None and extra[1](n):
        yield extra[0]


def _string_kind(n: Any) -> str:
    if any(c.type in ("interpolation", "template_substitution") for c in n.children):
        return "fstring" if n.type == "string" else "template_string:dynamic"
    if n.parent is not None and n.parent.type == "expression_statement":
        return "docstring"
    return "string"


def _positional(arglist: Any) -> int:
    count = 0
    for arg in arglist.named_children:
        if arg.type in _NOT_POSITIONAL:
            break
        count += 1
    return count


def _is_simple(n: Any) -> bool:
    return n.type in _SIMPLE and not (n.named_children and n.named_children[0].type == "string")


def _has_run(block: Any) -> bool:
    kids = block.named_children
    return any(_is_simple(a) and _is_simple(b) and a.text != b.text for a, b in zip(kids, kids[1:]))


def _removable_except(n: Any) -> bool:
    kinds = [c.type for c in n.parent.named_children]
    return kinds.count("except_clause") > 1 or "finally_clause" in kinds


_EXITS = frozenset({"return_statement", "raise_statement", "throw_statement", "break_statement",
                    "continue_statement"})


def _if_kind(n: Any) -> str:
    if n.child_by_field_name("alternative") is not None:
        return "else"
    body = n.child_by_field_name("consequence") or n.child_by_field_name("body")  # PHP names it body
    if body is None:
        return "plain"
    exits = body.type in _EXITS or any(c.type in _EXITS for c in body.named_children)
    return "exit" if exits else "plain"


def _is_assign_statement(n: Any) -> bool:
    kids = n.named_children
    return bool(kids) and kids[0].type in ("assignment", "augmented_assignment", "assignment_expression",
                                           "augmented_assignment_expression")


def _is_length(n: Any) -> bool:
    prop = n.child_by_field_name("property")
    return prop is not None and prop.text == b"length"


_EXTRA = {
    "expression_statement": ("expression_statement:assign", _is_assign_statement),
    "number": ("number:int", lambda n: n.text.isdigit()),
    "member_expression": ("member_expression:length", _is_length),
}
