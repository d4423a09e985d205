"""The strategy families: ``procedural``, ``removal`` and ``feature_removal``.

Their candidates are made by the strategy registry's strategies (``synth/strategies/``),
all three families in one pass (``candidates.propose``), so that a capped budget spreads
over as many entities as it can whichever families made them. They use what is left of
the repo's singles budget.
"""

from __future__ import annotations

from itertools import islice

from datagen.synth.candidates import Candidate, propose
from datagen.synth.families.registry import Family, Proposal, register


def propose_strategies(p: Proposal, names: list[str]) -> list[Candidate]:
    s = p.cfg.synth
    made = propose(p.repo.name, p.targets, p.texts, names, s.strategies, p.cfg.seed, s.seeds_per_pair,
                   s.max_candidates_per_entity)
    return list(islice(made, p.budget - len(p.made)))


for _name, _summary in (("procedural", "a single-place bug in one function"),
                        ("removal", "a function's body emptied: implement it"),
                        ("feature_removal", "a function removed with its uses")):
    register(Family(_name, _summary, propose=propose_strategies, from_strategies=True))
