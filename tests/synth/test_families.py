"""The family registry (``synth/families``) and the emit stage's drop rules (``builds/tasks/drops``).

A family written in a module of its own (``tests/synth/toy_family.py``) is registered on
import, takes its share of the budget and is proposed with the built-in ones; the drop
rules are asked in order and the first that drops names the reason.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from datagen.builds.tasks.drops import DROP_RULES, Ledger, first_drop
from datagen.builds.tasks.stages import RepoState, emit_order, propose_all
from datagen.config.tasks import TasksRecipe
from datagen.crawl.sources import Repo
from datagen.errors import UserError
from datagen.records.tasks import RepoBaselineRow
from datagen.synth.baseline import Baseline
from datagen.synth.candidates import Candidate
from datagen.synth.check import Verdict
from datagen.synth.families.registry import (
    Family,
    check_families,
    families,
    get_family,
    register,
    singles_budget,
    strategy_families,
)

CODE = '''def area(width, height):
    total = width * height
    return total


def perimeter(width, height):
    total = width + height
    return 2 * total


def is_square(width, height):
    same = width == height
    return same and width > 0
'''


def _recipe(families: list[str], cap: int, **synth: object) -> TasksRecipe:
    return TasksRecipe.model_validate({"synth": {"families": families, "max_candidates_per_repo": cap, **synth}})


def _state(tmp_path: Path) -> RepoState:
    repo = Repo("shapes", str(tmp_path), str(tmp_path), "dir")
    return RepoState(repo, RepoBaselineRow(run_id="r", repo="shapes", runner="pytest", status="ok"),
                     texts={"shapes.py": CODE}, sources=[("shapes.py", "python")],
                     baseline=Baseline("pytest", stable=["test_shapes.py::test_area"]))


def test_the_built_in_families_in_their_proposing_order() -> None:
    names = [f.name for f in families()]
    assert names[:8] == ["history", "procedural", "removal", "feature_removal", "feature", "lm_rewrite",
                         "combine", "evolve"]
    assert strategy_families() == {"procedural", "removal", "feature_removal"}
    assert get_family("combine").emits_first and get_family("evolve").near_duplicates
    assert get_family("feature").interface is not None and get_family("procedural").interface is None


def test_an_unknown_family_is_refused_with_the_valid_names() -> None:
    with pytest.raises(UserError, match="unknown family 'mutant'.*procedural"):
        check_families(["procedural", "mutant"])
    with pytest.raises(ValueError, match="registered twice"):
        register(Family("combine", "another combine", propose=lambda p, names: []))


def test_a_family_from_its_own_module_takes_its_share_and_is_proposed(tmp_path: Path) -> None:
    from tests.synth import toy_family

    assert get_family("toy") is toy_family.TOY
    # a fifth of 10 is the toy's: the single bugs keep 8
    assert singles_budget(_recipe(["procedural"], 10)) == 10
    assert singles_budget(_recipe(["procedural", "toy"], 10)) == 8
    out = propose_all(_recipe(["procedural", "toy"], 10), [_state(tmp_path)], None, Console(quiet=True))
    families_made = [c.family for c in out]
    # the strategies fill the singles budget first, the toy family its own share after them
    assert families_made.count("toy") == 2 and families_made.index("toy") == families_made.count("procedural")
    assert 0 < families_made.count("procedural") <= 8
    toy = [c for c in out if c.family == "toy"]
    assert all("# " in c.changes["shapes.py"] for c in toy)
    assert sorted(toy, key=emit_order) == sorted(toy, key=lambda c: (c.strategy, c.entity, c.candidate_id))
    # off in the recipe: not proposed
    assert all(c.family != "toy" for c in propose_all(_recipe(["procedural"], 10), [_state(tmp_path)], None,
                                                       Console(quiet=True)))


def _candidate(entity: str, text: str, family: str = "procedural") -> Candidate:
    return Candidate("shapes", "x_v1", family, f"shapes.py::{entity}", 0, {"shapes.py": text})


KEPT = Verdict(True, None, "valid", fail_to_pass=["test_area"], failure_output="AssertionError: 6 != 5")


@pytest.mark.parametrize(("case", "reason"), [
    ("same_change", "duplicate_patch"),
    ("failed", "broke_nothing"),
    ("quota", "entity_quota"),
    ("same_break", "duplicate_break"),
    ("near_variant", "near_duplicate_patch"),
    ("near_single", None),
    ("fresh", None),
])
def test_the_first_drop_rule_that_refuses_names_the_reason(case: str, reason: str | None) -> None:
    """A ledger holding one kept task (``area`` changed, test_area broken); each case is a
    later candidate and the reason the first refusing rule gives (None: emitted)."""
    led = Ledger(_recipe(["procedural", "evolve"], 10, max_tasks_per_entity=1), {"shapes": {"shapes.py": CODE}})
    first = _candidate("area", CODE.replace("width * height", "width + height"))
    led.seen.add(first.candidate_id)
    led.keep(first, KEPT, "shapes.x_v1.1")
    other = Verdict(True, None, "valid", fail_to_pass=["test_perimeter"], failure_output="boom")
    near = first.changes["shapes.py"] + "\n"  # the same changed lines, another change
    c, v = {
        "same_change": (first, KEPT),
        "failed": (_candidate("perimeter", CODE.replace("2 * total", "3 * total")),
                   Verdict(False, "broke_nothing", "applied")),
        "quota": (_candidate("area", near), other),
        "same_break": (_candidate("perimeter", CODE.replace("2 * total", "3 * total")), KEPT),
        "near_variant": (_candidate("is_square", near, "evolve"), other),
        "near_single": (_candidate("is_square", near), other),
        "fresh": (_candidate("perimeter", CODE.replace("2 * total", "3 * total")), other),
    }[case]
    drop = first_drop(c, v, led)
    assert (drop or {}).get("reason") == reason
    if reason == "duplicate_break":
        assert drop["duplicate_of"] == "shapes.x_v1.1"
    assert [r.__name__ for r in DROP_RULES] == ["duplicate_patch", "not_validated", "entity_quota",
                                                "duplicate_break", "near_duplicate_patch"]


def test_a_family_says_on_the_repo_row_why_it_proposed_nothing(tmp_path: Path) -> None:
    state = _state(tmp_path)  # no test file: no group reaches a function
    assert propose_all(_recipe(["feature"], 10), [state], None, Console(quiet=True)) == []
    assert state.row.feature_detail.startswith("no test group reaches a function")
