"""The ``feature_removal`` family: delete a function or method together with its uses.

A use that is a call statement of its own is deleted; ``from m import name`` and
``__all__`` entries are pruned. Any other use (a call inside an expression, the name
passed as a value) cannot be removed cleanly, so the strategy offers nothing. Test
files are never edited: their failures are what proves the task.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import ClassVar

from datagen.sandbox.harness.protect import is_test_file
from datagen.synth.entities import Entity
from datagen.synth.source import Edit, Node, Source, delete_statements, descendants, remove_list_item
from datagen.synth.strategies.base import FUNCS, Strategy
from datagen.synth.strategies.registry import register

_NAME_FIELDS = frozenset({"function_definition", "class_definition", "keyword_argument", "parameters",
                          "default_parameter", "typed_parameter", "typed_default_parameter"})


def module_stem(path: str) -> str:
    """The last component of the module path of a Python file (its package for __init__.py)."""
    p = PurePosixPath(path)
    return p.parent.name if p.stem == "__init__" else p.stem


@dataclass
class Plan:
    """The edits of one file and the local names that refer to the removed entity there."""

    src: Source
    names: set[str]
    edits: list[Edit]


@register
class RemoveFeature(Strategy):
    name = "remove_feature_v1"
    explanation = "Remove a function or method and its call statements, imports and __all__ entries."
    family: ClassVar[str] = "feature_removal"
    langs: ClassVar[frozenset[str]] = frozenset({"python"})
    kinds: ClassVar[frozenset[str]] = FUNCS

    def transform(self, text: str, entity: Entity, rng: random.Random) -> str | None:
        changed = self.transform_repo({entity.path: text}, entity, rng)
        return None if changed is None else changed.get(entity.path)

    def transform_repo(self, files: Mapping[str, str], entity: Entity, rng: random.Random) -> dict[str, str] | None:
        plans = _plan_files(files, entity)
        if plans is None:
            return None
        out: dict[str, str] = {}
        for path, plan in plans.items():
            if not plan.edits:
                continue
            new = plan.src.accept(plan.src.apply(plan.edits))
            if new is None:
                return None
            out[path] = new
        return out or None


def _plan_files(files: Mapping[str, str], entity: Entity) -> dict[str, Plan] | None:
    """Edits per file: the definition's deletion plus every use's; None if a use is unclean."""
    own = Source.parse(entity.path, files[entity.path], "python")
    node = own.entity_node(entity)
    deletion = delete_statements(own, [node], tidy=True) if node is not None else None
    if deletion is None:
        return None
    plans = {entity.path: Plan(own, {entity.name}, deletion)}
    is_method = entity.kind == "method"
    if is_method or "." not in entity.qualname:
        _add_importers(files, entity, plans, is_method)
    for plan in plans.values():
        uses = _use_edits(plan, entity, is_method, skip=node if plan.src is own else None)
        if uses is None:
            return None
        plan.edits += uses
    return plans


def _add_importers(files: Mapping[str, str], entity: Entity, plans: dict[str, Plan], is_method: bool) -> None:
    """Add the other non-test Python files that import (or, for a method, may call) the entity."""
    stems, grew = {module_stem(entity.path)}, True
    while grew:
        grew = False
        for path in sorted(files):
            if path in plans or not path.endswith(".py") or is_test_file(path):
                continue
            if not is_method and entity.name not in files[path]:
                continue
            src = Source.parse(path, files[path], "python")
            names = set() if is_method else _imported_names(src, entity.name, stems)
            if names or (is_method and f".{entity.name}" in files[path]):
                plans[path] = Plan(src, names, [])
                stems.add(module_stem(path))
                grew = True


def _imported_names(src: Source, name: str, stems: set[str]) -> set[str]:
    """Local names bound to ``name`` by ``from <one of stems> import name [as alias]``."""
    found = set()
    for stmt in descendants(src.tree.root_node, frozenset({"import_from_statement"})):
        module = src.text_of(stmt.child_by_field_name("module_name")).lstrip(".").rsplit(".", 1)[-1]
        if module not in stems:
            continue
        for item in stmt.children_by_field_name("name"):
            target = item.child_by_field_name("name") if item.type == "aliased_import" else item
            if src.text_of(target) == name:
                alias = item.child_by_field_name("alias")
                found.add(src.text_of(alias if alias is not None else target))
    return found


def _use_edits(plan: Plan, entity: Entity, is_method: bool, skip: Node | None) -> list[Edit] | None:
    """Edits removing every use in one file, or None when one cannot be removed cleanly."""
    src, edits, statements = plan.src, [], []
    wanted = {entity.name} if is_method else plan.names
    for ident in descendants(src.tree.root_node, frozenset({"identifier"})):
        if src.text_of(ident) not in wanted or (skip is not None and _inside(ident, skip)):
            continue
        kind, target = _classify(ident, is_method)
        if kind == "unclean":
            return None
        if kind == "import":
            pruned = _prune_import(src, target)
            if pruned is None:
                return None
            edits.append(pruned)
        elif kind == "call":
            statements.append(target)
    if statements:
        deleted = delete_statements(src, _unique(statements))
        if deleted is None:
            return None
        edits += deleted
    return edits + _prune_all(src, plan.names)


def _classify(ident: Node, is_method: bool) -> tuple[str, Node | None]:
    """('skip'|'import'|'call'|'unclean', the node to edit) for one occurrence of the name."""
    parent = ident.parent
    if parent.type == "attribute":
        if parent.child_by_field_name("attribute") != ident or not is_method:
            return ("skip", None) if parent.child_by_field_name("attribute") == ident else ("unclean", None)
        return _call_statement(parent)
    if is_method or parent.type in _NAME_FIELDS:
        return "skip", None
    item = parent if parent.type in ("dotted_name", "aliased_import") else None
    if item is not None and item.parent.type == "import_from_statement":
        imported = item in item.parent.children_by_field_name("name")
        return ("import", item) if imported else ("skip", None)
    return _call_statement(ident)


def _call_statement(callee: Node) -> tuple[str, Node | None]:
    """The statement ``callee(...)`` (optionally awaited) when it stands alone, else unclean."""
    call = callee.parent
    if call.type != "call" or call.child_by_field_name("function") != callee:
        return "unclean", None
    stmt = call.parent.parent if call.parent.type == "await" else call.parent
    if stmt.type != "expression_statement" or len(stmt.named_children) != 1:
        return "unclean", None
    return "call", stmt


def _prune_import(src: Source, item: Node) -> Edit | None:
    """Edit dropping one imported name (the whole statement when it is the only one)."""
    stmt = item.parent
    items = stmt.children_by_field_name("name")
    if len(items) > 1:
        return remove_list_item(src, items, items.index(item))
    deleted = delete_statements(src, [stmt])
    return None if deleted is None else deleted[0]


def _prune_all(src: Source, names: set[str]) -> list[Edit]:
    """Edits dropping ``names`` from a module-level ``__all__ = [...]``."""
    edits = []
    for assign in descendants(src.tree.root_node, frozenset({"assignment"})):
        left, right = assign.child_by_field_name("left"), assign.child_by_field_name("right")
        if src.text_of(left) != "__all__" or right is None or right.type not in ("list", "tuple"):
            continue
        items = [c for c in right.named_children if c.type != "comment"]
        for i, item in enumerate(items):
            if item.type == "string" and src.text_of(item)[1:-1] in names:
                edits.append(remove_list_item(src, items, i))
    return edits


def _inside(node: Node, outer: Node) -> bool:
    return outer.start_byte <= node.start_byte and node.end_byte <= outer.end_byte


def _unique(nodes: list[Node]) -> list[Node]:
    seen: dict[tuple[int, int], Node] = {}
    for n in nodes:
        seen.setdefault(n.byte_range, n)
    return list(seen.values())
