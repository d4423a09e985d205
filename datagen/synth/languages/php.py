"""PHP's synth tables."""

from __future__ import annotations

import re

from datagen.synth.languages.base import LanguageSpec, Stub
from datagen.synth.strategies.grammar_tables import ARITH, COMPARE, EXITS, LOGICAL, Grammar, IfSpec

GRAMMAR = Grammar(
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

PHP = LanguageSpec(
    name="php",
    branches=frozenset({"if_statement", "else_if_clause", "for_statement", "foreach_statement", "while_statement",
                        "do_statement", "catch_clause", "case_statement", "conditional_expression"}),
    stub=Stub('throw new \\RuntimeException("not implemented");'),
    defs={"function_definition": "function", "method_declaration": "method", "class_declaration": "class",
          "trait_declaration": "class", "interface_declaration": "class", "enum_declaration": "class"},
    grammar=GRAMMAR,
    runs_on_load=True,
)
