"""The Strategy base class: metadata, the entities it applies to, and the transform hooks.

Most strategies are ``SiteStrategy`` subclasses: they list candidate nodes ("sites")
inside the entity and turn one site into byte edits. The base class picks sites in an
order drawn from ``rng``, splices, and keeps the first result that differs and parses.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import ClassVar

from datagen.synth.entities import Entity
from datagen.synth.source import Edit, Node, Source, descendants

FAMILIES = frozenset({"procedural", "removal", "feature_removal"})
FUNCS = frozenset({"function", "method"})
MAX_TRIES = 24  # sites tried per transform before giving up


class Strategy:
    """One kind of mutation; subclasses set the metadata and implement ``transform``."""

    name: ClassVar[str]
    explanation: ClassVar[str]
    family: ClassVar[str]
    langs: ClassVar[frozenset[str]]
    kinds: ClassVar[frozenset[str]]
    min_complexity: ClassVar[int] = 1
    max_complexity: ClassVar[int | None] = None
    # node types of which the entity must hold at least one (empty: no requirement)
    requires: ClassVar[frozenset[str]] = frozenset()

    def applies_to(self, e: Entity) -> bool:
        """Whether this strategy may offer a mutation of ``e`` (language, kind, bounds, sites)."""
        if e.lang not in self.langs or e.kind not in self.kinds or e.complexity < self.min_complexity:
            return False
        if self.max_complexity is not None and e.complexity > self.max_complexity:
            return False
        return not self.requires or not self.requires.isdisjoint(e.node_types)

    def transform(self, text: str, entity: Entity, rng: random.Random) -> str | None:
        """The new text of the entity's file, or None when the entity offers no site."""
        raise NotImplementedError

    def transform_repo(self, files: Mapping[str, str], entity: Entity, rng: random.Random) -> dict[str, str] | None:
        """The changed files (path -> new text), or None; by default only the entity's file."""
        new = self.transform(files[entity.path], entity, rng)
        return None if new is None else {entity.path: new}

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


class SiteStrategy(Strategy):
    """A strategy that edits one node ("site") inside the entity."""

    site_types: ClassVar[frozenset[str]] = frozenset()

    def sites(self, src: Source, node: Node) -> list[Node]:
        """Candidate nodes under the entity's node, in source order; override to filter."""
        return [n for n in descendants(node, self.site_types) if self.accept(src, n)]

    def accept(self, src: Source, node: Node) -> bool:
        """Whether ``node`` (of a site type) is a usable site."""
        return True

    def edit(self, src: Source, site: Node, rng: random.Random) -> list[Edit] | None:
        """Edits mutating ``site``, or None when it cannot be mutated."""
        raise NotImplementedError

    def transform(self, text: str, entity: Entity, rng: random.Random) -> str | None:
        src = Source.parse(entity.path, text, entity.lang)
        node = src.entity_node(entity)
        if node is None:
            return None
        candidates = self.sites(src, node)
        rng.shuffle(candidates)
        for site in candidates[:MAX_TRIES]:
            edits = self.edit(src, site, rng)
            new = src.accept(src.apply(edits)) if edits else None
            if new is not None:
                return new
        return None


def definition(node: Node) -> Node:
    """The def/class node inside a decorated definition or a JS ``const f = () => ...``."""
    if node.type == "decorated_definition":
        return node.child_by_field_name("definition")
    if node.type in ("lexical_declaration", "variable_declaration"):
        return node.named_children[0].child_by_field_name("value")
    return node
