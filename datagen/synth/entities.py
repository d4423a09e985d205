"""Code entities (functions, methods, classes) found with tree-sitter.

An entity is the unit a strategy mutates and a task is about. Python, JavaScript and
TypeScript are supported; spans are byte and line ranges into the original text so that
strategies can splice edits without reformatting anything.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from datagen.crawl.grammars import ts_parser
from datagen.synth.features import features

LANGS = frozenset({"python", "javascript", "typescript"})

# node types that add one to an entity's complexity (a branch point)
_BRANCHES: dict[str, frozenset[str]] = {
    "python": frozenset({
        "if_statement", "elif_clause", "for_statement", "while_statement", "except_clause",
        "with_statement", "boolean_operator", "conditional_expression", "case_clause",
        "for_in_clause", "if_clause",
    }),
    "javascript": frozenset({
        "if_statement", "for_statement", "for_in_statement", "while_statement", "do_statement",
        "catch_clause", "switch_case", "ternary_expression",
    }),
}
_JS_LOGICAL = frozenset({"&&", "||", "??"})
_JS_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function", "generator_function"})
_JS_DEFS = frozenset({"function_declaration", "generator_function_declaration", "class_declaration",
                      "abstract_class_declaration", "method_definition"})
# node types an entity's span can be (its outermost node)
ENTITY_NODES = _JS_DEFS | {"decorated_definition", "function_definition", "class_definition",
                           "lexical_declaration", "variable_declaration"}


@dataclass(frozen=True)
class Entity:
    """One function, method or class of one file.

    ``node_types`` is the entity's feature set (node types and derived tags, see
    ``datagen.synth.features``), so a strategy can decline an entity that offers no
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


def grammar_for(lang: str, path: str = "") -> str:
    """The grammar name of ``lang`` (``.tsx`` files need the TSX grammar)."""
    if lang == "typescript" and path.endswith(".tsx"):
        return "tsx"
    return lang


def parse(text: str | bytes, lang: str, path: str = "") -> Any:
    """Parse ``text`` with the cached parser of ``lang``; returns a ``tree_sitter.Tree``."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    return ts_parser(grammar_for(lang, path)).parse(data)


def extract_entities(path: str, text: str, lang: str) -> list[Entity]:
    """Every function, method and class of ``text``, in source order (outer before inner)."""
    if lang not in LANGS:
        raise ValueError(f"unsupported language {lang!r}; expected one of {sorted(LANGS)}")
    data = text.encode("utf-8")
    root = parse(data, lang, path).root_node
    walk = _walk_python if lang == "python" else _walk_js
    return [_make(path, lang, data, kind, name, qual, node) for kind, name, qual, node in walk(root, ())]


def _make(path: str, lang: str, data: bytes, kind: str, name: str, qual: str, node: Any) -> Entity:
    body = data[node.start_byte:node.end_byte].decode("utf-8")
    return Entity(
        path=path, lang=lang, kind=kind, name=name, qualname=qual,
        start_line=node.start_point[0] + 1, end_line=node.end_point[0] + 1,
        start_byte=node.start_byte, end_byte=node.end_byte,
        n_lines=sum(1 for line in body.splitlines() if line.strip()),
        complexity=1 + _count_branches(node, lang),
        node_types=frozenset(features(node, kind == "class")),
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
        yield kind, name, ".".join([s[1] for s in scope] + [name]), span
        yield from _walk_js(child, (*scope, ("class" if kind == "class" else "def", name)))


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
    return None


def _count_branches(node: Any, lang: str) -> int:
    branches = _BRANCHES["python" if lang == "python" else "javascript"]
    count = 0
    for n in _descendants(node):
        if n.type in branches:
            count += 1
        elif n.type == "binary_expression" and _text(n.child_by_field_name("operator")) in _JS_LOGICAL:
            count += 1
    return count


def _descendants(node: Any) -> Iterator[Any]:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(n.children)


def _text(node: Any) -> str:
    return node.text.decode("utf-8") if node is not None else ""
