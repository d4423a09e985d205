"""The registry of task families: what each one proposes or grows, and its share of a budget.

A family is one ``Family`` value registered by its module (``register``). The tasks build
asks the registry, never a family's name: which families a recipe turns on
(``synth.families``), in which order they propose (the built-in modules' order below,
then any other module's families in the order they were registered), the share of a repo's
candidate budget each takes, and how its tasks are stated. The built-in modules are
imported on the first look-up, not at import time.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from datagen.config.tasks import SynthConfig, TasksRecipe
from datagen.crawl.sources import Repo
from datagen.errors import UserError
from datagen.synth.baseline import Baseline
from datagen.synth.candidates import Candidate, Target
from datagen.synth.check import Verdict

_BUILTIN_MODULES = (
    "datagen.synth.families.history",
    "datagen.synth.families.strategy",
    "datagen.synth.families.feature",
    "datagen.synth.families.lm_rewrite",
    "datagen.synth.families.combine",
    "datagen.synth.families.evolve",
)


@dataclass
class Proposal:
    """What a family sees of one repo when it proposes its first-wave candidates."""

    cfg: TasksRecipe
    repo: Repo
    texts: Mapping[str, str]
    sources: list[tuple[str, str]]  # (path, language) of the files strategies may target
    baseline: Baseline | None
    runner: str | None
    targets: list[Target]  # the entities the stable tests reach
    budget: int  # the candidates the repo's single bugs may use (``singles_budget``)
    teacher: Any = None
    made: list[Candidate] = field(default_factory=list)  # the repo's candidates from earlier families
    row: dict[str, Any] = field(default_factory=dict)  # fields of the repo's row a family sets


@dataclass
class Growth:
    """What a family sees of one repo when it grows second-wave candidates from validated ones."""

    cfg: TasksRecipe
    repo: str
    texts: Mapping[str, str]
    kept: list[Candidate]  # the repo's validated first-wave candidates, in emit order
    ids: Mapping[str, str]  # candidate id -> task id of every validated candidate
    verdicts: Mapping[str, Verdict]
    singles: int  # the repo's distinct candidates from the strategy families
    teacher: Any = None


# (proposal, the chosen families that share this proposer) -> candidates
Proposer = Callable[[Proposal, list[str]], list[Candidate]]
Grower = Callable[[Growth], list[Candidate]]
# (clean texts, the task's entity field, path -> language) -> (path, signature) of each stubbed function
Interface = Callable[[Mapping[str, str], str, Mapping[str, str]], list[tuple[str, str]]]
DocComments = Callable[[Mapping[str, str], str, Mapping[str, str]], str]


@dataclass(frozen=True)
class Family:
    """One kind of task: its name (the ``family`` of its candidates and tasks) and hooks.

    A family proposes from the repo (``propose``), or grows from the repo's validated
    candidates (``grow``). Families that share one proposer are proposed together, in one
    call (the strategy families interleave their candidates over the repo's entities).
    """

    name: str
    summary: str
    propose: Proposer | None = None
    grow: Grower | None = None
    share: Callable[[SynthConfig], float] | None = None  # its own share of a repo's budget
    needs_teacher: bool = False  # skipped (and noted) without a teacher
    from_strategies: bool = False  # its candidates come from the strategy registry's strategies
    emits_first: bool = False  # takes a function's quota of tasks before the single bugs do
    near_duplicates: bool = False  # dropped when its changed lines nearly repeat a kept task's
    interface: Interface | None = None  # stated as the interface to implement, not as a failure
    doc_comments: DocComments | None = None


_REGISTRY: dict[str, Family] = {}


def register(family: Family) -> Family:
    """Add ``family`` to the registry (its module's place says its order, ``families``)."""
    if _REGISTRY.get(family.name, family) != family:
        raise ValueError(f"family name {family.name!r} is registered twice")
    if (family.propose is None) == (family.grow is None):
        raise ValueError(f"family {family.name!r} needs a proposer or a grower, not both")
    _REGISTRY[family.name] = family
    return family


def _load_builtins() -> None:
    for module in _BUILTIN_MODULES:
        importlib.import_module(module)


def _rank(family: Family) -> int:
    """The place of the module that defines ``family``'s hook among the built-in modules
    (any other module after them): the order holds whichever module is imported first."""
    module = getattr(family.propose or family.grow, "__module__", "")
    return _BUILTIN_MODULES.index(module) if module in _BUILTIN_MODULES else len(_BUILTIN_MODULES)


def families() -> list[Family]:
    """Every registered family: the built-in modules' in their order, then the others in
    the order they were registered."""
    _load_builtins()
    return sorted(_REGISTRY.values(), key=_rank)


def get_family(name: str) -> Family:
    """The family called ``name``; UserError (listing valid names) if none."""
    found = {f.name: f for f in families()}
    if name not in found:
        raise UserError(f"unknown family {name!r}; valid families: {', '.join(found)}")
    return found[name]


def check_families(names: list[str]) -> None:
    """UserError (listing the valid names) when a recipe names a family the registry lacks."""
    for name in names:
        get_family(name)


def chosen(cfg: TasksRecipe) -> list[Family]:
    """The families the recipe turns on (``synth.families``), in the registry's order."""
    return [f for f in families() if f.name in cfg.synth.families]


def strategy_families() -> frozenset[str]:
    """The names of the families whose candidates the strategy registry's strategies make."""
    return frozenset(f.name for f in families() if f.from_strategies)


def share_budget(cfg: TasksRecipe, family: Family, cap: int) -> int:
    """Candidates ``family`` may use in a repo of budget ``cap`` (its share, rounded up);
    0 for a family that is off or has no share of its own."""
    if family.share is None or family.name not in cfg.synth.families:
        return 0
    return math.ceil(family.share(cfg.synth) * cap)


def singles_budget(cfg: TasksRecipe) -> int:
    """Candidates a repo's single bugs may use: its budget less the shares of the families
    that have one (at least one candidate)."""
    cap = cfg.synth.max_candidates_per_repo
    shared = [f for f in chosen(cfg) if f.share is not None]
    if not shared:
        return cap
    return max(1, cap - sum(share_budget(cfg, f, cap) for f in shared))


def propose_repo(p: Proposal) -> list[Candidate]:
    """The repo's first-wave candidates: each chosen proposer in the registry's order (a
    teacher's family only with a teacher), each seeing what the ones before it made."""
    groups: dict[Proposer, list[str]] = {}
    for f in chosen(p.cfg):
        if f.propose is not None and (p.teacher is not None or not f.needs_teacher):
            groups.setdefault(f.propose, []).append(f.name)
    for proposer, names in groups.items():
        p.made += proposer(p, names)
    return p.made


def grow_repo(g: Growth) -> list[Candidate]:
    """The repo's second-wave candidates: each chosen grower in the registry's order."""
    out: list[Candidate] = []
    for f in chosen(g.cfg):
        if f.grow is not None and (g.teacher is not None or not f.needs_teacher):
            out += f.grow(g)
    return out
