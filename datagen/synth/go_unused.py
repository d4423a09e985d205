"""Go's two compile errors that a deletion easily causes: a local declared and not used, an
import not used. A mutation that adds one would fail to build, not fail a test, so
``Source.accept`` rejects it.

The check is syntactic (tree-sitter, no type checker): names are matched by text within a
function, an assignment's left side is no use (as in Go), shadowing is ignored.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Iterator
from functools import cache
from typing import Any

from tree_sitter import Query, QueryCursor

from datagen.crawl.grammars import ts_language

_DECLS = frozenset({"short_var_declaration", "range_clause"})


def unused(root: Any) -> Counter[str]:
    """How many locals (``func:name``) and imports (``import:name``) nothing uses.

    Locals are scoped as Go scopes them (a block, an if / for / switch with its
    initializer, a case clause): a read belongs to the innermost scope that declared its
    name before it, so a shadowing ``err :=`` does not hide an outer ``err`` left unread.
    Two ``:=`` of one name in one scope are one variable, as in Go.
    """
    found = QueryCursor(_query()).captures(root)
    funcs = sorted((f.start_byte, f.end_byte, _text(f.child_by_field_name("name")) or f"@{f.start_byte}")
                   for f in found.get("func", []))
    imports = [(n.start_byte, n.end_byte) for n in found.get("import", [])]
    starts = [f[0] for f in funcs]
    variables: dict[tuple[int, int, str], tuple[str, int]] = {}  # (scope, name) -> (func label, declared at)
    candidates: list[Any] = []
    outside_imports: set[str] = set()
    for ident in found.get("id", []):
        pos = ident.start_byte
        if any(a <= pos < b for a, b in imports):
            continue
        outside_imports.add(_text(ident))
        i = bisect_right(starts, pos) - 1
        if i < 0 or pos >= funcs[i][1]:
            continue  # package level
        if _is_declaration(ident):
            scope = _scope(ident)
            if scope is not None and ident.text != b"_":
                variables.setdefault((*scope.byte_range, _text(ident)), (funcs[i][2], pos))
        elif not _is_write(ident):
            candidates.append(ident)
    read: set[tuple[int, int, str]] = set()
    names = {key[2] for key in variables}
    for ident in candidates:
        name = _text(ident)
        if name in names:
            owner = _owner(ident, name, variables)
            if owner is not None:
                read.add(owner)
    out: Counter[str] = Counter(f"import:{n}" for n in _imports(found.get("spec", [])) if n not in outside_imports)
    out.update(f"{label}:{key[2]}" for key, (label, _) in variables.items() if key not in read)
    return out


_SCOPES = frozenset({"block", "if_statement", "for_statement", "expression_switch_statement",
                     "type_switch_statement", "select_statement", "expression_case", "type_case",
                     "default_case", "communication_case", "func_literal", "function_declaration",
                     "method_declaration"})


def _scope(ident: Any) -> Any:
    node = ident.parent
    while node is not None and node.type not in _SCOPES:
        node = node.parent
    return node


def _owner(ident: Any, name: str, variables: dict) -> tuple[int, int, str] | None:
    """The variable a read of ``name`` refers to: the innermost scope declaring it earlier."""
    node = ident.parent
    while node is not None:
        if node.type in _SCOPES:
            key = (*node.byte_range, name)
            if key in variables and variables[key][1] < ident.start_byte:
                return key
        node = node.parent
    return None


@cache
def _query() -> Any:
    return Query(ts_language("go"), """
        (identifier) @id (package_identifier) @id
        (function_declaration) @func (method_declaration) @func
        (import_declaration) @import (import_spec) @spec
    """)


def _is_declaration(ident: Any) -> bool:
    """A name that ``:=``, ``for ... := range`` or ``var`` declares."""
    parent = ident.parent
    if parent.type == "var_spec":
        return any(ident == c for c in parent.children_by_field_name("name"))
    if parent.type != "expression_list" or parent.parent is None:
        return False
    owner = parent.parent
    if owner.type == "range_clause" and not any(c.type == ":=" for c in owner.children):
        return False
    return owner.type in _DECLS and owner.child_by_field_name("left") == parent


def _is_write(ident: Any) -> bool:
    """A name on the left of a plain assignment (not a read, as Go counts uses)."""
    parent = ident.parent
    return (parent.type == "expression_list" and parent.parent is not None
            and parent.parent.type == "assignment_statement"
            and parent.parent.child_by_field_name("left") == parent)


def _imports(specs: list[Any]) -> Iterator[str]:
    """The package names that import specs bring in (aliases included, ``_`` and ``.`` not)."""
    for spec in specs:
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


def _text(node: Any) -> str:
    return node.text.decode("utf-8") if node is not None else ""
