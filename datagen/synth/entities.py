"""Code entities (functions, methods, classes) found with tree-sitter.

An entity is the unit a strategy mutates and a task is about. Python, JavaScript and
TypeScript have hand-written walks; Go, Rust, Java, C, C++, Ruby and PHP share one walk
driven by a small table per grammar (``_DEFS``). Spans are byte and line ranges into the
original text so that strategies can splice edits without reformatting anything.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from datagen.crawl.grammars import ts_parser
from datagen.synth.node_tags import node_tags

TABLE_LANGS = frozenset({"go", "rust", "java", "c", "cpp", "ruby", "php"})
LANGS = frozenset({"python", "javascript", "typescript"}) | TABLE_LANGS

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
_BRANCHES.update({
    "go": frozenset({"if_statement", "for_statement", "expression_case", "type_case", "communication_case"}),
    "rust": frozenset({"if_expression", "for_expression", "while_expression", "loop_expression", "match_arm"}),
    "java": frozenset({"if_statement", "for_statement", "enhanced_for_statement", "while_statement",
                       "do_statement", "catch_clause", "switch_label", "ternary_expression"}),
    "c": frozenset({"if_statement", "for_statement", "while_statement", "do_statement", "case_statement",
                    "conditional_expression"}),
    "ruby": frozenset({"if", "elsif", "unless", "if_modifier", "unless_modifier", "while", "until", "for",
                       "while_modifier", "until_modifier", "when", "rescue", "conditional"}),
    "php": frozenset({"if_statement", "else_if_clause", "for_statement", "foreach_statement", "while_statement",
                      "do_statement", "catch_clause", "case_statement", "conditional_expression"}),
})
_BRANCHES["cpp"] = _BRANCHES["c"] | {"for_range_loop", "catch_clause"}
_LOGICAL_TYPES = frozenset({"binary_expression", "binary"})
_JS_LOGICAL = frozenset({"&&", "||", "??", "and", "or"})
_JS_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function", "generator_function"})
_JS_DEFS = frozenset({"function_declaration", "generator_function_declaration", "class_declaration",
                      "abstract_class_declaration", "method_definition"})
# node types an entity's span can be (its outermost node)
# the table walk: node type -> "function" (a method when inside a class), "method", "class",
# or "scope" (names a qualname part without being an entity, e.g. a namespace or a Rust mod)
_DEFS: dict[str, dict[str, str]] = {
    "go": {"function_declaration": "function", "method_declaration": "method"},
    "rust": {"function_item": "function", "impl_item": "class", "trait_item": "class", "mod_item": "scope"},
    "java": {"class_declaration": "class", "interface_declaration": "class", "enum_declaration": "class",
             "record_declaration": "class", "method_declaration": "method", "constructor_declaration": "method"},
    "c": {"function_definition": "function"},
    "cpp": {"function_definition": "function", "class_specifier": "class", "struct_specifier": "class",
            "namespace_definition": "scope"},
    "ruby": {"method": "function", "singleton_method": "method", "class": "class", "module": "class"},
    "php": {"function_definition": "function", "method_declaration": "method", "class_declaration": "class",
            "trait_declaration": "class", "interface_declaration": "class", "enum_declaration": "class"},
}
# names of the C/C++ declarator chain that wrap a function's name
_DECLARATORS = frozenset({"function_declarator", "pointer_declarator", "reference_declarator",
                          "parenthesized_declarator", "attributed_declarator"})
ENTITY_NODES = _JS_DEFS | {"decorated_definition", "function_definition", "class_definition",
                           "lexical_declaration", "variable_declaration"}
ENTITY_NODES |= frozenset(t for table in _DEFS.values() for t, k in table.items() if k != "scope")


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
    if lang in TABLE_LANGS:
        found = _walk_table(root, (), lang)
        return [_make(path, lang, data, kind, name, qual, node) for kind, name, qual, node in found]
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
    if node.type == "export_statement":  # export default function (...) {...}, named or not
        value = next((c for c in node.named_children if c.type in _JS_FUNCTION_VALUES), None)
        if value is not None:
            return "function", _text(value.child_by_field_name("name")) or "default", node
    return None


def _walk_table(node: Any, scope: tuple[tuple[str, str], ...], lang: str) -> Iterator[tuple[str, str, str, Any]]:
    """Yield (kind, name, qualname, span node) for the definitions of a table language."""
    defs = _DEFS[lang]
    for child in node.named_children:
        if _is_test_item(child, lang):
            continue
        kind = defs.get(child.type)
        if kind in FUNC_KINDS and child.child_by_field_name("body") is None:
            kind = None  # abstract, declared only, ``= default`` or an empty Ruby method
        name = _table_name(child, lang) if kind else None
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


def _table_name(node: Any, lang: str) -> str | None:
    """The name of a definition ("Owner.name" for a Go method or a C++ ``S::f``), or None."""
    if lang == "go" and node.type == "method_declaration":
        owner = _type_name(node.child_by_field_name("receiver"))
        return f"{owner}.{_text(node.child_by_field_name('name'))}" if owner else None
    if lang == "rust" and node.type == "impl_item":
        body = node.child_by_field_name("body")
        if body is None or not any(c.type == "function_item" for c in body.named_children):
            return None  # ``impl Error for E {}``: nothing to mutate
        return _type_name(node.child_by_field_name("type"))
    if lang in ("c", "cpp") and node.type == "function_definition":
        return _declarator_name(node.child_by_field_name("declarator"))
    if lang in ("c", "cpp") and node.child_by_field_name("body") is None:
        return None  # a forward declaration such as ``struct S;``
    return _text(node.child_by_field_name("name")) or None


def _type_name(node: Any) -> str | None:
    """The first type name in ``node``, in source order, outside type arguments
    (``RingBuffer`` in ``&'a RingBuffer<T>``, ``Set`` in Go's ``(s *Set[T])``)."""
    if node is None or node.type in ("type_arguments", "type_parameter_list"):
        return None
    if node.type == "type_identifier":
        return _text(node)
    for child in node.named_children:
        found = _type_name(child)
        if found:
            return found
    return None


def _declarator_name(decl: Any) -> str | None:
    """The function name inside a C/C++ declarator chain; ``S::f`` becomes ``S.f``."""
    while decl is not None and decl.type in _DECLARATORS:
        decl = decl.child_by_field_name("declarator")
    if decl is None:
        return None
    if decl.type == "qualified_identifier":
        return _text(decl).replace("::", ".").replace(" ", "") or None
    if decl.type in ("identifier", "field_identifier", "destructor_name", "operator_name"):
        return _text(decl).replace(" ", "")
    return None


def _is_test_item(node: Any, lang: str) -> bool:
    """A Rust item under ``#[test]`` or ``#[cfg(test)]`` (test code, never a mutation target)."""
    if lang != "rust":
        return False
    prev = node.prev_named_sibling
    while prev is not None and prev.type in ("attribute_item", "line_comment", "block_comment"):
        if prev.type == "attribute_item" and _is_test_attribute(_text(prev)):
            return True
        prev = prev.prev_named_sibling
    return False


def inline_test_spans(text: str, lang: str, path: str = "") -> list[tuple[int, int]]:
    """Byte spans of the test code a source file holds in itself: Rust's ``#[cfg(test)]`` and
    ``#[test]`` items, from their first attribute to their end (empty for other languages)."""
    if lang != "rust":
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
    branches = _BRANCHES.get(lang, _BRANCHES["javascript"])
    count = 0
    for n in _descendants(node):
        if n.type in branches:
            count += 1
        elif n.type in _LOGICAL_TYPES and _text(n.child_by_field_name("operator")) in _JS_LOGICAL:
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
