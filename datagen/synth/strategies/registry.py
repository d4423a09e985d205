"""The registry of strategies: ``@register`` on a class, look-ups by name, family, language.

The built-in strategy modules are imported on the first look-up, not at import time.
"""

from __future__ import annotations

import importlib

from datagen.errors import UserError
from datagen.synth.strategies.base import FAMILIES, Strategy

_BUILTIN_MODULES = (
    "datagen.synth.strategies.python_procedural",
    "datagen.synth.strategies.python_structural",
    "datagen.synth.strategies.js_procedural",
    "datagen.synth.strategies.generic",
    "datagen.synth.strategies.removal",
    "datagen.synth.strategies.feature_removal",
)
_REGISTRY: dict[str, type[Strategy]] = {}


def register(cls: type[Strategy]) -> type[Strategy]:
    """Class decorator adding ``cls`` to the registry under ``cls.name``."""
    if cls.family not in FAMILIES:
        raise ValueError(f"{cls.__name__}: family {cls.family!r} is not one of {sorted(FAMILIES)}")
    if _REGISTRY.get(cls.name, cls) is not cls:
        raise ValueError(f"strategy name {cls.name!r} is registered twice")
    _REGISTRY[cls.name] = cls
    return cls


def _load_builtins() -> None:
    for module in _BUILTIN_MODULES:
        importlib.import_module(module)


def strategy_names() -> list[str]:
    """Every registered strategy name, sorted."""
    _load_builtins()
    return sorted(_REGISTRY)


def get_strategy(name: str) -> Strategy:
    """A new instance of the strategy called ``name``; UserError (listing valid names) if none."""
    names = strategy_names()
    if name not in _REGISTRY:
        raise UserError(f"unknown strategy {name!r}; valid strategies: {', '.join(names)}")
    return _REGISTRY[name]()


def strategies_for(family: str | None = None, lang: str | None = None) -> list[Strategy]:
    """Instances of the strategies of ``family`` and/or ``lang``, sorted by name."""
    found = [_REGISTRY[n]() for n in strategy_names()]
    return [s for s in found if (family is None or s.family == family) and (lang is None or lang in s.langs)]
