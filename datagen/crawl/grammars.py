"""tree-sitter grammars, shared by the syntax score (curate) and import graphs (pack).

Grammars come from the per-language ``tree-sitter-*`` packages (offline). Languages and
parsers are built once per process (about 1 ms each) and never pickled: a datatrove step
that is shipped to a worker looks them up again there.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import Any

# language id (as the crawl records it) -> (grammar module, its language function)
GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "csharp": ("tree_sitter_c_sharp", "language"),
    "ruby": ("tree_sitter_ruby", "language"),
    "php": ("tree_sitter_php", "language_php"),
    "shell": ("tree_sitter_bash", "language"),
}


@cache
def ts_language(name: str) -> Any:
    """The ``tree_sitter.Language`` of grammar ``name`` (a key of GRAMMARS)."""
    import tree_sitter

    module, func = GRAMMARS[name]
    return tree_sitter.Language(getattr(importlib.import_module(module), func)())


@cache
def ts_parser(name: str) -> Any:
    """One ``tree_sitter.Parser`` per grammar per process."""
    import tree_sitter

    return tree_sitter.Parser(ts_language(name))
