"""Rust's synth tables."""

from __future__ import annotations

import re
from typing import Any

from datagen.synth.languages.base import LanguageSpec, Stub, field_name, first_type_name
from datagen.synth.strategies.grammar_tables import EXITS, Grammar, IfSpec


def _name(node: Any) -> str | None:
    """An ``impl`` is named by its type, and only when it holds a function (``impl Error for
    E {}`` has nothing to mutate)."""
    if node.type != "impl_item":
        return field_name(node)
    body = node.child_by_field_name("body")
    if body is None or not any(c.type == "function_item" for c in body.named_children):
        return None
    return first_type_name(node.child_by_field_name("type"))


GRAMMAR = Grammar(
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
    exits=(*EXITS, "panic!", "unreachable!", "Err(", "None", "std::process::exit", "process::exit"),
    primary=frozenset({"identifier", "call_expression", "field_expression", "parenthesized_expression",
                       "index_expression", "boolean_literal", "macro_invocation", "method_call_expression"}),
    int_suffix=r"(?:[iu](?:8|16|32|64|128|size))?",
    skip=frozenset({"attribute_item", "inner_attribute_item", "array_type", "type_arguments",
                    "type_parameters", "const_item", "static_item"}),
    no_strings=frozenset({"token_tree"}),
    lengths=re.compile(r"[\w.]+\.len\(\)"), length_types=frozenset({"call_expression"}),
)

RUST = LanguageSpec(
    name="rust",
    branches=frozenset({"if_expression", "for_expression", "while_expression", "loop_expression", "match_arm"}),
    stub=Stub("todo!()"),
    compile_time=re.compile(r"\bconst\s+(unsafe\s+)?(extern\s+(\"[^\"]*\"\s+)?)?fn\b"),
    defs={"function_item": "function", "impl_item": "class", "trait_item": "class", "mod_item": "scope"},
    name_of=_name,
    grammar=GRAMMAR,
    inline_tests=True,
)
