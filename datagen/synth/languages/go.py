"""Go's synth tables."""

from __future__ import annotations

import re
from typing import Any

from datagen.synth.languages.base import LanguageSpec, Stub, field_name, first_type_name, node_text
from datagen.synth.strategies.grammar_tables import ARITH, EXITS, Grammar, IfSpec


def _name(node: Any) -> str | None:
    """A method is named by its receiver's type: ``Store.Get``."""
    if node.type != "method_declaration":
        return field_name(node)
    owner = first_type_name(node.child_by_field_name("receiver"))
    return f"{owner}.{node_text(node.child_by_field_name('name'))}" if owner else None


GRAMMAR = Grammar(
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
    arith={**ARITH, "&^": ("&",)},
    exits=(*EXITS, "panic(", "os.Exit(", "log.Fatal", "t.Fatal", "fallthrough"),
    primary=frozenset({"identifier", "call_expression", "selector_expression", "parenthesized_expression",
                       "index_expression", "true", "false"}),
    arg_stops=frozenset({"variadic_argument"}),
    skip=frozenset({"array_type", "type_arguments", "type_parameter_list", "field_declaration_list"}),
    lengths=re.compile(r"len\([\w.]+\)"), length_types=frozenset({"call_expression"}),
    fixed_calls=frozenset({"append", "make", "new", "delete", "panic", "print", "println", "complex"}),
)

GO = LanguageSpec(
    name="go",
    branches=frozenset({"if_statement", "for_statement", "expression_case", "type_case", "communication_case"}),
    # a panic ends the package's test binary: the tests after the one that called a stub
    # do not run (a feature task's FAIL_TO_PASS counts them)
    stub=Stub('panic("not implemented")', drops_unused_imports=True),
    indent="\t",
    defs={"function_declaration": "function", "method_declaration": "method"},
    name_of=_name,
    grammar=GRAMMAR,
    unused_is_error=True,
)
