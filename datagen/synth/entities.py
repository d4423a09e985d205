"""Code entities (functions, methods, classes) found with tree-sitter.

An entity is the unit a strategy mutates and a task is about. Python, JavaScript and
TypeScript have hand-written walks; Go, Rust, Java, C, C++, Ruby and PHP share one walk
driven by their language spec's table (``LanguageSpec.defs``, ``synth/languages/``). Spans
are byte and line ranges into the original text so that strategies can splice edits
without reformatting anything.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from datagen.crawl.grammars import ts_parser
from datagen.synth.languages import LANGS, SPECS, TABLE_LANGS, spec
from datagen.synth.node_tags import node_tags

__all__ = ["ENTITY_NODES", "LANGS", "TABLE_LANGS", "Entity", "extract_entities", "grammar_for", "inline_test_spans",
           "parse"]

_LOGICAL_TYPES = frozenset({"binary_expression", "binary"})
_JS_LOGICAL = frozenset({"&&", "||", "??", "and", "or"})
_JS_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function", "generator_function"})
_JS_DEFS = frozenset({"function_declaration", "generator_function_declaration", "class_declaration",
                      "abstract_class_declaration", "method_definition"})
# node types an entity's span can be (its outermost node)
ENTITY_NODES = _JS_DEFS | {"decorated_definition", "function_definition", "class_definition",
                           "lexical_declaration", "variable_declaration"}
ENTITY_NODES |= frozenset(t for s in SPECS.values() for t, k in s.defs.items() if k != "scope")


@dataclass(frozen=True)
class Entity:
    """One function, method or class of one file.

    ``node_types`` is the entity's tag set (node types and derived tags, see
    ``datagen.synth.node_tags``), so a strategy can decline an entity that offers no
    mutation site without re-reading its text. For a class it covers the class's own
    statements, not its methods' bodies (those are entities of their own).
    """

    path: str
    lang: str
    kind: str
    name: str
    qualname: str
    start_line: int
    end_line: int
    start_byte: int
    end_byte: int
    n_lines: int
    complexity: int
    node_types: frozenset[str] = field(default=frozenset(), repr=False, compare=False)


COMMENT_MARKERS = ("#", "//", "/*", "*", "///", "--")


def comment_above(lines: list[str], e: Entity) -> list[str]:
    """The comment lines right above ``e`` (``lines``: its file's), stripped of indentation."""
    above, k = [], e.start_line - 2
    while k >= 0 and lines[k].strip().startswith(COMMENT_MARKERS):
        above.insert(0, lines[k].strip())
        k -= 1
    return above


def grammar_for(lang: str, path: str = "") -> str:
    """The grammar name of ``lang`` for ``path`` (``.tsx`` files need the TSX grammar)."""
    grammars = SPECS[lang].grammars if lang in SPECS else {}
    return next((g for suffix, g in grammars.items() if path.endswith(suffix)), lang)


def parse(text: str | bytes, lang: str, path: str = "") -> Any:
    """Parse ``text`` with the cached parser of ``lang``; returns a ``tree_sitter.Tree``."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    return ts_parser(grammar_for(lang, path)).parse(data)


def extract_entities(path: str, text: str, lang: str) -> list[Entity]:
    """Every function, method and class of ``text``, in source order (outer before inner)."""
    how = spec(lang).walk
    data = text.encode("utf-8")
    root = parse(data, lang, path).root_node
    found = _walk_table(root, (), lang) if how == "table" else _WALKS[how](root, ())
    return [_make(path, lang, data, kind, name, qual, node) for kind, name, qual, node in found]


def _make(path: str, lang: str, data: bytes, kind: str, name: str, qual: str, node: Any) -> Entity:
    body = data[node.start_byte:node.end_byte].decode("utf-8")
    return Entity(
        path=path, lang=lang, kind=kind, name=name, qualname=qual,
        start_line=node.start_point[0] + 1, end_line=node.end_point[0] + 1,
        start_byte=node.start_byte, end_byte=node.end_byte,
        n_lines=sum(1 for line in body.splitlines() if line.strip()),
        complexity=1 + _count_branches(node, lang),
        node_types=frozenset(node_tags(node, kind == "class")),
    )


def _walk_python(node: Any, scope: tuple[tuple[str, str], ...]) -> Iterator[tuple[str, str, str, Any]]:
    """Yield (kind, name, qualname, span node) for Python definitions under ``node``."""
    for child in node.named_children:
        target = child.child_by_field_name("definition") if child.type == "decorated_definition" else child
        if target is None or target.type not in ("function_definition", "class_definition"):
            yield from _walk_python(child, scope)
            continue
        name = _text(target.child_by_field_name("name"))
        is_class = target.type == "class_definition"
        kind = "class" if is_class else ("method" if scope and scope[-1][0] == "class" else "function")
        yield kind, name, ".".join([s[1] for s in scope] + [name]), child
        yield from _walk_python(target, (*scope, ("class" if is_class else "def", name)))


def _walk_js(node: Any, scope: tuple[tuple[str, str], ...]) -> Iterator[tuple[str, str, str, Any]]:
    """Yield (kind, name, qualname, span node) for JS/TS definitions under ``node``."""
    for child in node.named_children:
        found = _js_definition(child, scope)
        if found is None:
            yield from _walk_js(child, scope)
            continue
        kind, name, span = found
        owner, _, name = name.rpartition(".")  # ``parse.fastpaths = ...``: a member of ``parse``
        qual = [s[1] for s in scope] + ([owner] if owner else []) + [name]
        yield kind, name, ".".join(qual), span
        yield from _walk_js(child, (*scope, ("class" if kind == "class" else "def", ".".join(qual[len(scope):]))))


def _js_definition(node: Any, scope: tuple[tuple[str, str], ...]) -> tuple[str, str, Any] | None:
    """(kind, name, span node) when ``node`` defines a JS/TS entity, else None."""
    if node.type in _JS_DEFS:
        name_node = node.child_by_field_name("name")
        if name_node is None:
            return None
        if node.type == "method_definition":
            return "method", _text(name_node), node
        kind = "class" if "class" in node.type else "function"
        return kind, _text(name_node), node
    if node.type in ("lexical_declaration", "variable_declaration") and len(node.named_children) == 1:
        decl = node.named_children[0]
        value, name_node = decl.child_by_field_name("value"), decl.child_by_field_name("name")
        if value is not None and value.type in _JS_FUNCTION_VALUES and name_node.type == "identifier":
            return "function", _text(name_node), node
    if node.type == "expression_statement" and node.named_children:  # CommonJS: module.exports = function
        assign = node.named_children[0]
        left, right = assign.child_by_field_name("left"), assign.child_by_field_name("right")
        if assign.type == "assignment_expression" and right is not None and right.type in _JS_FUNCTION_VALUES:
            target = _text(left)
            if target == "module.exports":
                return "function", _text(right.child_by_field_name("name")) or "module.exports", node
            for prefix in ("module.exports.", "exports."):
                if target.startswith(prefix) and target[len(prefix):].isidentifier():
                    return "function", target[len(prefix):], node
            # a function made a member of a function or class: ``picomatch.makeRe = (...) =>``,
            # ``Router.prototype.route = function``; named ``owner.member`` (the qualname's last two)
            owner, _, member = target.rpartition(".")
            owner = owner.removesuffix(".prototype")
            if owner.isidentifier() and member.isidentifier() and owner not in ("module", "exports", "this"):
                return ("method" if ".prototype." in target else "function"), f"{owner}.{member}", node
    if node.type == "export_statement":  # export default function (...) {...}, named or not
        value = next((c for c in node.named_children if c.type in _JS_FUNCTION_VALUES), None)
        if value is not None:
            return "function", _text(value.child_by_field_name("name")) or "default", node
    return None


def _walk_table(node: Any, scope: tuple[tuple[str, str], ...], lang: str) -> Iterator[tuple[str, str, str, Any]]:
    """Yield (kind, name, qualname, span node) for the definitions of a table language."""
    defs = SPECS[lang].defs
    for child in node.named_children:
        if _is_test_item(child, lang):
            continue
        kind = defs.get(child.type)
        if kind in FUNC_KINDS and child.child_by_field_name("body") is None:
            kind = None  # abstract, declared only, ``= default`` or an empty Ruby method
        name = SPECS[lang].name_of(child) if kind else None
        if not name:
            yield from _walk_table(child, scope, lang)
            continue
        owner, name = name.rpartition(".")[0], name.rpartition(".")[2]
        inner = (*scope, *(("class", part) for part in owner.split(".") if part))
        if kind == "function" and (owner or (scope and scope[-1][0] == "class")):
            kind = "method"
        if kind != "scope":
            yield kind, name, ".".join([s[1] for s in inner] + [name]), child
        yield from _walk_table(child, (*inner, ("def" if kind in FUNC_KINDS else kind, name)), lang)


FUNC_KINDS = frozenset({"function", "method"})


def _is_test_item(node: Any, lang: str) -> bool:
    """An item under ``#[test]`` or ``#[cfg(test)]`` (test code in a code file, never a
    mutation target) in a language that has them (``LanguageSpec.inline_tests``)."""
    if not SPECS[lang].inline_tests:
        return False
    prev = node.prev_named_sibling
    while prev is not None and prev.type in ("attribute_item", "line_comment", "block_comment"):
        if prev.type == "attribute_item" and _is_test_attribute(_text(prev)):
            return True
        prev = prev.prev_named_sibling
    return False


def inline_test_spans(text: str, lang: str, path: str = "") -> list[tuple[int, int]]:
    """Byte spans of the test code a source file holds in itself: Rust's ``#[cfg(test)]`` and
    ``#[test]`` items, from their first attribute to their end (empty for a language
    without inline tests)."""
    if lang not in SPECS or not SPECS[lang].inline_tests:
        return []
    spans = []
    for item in parse(text, lang, path).root_node.named_children:
        if item.type != "attribute_item" and _is_test_item(item, lang):
            first = item
            while first.prev_named_sibling is not None and first.prev_named_sibling.type == "attribute_item":
                first = first.prev_named_sibling
            spans.append((first.start_byte, item.end_byte))
    return spans


def _is_test_attribute(text: str) -> bool:
    inner = text.replace(" ", "")
    return inner in ("#[test]", "#[cfg(test)]") or inner.startswith(("#[tokio::test", "#[test_case"))


def _count_branches(node: Any, lang: str) -> int:
    branches = SPECS[lang].branches
    count = 0
    for n in _descendants(node):
        if n.type in branches:
            count += 1
        elif n.type in _LOGICAL_TYPES and _text(n.child_by_field_name("operator")) in _JS_LOGICAL:
            count += 1
    return count


_WALKS = {"python": _walk_python, "js": _walk_js}


def _descendants(node: Any) -> Iterator[Any]:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(n.children)


def _text(node: Any) -> str:
    return node.text.decode("utf-8") if node is not None else ""
