"""Parsed source text with the byte-splice helpers every strategy builds on.

Edits are ``(start_byte, end_byte, replacement)`` triples applied to the ORIGINAL bytes,
so a mutation changes only the bytes it names and the diff stays minimal.
"""

from __future__ import annotations

import re
import warnings
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from datagen.synth.entities import ENTITY_NODES, Entity, parse
from datagen.synth.go_unused import unused
from datagen.synth.languages import LanguageSpec, spec

Edit = tuple[int, int, str]
Node = Any  # tree_sitter.Node

_TRAILER = re.compile(rb"[ \t]*;?[ \t]*(#.*|//.*)?")


@dataclass
class Source:
    """One file's text, its bytes and its tree-sitter tree."""

    path: str
    lang: str
    text: str
    data: bytes
    tree: Any

    @classmethod
    def parse(cls, path: str, text: str, lang: str) -> Source:
        data = text.encode("utf-8")
        return cls(path, lang, text, data, parse(data, lang, path))

    @property
    def spec(self) -> LanguageSpec:
        """The synth tables of the file's language."""
        return spec(self.lang)

    def text_of(self, node: Node) -> str:
        return self.data[node.start_byte:node.end_byte].decode("utf-8")

    def operator_of(self, node: Node) -> str:
        """The text of ``node``'s ``operator`` field ('' when it has none)."""
        op = node.child_by_field_name("operator")
        return "" if op is None else self.text_of(op)

    def entity_node(self, entity: Entity) -> Node | None:
        """The node spanning exactly ``entity`` (None when the text has changed under it)."""
        node = self.tree.root_node.descendant_for_byte_range(entity.start_byte, entity.end_byte)
        while node is not None and (node.start_byte, node.end_byte) == (entity.start_byte, entity.end_byte):
            if node.type in ENTITY_NODES:
                return node
            node = node.parent
        return None

    def line_start(self, byte: int) -> int:
        return self.data.rfind(b"\n", 0, byte) + 1

    def line_end(self, byte: int) -> int:
        """Index just past the newline ending the line that holds ``byte`` (or EOF)."""
        end = self.data.find(b"\n", byte)
        return len(self.data) if end < 0 else end + 1

    def indent_of(self, node: Node) -> str:
        start = self.line_start(node.start_byte)
        return self.data[start:node.start_byte].decode("utf-8")

    def line_indent(self, byte: int) -> str:
        """The leading whitespace of the line that holds ``byte``."""
        start = self.line_start(byte)
        line = self.data[start:self.line_end(byte)].decode("utf-8")
        return line[: len(line) - len(line.lstrip(" \t"))]

    def owns_lines(self, node: Node) -> bool:
        """True when ``node`` alone fills its lines (a trailing comment or ``;`` allowed)."""
        if self.data[self.line_start(node.start_byte):node.start_byte].strip():
            return False
        tail = self.data[node.end_byte:self.line_end(node.end_byte)].rstrip(b"\r\n")
        return _TRAILER.fullmatch(tail) is not None

    def line_span(self, node: Node) -> tuple[int, int]:
        """Byte range of the whole lines ``node`` occupies, newline included."""
        return self.line_start(node.start_byte), self.line_end(node.end_byte)

    def apply(self, edits: Iterable[Edit]) -> str:
        """The text with ``edits`` spliced in; edits must not overlap."""
        out, pos = [], 0
        for start, end, new in sorted(edits, key=lambda e: (e[0], e[1])):
            if start < pos:
                raise ValueError(f"overlapping edits at byte {start}")
            out += [self.data[pos:start], new.encode("utf-8")]
            pos = end
        out.append(self.data[pos:])
        return b"".join(out).decode("utf-8")

    def accept(self, new: str) -> str | None:
        """``new`` when it differs from the original and still parses, else None.

        For the languages whose files may already hold a node tree-sitter cannot parse (a
        macro, a newer syntax: ``LanguageSpec.tolerant_parse``), "still parses" means no
        more ERROR or MISSING nodes than the original had. A language whose compiler refuses
        a local or an import left unused (Go: ``unused_is_error``) refuses it here too.
        """
        if new == self.text:
            return None
        if not self.spec.tolerant_parse:
            return new if is_valid(new, self.lang, self.path) else None
        before, after = self.tree.root_node, parse(new, self.lang, self.path).root_node
        if error_count(after) > error_count(before):
            return None
        if self.spec.unused_is_error and unused(after) - _unused_of(self.text, self.lang):  # a count went up
            return None
        return new


@lru_cache(maxsize=16)
def _unused_of(text: str, lang: str) -> Counter[str]:
    """The unused locals and imports of an original text (each entity's tries reuse it)."""
    return unused(parse(text, lang).root_node)


