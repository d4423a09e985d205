"""Procedural strategies written once over the roles of ``grammar_tables`` (each language's
``Grammar`` is in its spec, ``synth/languages/``).

They cover Go, Rust, Java, C, C++, Ruby and PHP; Python and JavaScript/TypeScript keep
their own strategies (``python_*``, ``js_procedural``), whose outputs task ids depend on.
Each strategy reads its node types and fields from the entity's ``Grammar``; a result is
kept only when it re-parses with no new ERROR node (``Source.accept``).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import PurePosixPath
from typing import ClassVar

from datagen.sandbox.harness.protect import is_test_file
from datagen.synth.entities import Entity, inline_test_spans
from datagen.synth.languages import SPECS
from datagen.synth.source import Edit, Node, Source, delete_statements, descendants, has_ancestor, swap
from datagen.synth.strategies.base import FUNCS, SiteStrategy, Strategy
from datagen.synth.strategies.grammar_tables import COMMENTS, Grammar
from datagen.synth.strategies.registry import register

_FLOAT = re.compile(r"[0-9]+\.[0-9]+")
GRAMMARS: dict[str, Grammar] = {name: s.grammar for name, s in SPECS.items() if s.grammar is not None}
LANGS = frozenset(GRAMMARS)  # the languages whose spec gives the roles these strategies mutate


def grammar(src: Source) -> Grammar:
    return GRAMMARS[src.lang]


class GenericSite(SiteStrategy):
    """A site strategy of the table languages: sites come from ``roles`` of the grammar."""

    family: ClassVar[str] = "procedural"
    langs: ClassVar[frozenset[str]] = LANGS
    kinds: ClassVar[frozenset[str]] = FUNCS
    roles: ClassVar[tuple[str, ...]] = ()  # Grammar fields naming the site node types

    def types(self, g: Grammar) -> frozenset[str]:
        return frozenset().union(*(frozenset(getattr(g, role)) for role in self.roles))

    def needs(self, g: Grammar) -> frozenset[str]:
        """Node tags of which an entity must hold one (``datagen.synth.node_tags``)."""
        return self.types(g)

    def applies_to(self, e: Entity) -> bool:
        return super().applies_to(e) and not self.needs(GRAMMARS[e.lang]).isdisjoint(e.node_types)

    def sites(self, src: Source, node: Node) -> list[Node]:
        g = grammar(src)
        return [n for n in descendants(node, self.types(g))
                if n.is_named and not has_ancestor(n, g.skip, stop=node) and self.accept(src, n)]


class BinarySite(GenericSite):
    """A binary expression whose operator is one of ``table`` (a Grammar field)."""

    roles = ("binary",)
    table: ClassVar[str] = "arith"

    def needs(self, g: Grammar) -> frozenset[str]:
        return tagged(g.binary, getattr(g, self.table))

    def accept(self, src: Source, node: Node) -> bool:
        return src.operator_of(node) in getattr(grammar(src), self.table)


def tagged(types: frozenset[str], operators: Iterable[str]) -> frozenset[str]:
    """The ``<type>:<operator>`` feature tags of node ``types`` with each of ``operators``."""
    return frozenset(f"{t}:{op}" for t in types for op in operators)


def has_string(g: Grammar, node: Node) -> bool:
    return any(c.type in g.strings for c in node.named_children)


@register
class OpChange(GenericSite):
    name = "op_change_v1"
    explanation = "Change an arithmetic or bitwise operator (e.g. + to -, * to /), also in `x op= y`."
    roles = ("binary", "augmented")

    def needs(self, g: Grammar) -> frozenset[str]:
        return tagged(g.binary, g.arith) | tagged(g.augmented, [op + "=" for op in g.arith])

    def accept(self, src: Source, node: Node) -> bool:
        g, op = grammar(src), src.operator_of(node)
        if node.type in g.augmented:
            op = op[:-1] if op.endswith("=") else ""
        elif node.type not in g.binary:
            return False
        return op in g.arith and not (op == "+" and has_string(g, node))

    def edit(self, src: Source, site: Node, rng: random.Random) -> list[Edit] | None:
        op = site.child_by_field_name("operator")
        text, g = src.text_of(op), grammar(src)
        if site.type in g.augmented:
            return [(op.start_byte, op.end_byte, rng.choice(g.arith[text[:-1]]) + "=")]
        return [(op.start_byte, op.end_byte, rng.choice(g.arith[text]))]


@register
class CompareChange(BinarySite):
    name = "compare_change_v1"
    explanation = "Change a comparison operator (== to !=, < to <=, ...)."
    table = "compare"

    def edit(self, src: Source, site: Node, rng: random.Random) -> list[Edit] | None:
        op = site.child_by_field_name("operator")
        return [(op.start_byte, op.end_byte, grammar(src).compare[src.text_of(op)])]


@register
class SwapOperands(BinarySite):
    name = "swap_operands_v1"
    explanation = "Swap the operands of an order-sensitive binary operator or comparison."
    table = "ordered"

    def edit(self, src: Source, site: Node, rng: random.Random) -> list[Edit] | None:
        left, right = site.child_by_field_name("left"), site.child_by_field_name("right")
        return None if src.text_of(left) == src.text_of(right) else swap(left, right, src)


@register
class BoolChain(BinarySite):
    name = "bool_chain_v1"
    explanation = "Drop one operand of a `&&` / `||` (`and` / `or`) chain."
    table = "logical"

    def edit(self, src: Source, site: Node, rng: random.Random) -> list[Edit] | None:
        keep = rng.choice([site.child_by_field_name("left"), site.child_by_field_name("right")])
        return [(site.start_byte, site.end_byte, src.text_of(keep))]


@register
class OffByOne(GenericSite):
    name = "off_by_one_v1"
    explanation = "Introduce an off-by-one: an integer literal or a length read (`len(xs)`, `xs.size()`) moves by one."
    roles = ("ints", "length_types")

    def needs(self, g: Grammar) -> frozenset[str]:
        return g.ints  # a length read alone does not qualify: its call type is everywhere

    def accept(self, src: Source, node: Node) -> bool:
        g = grammar(src)
        if node.type in g.ints and g.int_value(src.text_of(node)) is not None:
            return True
        return (node.type in g.length_types and g.lengths is not None
                and g.lengths.fullmatch(src.text_of(node)) is not None)

    def edit(self, src: Source, site: Node, rng: random.Random) -> list[Edit] | None:
        g, text = grammar(src), src.text_of(site)
        parsed = g.int_value(text) if site.type in g.ints else None
        if parsed is not None:
            value, suffix = parsed
            delta = 1 if value == 0 else rng.choice((1, -1))  # no negative literal where unsigned is meant
            return [(site.start_byte, site.end_byte, f"{value + delta}{suffix}")]
        sign = rng.choice(("+", "-"))
        return [(site.start_byte, site.end_byte, f"({text} {sign} 1)")]


def literal_variant(g: Grammar, src: Source, node: Node, rng: random.Random) -> str | None:
    """Another value for a literal of grammar ``g``, or None for a literal left alone."""
    text = src.text_of(node)
    if node.type in g.bools:
        swapped = {"true": "false", "false": "true", "TRUE": "FALSE", "FALSE": "TRUE", "True": "False",
                   "False": "True"}
        return swapped.get(text)
    parsed = g.int_value(text) if node.type in g.ints else None
    if parsed is not None:
        value, suffix = parsed
        return f"{rng.choice(sorted({value * 2, value // 2, 0, 1} - {value}))}{suffix}"
    if node.type in g.floats:
        return repr(float(text) * 2) if _FLOAT.fullmatch(text) else None
    return string_variant(g, src, node, rng) if node.type in g.strings else None


def string_variant(g: Grammar, src: Source, node: Node, rng: random.Random) -> str | None:
    """A plain string with its last character dropped or a ``_`` added; interpolations are left alone."""
    parts = node.children
    if len(parts) < 2 or parts[0].is_named or parts[-1].is_named:
        return None
    if any(c.type not in g.string_parts for c in parts[1:-1]):
        return None
    head, tail = parts[0], parts[-1]
    content = src.data[head.end_byte:tail.start_byte].decode("utf-8")
    if content and rng.random() < 0.5 and "\\" not in content[-2:]:
        return src.text_of(head) + content[:-1] + src.text_of(tail)
    return src.text_of(head) + content + "_" + src.text_of(tail)


@register
class ConstantChange(GenericSite):
    name = "constant_change_v1"
    explanation = "Change a number, string or boolean literal."
    roles = ("ints", "floats", "bools", "strings")

    def accept(self, src: Source, node: Node) -> bool:
        g = grammar(src)
        return not (node.type in g.strings and g.no_strings and has_ancestor(node, g.no_strings))

    def edit(self, src: Source, site: Node, rng: random.Random) -> list[Edit] | None:
        new = literal_variant(grammar(src), src, site, rng)
        return None if new is None else [(site.start_byte, site.end_byte, new)]


def positional(g: Grammar, arglist: Node) -> list[Node]:
    """The leading plain positional arguments of an argument list (PHP's ``argument`` wrappers kept)."""
    out = []
    for arg in arglist.named_children:
        inner = arg.named_children[-1] if arg.type == "argument" and arg.named_children else arg
        named = arg.type == "argument" and arg.child_by_field_name("name") is not None
        if (arg.type in COMMENTS or inner.type in g.arg_stops or named or inner.type.endswith("_type")
                or inner.type == "type_identifier"):
            break
        out.append(arg)
    return out


@register
class SwapArguments(GenericSite):
    name = "swap_args_v1"
    explanation = "Swap two adjacent arguments of a call."
    roles = ("args",)

    def needs(self, g: Grammar) -> frozenset[str]:
        return frozenset({"args2"})

    def accept(self, src: Source, node: Node) -> bool:
        g = grammar(src)
        callee = node.parent.child_by_field_name("function") if node.parent is not None else None
        if callee is not None and src.text_of(callee) in g.fixed_calls:
            return False
        return len(positional(g, node)) >= 2

    def edit(self, src: Source, site: Node, rng: random.Random) -> list[Edit] | None:
        g = grammar(src)
        args = positional(g, site)
        i = rng.randrange(len(args) - 1)
        a, b = args[i], args[i + 1]
        if src.text_of(a) == src.text_of(b) or is_format(g, src, a) or is_format(g, src, b):
            return None
        return swap(a, b, src)


def is_format(g: Grammar, src: Source, arg: Node) -> bool:
    """A format-string literal (``"%d"``, ``"{}"``): moving it makes a vet or compile error, not a bug."""
    inner = arg.named_children[-1] if arg.type == "argument" and arg.named_children else arg
    text = src.text_of(inner)
    return inner.type in g.strings and ("%" in text or "{}" in text)


def condition(g: Grammar, node: Node) -> Node | None:
    """The condition expression of an if-like node, unwrapped from its parentheses."""
    cond = node.child_by_field_name(g.ifs[node.type].condition)
    while cond is not None and cond.type in g.parens:
        if cond.child_by_field_name("initializer") is not None:
            return None  # C++17 ``if (init; cond)``
        inner = cond.child_by_field_name("value")
        kids = [c for c in cond.named_children if c.type not in COMMENTS]
        cond = inner if inner is not None else kids[0] if len(kids) == 1 else None
    if cond is None or cond.type in ("let_condition", "let_chain", "declaration"):
        return None  # ``if let`` and a C++ condition declaring a variable cannot be negated
    return cond


def negate(g: Grammar, src: Source, cond: Node) -> str:
    """The text of the negated condition (or the condition without its leading ``!``/``not``)."""
    kids = cond.children
    if cond.type in g.unary and kids and kids[0].type in ("!", "not") and len(cond.named_children) == 1:
        return src.text_of(cond.named_children[0])
    text = src.text_of(cond)
    return f"!{text}" if cond.type in g.primary else f"!({text})"


@register
class InvertIf(GenericSite):
    name = "invert_if_v1"
    explanation = "Invert an if: negate its condition (or drop the negation it has)."
    roles = ("ifs",)

    def edit(self, src: Source, site: Node, rng: random.Random) -> list[Edit] | None:
        g = grammar(src)
        cond = condition(g, site)
        return None if cond is None else [(cond.start_byte, cond.end_byte, negate(g, src, cond))]


def statement_of(g: Grammar, node: Node) -> Node:
    """``node`` or the expression statement that holds only it."""
    parent = node.parent
    if parent is not None and parent.type in g.wrappers:
        kids = [c for c in parent.named_children if c.type not in COMMENTS]
        if kids == [node]:
            return parent
    return node


def block_statements(g: Grammar, block: Node | None) -> list[Node]:
    """The statements directly inside ``block`` (through Go's statement list)."""
    if block is None:
        return []
    out = []
    for c in block.named_children:
        if c.type in g.stmt_lists:
            out.extend(k for k in c.named_children if k.type not in COMMENTS)
        elif c.type not in COMMENTS:
            out.append(c)
    return out


def exits(g: Grammar, src: Source, stmt: Node) -> bool:
    text = src.text_of(stmt)
    return any(text.startswith(word) and not text[len(word):len(word) + 1].isalnum() and
               text[len(word):len(word) + 1] != "_" for word in g.exits) or stmt.type in g.returns


def has_else(g: Grammar, node: Node) -> bool:
    field = g.ifs[node.type].alternative
    return field is not None and node.child_by_field_name(field) is not None


def is_guard(g: Grammar, src: Source, node: Node) -> bool:
    """An if without else whose body leaves early (return, throw, break, panic, raise ...)."""
    if has_else(g, node):
        return False
    body = node.child_by_field_name(g.ifs[node.type].consequence)
    if body is None:
        return False
    stmts = block_statements(g, body) if body.type in g.blocks else [body]
    return any(exits(g, src, statement_of(g, s)) for s in stmts)


class GenericDelete(GenericSite):
    """Delete the statement that a site is (or that holds only it)."""

    def edit(self, src: Source, site: Node, rng: random.Random) -> list[Edit] | None:
        g = grammar(src)
        return delete_statements(src, [statement_of(g, site)], blocks=g.blocks)


@register
class RemoveAssignment(GenericDelete):
    name = "remove_assign_v1"
    explanation = "Remove an assignment statement (`x = ...`, `self.y += ...`, `i++`)."
    roles = ("assigns",)

    def accept(self, src: Source, node: Node) -> bool:
        g = grammar(src)
        stmt = statement_of(g, node)
        return stmt.parent is not None and stmt.parent.type in g.blocks


@register
class RemoveGuard(GenericDelete):
    name = "remove_guard_v1"
    explanation = "Remove an early-exit guard: an if without else that returns, throws, breaks or panics."
    roles = ("ifs",)

    def accept(self, src: Source, node: Node) -> bool:
        return is_guard(grammar(src), src, node)


@register
class RemoveConditional(GenericDelete):
    name = "remove_cond_v1"
    explanation = "Remove an if statement without else that does not exit early."
    roles = ("ifs",)

    def accept(self, src: Source, node: Node) -> bool:
        g = grammar(src)
        return not has_else(g, node) and not is_guard(g, src, node) and node.type not in ("elsif", "else_if_clause")


@register
class RemoveLoop(GenericDelete):
    name = "remove_loop_v1"
    explanation = "Remove a loop (for, while, do, loop)."
    roles = ("loops",)


@register
class RemoveReturn(GenericDelete):
    name = "remove_return_v1"
    explanation = "Remove an early return inside an if without else or a loop (the code after it then runs)."
    roles = ("returns",)

    def accept(self, src: Source, node: Node) -> bool:
        g = grammar(src)
        block = statement_of(g, node).parent
        while block is not None and block.type in g.stmt_lists:
            block = block.parent
        owner = block.parent if block is not None else None
        if owner is None or block.type not in g.blocks:
            return False
        if owner.type in g.ifs:
            return not has_else(g, owner) and owner.child_by_field_name(g.ifs[owner.type].consequence) == block
        return owner.type in g.loops


@register
class RemoveMethod(GenericSite):
    name = "remove_method_v1"
    explanation = "Remove a method from a class (or impl)."
    langs = frozenset(lang for lang, g in GRAMMARS.items() if g.methods)
    kinds = frozenset({"class"})
    roles = ("methods",)

    def accept(self, src: Source, node: Node) -> bool:
        body = node.parent
        return body is not None and body.type in grammar(src).class_bodies and not is_required(node)

    def sites(self, src: Source, node: Node) -> list[Node]:
        """The class's own methods (not those of a class nested in it)."""
        return [n for n in super().sites(src, node) if n.parent.parent == node]

    def edit(self, src: Source, site: Node, rng: random.Random) -> list[Edit] | None:
        return delete_statements(src, [site], tidy=True, blocks=grammar(src).class_bodies)


def uses(g: Grammar, src: Source, name: str, outside: Node) -> Iterator[Node]:
    """Identifier nodes spelling ``name`` outside the node ``outside``."""
    for n in descendants(src.tree.root_node, g.names):
        if src.text_of(n) == name and not (outside.start_byte <= n.start_byte < outside.end_byte):
            yield n


def call_statement(g: Grammar, ident: Node) -> Node | None:
    """The statement that is only a call of ``ident`` (``f(x);``, ``self.f(x)``), else None."""
    node = ident
    while node.parent is not None and node.parent.type not in g.calls:
        node = node.parent
        if node.type in g.args or node.type in g.blocks:
            return None
    call = node.parent
    if call is None:
        return None
    args = call.child_by_field_name("arguments")
    if args is not None and ident.start_byte >= args.start_byte:
        return None  # the name is passed as a value, not called
    stmt = statement_of(g, call)
    return stmt if stmt.parent is not None and stmt.parent.type in g.blocks else None


def is_required(node: Node) -> bool:
    """A method its type must have: in a Rust ``impl Trait for T``, or a Java ``@Override``."""
    body = node.parent
    owner = body.parent if body is not None else None
    if owner is not None and owner.type == "impl_item" and owner.child_by_field_name("trait") is not None:
        return True
    mods = next((c for c in node.children if c.type == "modifiers"), None)
    return mods is not None and b"@Override" in mods.text


def is_entry_point(entity: Entity) -> bool:
    """``main``, a constructor or an initializer: removing one is no feature removal."""
    owner = entity.qualname.split(".")[-2:-1]
    return entity.name in ("main", "initialize", "__construct") or owner == [entity.name]


@register
class RemoveFunction(Strategy):
    name = "remove_function_v1"
    explanation = "Remove a function or method together with the statements of its file that call it."
    family: ClassVar[str] = "feature_removal"
    langs: ClassVar[frozenset[str]] = LANGS
    kinds: ClassVar[frozenset[str]] = FUNCS

    def transform_repo(self, files: Mapping[str, str], entity: Entity, rng: random.Random) -> dict[str, str] | None:
        """Declines when another source file of the language names the function: its uses
        there would not build (the tests, which may use it, are what must fail)."""
        word = re.compile(rf"\b{re.escape(entity.name)}\b")
        suffix = PurePosixPath(entity.path).suffix
        for path, text in files.items():
            if path != entity.path and path.endswith(suffix) and not is_test_file(path) and word.search(text):
                return None
        return super().transform_repo(files, entity, rng)

    def transform(self, text: str, entity: Entity, rng: random.Random) -> str | None:
        src = Source.parse(entity.path, text, entity.lang)
        node = src.entity_node(entity)
        if node is None or node.parent is None or is_entry_point(entity) or is_required(node):
            return None
        g = grammar(src)
        calls = []
        tests = inline_test_spans(text, entity.lang, entity.path)
        for ident in uses(g, src, entity.name, node):
            if any(a <= ident.start_byte < b for a, b in tests):
                continue  # test code is never edited: its uses are what fails
            stmt = call_statement(g, ident)
            if stmt is None:
                return None  # a use that is not a plain call statement: removing it would be a rewrite
            calls.append(stmt)
        unique = {s.byte_range: s for s in calls}
        definition = [node]
        edits = delete_statements(src, definition, tidy=True, blocks=frozenset({node.parent.type}))
        others = delete_statements(src, list(unique.values()), blocks=g.blocks) if unique else []
        if edits is None or others is None:
            return None
        if any(s.start_byte < e[1] and e[0] < s.end_byte for s in unique.values() for e in edits):
            return None
        return src.accept(src.apply(edits + others))
