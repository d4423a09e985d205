"""JavaScript/TypeScript procedural strategies (TypeScript type positions are left alone)."""

from __future__ import annotations

import random
import re
from typing import ClassVar

from datagen.synth.source import Edit, Node, Source, delete_statements, has_ancestor, swap
from datagen.synth.strategies.base import FUNCS, SiteStrategy
from datagen.synth.strategies.python_procedural import tagged
from datagen.synth.strategies.registry import register

JS = frozenset({"javascript", "typescript"})
_TYPES = frozenset({"type_annotation", "type_arguments", "type_parameters", "type_alias_declaration",
                    "interface_declaration", "literal_type", "decorator"})
_STRINGY = frozenset({"string", "template_string"})
_DECIMAL = re.compile(r"[0-9]*\.?[0-9]+(e[-+]?[0-9]+)?", re.IGNORECASE)
_EXITS = frozenset({"return_statement", "throw_statement", "break_statement", "continue_statement"})

BINARY = {"+": ("-",), "-": ("+",), "*": ("/",), "/": ("*",), "%": ("/",), "**": ("*",), "<<": (">>",),
          ">>": ("<<",), ">>>": (">>",), "&": ("|",), "|": ("&",), "^": ("|", "&")}
COMPARE = {"===": "!==", "!==": "===", "==": "!=", "!=": "==", "<": "<=", "<=": "<", ">": ">=", ">=": ">"}
LOGICAL = frozenset({"&&", "||", "??"})
ORDERED = frozenset({"-", "/", "%", "**", "<<", ">>", ">>>", "+", "<", "<=", ">", ">=", "in", "instanceof"})


class JsSite(SiteStrategy):
    """Common metadata of the JS/TS strategies; sites in type positions are skipped."""

    family: ClassVar[str] = "procedural"
    langs: ClassVar[frozenset[str]] = JS
    kinds: ClassVar[frozenset[str]] = FUNCS
    operators: ClassVar[frozenset[str] | dict[str, object]] = frozenset()

    def accept(self, src: Source, node: Node) -> bool:
        if has_ancestor(node, _TYPES):
            return False
        return not self.operators or src.operator_of(node) in self.operators


class OperatorEdit(JsSite):
    """Replace the operator token of a binary or augmented-assignment expression."""

    def edit(self, src: Source, site: Node, rng: random.Random) -> list[Edit] | None:
        op = site.child_by_field_name("operator")
        return [(op.start_byte, op.end_byte, self.replacement(src.text_of(op), rng))]

    def replacement(self, op: str, rng: random.Random) -> str:
        raise NotImplementedError


@register
class JsOperatorChange(OperatorEdit):
    name = "js_op_change_v1"
    explanation = "Change an arithmetic or bitwise operator (e.g. + to -, * to /), also in `x op= y`."
    site_types = frozenset({"binary_expression", "augmented_assignment_expression"})
    requires = tagged("binary_expression", BINARY) | tagged("augmented_assignment_expression",
                                                             [op + "=" for op in BINARY])

    def accept(self, src: Source, node: Node) -> bool:
        op = src.operator_of(node).removesuffix("=") if node.type.startswith("augmented") else src.operator_of(node)
        strings = any(c.type in _STRINGY for c in node.named_children)
        return not has_ancestor(node, _TYPES) and op in BINARY and not (strings and op == "+")

    def replacement(self, op: str, rng: random.Random) -> str:
        if op.endswith("=") and op[:-1] in BINARY:
            return rng.choice(BINARY[op[:-1]]) + "="
        return rng.choice(BINARY[op])


@register
class JsCompareChange(OperatorEdit):
    name = "js_compare_change_v1"
    explanation = "Change a comparison operator (=== to !==, < to <=, ...)."
    site_types = frozenset({"binary_expression"})
    operators = COMPARE
    requires = tagged("binary_expression", COMPARE)

    def replacement(self, op: str, rng: random.Random) -> str:
        return COMPARE[op]


