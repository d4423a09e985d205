"""Typed recipes: YAML files validated into pydantic models, with ``--set a.b=v`` overrides."""

from datagen.config.base import StrictModel, load_recipe, load_yaml_pack, recipe_hash

__all__ = ["StrictModel", "load_recipe", "load_yaml_pack", "recipe_hash"]
