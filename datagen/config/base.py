"""Recipe loading shared by every build.

A recipe is YAML validated into a ``StrictModel`` subclass: unknown keys and bad values
are one-line ``UserError``s naming the key. ``--set a.b=value`` overrides parse ``value``
as YAML (so ``--set workers=4`` is an int and ``--set crawl.langs=[py,go]`` a list).
The hash of the validated recipe names the run in the manifest and its work folders.
"""

from __future__ import annotations

import difflib
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


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """A YAML error on one line: ``line L, column C: problem`` (the file is named by the caller)."""
    mark = getattr(exc, "problem_mark", None)
    problem = " ".join(str(getattr(exc, "problem", None) or exc).split())
    context = getattr(exc, "context", None)
    where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    return where + (f"{problem} ({' '.join(str(context).split())})" if context else problem)


def _read_yaml(path: Path, what: str = "recipe", allow_empty: bool = True) -> Any:
    """The YAML of ``path``; an unreadable file, bad YAML or (unless ``allow_empty``) a file
    with no content at all is a ``UserError`` naming the file."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot read {what} {path}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise UserError(f"{what} {path} is not UTF-8 text (byte {exc.start})") from exc
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise UserError(f"{what} {path} is not valid YAML: {_yaml_problem(exc)}") from exc
    if data is None and not allow_empty:
        raise UserError(f"{what} {path} is empty; give a recipe with its keys (see pipelines/ for the "
                        "bundled ones), or leave --recipe out for the defaults")
    return {} if data is None else data


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
    names = ", ".join(sorted(p.stem for p in data_dir("pipelines").glob("*.yaml")))
    raise UserError(f"recipe not found: {recipe}; give the path of a YAML file or a bundled recipe ({names})")


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


def _section_keys(model: type[BaseModel], loc: tuple) -> list[str] | None:
    """The keys valid where ``loc`` points (``loc[:-1]`` is the section), or ``None``."""
    for part in loc[:-1]:
        info = model.model_fields.get(str(part)) if isinstance(part, str) else None
        kind = info.annotation if info is not None else None
        if not (isinstance(kind, type) and issubclass(kind, BaseModel)):
            return None
        model = kind
    return list(model.model_fields)


def _did_you_mean(model: type[BaseModel] | None, loc: tuple) -> str:
    """`` (did you mean 'crawl.max_file_bytes'?)`` for a mistyped key, else the valid keys
    of its section (when there are few), else nothing."""
    keys = _section_keys(model, loc) if model is not None and loc else None
    if not keys:
        return ""
    prefix = "".join(f"{p}." for p in loc[:-1])
    close = difflib.get_close_matches(str(loc[-1]), keys, n=3, cutoff=0.6)
    if close:
        return " (did you mean " + " or ".join(f"'{prefix}{k}'" for k in close) + "?)"
    if len(keys) <= 12:
        return f" (valid keys{' under ' + prefix[:-1] if prefix else ''}: {', '.join(keys)})"
    return ""


def _format_validation_error(exc: ValidationError, source: str, model: type[BaseModel] | None = None,
                             set_keys: frozenset[str] = frozenset()) -> str:
    err = exc.errors()[0]
    key = ".".join(str(p) for p in err["loc"]) or "<root>"
    if key in set_keys:
        source = "--set"
    if err["type"] == "extra_forbidden":
        msg = f"{source}: unknown key '{key}'" + _did_you_mean(model, tuple(err["loc"]))
    else:
        msg = f"{source}: bad value for '{key}': {err['msg']}"
    more = len(exc.errors()) - 1
    return msg + (f" (and {more} more problem{'s' if more > 1 else ''})" if more else "")


def validate(model: type[M], data: Any, source: str, set_keys: frozenset[str] = frozenset()) -> M:
    """``model`` from ``data``, or a one-line ``UserError`` naming the key (and ``--set``
    when the key came from one, ``set_keys``)."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise UserError(_format_validation_error(exc, source, model, set_keys)) from None


def load_recipe(
    model: type[M], recipe: str | Path | None, default_name: str, overrides: list[str] | None = None
) -> tuple[M, Path]:
    """Read, override and validate a recipe; returns the model and the file it came from."""
    path = resolve_recipe_path(recipe, default_name)
    data = _read_yaml(path, allow_empty=False)
    if not isinstance(data, dict):
        raise UserError(f"recipe {path} must be a mapping at the top level")
    data = apply_overrides(data, overrides)
    set_keys = frozenset(item.split("=", 1)[0].strip() for item in overrides or [])
    return validate(model, data, f"recipe {path.name}", set_keys), path


def load_yaml_pack(name: str | Path) -> Any:
    """Load a rule pack: a path, or a file name inside the bundled ``filters/`` folder."""
    path = Path(name)
    if not path.exists():
        path = data_dir("filters") / name
    if not path.exists():
        raise UserError(f"rule pack not found: {name}")
    return _read_yaml(path, "rule pack")


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
