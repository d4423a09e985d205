"""Python procedural strategies that change one expression: operators, operands, constants.

Statement-level kinds (removals, shuffles, class edits) are in ``python_structural``.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import ClassVar

from datagen.synth.source import Edit, Node, Source, has_ancestor, swap
from datagen.synth.strategies.base import FUNCS, SiteStrategy, definition
from datagen.synth.strategies.registry import register

PY = frozenset({"python"})
_ANNOTATION = frozenset({"type", "decorator"})
_STRINGY = frozenset({"string", "concatenated_string"})

BINARY = {
    "+": ("-",), "-": ("+",), "*": ("//", "/"), "/": ("*", "//"), "//": ("/", "*"), "%": ("//",),
    "**": ("*",), "<<": (">>",), ">>": ("<<",), "&": ("|",), "|": ("&",), "^": ("|", "&"),
}
COMPARE = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "==",
           "in": "not in", "not in": "in", "is": "is not", "is not": "is"}
# operators whose operands can be swapped to a different meaning
ORDERED = frozenset({"-", "/", "//", "%", "**", "<<", ">>", "+", "<", "<=", ">", ">=", "in", "not in"})


def tagged(node_type: str, operators: Iterable[str]) -> frozenset[str]:
    """Node tags (see ``datagen.synth.node_tags``) of ``node_type`` with each operator."""
    return frozenset(f"{node_type}:{op}" for op in operators)


def in_code(node: Node) -> bool:
    """False for nodes inside annotations or decorators, where a mutation is no bug."""
    return not has_ancestor(node, _ANNOTATION)


def operator_of(node: Node) -> Node:
    return node.child_by_field_name("operator")


def compare_operators(node: Node) -> list[Node]:
    """The operator tokens of a (possibly chained) comparison."""
    return [c for c in node.children if not c.is_named]


class PyExpr(SiteStrategy):
    """Common metadata of the Python expression strategies."""

    family: ClassVar[str] = "procedural"
    langs: ClassVar[frozenset[str]] = PY
    kinds: ClassVar[frozenset[str]] = FUNCS

    def accept(self, src: Source, node: Node) -> bool:
        return in_code(node)


@register
class OperatorChange(PyExpr):
    name = "py_op_change_v1"
    explanation = "Change an arithmetic or bitwise operator (e.g. + to -, * to //), also in augmented assignments."
    site_types = frozenset({"binary_operator", "augmented_assignment"})
    requires = tagged("binary_operator", BINARY) | tagged("augmented_assignment", [op + "=" for op in BINARY])

    def accept(self, src: Source, node: Node) -> bool:
        op = src.text_of(operator_of(node)).rstrip("=")
        strings = any(c.type in _STRINGY for c in node.named_children)
        return in_code(node) and op in BINARY and not (strings and op in ("+", "%"))

    def edit(self, src: Source, site: Node, rng: random.Random) -> list[Edit] | None:
        op = operator_of(site)
        text = src.text_of(op)
        suffix = "=" if site.type == "augmented_assignment" else ""
        return [(op.start_byte, op.end_byte, rng.choice(BINARY[text.rstrip("=")]) + suffix)]


@register
class CompareChange(PyExpr):
    name = "py_compare_change_v1"
    explanation = "Change a comparison operator (< to <=, == to !=, in to not in, is to is not)."
    requires = site_types = frozenset({"comparison_operator"})

    def edit(self, src: Source, site: Node, rng: random.Random) -> list[Edit] | None:
        op = rng.choice(compare_operators(site))
        return [(op.start_byte, op.end_byte, COMPARE[src.text_of(op)])]


@register
class SwapOperands(PyExpr):
    name = "py_swap_operands_v1"
    explanation = "Swap the two operands of an order-sensitive binary operator or comparison."
    site_types = frozenset({"binary_operator", "comparison_operator"})
    requires = tagged("binary_operator", ORDERED) | tagged("comparison_operator", ORDERED)

    def accept(self, src: Source, node: Node) -> bool:
        ops = [operator_of(node)] if node.type == "binary_operator" else compare_operators(node)
        left, right = node.named_children[0], node.named_children[-1]
        return (in_code(node) and len(ops) == 1 and src.text_of(ops[0]) in ORDERED
                and src.text_of(left) != src.text_of(right))

    def edit(self, src: Source, site: Node, rng: random.Random) -> list[Edit] | None:
        return swap(site.named_children[0], site.named_children[-1], src)


@register
class BooleanChainBreak(PyExpr):
    name = "py_bool_chain_v1"
    explanation = "Drop one operand of an `and`/`or` chain."
    requires = site_types = frozenset({"boolean_operator"})

    def edit(self, src: Source, site: Node, rng: random.Random) -> list[Edit] | None:
        keep = rng.choice([site.child_by_field_name("left"), site.child_by_field_name("right")])
        return [(site.start_byte, site.end_byte, src.text_of(keep))]


def int_value(text: str) -> int | None:
    """The value of a Python integer literal; None for imaginary ones (``2j``) and oddities."""
    if text[-1:] in ("j", "J", "l", "L"):
        return None
    try:
        return int(text, 0)
    except ValueError:  # e.g. "0123", which tree-sitter accepts and Python does not
        return None


def plus_minus_one(src: Source, node: Node, rng: random.Random) -> str | None:
    """The text of ``node`` plus or minus one (integer literals are recomputed)."""
    delta = rng.choice((1, -1))
    if node.type == "integer":
        value = int_value(src.text_of(node))
        return None if value is None else str(value + delta)
    text = src.text_of(node)
    if node.type not in ("identifier", "attribute", "call", "subscript", "binary_operator"):
        text = f"({text})"
    return f"{text} + 1" if delta > 0 else f"{text} - 1"


@register
class OffByOne(PyExpr):
    name = "py_off_by_one_v1"
    explanation = "Introduce an off-by-one: an integer literal, a range() bound or a slice bound moves by one."
    requires = frozenset({"integer", "slice"})
    site_types = frozenset({"integer", "identifier", "attribute", "call", "subscript", "binary_operator"})

    def sites(self, src: Source, node: Node) -> list[Node]:
        found = []
        for n in super().sites(src, node):
            if n.type == "integer" or (n.is_named and n.parent is not None and _is_bound(src, n)):
                found.append(n)
        return found

    def edit(self, src: Source, site: Node, rng: random.Random) -> list[Edit] | None:
        new = plus_minus_one(src, site, rng)
        return None if new is None else [(site.start_byte, site.end_byte, new)]


def _is_bound(src: Source, node: Node) -> bool:
    """True for a slice bound or a positional argument of ``range(...)``."""
    parent = node.parent
    if parent.type == "slice":
        return True
    if parent.type == "argument_list" and parent.parent.type == "call":
        return src.text_of(parent.parent.child_by_field_name("function")) == "range"
    return False


def literal_variant(src: Source, node: Node, rng: random.Random) -> str | None:
    """Another value for a literal node, or None when ``node`` is not a plain literal."""
    text = src.text_of(node)
    if node.type in ("true", "false"):
        return "False" if text == "True" else "True"
    if node.type == "none":
        return "False"
    if node.type == "integer":
        value = int_value(text)
        if value is None:
            return None
        options = sorted({value * 2, value // 2, 0, 1, -value} - {value})
        return str(rng.choice(options))
    if node.type == "float":
        value = float(text)
        return repr(value * 2 if value else 1.0)
    if node.type == "string":
        return _string_variant(src, node, rng)
    return None


def _string_variant(src: Source, node: Node, rng: random.Random) -> str | None:
    """Drop the last character of a plain string, or add one; f-strings are left alone."""
    parts = node.children
    if any(c.type == "interpolation" for c in parts) or len(parts) < 2:
        return None
    head, tail = parts[0], parts[-1]
    content = src.data[head.end_byte:tail.start_byte].decode("utf-8")
    if content and rng.random() < 0.5 and not content.endswith("\\") and not content[:-1].endswith("\\"):
        content = content[:-1]
    else:
        content += "_"
    return src.text_of(head) + content + src.text_of(tail)


@register
class ConstantChange(PyExpr):
    name = "py_constant_change_v1"
    explanation = "Change a numeric, string, boolean or None literal."
    requires = site_types = frozenset({"integer", "float", "string", "true", "false", "none"})

    def accept(self, src: Source, node: Node) -> bool:
        if node.type == "string" and node.parent.type in ("expression_statement", "concatenated_string"):
            return False  # docstrings; implicit concatenations are edited part by part elsewhere
        return in_code(node)

    def edit(self, src: Source, site: Node, rng: random.Random) -> list[Edit] | None:
        new = literal_variant(src, site, rng)
        return None if new is None else [(site.start_byte, site.end_byte, new)]


@register
class DefaultArgChange(PyExpr):
    name = "py_default_arg_v1"
    explanation = "Change the default value of a parameter of the function."
    requires = frozenset({"default_parameter", "typed_default_parameter"})

    def sites(self, src: Source, node: Node) -> list[Node]:
        params = definition(node).child_by_field_name("parameters")
        kinds = ("default_parameter", "typed_default_parameter")
        return [p.child_by_field_name("value") for p in params.named_children if p.type in kinds]

    def edit(self, src: Source, site: Node, rng: random.Random) -> list[Edit] | None:
        new = literal_variant(src, site, rng) if site.type != "none" else "0"
        return [(site.start_byte, site.end_byte, new or "None")]


@register
class SwapArguments(PyExpr):
    name = "py_swap_args_v1"
    explanation = "Swap two adjacent positional arguments of a call."
    requires = frozenset({"args2"})
    site_types = frozenset({"argument_list"})

    def accept(self, src: Source, node: Node) -> bool:
        return node.parent.type == "call" and in_code(node) and len(positional(node)) >= 2

    def edit(self, src: Source, site: Node, rng: random.Random) -> list[Edit] | None:
        args = positional(site)
        i = rng.randrange(len(args) - 1)
        if src.text_of(args[i]) == src.text_of(args[i + 1]):
            return None
        return swap(args[i], args[i + 1], src)


def positional(arglist: Node) -> list[Node]:
    """The leading plain positional arguments of an argument list."""
    out = []
    for arg in arglist.named_children:
        if arg.type in ("keyword_argument", "list_splat", "dictionary_splat", "comment"):
            break
        out.append(arg)
    return out


_PRIMARY = frozenset({"identifier", "call", "attribute", "subscript", "comparison_operator",
                      "parenthesized_expression", "true", "false", "none", "integer", "string"})


def negate(src: Source, cond: Node) -> str:
    """The text of ``not cond`` (or cond without its ``not``)."""
    if cond.type == "not_operator":
        return src.text_of(cond.child_by_field_name("argument"))
    text = src.text_of(cond)
    return f"not {text}" if cond.type in _PRIMARY else f"not ({text})"


@register
class InvertIf(PyExpr):
    name = "py_invert_if_v1"
    explanation = "Invert an if: swap the if and else bodies, or negate the condition when there is no else."
    requires = site_types = frozenset({"if_statement"})

    def edit(self, src: Source, site: Node, rng: random.Random) -> list[Edit] | None:
        alternatives = site.children_by_field_name("alternative")
        if len(alternatives) == 1 and alternatives[0].type == "else_clause":
            return swap(site.child_by_field_name("consequence"), alternatives[0].child_by_field_name("body"), src)
        cond = site.child_by_field_name("condition")
        return [(cond.start_byte, cond.end_byte, negate(src, cond))]
