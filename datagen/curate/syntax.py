"""Syntax validity with tree-sitter: the share of a file's lines holding tokens the parser
could not place (leaves of ERROR nodes, MISSING tokens; ``syntax_error_ratio``: 0 for a
file that parses cleanly). The score is
recorded for every parsed file; ``SyntaxStep`` drops files at or above the recipe's cut.
"""

from __future__ import annotations

from collections import OrderedDict

import xxhash
from datatrove.data import Document
from tree_sitter import Node, Parser

from datagen.config.curate import SyntaxConfig
from datagen.crawl.grammars import GRAMMARS, ts_parser
from datagen.curate.base import FileStep, drop

ALIASES = {
    "py": "python",
    "js": "javascript",
    "ts": "typescript",
    "c++": "cpp",
    "c#": "csharp",
    "cs": "csharp",
    "bash": "shell",
    "sh": "shell",
}


def grammar_name(lang: str | None, path: str = "") -> str | None:
    """The grammar for a file's language (``.tsx`` files use the TSX grammar)."""
    if not lang:
        return None
    name = ALIASES.get(lang.lower(), lang.lower())
    if name == "typescript" and path.endswith(".tsx"):
        return "tsx"
    return name if name in GRAMMARS else None


def parser_for(name: str) -> Parser:
    """One parser per grammar per process (see ``datagen.crawl.grammars``)."""
    return ts_parser(name)


# A grammar to try when the first one finds errors: C headers are often C++.
FALLBACK = {"c": "cpp"}


def error_ratio(text: str, grammar: str) -> float:
    """Share of lines holding tokens the parser could not place (0.0 .. 1.0); for C the
    lower of the C and C++ parses."""
    return _bytes_error_ratio(text.encode("utf-8", "surrogatepass"), grammar)


def _bytes_error_ratio(data: bytes, grammar: str) -> float:
    ratio = _error_ratio(data, grammar)
    if ratio > 0 and grammar in FALLBACK:
        ratio = min(ratio, _error_ratio(data, FALLBACK[grammar]))
    return ratio


def _error_ratio(data: bytes, grammar: str) -> float:
    tree = parser_for(grammar).parse(data)
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    if not tree.root_node.has_error or lines == 0:
        return 0.0
    # Count the lines of tokens the parser could not place: MISSING tokens, and leaf
    # tokens directly under an ERROR node. Whole constructs that parsed inside an ERROR
    # node (common when an unknown macro confuses C/C++ recovery) are searched, not counted.
    rows: set[int] = set()
    stack: list[tuple[Node, bool]] = [(tree.root_node, False)]
    while stack:
        node, in_error = stack.pop()
        if node.is_missing or (node.child_count == 0 and (in_error or node.is_error)):
            rows.update(range(node.start_point.row, node.end_point.row + 1))
        elif node.has_error or node.is_error:
            stack.extend((child, node.is_error) for child in node.children)
    return min(1.0, len(rows) / lines)


class SyntaxStep(FileStep):
    """Score ``syntax_error_ratio`` and drop files at or above the language's cut
    (``lang_max_error_ratio``, else ``max_error_ratio``; reason ``syntax_errors``).
    Languages without a grammar keep a null score."""

    name = "syntax check"
    section = "syntax"
    writes = ("syntax_error_ratio",)
    # Scores of recent texts by (grammar, hash of the bytes): a copy of a file (vendored
    # twice, a template) is parsed once per worker. The parse is the crawl's largest cost;
    # the same bytes always get the same score.
    remembered = 4096

    def __init__(self, cfg: SyntaxConfig):
        super().__init__()
        self.cfg = cfg
        self._scores: OrderedDict[tuple[str, bytes], float] = OrderedDict()

    def process(self, doc: Document) -> None:
        grammar = grammar_name(doc.metadata.get("lang"), doc.metadata.get("path", ""))
        if grammar is None or len(doc.text) > self.cfg.max_bytes:
            return
        data = doc.text.encode("utf-8", "surrogatepass")
        key = (grammar, xxhash.xxh3_128_digest(data))
        ratio = self._scores.get(key)
        if ratio is None:
            ratio = self._scores[key] = round(_bytes_error_ratio(data, grammar), 6)
            if len(self._scores) > self.remembered:
                self._scores.popitem(last=False)
        else:
            self._scores.move_to_end(key)
            self.stat_update("same_text")
        doc.metadata["syntax_error_ratio"] = ratio
        self.stat_update(f"parsed_{grammar}")
        cut = self.cfg.lang_max_error_ratio.get(grammar, self.cfg.max_error_ratio)
        if ratio > 0 and ratio >= cut:
            drop(doc, "syntax_errors")  # the score is in syntax_error_ratio
            self.stat_update("syntax_errors")
