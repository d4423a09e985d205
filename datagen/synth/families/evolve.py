"""The ``evolve`` family: ``synth.scale`` harder variants the teacher makes of each
validated task (``teacher_tasks.evolve``). A variant whose changed lines nearly repeat a
kept task's (``synth.near_dup_jaccard``) is dropped at emit."""

from __future__ import annotations

from datagen.synth.candidates import Candidate
from datagen.synth.families.registry import Family, Growth, register


def grow_variants(g: Growth) -> list[Candidate]:
    if not g.cfg.synth.scale:
        return []
    from datagen.synth.teacher_tasks import evolve

    return evolve(g.cfg, g.repo, g.kept, g.texts, g.teacher, g.ids)


FAMILY = register(Family("evolve", "a harder variant of a validated task, by the teacher", grow=grow_variants,
                         needs_teacher=True, near_duplicates=True))
