"""The run lifecycle every build shares (``datagen.runtime.run.BuildRun``), on a real manifest."""

from __future__ import annotations

import duckdb
import pytest

from datagen.config.cpt import CptCorpusRecipe
from datagen.runtime.run import BuildRun, content_run_id


def runs(out) -> list[tuple]:
    con = duckdb.connect(str(out / "manifest.duckdb"), read_only=True)
    try:
        return con.execute("SELECT run_id, command, status, finished_at IS NOT NULL FROM runs").fetchall()
    finally:
        con.close()


def test_run_id_names_content_not_where_or_how_fast():
    a = CptCorpusRecipe()
    assert content_run_id(a, "fp") == content_run_id(a.model_copy(update={"workers": 4, "output": "x"}), "fp")
    assert content_run_id(a, "fp") == content_run_id(a.model_copy(update={"memory_mb": 4096}), "fp")
    assert content_run_id(a, "fp") != content_run_id(a, "other inputs")
    assert content_run_id(a, "fp") != content_run_id(a.model_copy(update={"name": "b"}), "fp")
    assert len(content_run_id(a, "fp")) == 16


def test_finished_run_removes_its_work_and_is_already_built(tmp_path):
    run = BuildRun(tmp_path, "build x", CptCorpusRecipe(), "fp")
    assert not run.already_built()
    with run:
        assert run.work.is_dir() and run.work == tmp_path / ".work" / run.run_id
        assert runs(tmp_path) == [(run.run_id, "build x", "running", False)]
    assert runs(tmp_path) == [(run.run_id, "build x", "finished", True)]
    assert not (tmp_path / ".work").exists()
    again = BuildRun(tmp_path, "build x", CptCorpusRecipe(), "fp")
    assert again.already_built()
    assert not again.already_built(lambda con: False)  # the build's own check has a say
    assert not BuildRun(tmp_path, "build x", CptCorpusRecipe(), "fp", force=True).already_built()


def test_failed_run_keeps_its_work_for_the_resume(tmp_path):
    run = BuildRun(tmp_path, "build x", CptCorpusRecipe(), "fp")
    with pytest.raises(KeyboardInterrupt), run:
        (run.work / "half").write_text("x")
        raise KeyboardInterrupt
    assert runs(tmp_path) == [(run.run_id, "build x", "failed", True)]
    assert (run.work / "half").exists()
    assert not BuildRun(tmp_path, "build x", CptCorpusRecipe(), "fp").already_built()


def test_command_runs_get_a_row_and_no_work_folder(tmp_path):
    seen = []
    run = BuildRun.command_run(tmp_path, "sandbox run", CptCorpusRecipe())
    run.on_record = lambda m: seen.append(run.status)
    with run:
        pass
    assert run.run_id.startswith("sandbox-run-")
    assert runs(tmp_path) == [(run.run_id, "sandbox run", "finished", True)]
    assert seen == ["running", "finished"] and not (tmp_path / ".work").exists()
    with BuildRun.command_run(None, "validate", CptCorpusRecipe()) as nowhere:
        assert nowhere.status == "running"
    assert nowhere.status == "finished"
