"""Python procedural strategies that remove or reorder statements, or edit a class."""

from __future__ import annotations

import random
from typing import ClassVar

from datagen.synth.source import (
    Edit,
    Node,
    Source,
    dedent_block,
    delete_statements,
    descendants,
    remove_list_item,
    statements,
)
from datagen.synth.strategies.base import FUNCS, SiteStrategy, definition
from datagen.synth.strategies.python_procedural import PY
from datagen.synth.strategies.registry import register

CLASSES = frozenset({"class"})
_COMPOUND = frozenset({
    "if_statement", "for_statement", "while_statement", "try_statement", "with_statement",
    "function_definition", "class_definition", "decorated_definition", "match_statement",
    "return_statement", "raise_statement", "pass_statement", "break_statement", "continue_statement",
    "future_import_statement", "global_statement", "nonlocal_statement", "comment",
})


class PyDelete(SiteStrategy):
    """Delete one statement of a site type (``pass`` fills a block left empty)."""

    family: ClassVar[str] = "procedural"
    langs: ClassVar[frozenset[str]] = PY
    kinds: ClassVar[frozenset[str]] = FUNCS

    def edit(self, src: Source, site: Node, rng: random.Random) -> list[Edit] | None:
        return delete_statements(src, [site])


def is_assignment(node: Node) -> bool:
    kids = node.named_children
    return node.type == "expression_statement" and len(kids) == 1 and kids[0].type in (
        "assignment", "augmented_assignment")


@register
class RemoveAssignment(PyDelete):
    name = "py_remove_assign_v1"
    explanation = "Remove an assignment statement (in a class: a class attribute or dataclass field)."
    kinds = FUNCS | CLASSES
    requires = frozenset({"expression_statement:assign"})

    def sites(self, src: Source, node: Node) -> list[Node]:
        node = definition(node)
        if node.type == "class_definition":
            return [s for s in statements(node.child_by_field_name("body")) if is_assignment(s)]
        return [s for s in descendants(node, frozenset({"expression_statement"})) if is_assignment(s)]


@register
class RemoveConditional(PyDelete):
    name = "py_remove_cond_v1"
    explanation = "Remove an if statement that has no else/elif branch."
    site_types = frozenset({"if_statement"})
    requires = frozenset({"if_statement:plain", "if_statement:exit"})

    def accept(self, src: Source, node: Node) -> bool:
        return not node.children_by_field_name("alternative")


@register
class RemoveLoop(PyDelete):
    name = "py_remove_loop_v1"
    explanation = "Remove a for or while loop."
    requires = site_types = frozenset({"for_statement", "while_statement"})


@register
class RemoveAssert(PyDelete):
    name = "py_remove_assert_v1"
    explanation = "Remove an assert statement."
    requires = site_types = frozenset({"assert_statement"})


@register
class RemoveRaise(PyDelete):
    name = "py_remove_raise_v1"
    explanation = "Remove a raise statement."
    requires = site_types = frozenset({"raise_statement"})


@register
class RemoveWrapper(PyDelete):
    name = "py_remove_wrapper_v1"
    explanation = "Remove a with or try wrapper, keeping its body (dedented)."
    requires = site_types = frozenset({"with_statement", "try_statement"})

    def edit(self, src: Source, site: Node, rng: random.Random) -> list[Edit] | None:
        edit = dedent_block(src, site, site.child_by_field_name("body"))
        return None if edit is None else [edit]


@register
class RemoveExcept(PyDelete):
    name = "py_remove_except_v1"
    explanation = "Remove one except clause of a try that keeps another handler or a finally."
    site_types = frozenset({"except_clause"})
    requires = frozenset({"except_removable"})

    def accept(self, src: Source, node: Node) -> bool:
        kinds = [c.type for c in node.parent.named_children]
        return kinds.count("except_clause") > 1 or "finally_clause" in kinds

    def edit(self, src: Source, site: Node, rng: random.Random) -> list[Edit] | None:
        if not src.owns_lines(site):
            return None
        return [(*src.line_span(site), "")]


def is_simple(src: Source, node: Node) -> bool:
    """A statement that may move among its neighbours: no control flow, no docstring."""
    if node.type in _COMPOUND or not src.owns_lines(node):
        return False
    kids = node.named_children
    return not (node.type == "expression_statement" and kids and kids[0].type == "string")


@register
class ShuffleStatements(PyDelete):
    name = "py_shuffle_stmts_v1"
    explanation = "Shuffle a run of consecutive simple statements of one block."
    site_types = frozenset({"block"})
    requires = frozenset({"stmt_run"})

    def sites(self, src: Source, node: Node) -> list[Node]:
        return [b for b in super().sites(src, definition(node)) if runs(src, b)]

    def edit(self, src: Source, site: Node, rng: random.Random) -> list[Edit] | None:
        run = rng.choice(runs(src, site))
        texts = [src.text_of(n) for n in run]
        order = list(texts)
        while order == texts:
            rng.shuffle(order)
        return [(n.start_byte, n.end_byte, t) for n, t in zip(run, order)]


def runs(src: Source, block: Node) -> list[list[Node]]:
    """Maximal runs (length >= 2, not all equal) of adjacent simple statements of a block."""
    found, current = [], []
    for child in block.named_children + [None]:
        if child is not None and is_simple(src, child):
            current.append(child)
            continue
        if len(current) >= 2 and len({src.text_of(n) for n in current}) > 1:
            found.append(current)
        current = []
    return found


class PyClassStrategy(SiteStrategy):
    family: ClassVar[str] = "procedural"
    langs: ClassVar[frozenset[str]] = PY
    kinds: ClassVar[frozenset[str]] = CLASSES


@register
class RemoveBaseClass(PyClassStrategy):
    name = "py_remove_base_v1"
    explanation = "Remove a base class from a class definition."
    requires = frozenset({"superclasses"})

    def sites(self, src: Source, node: Node) -> list[Node]:
        bases = definition(node).child_by_field_name("superclasses")
        return [] if bases is None else [b for b in bases.named_children if b.type not in (
            "keyword_argument", "comment")]

    def edit(self, src: Source, site: Node, rng: random.Random) -> list[Edit] | None:
        items = [c for c in site.parent.named_children if c.type != "comment"]
        if len(items) == 1:  # the only base: drop the parentheses too
            return [(site.parent.start_byte, site.parent.end_byte, "")]
        return [remove_list_item(src, items, items.index(site))]


@register
class RemoveMethod(PyClassStrategy):
    name = "py_remove_method_v1"
    explanation = "Remove a method from a class."
    requires = frozenset({"function_definition"})

    def sites(self, src: Source, node: Node) -> list[Node]:
        body = definition(node).child_by_field_name("body")
        return [s for s in statements(body) if definition(s).type == "function_definition"]

    def edit(self, src: Source, site: Node, rng: random.Random) -> list[Edit] | None:
        return delete_statements(src, [site], tidy=True)
