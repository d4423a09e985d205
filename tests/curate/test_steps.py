"""The file steps as the build wires them: one list, declared fields, typed drop reasons."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from datatrove.data import Document

from datagen.builds.cpt_corpus.build import file_steps
from datagen.config.cpt import CptCorpusRecipe
from datagen.crawl.writer import RowsParquetWriter, UnknownField, crawl_schema
from datagen.curate.file_steps import FILE_STEPS
from datagen.records import DROP_REASONS, FileRow

ROOT = Path(__file__).parents[2]


def test_every_step_writes_only_file_row_fields_and_has_a_recipe_section():
    recipe = CptCorpusRecipe()
    for step in FILE_STEPS:
        assert set(step.writes) <= set(FileRow.columns()), step.__name__
        assert hasattr(getattr(recipe, step.section), "enabled"), step.section
    on = [step for step in FILE_STEPS if getattr(recipe, step.section).enabled]
    assert [type(s) for s in file_steps(recipe, [])] == on  # what the default recipe enables
    assert on == [s for s in FILE_STEPS if s.section not in ("perplexity", "quality_model")]  # not the model-based


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


WRITER_ROWS = [
    {"file_id": "a", "repo": "r", "path": "a.py", "bytes": 5, "decision": "kept", "source": "s",
     "avg_line_length": 2, "alnum_fraction": 0.5, "secrets_redacted": 0, "imports": '["os"]'},
    {"file_id": "b", "repo": "r", "path": "b/\\xe9.py", "path_raw": "622fe92e7079", "bytes": 0,
     "decision": "dropped", "reason": "empty", "source": "s", "avg_line_length": 1.25},
]


def test_writer_rows_are_the_documents_typed_as_the_crawl_schema(tmp_path):
    docs = [Document(text=t, id=m["file_id"], metadata=dict(m)) for t, m in zip(["héllo 😀\n", ""], WRITER_ROWS)]
    writer = RowsParquetWriter(str(tmp_path), batch_rows=1)  # one batch per row, then the rest
    list(writer.run(iter(docs)))
    written = pq.read_table(tmp_path / "00000.parquet")
    schema = crawl_schema()
    names = [f.name for f in schema if f.name != "text"]
    expected = [{k: m.get(k) for k in names} | {"text": d.text} for m, d in zip(WRITER_ROWS, docs)]
    assert written.equals(pa.Table.from_pylist(expected, schema=schema))
    bad = Document(text="x", id="c", metadata={**WRITER_ROWS[0], "file_id": None})
    with pytest.raises(ValueError, match="file_id"):  # not-null columns stay not null
        list(RowsParquetWriter(str(tmp_path / "bad")).run(iter([bad])))


def test_writer_leaves_pandas_unimported():
    """pyarrow's Table.from_pylist would import pandas in every crawl worker (0.2 s CPU)."""
    code = ("import sys, tempfile; from datatrove.data import Document; "
            "from datagen.crawl.writer import RowsParquetWriter; "
            "meta = {'file_id': 'a', 'repo': 'r', 'path': 'a.py', 'bytes': 1, 'decision': 'kept', 'source': 's'}; "
            "list(RowsParquetWriter(tempfile.mkdtemp()).run(iter([Document(text='x', id='a', metadata=meta)]))); "
            "print('pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "False"


def test_every_drop_reason_is_in_the_curation_docs_table():
    """docs/curation.md's table of drop reasons lists every DropReason, and nothing else."""
    text = (ROOT / "docs" / "curation.md").read_text()
    section = text.split("## Drop reasons\n", 1)[1].split("\n## ", 1)[0]
    table = set(re.findall(r"^\| `(\w+)` \|", section, flags=re.MULTILINE))
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
