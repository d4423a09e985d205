"""One small table per grammar: which tree-sitter node types and fields play each role
that the generic strategies (``generic``) mutate.

A role is a concept every C-like or scripting language has (a binary operator, an if, a
loop, an integer literal, a call's arguments, a block of statements); the table names the
node types that carry it in one grammar, so one strategy covers Go, Rust, Java, C, C++,
Ruby and PHP. Operator maps are shared where the languages agree and extended where not
(PHP's ``===``, Ruby's ``and``, Go's ``&^``).
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
    stub: str  # the statement an emptied function body holds
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
    indent: str = "    "
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


_C_TYPES = frozenset({"type_descriptor", "template_argument_list", "array_declarator", "preproc_arg",
                      "attribute_specifier", "static_assert_declaration", "enumerator"})

GO = Grammar(
    lang="go",
    binary=frozenset({"binary_expression"}),
    augmented=frozenset({"assignment_statement"}),
    ints=frozenset({"int_literal"}), floats=frozenset({"float_literal"}), bools=frozenset({"true", "false"}),
    strings=frozenset({"interpreted_string_literal"}),
    ifs={"if_statement": IfSpec()},
    loops=frozenset({"for_statement"}),
    returns=frozenset({"return_statement"}),
    assigns=frozenset({"assignment_statement", "inc_statement", "dec_statement"}),
    blocks=frozenset({"block", "statement_list", "expression_case", "default_case", "type_case"}),
    stmt_lists=frozenset({"statement_list"}),
    args=frozenset({"argument_list"}), calls=frozenset({"call_expression"}),
    methods=frozenset(), class_bodies=frozenset(),
    stub='panic("not implemented")',
    arith={**ARITH, "&^": ("&",)},
    exits=(*EXITS, "panic(", "os.Exit(", "log.Fatal", "t.Fatal", "fallthrough"),
    primary=frozenset({"identifier", "call_expression", "selector_expression", "parenthesized_expression",
                       "index_expression", "true", "false"}),
    arg_stops=frozenset({"variadic_argument"}),
    skip=frozenset({"array_type", "type_arguments", "type_parameter_list", "field_declaration_list"}),
    lengths=re.compile(r"len\([\w.]+\)"), length_types=frozenset({"call_expression"}),
    indent="\t",
    fixed_calls=frozenset({"append", "make", "new", "delete", "panic", "print", "println", "complex"}),
)

RUST = Grammar(
    lang="rust",
    binary=frozenset({"binary_expression"}),
    augmented=frozenset({"compound_assignment_expr"}),
    ints=frozenset({"integer_literal"}), floats=frozenset({"float_literal"}), bools=frozenset({"boolean_literal"}),
    strings=frozenset({"string_literal"}),
    ifs={"if_expression": IfSpec()},
    loops=frozenset({"for_expression", "while_expression", "loop_expression"}),
    returns=frozenset({"return_expression"}),
    assigns=frozenset({"assignment_expression", "compound_assignment_expr"}),
    blocks=frozenset({"block", "declaration_list"}),
    args=frozenset({"arguments"}), calls=frozenset({"call_expression"}),
    methods=frozenset({"function_item"}), class_bodies=frozenset({"declaration_list"}),
    stub="todo!()",
    exits=(*EXITS, "panic!", "unreachable!", "Err(", "None", "std::process::exit", "process::exit"),
    primary=frozenset({"identifier", "call_expression", "field_expression", "parenthesized_expression",
                       "index_expression", "boolean_literal", "macro_invocation", "method_call_expression"}),
    int_suffix=r"(?:[iu](?:8|16|32|64|128|size))?",
    skip=frozenset({"attribute_item", "inner_attribute_item", "array_type", "type_arguments",
                    "type_parameters", "const_item", "static_item"}),
    no_strings=frozenset({"token_tree"}),
    lengths=re.compile(r"[\w.]+\.len\(\)"), length_types=frozenset({"call_expression"}),
)

JAVA = Grammar(
    lang="java",
    binary=frozenset({"binary_expression"}),
    augmented=frozenset({"assignment_expression"}),
    ints=frozenset({"decimal_integer_literal"}), floats=frozenset({"decimal_floating_point_literal"}),
    bools=frozenset({"true", "false"}), strings=frozenset({"string_literal"}),
    ifs={"if_statement": IfSpec()},
    loops=frozenset({"for_statement", "enhanced_for_statement", "while_statement", "do_statement"}),
    returns=frozenset({"return_statement"}),
    assigns=frozenset({"assignment_expression", "update_expression"}),
    blocks=frozenset({"block", "constructor_body", "switch_block_statement_group", "class_body"}),
    args=frozenset({"argument_list"}), calls=frozenset({"method_invocation"}),
    methods=frozenset({"method_declaration", "constructor_declaration"}), class_bodies=frozenset({"class_body"}),
    stub='throw new UnsupportedOperationException("not implemented");',
    arith={**ARITH, ">>>": (">>",)},
    ordered=ORDERED | {">>>"},
    primary=frozenset({"identifier", "method_invocation", "field_access", "parenthesized_expression",
                       "array_access", "true", "false"}),
    int_suffix=r"[lL]?",
    skip=frozenset({"annotation", "marker_annotation", "type_arguments", "dimensions_expr", "switch_label"}),
    lengths=re.compile(r"[\w.]+\.(?:length|size\(\)|length\(\))"),
    length_types=frozenset({"field_access", "method_invocation"}),
)

C = Grammar(
    lang="c",
    binary=frozenset({"binary_expression"}),
    augmented=frozenset({"assignment_expression"}),
    ints=frozenset({"number_literal"}), floats=frozenset({"number_literal"}), bools=frozenset({"true", "false"}),
    strings=frozenset({"string_literal"}),
    ifs={"if_statement": IfSpec()},
    loops=frozenset({"for_statement", "while_statement", "do_statement"}),
    returns=frozenset({"return_statement"}),
    assigns=frozenset({"assignment_expression", "update_expression"}),
    blocks=frozenset({"compound_statement", "case_statement"}),
    args=frozenset({"argument_list"}), calls=frozenset({"call_expression"}),
    methods=frozenset(), class_bodies=frozenset(),
    stub="__builtin_trap(); /* not implemented */",
    exits=(*EXITS, "exit(", "abort(", "__builtin_trap("),
    primary=frozenset({"identifier", "call_expression", "field_expression", "parenthesized_expression",
                       "subscript_expression", "true", "false"}),
    int_suffix=r"[uU]?[lL]{0,2}|[lL]{1,2}[uU]",
    skip=_C_TYPES | {"case_statement_value"},
    lengths=re.compile(r"(?:strlen|sizeof)\s*\(\s*[\w.>-]+\s*\)"),
    length_types=frozenset({"call_expression", "sizeof_expression"}),
)

CPP = Grammar(
    lang="cpp",
    binary=C.binary, augmented=C.augmented, ints=C.ints, floats=C.floats, bools=C.bools,
    strings=frozenset({"string_literal"}),
    ifs={"if_statement": IfSpec()},
    loops=C.loops | {"for_range_loop"},
    returns=C.returns, assigns=C.assigns,
    blocks=C.blocks | {"field_declaration_list"},
    args=C.args, calls=C.calls,
    methods=frozenset({"function_definition"}), class_bodies=frozenset({"field_declaration_list"}),
    stub='throw "not implemented";',
    exits=C.exits,
    parens=frozenset({"parenthesized_expression", "condition_clause"}),
    primary=C.primary | {"qualified_identifier", "this"},
    int_suffix=C.int_suffix,
    skip=C.skip | {"template_parameter_list"},
    names=frozenset({"identifier", "field_identifier"}),
    lengths=re.compile(r"[\w.>-]+(?:\.|->)(?:size|length)\(\)"),
    length_types=frozenset({"call_expression"}),
)

RUBY = Grammar(
    lang="ruby",
    binary=frozenset({"binary"}),
    augmented=frozenset({"operator_assignment"}),
    ints=frozenset({"integer"}), floats=frozenset({"float"}), bools=frozenset({"true", "false"}),
    strings=frozenset({"string"}),
    ifs={"if": IfSpec(), "unless": IfSpec(), "elsif": IfSpec(),
         "if_modifier": IfSpec(consequence="body", alternative=None),
         "unless_modifier": IfSpec(consequence="body", alternative=None)},
    loops=frozenset({"while", "until", "for", "while_modifier", "until_modifier"}),
    returns=frozenset({"return"}),
    assigns=frozenset({"assignment", "operator_assignment"}),
    blocks=frozenset({"body_statement", "then", "else", "do", "block_body", "begin", "program", "ensure"}),
    args=frozenset({"argument_list"}), calls=frozenset({"call"}),
    methods=frozenset({"method", "singleton_method"}), class_bodies=frozenset({"body_statement"}),
    stub="raise NotImplementedError",
    arith={**ARITH, "**": ("*",)},
    compare=COMPARE,
    logical=LOGICAL | {"and", "or"},
    exits=(*EXITS, "raise", "fail", "next", "redo", "retry", "exit", "abort"),
    wrappers=frozenset(),
    parens=frozenset(),
    unary=frozenset({"unary"}),
    primary=frozenset({"identifier", "call", "instance_variable", "constant", "parenthesized_statements",
                       "element_reference", "true", "false"}),
    arg_stops=frozenset({"splat_argument", "hash_splat_argument", "block_argument", "pair",
                         "forward_argument"}),
    names=frozenset({"identifier"}),
    lengths=re.compile(r"[\w@.]+\.(?:length|size|count)"), length_types=frozenset({"call"}),
    indent="  ",
)

PHP = Grammar(
    lang="php",
    binary=frozenset({"binary_expression"}),
    augmented=frozenset({"augmented_assignment_expression"}),
    ints=frozenset({"integer"}), floats=frozenset({"float"}), bools=frozenset({"boolean"}),
    strings=frozenset({"string", "encapsed_string"}),
    ifs={"if_statement": IfSpec(consequence="body"), "else_if_clause": IfSpec(consequence="body", alternative=None)},
    loops=frozenset({"for_statement", "foreach_statement", "while_statement", "do_statement"}),
    returns=frozenset({"return_statement"}),
    assigns=frozenset({"assignment_expression", "augmented_assignment_expression", "update_expression"}),
    blocks=frozenset({"compound_statement", "case_statement", "default_statement", "declaration_list"}),
    args=frozenset({"arguments"}),
    calls=frozenset({"function_call_expression", "member_call_expression", "scoped_call_expression"}),
    methods=frozenset({"method_declaration"}), class_bodies=frozenset({"declaration_list"}),
    stub='throw new \\RuntimeException("not implemented");',
    arith={**ARITH, "**": ("*",)},
    compare={**COMPARE, "===": "!==", "!==": "===", "<>": "=="},
    logical=LOGICAL | {"and", "or", "??"},
    exits=(*EXITS, "exit", "die"),
    unary=frozenset({"unary_op_expression"}),
    primary=frozenset({"variable_name", "name", "function_call_expression", "member_call_expression",
                       "member_access_expression", "scoped_call_expression", "parenthesized_expression",
                       "subscript_expression", "boolean"}),
    arg_stops=frozenset({"variadic_unpacking"}),
    string_parts=frozenset({"string_content", "string_value", "escape_sequence"}),
    skip=frozenset({"attribute_list", "const_declaration"}),
    names=frozenset({"name"}),
    lengths=re.compile(r"(?:count|strlen)\(\$\w+\)"), length_types=frozenset({"function_call_expression"}),
)

GRAMMARS: dict[str, Grammar] = {g.lang: g for g in (GO, RUST, JAVA, C, CPP, RUBY, PHP)}
LANGS = frozenset(GRAMMARS)
