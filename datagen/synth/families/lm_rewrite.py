"""The ``lm_rewrite`` family: the teacher slips a subtle bug into a covered function
(``teacher_tasks.lm_rewrites``)."""

from __future__ import annotations

from datagen.synth.candidates import Candidate
from datagen.synth.families.registry import Family, Proposal, register


def propose_rewrites(p: Proposal, names: list[str]) -> list[Candidate]:
    from datagen.synth.teacher_tasks import lm_rewrites

    return lm_rewrites(p.cfg, p.repo.name, p.targets, p.texts, p.teacher)


FAMILY = register(Family("lm_rewrite", "a subtle bug the teacher writes", propose=propose_rewrites,
                         needs_teacher=True))
