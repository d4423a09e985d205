"""Helpers shared by the synth tests: find an entity by name and run one strategy on it."""

from __future__ import annotations

import random
from pathlib import Path

from datagen.synth.entities import Entity, extract_entities
from datagen.synth.strategies.registry import get_strategy

DATA = Path(__file__).parent / "data"
PATHS = {"python": "pkg/mod.py", "javascript": "src/mod.js", "typescript": "src/mod.ts"}
LANG_OF = {".py": "python", ".js": "javascript", ".ts": "typescript", ".go": "go", ".rs": "rust", ".c": "c",
           ".h": "c", ".java": "java", ".cpp": "cpp", ".rb": "ruby", ".php": "php"}


def entity_named(source: str, qualname: str, lang: str = "python", path: str | None = None) -> Entity:
    """The entity called ``qualname`` in ``source`` (AssertionError when absent)."""
    found = [e for e in extract_entities(path or PATHS[lang], source, lang) if e.qualname == qualname]
    assert found, f"no entity {qualname!r}"
    return found[0]


def mutate(strategy: str, source: str, qualname: str, lang: str = "python", seed: int = 0) -> str | None:
    """The text ``strategy`` makes of ``source`` by mutating entity ``qualname`` with ``seed``."""
    entity = entity_named(source, qualname, lang)
    return get_strategy(strategy).transform(source, entity, random.Random(seed))


def load_repo(root: Path, folders: tuple[str, ...]) -> dict[str, str]:
    """path -> text for the source files (of a language in LANG_OF) under ``folders`` of ``root``."""
    files = {}
    for folder in folders:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix in LANG_OF and path.is_file():
                files[path.relative_to(root).as_posix()] = path.read_text(encoding="utf-8")
    return files
