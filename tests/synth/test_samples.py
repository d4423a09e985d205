"""The bundled sample repositories: every entity gets a strategy, and most pairs yield a mutation."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from datagen.synth.entities import extract_entities
from datagen.synth.snapshot import is_test_file
from datagen.synth.source import is_valid
from datagen.synth.strategies.registry import strategies_for
from tests.synth.helpers import LANG_OF, load_repo

SAMPLES = Path(__file__).resolve().parents[2] / "sample_data"
# the source folders of each repository, and the share of (entity, strategy) pairs that must
# yield a mutation; lower for the table languages, where remove_function_v1 and
# remove_method_v1 decline a method a trait requires or a function another source file
# names, and Go's unused-variable and unused-import rules turn many deletions down
REPOS = {"tinyhttp": ("tinyhttp",), "shapes-js": ("src",), "kvstore-go": ("internal", "cmd"),
         "ringbuf-rs": ("src",), "wordfreq-c": ("src",)}
YIELD = {"kvstore-go": 0.6, "ringbuf-rs": 0.7, "wordfreq-c": 0.75}
MIN_ENTITIES = {"wordfreq-c": 10}
SEEDS = range(5)


def pairs(repo: str) -> tuple[dict[str, str], list]:
    """The repository's files and every (entity, applicable strategies) pair list."""
    files = load_repo(SAMPLES / repo, REPOS[repo])
    strategies = strategies_for()
    found = []
    for path, text in files.items():
        if is_test_file(path):
            continue
        lang = LANG_OF[Path(path).suffix]
        for e in extract_entities(path, text, lang):
            found.append((e, [s for s in strategies if s.applies_to(e)]))
    return files, found


def first_valid(files: dict[str, str], e, strategy) -> dict[str, str] | None:
    for seed in SEEDS:
        changed = strategy.transform_repo(files, e, random.Random(seed))
        if changed:
            return changed
    return None


@pytest.mark.parametrize("repo", sorted(REPOS))
def test_sample_repo(repo: str) -> None:
    files, found = pairs(repo)
    assert len(found) >= MIN_ENTITIES.get(repo, 20)
    assert not [e.qualname for e, applicable in found if not applicable]
    total = ok = 0
    for e, applicable in found:
        for strategy in applicable:
            total += 1
            changed = first_valid(files, e, strategy)
            if changed is None:
                continue
            ok += 1
            for path, text in changed.items():
                assert text != files[path] and is_valid(text, LANG_OF[Path(path).suffix], path)
    assert ok / total >= YIELD.get(repo, 0.8), f"{ok}/{total} pairs yield a mutation"
