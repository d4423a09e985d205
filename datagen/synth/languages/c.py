"""C's and C++'s synth tables (C++'s are C's, extended)."""

from __future__ import annotations

import re
from typing import Any

from datagen.synth.languages.base import LanguageSpec, Stub, field_name, node_text
from datagen.synth.strategies.grammar_tables import EXITS, Grammar, IfSpec

# names of the declarator chain that wrap a function's name
_DECLARATORS = frozenset({"function_declarator", "pointer_declarator", "reference_declarator",
                          "parenthesized_declarator", "attributed_declarator"})
_C_TYPES = frozenset({"type_descriptor", "template_argument_list", "array_declarator", "preproc_arg",
                      "attribute_specifier", "static_assert_declaration", "enumerator"})


def _declarator_name(decl: Any) -> str | None:
    """The function name inside a declarator chain; ``S::f`` becomes ``S.f``."""
    while decl is not None and decl.type in _DECLARATORS:
        decl = decl.child_by_field_name("declarator")
    if decl is None:
        return None
    if decl.type == "qualified_identifier":
        return node_text(decl).replace("::", ".").replace(" ", "") or None
    if decl.type in ("identifier", "field_identifier", "destructor_name", "operator_name"):
        return node_text(decl).replace(" ", "")
    return None


def _name(node: Any) -> str | None:
    """A function is named by its declarator; a forward declaration (``struct S;``) is no entity."""
    if node.type == "function_definition":
        return _declarator_name(node.child_by_field_name("declarator"))
    if node.child_by_field_name("body") is None:
        return None
    return field_name(node)


C_GRAMMAR = Grammar(
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
    exits=(*EXITS, "exit(", "abort(", "__builtin_trap("),
    primary=frozenset({"identifier", "call_expression", "field_expression", "parenthesized_expression",
                       "subscript_expression", "true", "false"}),
    int_suffix=r"[uU]?[lL]{0,2}|[lL]{1,2}[uU]",
    skip=_C_TYPES | {"case_statement_value"},
    lengths=re.compile(r"(?:strlen|sizeof)\s*\(\s*[\w.>-]+\s*\)"),
    length_types=frozenset({"call_expression", "sizeof_expression"}),
)

CPP_GRAMMAR = Grammar(
    lang="cpp",
    binary=C_GRAMMAR.binary, augmented=C_GRAMMAR.augmented, ints=C_GRAMMAR.ints, floats=C_GRAMMAR.floats,
    bools=C_GRAMMAR.bools,
    strings=frozenset({"string_literal"}),
    ifs={"if_statement": IfSpec()},
    loops=C_GRAMMAR.loops | {"for_range_loop"},
    returns=C_GRAMMAR.returns, assigns=C_GRAMMAR.assigns,
    blocks=C_GRAMMAR.blocks | {"field_declaration_list"},
    args=C_GRAMMAR.args, calls=C_GRAMMAR.calls,
    methods=frozenset({"function_definition"}), class_bodies=frozenset({"field_declaration_list"}),
    exits=C_GRAMMAR.exits,
    parens=frozenset({"parenthesized_expression", "condition_clause"}),
    primary=C_GRAMMAR.primary | {"qualified_identifier", "this"},
    int_suffix=C_GRAMMAR.int_suffix,
    skip=C_GRAMMAR.skip | {"template_parameter_list"},
    names=frozenset({"identifier", "field_identifier"}),
    lengths=re.compile(r"[\w.>-]+(?:\.|->)(?:size|length)\(\)"),
    length_types=frozenset({"call_expression"}),
)

_BRANCHES = frozenset({"if_statement", "for_statement", "while_statement", "do_statement", "case_statement",
                       "conditional_expression"})
C = LanguageSpec(
    name="c",
    branches=_BRANCHES,
    # the parameters and the static functions the body called are cast to void, so
    # -Wunused-parameter / -Wunused-function under -Werror still build
    stub=Stub("__builtin_trap(); /* not implemented */", void_uses=True),
    defs={"function_definition": "function"},
    compile_time=re.compile(r"\bconstexpr\b"),
    name_of=_name,
    grammar=C_GRAMMAR,
)
CPP = LanguageSpec(
    name="cpp",
    branches=_BRANCHES | {"for_range_loop", "catch_clause"},
    # a throw fails the test that called it; a trap would end the whole test binary
    stub=Stub('throw "not implemented";', void_uses=True),
    compile_time=re.compile(r"\b(constexpr|consteval)\b"),
    defs={"function_definition": "function", "class_specifier": "class", "struct_specifier": "class",
          "namespace_definition": "scope"},
    name_of=_name,
    grammar=CPP_GRAMMAR,
)
