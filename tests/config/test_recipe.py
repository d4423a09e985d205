from __future__ import annotations

import pytest

from datagen.config.base import apply_overrides, load_recipe, recipe_hash
from datagen.config.cpt import CptCorpusRecipe
from datagen.errors import UserError


def test_overrides_parse_values_as_yaml():
    data = apply_overrides({"a": {"b": 1}}, ["a.b=2", "a.c=[x, y]", "d.e=true", "s=hello"])
    assert data == {"a": {"b": 2, "c": ["x", "y"]}, "d": {"e": True}, "s": "hello"}


def test_override_into_a_scalar_is_an_error():
    with pytest.raises(UserError, match="not a section"):
        apply_overrides({"a": 1}, ["a.b=2"])
    with pytest.raises(UserError, match="KEY=VALUE"):
        apply_overrides({}, ["novalue"])


def test_default_recipe_validates_and_hash_tracks_content(tmp_path):
    cfg, path = load_recipe(CptCorpusRecipe, None, "cpt-corpus")
    assert path.name == "cpt-corpus.yaml"
    same, _ = load_recipe(CptCorpusRecipe, None, "cpt-corpus")
    other, _ = load_recipe(CptCorpusRecipe, None, "cpt-corpus", ["crawl.max_file_bytes=5"])
    assert recipe_hash(cfg) == recipe_hash(same) != recipe_hash(other)


def test_recipe_file_errors(tmp_path):
    bad = tmp_path / "r.yaml"
    bad.write_text("crawl: [unclosed\n")
    with pytest.raises(UserError, match="not valid YAML"):
        load_recipe(CptCorpusRecipe, bad, "cpt-corpus")
    bad.write_text("workers: many\n")
    with pytest.raises(UserError, match="bad value for 'workers'"):
        load_recipe(CptCorpusRecipe, bad, "cpt-corpus")
    with pytest.raises(UserError, match="recipe not found"):
        load_recipe(CptCorpusRecipe, tmp_path / "missing.yaml", "cpt-corpus")
