"""The registry of ecosystem profiles: ``@register`` on a class, look-ups by name, detection.

Adding an ecosystem is one ``Profile`` subclass with ``@register`` in a module of this
package: every module of ``datagen/sandbox/harness/profiles/`` (but ``base`` and ``registry``) is
imported on the first look-up, not at import time, so a new module needs no edit here.
``detect_profile`` asks the profiles in ``priority`` order (then by name) and returns the
first that claims the repo.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from datagen.errors import UserError
from datagen.sandbox.harness.profiles.base import Profile

_PACKAGE = "datagen.sandbox.harness.profiles"
_NOT_PROFILES = frozenset({"base", "registry"})
_REGISTRY: dict[str, type[Profile]] = {}
_LOADED = False


def register(cls: type[Profile]) -> type[Profile]:
    """Class decorator adding ``cls`` to the registry under ``cls.name``."""
    if not cls.name or not cls.language:
        raise ValueError(f"{cls.__name__}: a profile needs a name and a language")
    if _REGISTRY.get(cls.name, cls) is not cls:
        raise ValueError(f"profile name {cls.name!r} is registered twice")
    _REGISTRY[cls.name] = cls
    return cls


def _load_builtins() -> None:
    global _LOADED
    if _LOADED:
        return
    package = importlib.import_module(_PACKAGE)
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if info.name not in _NOT_PROFILES and not info.name.startswith("_"):
            importlib.import_module(f"{_PACKAGE}.{info.name}")
    _LOADED = True


def profile_names() -> list[str]:
    """Every registered profile name, sorted."""
    _load_builtins()
    return sorted(_REGISTRY)


def get_profile(name: str) -> Profile:
    """A new instance of the profile called ``name``; UserError (listing valid names) if none."""
    names = profile_names()
    if name not in _REGISTRY:
        raise UserError(f"unknown test runner {name!r}; valid runners: {', '.join(names)}")
    return _REGISTRY[name]()


def profiles() -> list[Profile]:
    """An instance of every profile, in detection order (priority, then name)."""
    _load_builtins()
    return [cls() for cls in sorted(_REGISTRY.values(), key=lambda c: (c.priority, c.name))]


def detect_profile(src: Path, paths: list[str]) -> Profile | None:
    """The first profile (detection order) that claims the repo at ``src``; None when none does."""
    for profile in profiles():
        if profile.detect(src, paths):
            return profile
    return None


def language_of(runner: str) -> str:
    """The language label of a runner's tasks ('' for an unknown runner)."""
    _load_builtins()
    cls = _REGISTRY.get(runner)
    return cls.language if cls else ""
