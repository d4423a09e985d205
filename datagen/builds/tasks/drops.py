"""Why a candidate is not emitted: the emit stage's drop rules, in the order they are asked.

Each rule looks at one candidate (in emit order) and what the candidates before it left in
the ``Ledger``, and returns the overrides of the candidate's manifest row when it drops the
candidate (their ``reason`` says why), None when it lets the candidate through. The first
rule that drops decides; a candidate every rule lets through is committed
(``commit_task``, which may still refuse it), and once the tasks' statements are written,
one whose statement an earlier task has is dropped as well (``unique_statements``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from datagen.config.tasks import TasksRecipe
from datagen.synth.candidates import Candidate, change_id
from datagen.synth.check import Verdict
from datagen.synth.emit import Emitted
from datagen.synth.families.registry import get_family
from datagen.synth.statements import first_error


@dataclass
class Ledger:
    """What the candidates emitted so far hold, that a later candidate may repeat."""

    cfg: TasksRecipe
    texts: Mapping[str, Mapping[str, str]]  # repo -> its clean texts
    seen: set[str] = field(default_factory=set)  # candidate ids met so far
    kept_lines: dict[str, list[set[str]]] = field(default_factory=dict)  # repo -> each kept task's changed lines
    per_entity: Counter[tuple[str, str]] = field(default_factory=Counter)  # (repo, function) -> its tasks
    breaks: dict[tuple, str] = field(default_factory=dict)  # (repo, FAIL_TO_PASS, first error) -> the task

    def keep(self, c: Candidate, v: Verdict, instance_id: str) -> None:
        """Count ``c`` (committed as ``instance_id``) against every later candidate."""
        self.kept_lines.setdefault(c.repo, []).append(changed_lines(c, self.texts[c.repo]))
        for f in functions(c):
            self.per_entity[(c.repo, f)] += 1
        self.breaks[signature(c, v)] = instance_id


Rule = Callable[[Candidate, Verdict, Ledger], "dict | None"]


def functions(c: Candidate) -> list[str]:
    """The functions a candidate changes (a combined task's: each of its bugs')."""
    return [e for e in c.entity.split(";") if e]


def signature(c: Candidate, v: Verdict) -> tuple:
    """What a broken suite looks like: the tests that fail and the error a statement quotes."""
    return c.repo, tuple(v.fail_to_pass), first_error(v.failure_output, v.fail_to_pass)


def duplicate_patch(c: Candidate, v: Verdict, led: Ledger) -> dict | None:
    """The same change as an earlier candidate: its row gets an id of its own (the change's
    id is the first proposer's)."""
    if c.candidate_id not in led.seen:
        return None
    dup = change_id(c.repo, {f"#duplicate:{c.strategy}:{c.entity}:{c.seed}": c.candidate_id})
    return {"candidate_id": dup, "status": "dropped", "reason": "duplicate_patch", "stage": "generated",
            "sandbox_s": 0.0, "fail_to_pass": 0, "pass_to_pass": 0}


def not_validated(c: Candidate, v: Verdict, led: Ledger) -> dict | None:
    """Validation dropped it (its verdict says why)."""
    return None if v.kept else {"reason": v.reason}


def entity_quota(c: Candidate, v: Verdict, led: Ledger) -> dict | None:
    """A function it changes has given ``synth.max_tasks_per_entity`` tasks already."""
    full = any(led.per_entity[(c.repo, f)] >= led.cfg.synth.max_tasks_per_entity for f in functions(c))
    return {"status": "dropped", "reason": "entity_quota"} if full else None


def duplicate_break(c: Candidate, v: Verdict, led: Ledger) -> dict | None:
    """It breaks the same tests with the same first error as a kept task."""
    first = led.breaks.get(signature(c, v))
    return None if first is None else {"status": "dropped", "reason": "duplicate_break", "duplicate_of": first}


def near_duplicate_patch(c: Candidate, v: Verdict, led: Ledger) -> dict | None:
    """A family that asks for it (``evolve``): its changed lines nearly repeat a kept task's
    (Jaccard at least ``synth.near_dup_jaccard``)."""
    if not get_family(c.family).near_duplicates:
        return None
    lines = changed_lines(c, led.texts[c.repo])
    near = any(jaccard(lines, k) >= led.cfg.synth.near_dup_jaccard for k in led.kept_lines.get(c.repo, []))
    return {"status": "dropped", "reason": "near_duplicate_patch"} if near else None


DROP_RULES: tuple[Rule, ...] = (duplicate_patch, not_validated, entity_quota, duplicate_break, near_duplicate_patch)


def first_drop(c: Candidate, v: Verdict, led: Ledger) -> dict | None:
    """The overrides of the first rule that drops ``c``; None when every rule lets it through."""
    for rule in DROP_RULES:
        drop = rule(c, v, led)
        if drop is not None:
            return drop
    return None


def unique_statements(emitted: list[Emitted], fate: list[tuple[Candidate, dict]]) -> list[Emitted]:
    """The tasks whose statement no earlier task has; the others' rows say whose it is
    (``duplicate_statement``)."""
    first: dict[str, str] = {}
    dropped: dict[str, str] = {}
    out = []
    for e in emitted:
        text = " ".join(e.record.problem_statement.split())
        if text in first:
            dropped[e.record.instance_id] = first[text]
            continue
        first[text] = e.record.instance_id
        out.append(e)
    for _, upd in fate:
        if upd.get("instance_id") in dropped:
            upd.update({"status": "dropped", "reason": "duplicate_statement", "stage": "valid",
                        "duplicate_of": dropped[upd.pop("instance_id")]})
    return out


def changed_lines(c: Candidate, texts: Mapping[str, str]) -> set[str]:
    """The lines a candidate removes or adds (stripped), for near-duplicate checks."""
    out: set[str] = set()
    for path, new in c.changes.items():
        old = texts.get(path, "").splitlines()
        now = (new or "").splitlines()
        out |= {f"-{x.strip()}" for x in set(old) - set(now)} | {f"+{x.strip()}" for x in set(now) - set(old)}
    return out


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0
