"""Go's two compile errors that a deletion easily causes: a local declared and not used, an
import not used. A mutation that adds one would fail to build, not fail a test, so
``Source.accept`` rejects it.

The check is syntactic (tree-sitter, no type checker): names are matched by text within a
function, an assignment's left side is no use (as in Go), shadowing is ignored.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

_FUNCS = frozenset({"function_declaration", "method_declaration", "func_literal"})
_DECLS = frozenset({"short_var_declaration", "range_clause"})


def unused(root: Any) -> set[str]:
    """Keys (``func:name`` / ``import:name``) of the locals and imports nothing uses."""
    out = {f"import:{name}" for name in _imports(root) if not _used_outside_imports(root, name)}
    for fn in _walk(root, _FUNCS):
        if fn.type == "func_literal" and fn.parent is not None and _has_ancestor(fn, _FUNCS):
            continue  # closures are checked with the function that holds them
        label = _text(fn.child_by_field_name("name")) or f"@{fn.start_byte}"
        declared = list(_declared(fn))
        if not declared:
            continue
        uses = _uses(fn)
        out.update(f"{label}:{name}" for name in declared if uses.get(name, 0) == 0)
    return out


def _declared(fn: Any) -> Iterator[str]:
    for n in _walk(fn, _DECLS | {"var_spec"}):
        if n.type == "range_clause" and not any(c.type == ":=" for c in n.children):
            continue
        left = n.child_by_field_name("left") if n.type != "var_spec" else n
        if left is None:
            continue
        targets = left.children_by_field_name("name") if n.type == "var_spec" else left.named_children
        for ident in targets:
            if ident.type == "identifier" and ident.text != b"_":
                yield _text(ident)


def _uses(fn: Any) -> dict[str, int]:
    """How often each identifier is read in ``fn`` (declaring and assigned positions left out)."""
    counts: dict[str, int] = {}
    for n in _walk(fn, frozenset({"identifier"})):
        parent = n.parent
        if parent.type == "expression_list" and parent.parent is not None and \
                parent.parent.type in _DECLS | {"assignment_statement"} and \
                parent.parent.child_by_field_name("left") == parent:
            continue
        if parent.type == "var_spec" and n in parent.children_by_field_name("name"):
            continue
        counts[_text(n)] = counts.get(_text(n), 0) + 1
    return counts


def _imports(root: Any) -> Iterator[str]:
    for spec in _walk(root, frozenset({"import_spec"})):
        alias = spec.child_by_field_name("name")
        if alias is not None:
            if alias.type == "package_identifier":
                yield _text(alias)
            continue  # "_" and "." imports are used by definition
        path = _text(spec.child_by_field_name("path")).strip('"`')
        parts = [p for p in path.split("/") if p]
        if parts and parts[-1].startswith("v") and parts[-1][1:].isdigit() and len(parts) > 1:
            parts.pop()  # module major versions: example.com/x/v2 is package x
        if parts:
            yield parts[-1].replace("-", "_").removeprefix("go_")


def _used_outside_imports(root: Any, name: str) -> bool:
    for n in _walk(root, frozenset({"identifier", "package_identifier"})):
        if _text(n) == name and not _has_ancestor(n, frozenset({"import_declaration"})):
            return True
    return False


def _walk(node: Any, types: frozenset[str]) -> Iterator[Any]:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type in types:
            yield n
        stack.extend(n.children)


def _has_ancestor(node: Any, types: frozenset[str]) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type in types:
            return True
        parent = parent.parent
    return False


def _text(node: Any) -> str:
    return node.text.decode("utf-8") if node is not None else ""
