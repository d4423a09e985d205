"""The house plan's floors (docs/layout.md): every import of a datagen
module, at module level or inside a function, goes to its own room or a lower floor; rooms
on one floor do not import each other, except the shared steps the plan names; the
sandbox's three parts import downwards (isolation, then envs, then harness); no circle.
Imports under ``if TYPE_CHECKING:`` are annotations only and are not counted."""

from __future__ import annotations

import ast
from pathlib import Path

import datagen

PACKAGE = Path(datagen.__file__).parent

FLOORS = [
    {"records", "errors", "resources", "__init__"},
    {"config"},
    {"manifest"},
    {"runtime"},
    {"crawl", "teachers", "sandbox"},
    {"pack", "synth", "score"},
    {"curate", "pool"},
    {"builds", "serve"},
    {"cli"},
]
# Same-floor imports the plan allows: pool reuses curate's MinHash and decontamination.
SHARED = {("pool", "curate")}
SANDBOX_PARTS = ["isolation", "envs", "harness"]


def _floor(room: str) -> int:
    return next(i for i, rooms in enumerate(FLOORS) if room in rooms)


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", "")) == "TYPE_CHECKING":
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def imports() -> list[tuple[str, str, int]]:
    """(importing module, imported datagen module, line) for every datagen import."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module(path)
        tree = ast.parse(path.read_text())
        skip = _type_checking_lines(tree)
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        for node in ast.walk(tree):
            if getattr(node, "lineno", None) in skip:
                continue
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    targets = [".".join(base + ([node.module] if node.module else []))]
                else:
                    targets = [node.module or ""]
            else:
                continue
            found += [(module, t, node.lineno) for t in targets if t == "datagen" or t.startswith("datagen.")]
    return found


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_the_scan_sees_the_imports_it_judges():
    edges = {(a, b) for a, b, _ in imports()}
    assert ("datagen.builds.base", "datagen.runtime.run") in edges
    assert ("datagen.cli.build", "datagen.builds.all") in edges
    assert len(edges) > 300


def test_no_import_climbs_a_floor_or_crosses_a_floor():
    wrong = []
    for src, dst, line in imports():
        a, b = _room(src), _room(dst)
        if a == b or (a, b) in SHARED:
            continue
        if _floor(b) >= _floor(a):
            wrong.append(f"{src}:{line} imports {dst} ({a} is floor {_floor(a)}, {b} floor {_floor(b)})")
    assert not wrong, "\n".join(wrong)


def test_the_sandbox_parts_import_downwards():
    wrong = []
    for src, dst, line in imports():
        s, d = src.split("."), dst.split(".")
        if s[1:2] == d[1:2] == ["sandbox"] and len(s) > 2 and len(d) > 2 and s[2] != d[2]:
            if d[2] not in SANDBOX_PARTS or s[2] not in SANDBOX_PARTS:
                continue
            if SANDBOX_PARTS.index(d[2]) > SANDBOX_PARTS.index(s[2]):
                wrong.append(f"{src}:{line} imports {dst}")
    assert not wrong, "\n".join(wrong)


def test_no_circle_between_rooms():
    graph: dict[str, set[str]] = {}
    for src, dst, _ in imports():
        a, b = _room(src), _room(dst)
        if a != b:
            graph.setdefault(a, set()).add(b)

    def reaches(start: str, goal: str, seen: set[str]) -> bool:
        for nxt in graph.get(start, ()):
            if nxt == goal or (nxt not in seen and (seen.add(nxt) or reaches(nxt, goal, seen))):
                return True
        return False

    circles = sorted(room for room in graph if reaches(room, room, set()))
    assert not circles, circles


def test_the_old_floors_are_gone():
    """The run machinery is in runtime/, each build a package, the sandbox in three parts."""
    for gone in ("builds/run.py", "builds/atomic.py", "builds/procs.py", "builds/steps.py", "builds/tasks_stages.py",
                 "sandbox/env.py", "sandbox/bwrap.py", "sandbox/profiles", "rank_progress.py", "memory.py"):
        assert not (PACKAGE / gone).exists(), gone
    for there in ("runtime/run.py", "builds/tasks/build.py", "builds/cpt_corpus/build.py", "builds/rl_pool/build.py",
                  "sandbox/isolation/bwrap.py", "sandbox/harness/profiles/go.py", "sandbox/envs/python/plan.py"):
        assert (PACKAGE / there).exists(), there