def error_count(root: Node) -> int:
    """The number of ERROR and MISSING nodes under ``root``."""
    return sum(1 for n in descendants(root) if n.is_error or n.is_missing) if root.has_error else 0


def is_valid(text: str, lang: str, path: str = "<mutated>") -> bool:
    """A language checked by compiling (Python): ``compile`` succeeds; the others: a re-parse
    has no ERROR or MISSING node."""
    if not spec(lang).compiles:
        return not parse(text, lang, path).root_node.has_error
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. SyntaxWarning on an invalid escape
        try:
            compile(text, path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError):  # ValueError: NUL bytes in the source
            return False
    return True


def descendants(node: Node, types: frozenset[str] | None = None) -> Iterator[Node]:
    """Preorder descendants of ``node`` (itself included), optionally of given types."""
    stack = [node]
    while stack:
        n = stack.pop()
        if types is None or n.type in types:
            yield n
        stack.extend(reversed(n.children))


def has_ancestor(node: Node, types: frozenset[str], stop: Node | None = None) -> bool:
    """True when an ancestor of ``node`` (below ``stop``) has one of ``types``."""
    parent = node.parent
    while parent is not None and parent != stop:
        if parent.type in types:
            return True
        parent = parent.parent
    return False


def statements(block: Node) -> list[Node]:
    """The statements of a block (comments are not statements)."""
    return [c for c in block.named_children if c.type not in _COMMENTS]


_COMMENTS = frozenset({"comment", "line_comment", "block_comment"})


def delete_statements(src: Source, nodes: Sequence[Node], tidy: bool = False,
                      blocks: frozenset[str] | None = None) -> list[Edit] | None:
    """Edits deleting whole statements; a block left empty gets what its language puts there
    (Python's ``pass``).

    None when a statement shares its line with other code, or sits where a statement
    is required (an if's brace-less consequence): its parent must be one of ``blocks``
    (default: the language's own, ``LanguageSpec.blocks``). ``tidy`` also removes the blank lines
    that separated a deleted definition from its neighbours.
    """
    edits: list[Edit] = []
    for parent, group in _by_parent(nodes):
        siblings = statements(parent)
        allowed = blocks if blocks is not None else src.spec.blocks
        if parent.type not in allowed:
            return None
        filler = src.spec.empty_block
        emptied = filler is not None and len(group) == len(siblings)
        for i, node in enumerate(group):
            if emptied and i == 0:
                edits.append((node.start_byte, node.end_byte, filler))
            elif not src.owns_lines(node):
                return None
            else:
                edits.append(_tidy_span(src, node, siblings) if tidy else (*src.line_span(node), ""))
    return edits


def _by_parent(nodes: Sequence[Node]) -> list[tuple[Node, list[Node]]]:
    groups: dict[tuple[int, int], tuple[Node, list[Node]]] = {}
    for node in sorted(nodes, key=lambda n: n.start_byte):
        groups.setdefault(node.parent.byte_range, (node.parent, []))[1].append(node)
    return list(groups.values())


def _tidy_span(src: Source, node: Node, siblings: list[Node]) -> Edit:
    """Line span of ``node`` plus the blank lines above it (or below, when it comes first)."""
    start, end = src.line_span(node)
    if siblings and siblings[0] != node:
        while start > 0 and not src.data[src.line_start(start - 1):start].strip():
            start = src.line_start(start - 1)
    else:
        while end < len(src.data) and not src.data[end:src.line_end(end)].strip():
            end = src.line_end(end)
    return start, end, ""


def remove_list_item(src: Source, items: Sequence[Node], index: int) -> Edit:
    """Edit removing ``items[index]`` from a comma-separated list, with one comma."""
    item = items[index]
    if len(items) == 1:
        return item.start_byte, item.end_byte, ""
    if index + 1 < len(items):
        return item.start_byte, items[index + 1].start_byte, ""
    return items[index - 1].end_byte, item.end_byte, ""


def dedent_block(src: Source, outer: Node, block: Node) -> Edit | None:
    """Edit replacing statement ``outer`` by the lines of ``block``, dedented to its level."""
    if not src.owns_lines(outer) or not src.owns_lines(block.named_children[0]):
        return None
    indent, inner = src.indent_of(outer), src.indent_of(block.named_children[0])
    if not inner.startswith(indent) or inner == indent:
        return None
    extra = len(inner) - len(indent)
    body = src.data[src.line_start(block.start_byte):block.end_byte].decode("utf-8")
    lines = [line[extra:] if line[:extra].isspace() else line for line in body.split("\n")]
    return src.line_start(outer.start_byte), outer.end_byte, "\n".join(lines)


def swap(a: Node, b: Node, src: Source) -> list[Edit]:
    """Edits exchanging the texts of two non-overlapping nodes."""
    return [(a.start_byte, a.end_byte, src.text_of(b)), (b.start_byte, b.end_byte, src.text_of(a))]
