"""A family written outside datagen: one module, registered when imported (what the family
registry asks of a new family). It takes a fifth of a repo's budget and proposes one
candidate per target function, its first line commented out."""

from __future__ import annotations

from datagen.synth.candidates import Candidate, derive_seed
from datagen.synth.families.registry import Family, Proposal, register, share_budget


def propose_toys(p: Proposal, names: list[str]) -> list[Candidate]:
    out = []
    for t in p.targets[:share_budget(p.cfg, TOY, p.cfg.synth.max_candidates_per_repo)]:
        e = t.entity
        lines = p.texts[e.path].splitlines(keepends=True)
        lines[e.start_line] = "# " + lines[e.start_line]
        seed = derive_seed(p.cfg.seed, p.repo.name, e.path, e.qualname, "toy")
        out.append(Candidate(p.repo.name, "toy_v1", "toy", f"{e.path}::{e.qualname}", seed,
                             {e.path: "".join(lines)}, t.covering))
    return out


TOY = register(Family("toy", "a function's first statement commented out", propose=propose_toys,
                      share=lambda s: 0.2))
