"""Java's synth tables."""

from __future__ import annotations

import re

from datagen.synth.languages.base import LanguageSpec, Stub
from datagen.synth.strategies.grammar_tables import ARITH, ORDERED, Grammar, IfSpec

GRAMMAR = Grammar(
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
    arith={**ARITH, ">>>": (">>",)},
    ordered=ORDERED | {">>>"},
    primary=frozenset({"identifier", "method_invocation", "field_access", "parenthesized_expression",
                       "array_access", "true", "false"}),
    int_suffix=r"[lL]?",
    skip=frozenset({"annotation", "marker_annotation", "type_arguments", "dimensions_expr", "switch_label"}),
    lengths=re.compile(r"[\w.]+\.(?:length|size\(\)|length\(\))"),
    length_types=frozenset({"field_access", "method_invocation"}),
)

JAVA = LanguageSpec(
    name="java",
    branches=frozenset({"if_statement", "for_statement", "enhanced_for_statement", "while_statement",
                        "do_statement", "catch_clause", "switch_label", "ternary_expression"}),
    stub=Stub('throw new UnsupportedOperationException("not implemented");'),
    defs={"class_declaration": "class", "interface_declaration": "class", "enum_declaration": "class",
          "record_declaration": "class", "method_declaration": "method", "constructor_declaration": "method"},
    grammar=GRAMMAR,
)
