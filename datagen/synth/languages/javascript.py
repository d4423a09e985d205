"""JavaScript's and TypeScript's synth tables (one walk, one stub; ``.tsx`` files take the
TSX grammar)."""

from __future__ import annotations

from dataclasses import replace

from datagen.synth.languages.base import LanguageSpec, Stub

JAVASCRIPT = LanguageSpec(
    name="javascript",
    branches=frozenset({
        "if_statement", "for_statement", "for_in_statement", "while_statement", "do_statement",
        "catch_clause", "switch_case", "ternary_expression",
    }),
    stub=Stub('throw new Error("not implemented");', expression_bodies=True),
    indent="  ",
    walk="js",
    runs_on_load=True,
    tolerant_parse=False,
    blocks=frozenset({"statement_block", "program", "class_body", "switch_case", "switch_default"}),
)
TYPESCRIPT = replace(JAVASCRIPT, name="typescript", grammars={".tsx": "tsx"})
