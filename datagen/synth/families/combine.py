"""The ``combine`` family: validated single bugs merged into one task (``mining.combine_candidates``).

Its share of the budget (``synth.combine_share``) is taken of what the repo's single bugs
used, not of the whole budget: an uncapped repo is not given 1 250 merges. Its tasks come
first in a function's quota of tasks (the harder, multi-place task before a second single
bug of the same function).
"""

from __future__ import annotations

import math

from datagen.synth.candidates import Candidate
from datagen.synth.families.registry import Family, Growth, register, share_budget
from datagen.synth.mining import combine_candidates


def grow_merges(g: Growth) -> list[Candidate]:
    s = g.cfg.synth
    share = share_budget(g.cfg, FAMILY, min(s.max_candidates_per_repo,
                                            math.ceil(g.singles / (1 - s.combine_share))))
    if not share:
        return []
    breaks = {c.candidate_id: set(g.verdicts[c.candidate_id].fail_to_pass) for c in g.kept}
    return combine_candidates(g.repo, g.kept, share, s.combine_size, g.cfg.seed, g.ids, breaks, g.texts)


FAMILY = register(Family("combine", "validated single bugs merged into one task", grow=grow_merges,
                         share=lambda s: s.combine_share, emits_first=True))
