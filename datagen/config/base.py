"""Recipe loading shared by every build.

A recipe is YAML validated into a ``StrictModel`` subclass: unknown keys and bad values
are one-line ``UserError``s naming the key. ``--set a.b=value`` overrides parse ``value``
as YAML (so ``--set workers=4`` is an int and ``--set crawl.langs=[py,go]`` a list).
The hash of the validated recipe names the run in the manifest and its work folders.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from datagen.errors import UserError
from datagen.resources import data_dir


class StrictModel(BaseModel):
    """Base of every recipe section: no unknown keys, immutable after validation."""

    model_config = ConfigDict(extra="forbid", frozen=True)


M = TypeVar("M", bound=BaseModel)


def _read_yaml(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot read recipe {path}: {exc.strerror}") from exc
    try:
        return yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise UserError(f"recipe {path} is not valid YAML: {exc}") from exc


def resolve_recipe_path(recipe: str | Path, default_name: str) -> Path:
    """A recipe given by path, or by bare name from the bundled ``pipelines/`` folder."""
    if recipe is None:
        return data_dir("pipelines") / f"{default_name}.yaml"
    path = Path(recipe)
    if path.exists():
        return path
    bundled = data_dir("pipelines") / (path.name if path.suffix else f"{path.name}.yaml")
    if bundled.exists():
        return bundled
    raise UserError(f"recipe not found: {recipe}")


def apply_overrides(data: dict, overrides: list[str] | None) -> dict:
    """Apply ``a.b.c=value`` overrides to nested dicts (values parsed as YAML)."""
    for item in overrides or []:
        if "=" not in item:
            raise UserError(f"--set expects KEY=VALUE, got {item!r}")
        key, raw = item.split("=", 1)
        key = key.strip()
        if not key:
            raise UserError(f"--set expects KEY=VALUE, got {item!r}")
        try:
            value = yaml.safe_load(raw) if raw != "" else ""
        except yaml.YAMLError:
            value = raw
        node = data
        parts = key.split(".")
        for part in parts[:-1]:
            child = node.get(part)
            if child is None:
                child = node[part] = {}
            elif not isinstance(child, dict):
                raise UserError(f"--set {key}: {part!r} is not a section")
            node = child
        node[parts[-1]] = value
    return data


def _format_validation_error(exc: ValidationError, source: str) -> str:
    err = exc.errors()[0]
    key = ".".join(str(p) for p in err["loc"]) or "<root>"
    if err["type"] == "extra_forbidden":
        msg = f"{source}: unknown key '{key}'"
    else:
        msg = f"{source}: bad value for '{key}': {err['msg']}"
    more = len(exc.errors()) - 1
    return msg + (f" (and {more} more problem{'s' if more > 1 else ''})" if more else "")


def validate(model: type[M], data: Any, source: str) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise UserError(_format_validation_error(exc, source)) from None


def load_recipe(
    model: type[M], recipe: str | Path | None, default_name: str, overrides: list[str] | None = None
) -> tuple[M, Path]:
    """Read, override and validate a recipe; returns the model and the file it came from."""
    path = resolve_recipe_path(recipe, default_name)
    data = _read_yaml(path)
    if not isinstance(data, dict):
        raise UserError(f"recipe {path} must be a mapping at the top level")
    data = apply_overrides(data, overrides)
    return validate(model, data, f"recipe {path.name}"), path


def load_yaml_pack(name: str | Path) -> Any:
    """Load a rule pack: a path, or a file name inside the bundled ``filters/`` folder."""
    path = Path(name)
    if not path.exists():
        path = data_dir("filters") / name
    if not path.exists():
        raise UserError(f"rule pack not found: {name}")
    return _read_yaml(path)


def recipe_keys(model: type[BaseModel], prefix: str = "", defaults: dict | None = None
                ) -> list[tuple[str, Any, str]]:
    """Every leaf key of a recipe model as (dotted key, default, description), in field
    order: what ``--set`` accepts, for a build's ``--help``. A nested section takes its
    defaults from its parent's (a teacher block has no defaults of its own)."""
    keys: list[tuple[str, Any, str]] = []
    defaults = model().model_dump(mode="json") if defaults is None else defaults
    for name, info in model.model_fields.items():
        kind = info.annotation
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            keys += recipe_keys(kind, f"{prefix}{name}.", defaults[name])
        else:
            keys.append((prefix + name, defaults[name], info.description or ""))
    return keys


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def recipe_hash(model: BaseModel) -> str:
    """Stable 16-hex-digit hash of a validated recipe."""
    return hashlib.sha256(canonical_json(model.model_dump(mode="json")).encode()).hexdigest()[:16]
