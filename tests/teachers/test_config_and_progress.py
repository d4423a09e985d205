"""The teacher recipe block, the Teacher protocol and the progress counters."""

from __future__ import annotations

import pytest

from datagen.config.teacher import load_teacher_block
from datagen.errors import UserError
from datagen.teachers import Teacher, TeacherRequest, TeacherResult, Usage, make_teacher
from datagen.teachers.progress import TeacherProgress


def test_bundled_recipe_and_overrides():
    cfg, path = load_teacher_block(None, ["teacher.max_concurrency=8", "teacher.vllm.dtype=bfloat16"])
    assert path.name == "teacher.yaml"
    assert cfg.backend == "openai" and cfg.max_concurrency == 8 and cfg.vllm.dtype == "bfloat16"
    assert cfg.cache_model_id == cfg.model


def test_default_cache_dir_is_absolute_and_shared_with_the_sandbox(tmp_path, monkeypatch):
    from datagen.resources import env_cache_dir as default_cache_dir

    monkeypatch.setenv("DATAGEN_CACHE", str(tmp_path / "dc"))
    cfg, _ = load_teacher_block(None)
    assert cfg.cache_dir == str(tmp_path / "dc" / "teacher")
    assert default_cache_dir() == tmp_path / "dc" / "envs"
    monkeypatch.delenv("DATAGEN_CACHE")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    cfg, _ = load_teacher_block(None)
    assert cfg.cache_dir == str(tmp_path / "home" / ".cache" / "datagen" / "teacher")
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "datagen" / "envs"
    # a relative path in a recipe stays relative (to where the build runs), null turns it off
    assert load_teacher_block(None, ["teacher.cache_dir=rel/c"])[0].cache_dir == "rel/c"
    assert load_teacher_block(None, ["teacher.cache_dir=null"])[0].cache_dir is None


def test_teacher_block_inside_a_build_recipe(tmp_path):
    recipe = tmp_path / "build.yaml"
    recipe.write_text("output: out\nsteps: [a, b]\nteacher:\n  backend: transformers\n  model: ./m\n"
                      "  model_id: org/m\n")
    cfg, _ = load_teacher_block(recipe)
    assert (cfg.backend, cfg.model, cfg.cache_model_id) == ("transformers", "./m", "org/m")


@pytest.mark.parametrize("sets, message", [
    (["teacher.max_concurency=8"], "unknown key 'teacher.max_concurency'"),
    (["teacher.backend=tgi"], "bad value for 'teacher.backend'"),
    (["teacher.model="], "no teacher model"),
])
def test_bad_recipe_values_are_user_errors(sets, message):
    with pytest.raises(UserError, match=message):
        load_teacher_block(None, sets)


def test_backends_follow_the_protocol():
    for backend in ("openai", "vllm", "transformers"):
        cfg, _ = load_teacher_block(None, [f"teacher.backend={backend}"])
        teacher = make_teacher(cfg)
        assert isinstance(teacher, Teacher) and teacher.backend == backend


def test_request_validation():
    with pytest.raises(ValueError, match="exactly one of"):
        TeacherRequest(prompt="x", messages=[{"role": "user", "content": "y"}])
    with pytest.raises(ValueError, match="raw 'prompt'"):
        TeacherRequest(messages=[{"role": "user", "content": "y"}], sampling={"logprobs": 1})
    with pytest.raises(ValueError):
        TeacherRequest(messages=[{"role": "robot", "content": "y"}])


def test_progress_counts_tokens_errors_and_cache_hits():
    def result(status, tokens, cached=False):
        return TeacherResult(key="k", status=status, cached=cached,
                             usage=Usage(prompt_tokens=1, completion_tokens=tokens))

    with TeacherProgress(4, enabled=True) as bar:
        for r in (result("ok", 10), result("error", 0), result("ok", 7, cached=True),
                  result("truncated", 5)):
            bar.update(r)
    assert (bar.tokens, bar.errors, bar.cached) == (15, 1, 1)
