"""The file steps as the build wires them: one list, declared fields, typed drop reasons."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from datatrove.data import Document

from datagen.builds.cpt_corpus import file_steps
from datagen.builds.file_steps import FILE_STEPS
from datagen.builds.steps import RowsParquetWriter, UnknownField
from datagen.config.cpt import CptCorpusRecipe
from datagen.records import DROP_REASONS, FileRow

ROOT = Path(__file__).parents[2]


def test_every_step_writes_only_file_row_fields_and_has_a_recipe_section():
    recipe = CptCorpusRecipe()
    for step in FILE_STEPS:
        assert set(step.writes) <= set(FileRow.columns()), step.__name__
        assert hasattr(getattr(recipe, step.section), "enabled"), step.section
    on = [step for step in FILE_STEPS if getattr(recipe, step.section).enabled]
    assert [type(s) for s in file_steps(recipe, [])] == on  # what the default recipe enables
    assert on == [s for s in FILE_STEPS if s.section != "perplexity"]  # all but the model-based one


def test_disabled_sections_are_left_out():
    recipe = CptCorpusRecipe().model_copy(update={"quality": CptCorpusRecipe().quality.model_copy(
        update={"enabled": False})})
    assert "QualityStep" not in [type(s).__name__ for s in file_steps(recipe, [])]


def test_writing_an_unknown_field_is_an_error_not_a_drop(tmp_path):
    meta = {"file_id": "f", "repo": "r", "path": "a.py", "bytes": 1, "decision": "kept",
            "source": "s", "novel_score": 0.5}
    writer = RowsParquetWriter(str(tmp_path))
    with pytest.raises(UnknownField, match="novel_score"):
        list(writer.run(iter([Document(text="x", id="f", metadata=meta)])))


def test_every_drop_reason_is_in_the_readme_table():
    readme = (ROOT / "README.md").read_text()
    table = set(re.findall(r"^\| `(\w+)` \|", readme, flags=re.MULTILINE))
    assert table == set(DROP_REASONS)


def test_steps_and_crawl_use_only_typed_reasons():
    """Every reason literal the crawl, the steps and the dedup SQL write is a DropReason."""
    literal = re.compile("|".join([r'drop\(doc, "(\w+)"', r'skip ?= ?"(\w+)"', r"reason = '(\w+)'",
                                    r'\["reason"\] = "(\w+)"', r'error = "(\w+)"']))
    found = set()
    for folder in ("crawl", "curate"):
        for path in (ROOT / "datagen" / folder).glob("*.py"):
            found |= {g for m in literal.findall(path.read_text()) for g in m if g}
    assert {"exact_duplicate", "near_duplicate", "syntax_errors", "eval_repo", "symlink", "too_large"} <= found
    assert found <= set(DROP_REASONS), sorted(found - set(DROP_REASONS))
