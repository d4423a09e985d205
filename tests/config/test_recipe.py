from __future__ import annotations

import pytest
import yaml

from datagen.config.all import AllRecipe
from datagen.config.base import apply_overrides, load_recipe, recipe_hash, recipe_keys
from datagen.config.cpt import CptCorpusRecipe
from datagen.config.quality import QualityRecipe
from datagen.config.rl_pool import RlPoolRecipe
from datagen.config.sandbox import ValidateRecipe
from datagen.config.tasks import TasksRecipe
from datagen.config.teacher import TeacherConfig
from datagen.errors import UserError
from datagen.resources import data_dir


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


RECIPES = {"cpt-corpus.yaml": (CptCorpusRecipe, None), "validate.yaml": (ValidateRecipe, None),
           "teacher.yaml": (TeacherConfig, "teacher"), "tasks.yaml": (TasksRecipe, None),
           "rl-pool.yaml": (RlPoolRecipe, None), "all.yaml": (AllRecipe, None),
           "quality.yaml": (QualityRecipe, None)}
CHOICES = {"teacher.yaml": {"base_url"}}  # the server a recipe names is its choice, not a default
# Defaults that depend on the machine (the user's cache folder) are not written in a recipe.
MACHINE = {"teacher.cache_dir", "policy.cache_dir", "soundness.judge.teacher.cache_dir"}


def _leaves(data: dict, prefix: str = "") -> dict:
    out = {}
    for key, value in data.items():
        if isinstance(value, dict) and value:
            out |= _leaves(value, f"{prefix}{key}.")
        else:
            out[prefix + key] = value
    return out


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_bundled_recipes_hold_the_models_defaults(name):
    """The YAML in pipelines/ and the pydantic defaults are one set of defaults."""
    model, section = RECIPES[name]
    data = yaml.safe_load((data_dir("pipelines") / name).read_text())
    data = data[section] if section else data
    required = {k: data[k] for k, f in model.model_fields.items() if f.is_required()}  # teacher.model
    defaults = _leaves(model(**required).model_dump(mode="json"))
    written = _leaves(data)
    choices = CHOICES.get(name, set())
    assert {k: v for k, v in written.items() if defaults.get(k, v) != v and k not in choices} == {}, name
    assert set(written) <= set(defaults), set(written) - set(defaults)
    if section is None:  # a build's recipe spells every key out
        assert set(defaults) - set(written) - MACHINE <= {k for k, v in defaults.items() if v == {}}


def test_build_help_lists_the_recipe_keys_with_descriptions():
    from typer.testing import CliRunner

    from datagen.cli.app import app

    r = CliRunner().invoke(app, ["build", "cpt-corpus", "--help"], env={"COLUMNS": "200"})
    assert r.exit_code == 0
    for key, _default, description in recipe_keys(CptCorpusRecipe):
        assert key in r.stdout
        assert description.split()[0] in r.stdout if description else True
    assert "larger files are skipped: too_large" in r.stdout
