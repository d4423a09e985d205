"""Ruby's synth tables."""

from __future__ import annotations

import re

from datagen.synth.languages.base import LanguageSpec, Stub
from datagen.synth.strategies.grammar_tables import ARITH, COMPARE, EXITS, LOGICAL, Grammar, IfSpec

GRAMMAR = Grammar(
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
)

RUBY = LanguageSpec(
    name="ruby",
    branches=frozenset({"if", "elsif", "unless", "if_modifier", "unless_modifier", "while", "until", "for",
                        "while_modifier", "until_modifier", "when", "rescue", "conditional"}),
    stub=Stub("raise NotImplementedError", body="statements"),
    indent="  ",
    defs={"method": "function", "singleton_method": "method", "class": "class", "module": "class"},
    grammar=GRAMMAR,
    runs_on_load=True,
)
