"""docs/layout.md is drawn from the code and stays so: its floors are the floors
tests/test_layers.py holds, its tree names every package of datagen/ (and no package that
is gone), and every file or folder it names in code quotes exists."""

from __future__ import annotations

import re
from pathlib import Path

from tests.test_layers import FLOORS

ROOT = Path(__file__).resolve().parent.parent
LAYOUT = ROOT / "docs" / "layout.md"


def _section(text: str, title: str) -> str:
    """The body of the ``## title`` section."""
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert m, f"docs/layout.md has no '## {title}' section"
    return m.group(1)


def doc_floors(text: str) -> list[set[str]]:
    """The rooms of each row of the floors table, ground floor first (``errors.py`` is ``errors``)."""
    rows = re.findall(r"^\| (\d+) \| ([^|]+) \|", _section(text, "Floors"), re.M)
    return [{r.strip().strip("`").removesuffix("/").removesuffix(".py") for r in rooms.split(",")}
            for _, rooms in sorted(rows, key=lambda r: int(r[0]))]


def doc_tree(text: str) -> set[str]:
    """The folders under ``datagen/`` that the tree block names (``sandbox/envs``, ...): a
    folder is a ``name/`` at the start of a line; its indent says whose child it is."""
    block = re.search(r"```\n(.*?)```", _section(text, "The tree"), re.S)
    assert block, "the tree section holds no code block"
    found, stack = set(), []  # (indent, path) of the open folders
    for line in block.group(1).splitlines():
        m = re.match(r"( *)([\w.-]+)/(\s|$)", line)
        if not m:
            continue
        indent = len(m.group(1))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = f"{stack[-1][1]}/{m.group(2)}" if stack else m.group(2)
        stack.append((indent, path))
        if path.startswith("datagen/"):
            found.add(path.removeprefix("datagen/"))
    return found


def code_packages() -> set[str]:
    package = ROOT / "datagen"
    return {p.parent.relative_to(package).as_posix() for p in package.rglob("__init__.py")} - {"."}


def test_the_floors_are_those_the_layer_test_holds():
    floors = [rooms - {"__init__"} for rooms in FLOORS]
    assert doc_floors(LAYOUT.read_text(encoding="utf-8")) == floors


def test_the_tree_names_every_package_and_no_other():
    named = doc_tree(LAYOUT.read_text(encoding="utf-8"))
    code = code_packages()
    assert not code - named, f"packages missing from docs/layout.md's tree: {sorted(code - named)}"
    assert not named - code, f"folders in docs/layout.md's tree that are not packages: {sorted(named - code)}"


def test_every_path_it_quotes_exists():
    quoted = re.findall(r"`((?:datagen|tests|docs|benchmarks|pipelines|filters|schemas)/[\w./-]*)`",
                        LAYOUT.read_text(encoding="utf-8"))
    assert len(quoted) > 20  # the check sees the paths the page names
    assert [q for q in quoted if not (ROOT / q).exists()] == []


def test_the_checks_read_what_they_judge():
    sample = ("## Floors\n\n| floor | rooms |\n|---|---|\n| 1 | `config/` |\n| 0 | `records/`, `errors.py` |\n\n"
              "## The tree\n\n```\ndatagen/  all code\n  sandbox/  a\n    envs/  b\n      python/  c\n"
              "  score/  d\n    agent/  e\npipelines/  recipes\n```\n")
    assert doc_floors(sample) == [{"records", "errors"}, {"config"}]
    assert doc_tree(sample) == {"sandbox", "sandbox/envs", "sandbox/envs/python", "score", "score/agent"}
