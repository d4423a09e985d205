"""Repo-level ordering: an import graph per repository, then a dependency order.

``order_repo(files)`` is what the corpus writer calls for each repository: files is a
sequence of rows with ``path``, ``lang`` and ``text`` (``CodeFile`` records, dicts or any
object with those attributes). The order puts every file after the files it imports
(DeepSeek-Coder's repo-level concatenation), so a long sequence reads bottom-up.

The order is a depth-first post-order: files are visited by path and each one is emitted
right after its (not yet emitted) imports, which keeps related files close together.
A back edge (an import that closes a cycle) is dropped and recorded in ``cycles_broken``.
Everything is deterministic: ties always go to the smaller path.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from datagen.pack.extract import SUPPORTED, Imports, extract_imports
from datagen.pack.resolve import RepoIndex

# Files that are not code but tell resolvers about the repo (module paths, crate names).
MANIFEST_NAMES = ("go.mod", "Cargo.toml")


@dataclass
class RepoOrder:
    """The dependency order of one repository and what the import graph looked like."""

    order: list[str]  # paths, imported files first
    edges: list[tuple[str, str]] = field(default_factory=list)  # (importer, imported), sorted
    unresolved: int = 0  # imports that look repo-internal but match no file
    external: int = 0  # imports of other packages / the standard library
    imports: int = 0  # all import specifiers seen in supported languages
    cycles_broken: list[tuple[str, str]] = field(default_factory=list)  # dropped edges
    parse_errors: int = 0  # files whose syntax tree has errors (still used, best effort)

    def apply(self, files: Sequence[Any]) -> list[Any]:
        """``files`` reordered by ``self.order`` (the rows themselves, not paths)."""
        by_path = {_get(f, "path"): f for f in files}
        return [by_path[p] for p in self.order]


def _get(row: Any, name: str) -> Any:
    return row[name] if isinstance(row, Mapping) else getattr(row, name)


def _has(row: Any, name: str) -> bool:
    return name in row if isinstance(row, Mapping) else hasattr(row, name)


def extract_all(files: Iterable[Any]) -> list[tuple[str, str, Imports]]:
    """``(path, lang, imports)`` of every file in a supported language, in input order: the
    parsing half of ``import_graph``, which may run elsewhere (e.g. in worker processes).
    A row with an ``imports`` value (``Imports.to_json``, written by the crawl's
    ``ImportsStep``) is not parsed again."""
    out = []
    for f in files:
        lang = _get(f, "lang")
        if lang in SUPPORTED:
            path = _get(f, "path")
            known = _get(f, "imports") if _has(f, "imports") else None
            imps = Imports.from_json(known) if known is not None else extract_imports(lang, path, _get(f, "text"))
            out.append((path, lang, imps))
    return out


def import_graph(
    files: Sequence[Any], extra_texts: Mapping[str, str] | None = None,
    aliases: Mapping[str, str] | None = None,
    parsed: list[tuple[str, str, Imports]] | None = None,
) -> tuple[dict[str, list[str]], dict[str, int]]:
    """Resolved imports of each file (``path -> sorted imported paths``) and counters.

    ``extra_texts`` are repo files that are not in ``files`` but help resolution
    (``go.mod``, ``Cargo.toml``); ``files`` of those names are used too. ``aliases`` maps
    paths of the repo that are not in ``files`` (e.g. dropped exact duplicates) to the
    file that stands for them, so an import of a removed copy points at the kept one.
    ``parsed``: ``extract_all(files)`` when the caller has it already.
    """
    aliases = dict(aliases or {})
    paths = [_get(f, "path") for f in files]
    texts = {p: t for p, t in (extra_texts or {}).items()}
    for f in files:
        if _get(f, "path").rsplit("/", 1)[-1] in MANIFEST_NAMES:
            texts[_get(f, "path")] = _get(f, "text")
    repo = next((_get(f, "repo") for f in files if _has(f, "repo")), "")
    index = RepoIndex([*paths, *aliases], texts, repo or "")
    counts = {"imports": 0, "resolved": 0, "unresolved": 0, "external": 0, "parse_errors": 0}
    if parsed is None:
        parsed = extract_all(files)
    for path, lang, imps in parsed:
        counts["parse_errors"] += imps.parse_error
        if lang == "java":
            index.add_java(path, imps.package)
    deps: dict[str, set[str]] = {p: set() for p in paths}
    for path, lang, imps in parsed:
        for kind, value in imps.specs:
            targets, status = _resolve(index, lang, path, kind, value)
            counts["imports"] += 1
            counts[status] += 1
            deps[path].update(aliases.get(t, t) for t in targets if aliases.get(t, t) != path)
    return {p: sorted(d) for p, d in deps.items()}, counts


def _resolve(index: RepoIndex, lang: str, path: str, kind: str, value: Any) -> tuple[list, str]:
    if lang == "python":
        return index.resolve_python(path, kind, value)
    if lang in ("javascript", "typescript"):
        return index.resolve_js(path, value)
    if lang == "go":
        return index.resolve_go(path, value)
    if lang == "rust":
        return index.resolve_rust(path, kind, value)
    if lang == "java":
        return index.resolve_java(path, value)
    return index.resolve_c(path, kind, value)


def dependency_order(deps: Mapping[str, Iterable[str]]) -> tuple[list[str], list[tuple[str, str]]]:
    """Depth-first post-order of ``deps`` (node -> what it needs first), cycles broken.

    Returns the order and the dropped back edges ``(importer, imported)``.
    """
    order: list[str] = []
    state: dict[str, int] = {}  # 1 = on the stack, 2 = emitted
    broken: list[tuple[str, str]] = []
    graph = {n: sorted(d) for n, d in deps.items()}
    for start in sorted(graph):
        if start in state:
            continue
        stack = [(start, iter(graph[start]))]
        state[start] = 1
        while stack:
            node, it = stack[-1]
            for dep in it:
                seen = state.get(dep)
                if seen is None:
                    state[dep] = 1
                    stack.append((dep, iter(graph.get(dep, ()))))
                    break
                if seen == 1:
                    broken.append((node, dep))
            else:
                stack.pop()
                state[node] = 2
                order.append(node)
    return order, broken


def order_repo(
    files: Sequence[Any], extra_texts: Mapping[str, str] | None = None,
    aliases: Mapping[str, str] | None = None,
    parsed: list[tuple[str, str, Imports]] | None = None,
) -> RepoOrder:
    """Order one repository's files so that each comes after what it imports
    (``extra_texts``, ``aliases``, ``parsed``: see ``import_graph``)."""
    deps, counts = import_graph(files, extra_texts, aliases, parsed)
    order, broken = dependency_order(deps)
    edges = sorted((src, dst) for src, ds in deps.items() for dst in ds)
    return RepoOrder(
        order=order,
        edges=edges,
        unresolved=counts["unresolved"],
        external=counts["external"],
        imports=counts["imports"],
        cycles_broken=broken,
        parse_errors=counts["parse_errors"],
    )
