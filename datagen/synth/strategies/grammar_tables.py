"""The roles the generic strategies (``generic``) mutate: ``Grammar`` says which tree-sitter
node types and fields play each role in one grammar.

A role is a concept every C-like or scripting language has (a binary operator, an if, a
loop, an integer literal, a call's arguments, a block of statements); a language's spec
(``synth/languages/``) holds its ``Grammar``, so one strategy covers Go, Rust, Java, C,
C++, Ruby and PHP. Operator maps are shared here where the languages agree and extended
in a language's table where not (PHP's ``===``, Ruby's ``and``, Go's ``&^``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

ARITH = {"+": ("-",), "-": ("+",), "*": ("/",), "/": ("*",), "%": ("/",), "<<": (">>",), ">>": ("<<",),
         "&": ("|",), "|": ("&",), "^": ("|", "&")}
COMPARE = {"==": "!=", "!=": "==", "<": "<=", "<=": "<", ">": ">=", ">=": ">"}
LOGICAL = frozenset({"&&", "||"})
# operators whose operands can be swapped to a different meaning (``+`` is left out: on
# numbers the swap changes nothing)
ORDERED = frozenset({"-", "/", "%", "<<", ">>", "<", "<=", ">", ">="})
# the statements a guard may leave by; text prefixes, so that calls such as ``panic(`` count
EXITS = ("return", "break", "continue", "throw", "goto")
COMMENTS = frozenset({"comment", "line_comment", "block_comment"})


@dataclass(frozen=True)
class IfSpec:
    """Fields of one if-like node type (``alternative`` None: the type never has an else)."""

    condition: str = "condition"
    consequence: str = "consequence"
    alternative: str | None = "alternative"


@dataclass(frozen=True)
class Grammar:
    """The node types and fields of one grammar, by role."""

    lang: str
    binary: frozenset[str]  # binary expressions with left / operator / right fields
    augmented: frozenset[str]  # ``x op= y`` with an operator field
    ints: frozenset[str]
    floats: frozenset[str]
    bools: frozenset[str]
    strings: frozenset[str]
    ifs: Mapping[str, IfSpec]
    loops: frozenset[str]
    returns: frozenset[str]
    assigns: frozenset[str]  # assignment statements (or expressions that a wrapper makes a statement)
    blocks: frozenset[str]  # node types whose children are statements that may be deleted
    args: frozenset[str]  # argument lists of calls
    calls: frozenset[str]  # call expressions (a function removed with its uses)
    methods: frozenset[str]  # method definitions inside a class body
    class_bodies: frozenset[str]
    arith: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: ARITH)
    compare: Mapping[str, str] = field(default_factory=lambda: COMPARE)
    logical: frozenset[str] = LOGICAL
    ordered: frozenset[str] = ORDERED
    exits: tuple[str, ...] = EXITS
    wrappers: frozenset[str] = frozenset({"expression_statement"})  # statement holding one expression
    stmt_lists: frozenset[str] = frozenset()  # a block's inner statement list (Go)
    parens: frozenset[str] = frozenset({"parenthesized_expression"})  # wrappers of an if's condition
    unary: frozenset[str] = frozenset({"unary_expression"})
    primary: frozenset[str] = frozenset({"identifier", "call_expression", "field_expression",
                                          "parenthesized_expression", "true", "false"})
    arg_stops: frozenset[str] = frozenset()  # argument kinds that end the swappable positional run
    string_parts: frozenset[str] = frozenset({"string_content", "string_fragment", "escape_sequence",
                                               "interpreted_string_literal_content"})
    int_suffix: str = ""  # regex of the type suffix an integer literal may carry
    skip: frozenset[str] = frozenset()  # no site under these (types, attributes, annotations)
    no_strings: frozenset[str] = frozenset()  # no string site under these (Rust macro token trees)
    names: frozenset[str] = frozenset({"identifier", "field_identifier"})  # how a function is named at a use
    lengths: re.Pattern[str] | None = None  # the text of a length read (``len(xs)``, ``xs.size()``)
    length_types: frozenset[str] = frozenset()
    fixed_calls: frozenset[str] = frozenset()  # callees whose arguments are not interchangeable (Go's append)

    def int_value(self, text: str) -> tuple[int, str] | None:
        """(value, suffix) of a plain decimal integer literal; None for hex, octal and others."""
        m = re.fullmatch(r"(0|[1-9][0-9_]*)(" + self.int_suffix + ")", text) if self.int_suffix else \
            re.fullmatch(r"(0|[1-9][0-9_]*)()", text)
        return None if m is None else (int(m.group(1).replace("_", "")), m.group(2))

    @property
    def site_types(self) -> frozenset[str]:
        """Every node type some role names (what an entity must hold for a strategy to apply)."""
        return (self.binary | self.augmented | self.ints | self.bools | self.strings | frozenset(self.ifs)
                | self.loops | self.returns | self.assigns | self.args)