@register
class JsSwapOperands(JsSite):
    name = "js_swap_operands_v1"
    explanation = "Swap the operands of an order-sensitive binary operator or comparison."
    site_types = frozenset({"binary_expression"})
    operators = ORDERED
    requires = tagged("binary_expression", ORDERED)

    def edit(self, src: Source, site: Node, rng: random.Random) -> list[Edit] | None:
        left, right = site.child_by_field_name("left"), site.child_by_field_name("right")
        return None if src.text_of(left) == src.text_of(right) else swap(left, right, src)


@register
class JsBooleanChainBreak(JsSite):
    name = "js_bool_chain_v1"
    explanation = "Drop one operand of a `&&`, `||` or `??` chain."
    site_types = frozenset({"binary_expression"})
    operators = LOGICAL
    requires = tagged("binary_expression", LOGICAL)

    def edit(self, src: Source, site: Node, rng: random.Random) -> list[Edit] | None:
        keep = rng.choice([site.child_by_field_name("left"), site.child_by_field_name("right")])
        return [(site.start_byte, site.end_byte, src.text_of(keep))]


def is_int(src: Source, node: Node) -> bool:
    return node.type == "number" and src.text_of(node).isdigit()


@register
class JsOffByOne(JsSite):
    name = "js_off_by_one_v1"
    explanation = "Introduce an off-by-one: an integer literal or an `x.length` moves by one."
    site_types = frozenset({"number", "member_expression"})
    requires = frozenset({"number:int", "member_expression:length"})

    def accept(self, src: Source, node: Node) -> bool:
        if node.type == "number":
            return is_int(src, node) and super().accept(src, node)
        prop, parent = node.child_by_field_name("property"), node.parent
        is_read = parent.type not in ("assignment_expression", "call_expression", "update_expression")
        return src.text_of(prop) == "length" and is_read and super().accept(src, node)

    def edit(self, src: Source, site: Node, rng: random.Random) -> list[Edit] | None:
        delta = rng.choice((1, -1))
        if site.type == "number":
            return [(site.start_byte, site.end_byte, str(int(src.text_of(site)) + delta))]
        text = src.text_of(site)
        return [(site.start_byte, site.end_byte, f"({text} {'+' if delta > 0 else '-'} 1)")]


