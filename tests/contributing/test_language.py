"""docs/contributing.md, "Adding a language", kept true: every language synth has a spec for
has each piece the steps name: file extensions the crawl reads as it, a tree-sitter grammar,
a runner profile whose tests target it, quality thresholds, and an example in the spec tests."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from datagen.crawl.grammars import ts_parser
from datagen.crawl.language import EXTENSIONS
from datagen.sandbox.harness.profiles.registry import profiles
from datagen.synth.entities import extract_entities
from datagen.synth.languages import SPECS, TABLE_LANGS
from tests.synth.test_language_specs import BODIES

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("lang", sorted(SPECS))
def test_every_language_has_each_piece_the_steps_name(lang: str) -> None:
    assert lang in EXTENSIONS.values(), f"step 1: no file extension is read as {lang}"
    assert ts_parser(lang) is not None  # step 1: its grammar loads
    thresholds = yaml.safe_load((ROOT / "filters" / "quality.yaml").read_text())["languages"]
    assert lang in thresholds, f"step 1: filters/quality.yaml has no thresholds for {lang}"
    assert SPECS[lang].name == lang  # step 2: its spec
    assert any(lang in p.source_langs for p in profiles()), f"step 3: no runner profile targets {lang}"


@pytest.mark.parametrize("lang", sorted(TABLE_LANGS))
def test_every_table_language_has_its_example_in_the_spec_tests(lang: str) -> None:
    path, text = BODIES[lang]  # step 4
    assert "twice" in [e.name for e in extract_entities(path, text, lang)]
