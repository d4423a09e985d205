"""The ``history`` family: real past fixes of a git input, reverted (``mining.history_candidates``).

A past fix is a single bug too: the newest commits that change both code and tests take
up to half of the repo's singles budget, before any strategy proposes.
"""

from __future__ import annotations

import math

from datagen.synth.candidates import Candidate
from datagen.synth.families.registry import Family, Proposal, register
from datagen.synth.mining import history_candidates


def propose_history(p: Proposal, names: list[str]) -> list[Candidate]:
    if p.repo.kind == "dir":  # a plain folder has no history
        return []
    return history_candidates(p.repo.name, p.repo.root, p.texts, {path for path, _ in p.sources},
                              p.cfg.synth.history_commits, limit=math.ceil(p.budget / 2))


FAMILY = register(Family("history", "a past fix of the repo, reverted", propose=propose_history))