def js_literal_variant(src: Source, node: Node, rng: random.Random) -> str | None:
    """Another value for a JS literal, or None for a literal we do not rewrite."""
    text = src.text_of(node)
    if node.type in ("true", "false"):
        return "false" if text == "true" else "true"
    if node.type == "null":
        return "undefined"
    if node.type == "number" and text.isdigit():
        value = int(text)
        return str(rng.choice(sorted({value * 2, value // 2, 0, 1} - {value})))
    if node.type == "number":
        return repr(float(text) * 2) if _DECIMAL.fullmatch(text) else None
    if any(c.type == "template_substitution" for c in node.children) or node.child_count < 2:
        return None
    head, tail = node.children[0], node.children[-1]
    content = src.data[head.end_byte:tail.start_byte].decode("utf-8")
    if content and rng.random() < 0.5 and not content[-2:].count("\\"):
        return src.text_of(head) + content[:-1] + src.text_of(tail)
    return src.text_of(head) + content + "_" + src.text_of(tail)


@register
class JsConstantChange(JsSite):
    name = "js_constant_change_v1"
    explanation = "Change a number, string, boolean or null literal."
    requires = site_types = frozenset({"number", "string", "template_string", "true", "false", "null"})

    def accept(self, src: Source, node: Node) -> bool:
        parent = node.parent
        if parent.type in ("import_statement", "export_statement", "expression_statement"):
            return False  # module specifiers, directives such as 'use strict'
        if parent.type == "pair" and parent.child_by_field_name("key") == node:
            return False
        return super().accept(src, node)

    def edit(self, src: Source, site: Node, rng: random.Random) -> list[Edit] | None:
        new = js_literal_variant(src, site, rng)
        return None if new is None else [(site.start_byte, site.end_byte, new)]


@register
class JsSwapArguments(JsSite):
    name = "js_swap_args_v1"
    explanation = "Swap two adjacent arguments of a call."
    site_types = frozenset({"arguments"})
    requires = frozenset({"args2"})

    def edit(self, src: Source, site: Node, rng: random.Random) -> list[Edit] | None:
        args = []
        for arg in site.named_children:
            if arg.type in ("spread_element", "comment"):
                break
            args.append(arg)
        if len(args) < 2:
            return None
        i = rng.randrange(len(args) - 1)
        return None if src.text_of(args[i]) == src.text_of(args[i + 1]) else swap(args[i], args[i + 1], src)


_PRIMARY = frozenset({"identifier", "member_expression", "call_expression", "parenthesized_expression",
                      "subscript_expression", "true", "false"})


def js_negate(src: Source, cond: Node) -> str:
    if cond.type == "unary_expression" and src.operator_of(cond) == "!":
        return src.text_of(cond.child_by_field_name("argument"))
    text = src.text_of(cond)
    return f"!{text}" if cond.type in _PRIMARY else f"!({text})"


@register
class JsInvertIf(JsSite):
    name = "js_invert_if_v1"
    explanation = "Invert an if: swap the if and else blocks, or negate the condition when there is no else."
    requires = site_types = frozenset({"if_statement"})

    def edit(self, src: Source, site: Node, rng: random.Random) -> list[Edit] | None:
        then, alt = site.child_by_field_name("consequence"), site.child_by_field_name("alternative")
        other = alt.named_children[0] if alt is not None and alt.named_children else None
        if other is not None and other.type == "statement_block" and then.type == "statement_block":
            return swap(then, other, src)
        cond = site.child_by_field_name("condition").named_children[0]
        return [(cond.start_byte, cond.end_byte, js_negate(src, cond))]


class JsDelete(JsSite):
    """Delete one statement of a site type."""

    def edit(self, src: Source, site: Node, rng: random.Random) -> list[Edit] | None:
        return delete_statements(src, [site])


@register
class JsRemoveAssignment(JsDelete):
    name = "js_remove_assign_v1"
    explanation = "Remove an assignment statement (`x = ...`, `this.y += ...`)."
    site_types = frozenset({"expression_statement"})
    requires = frozenset({"expression_statement:assign"})

    def accept(self, src: Source, node: Node) -> bool:
        kids = node.named_children
        return bool(kids) and kids[0].type in ("assignment_expression", "augmented_assignment_expression")


def is_guard(node: Node) -> bool:
    """An if without else whose body leaves early (return, throw, break, continue)."""
    if node.child_by_field_name("alternative") is not None:
        return False
    body = node.child_by_field_name("consequence")
    return body.type in _EXITS or any(c.type in _EXITS for c in body.named_children)


@register
class JsRemoveGuard(JsDelete):
    name = "js_remove_guard_v1"
    explanation = "Remove an early-exit guard: an if without else that returns, throws, breaks or continues."
    site_types = frozenset({"if_statement"})
    requires = frozenset({"if_statement:exit"})

    def accept(self, src: Source, node: Node) -> bool:
        return is_guard(node)


@register
class JsRemoveConditional(JsDelete):
    name = "js_remove_cond_v1"
    explanation = "Remove an if statement without else that does not exit early."
    site_types = frozenset({"if_statement"})
    requires = frozenset({"if_statement:plain"})

    def accept(self, src: Source, node: Node) -> bool:
        return node.child_by_field_name("alternative") is None and not is_guard(node)


@register
class JsRemoveLoop(JsDelete):
    name = "js_remove_loop_v1"
    explanation = "Remove a for, for-in/of, while or do loop."
    requires = site_types = frozenset({"for_statement", "for_in_statement", "while_statement", "do_statement"})


@register
class JsRemoveMethod(JsSite):
    name = "js_remove_method_v1"
    explanation = "Remove a method from a class."
    kinds = frozenset({"class"})
    requires = site_types = frozenset({"method_definition"})

    def accept(self, src: Source, node: Node) -> bool:
        return node.parent.type == "class_body"

    def edit(self, src: Source, site: Node, rng: random.Random) -> list[Edit] | None:
        return delete_statements(src, [site], tidy=True)
