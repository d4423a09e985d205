"""Python's synth tables."""

from __future__ import annotations

from datagen.synth.languages.base import LanguageSpec, Stub

PYTHON = LanguageSpec(
    name="python",
    branches=frozenset({
        "if_statement", "elif_clause", "for_statement", "while_statement", "except_clause",
        "with_statement", "boolean_operator", "conditional_expression", "case_clause",
        "for_in_clause", "if_clause",
    }),
    stub=Stub("raise NotImplementedError", body="docstring"),
    walk="python",
    runs_on_load=True,
    tolerant_parse=False,
    compiles=True,
    blocks=frozenset({"block", "module"}),
    empty_block="pass",
)
