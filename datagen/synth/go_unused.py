"""Go's two compile errors that a deletion easily causes: a local declared and not used, an
import not used. A mutation that adds one would fail to build, not fail a test, so
``Source.accept`` rejects it.

The check is syntactic (tree-sitter, no type checker): names are matched by text within a
function, an assignment's left side is no use (as in Go), shadowing is ignored.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator
from functools import cache
from typing import Any

from tree_sitter import Query, QueryCursor

from datagen.crawl.grammars import ts_language

_DECLS = frozenset({"short_var_declaration", "range_clause"})


def unused(root: Any) -> set[str]:
    """Keys (``func:name`` / ``import:name``) of the locals and imports nothing uses."""
    found = QueryCursor(_query()).captures(root)
    funcs = sorted((f.start_byte, f.end_byte, _text(f.child_by_field_name("name")) or f"@{f.start_byte}")
                   for f in found.get("func", []))
    imports = [(n.start_byte, n.end_byte) for n in found.get("import", [])]
    starts = [f[0] for f in funcs]
    declared: dict[str, set[str]] = {}
    reads: dict[str, set[str]] = {}
    outside_imports: set[str] = set()
    for ident in found.get("id", []):
        pos = ident.start_byte
        if any(a <= pos < b for a, b in imports):
            continue
        name = _text(ident)
        outside_imports.add(name)
        i = bisect_right(starts, pos) - 1
        if i < 0 or pos >= funcs[i][1]:
            continue  # package level
        label = funcs[i][2]
        if _is_declaration(ident):
            declared.setdefault(label, set()).add(name)
        elif not _is_write(ident):
            reads.setdefault(label, set()).add(name)
    out = {f"import:{name}" for name in _imports(found.get("spec", [])) if name not in outside_imports}
    for label, names in declared.items():
        out.update(f"{label}:{name}" for name in names - reads.get(label, set()) if name != "_")
    return out


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
