"""The teacher strategies of ``datagen build tasks`` against a scripted local
OpenAI-compatible server (rewrites, variants, statements; good and malformed answers),
and once with the ``transformers`` back end on the tiny model the teacher tests train."""

from __future__ import annotations

import json
import re

import pytest

from tests.synth.buildkit import read_tasks, sql
from tests.synth.conftest import cli_build
from tests.teachers.conftest import tiny_model  # noqa: F401  (the session fixture)
from tests.teachers.fake_server import FakeOpenAI, first_user_text

pytestmark = pytest.mark.slow

GOOD_REWRITE = '''Here it is:
```python
def mean(values):
    if not values:
        raise ValueError("mean of nothing")
    return sum(values) / (len(values) + 1)
```'''
BROKEN_REWRITE = "```python\ndef area(width, height)\n    return width *\n```"
GOOD_VARIANT = {"edits": [{"path": "minilib/shapes.py", "qualname": "perimeter",
                           "code": "def perimeter(width, height):\n    total = width + height\n"
                                   "    return 2 * total - 1\n"}]}
UNKNOWN_VARIANT = {"edits": [{"path": "minilib/shapes.py", "qualname": "no_such_function", "code": "def x():\n"
                              "    pass\n"}]}
# Quotes whichever of the perimeter lines the fix adds back.
LEAKING = "The perimeter is wrong. The code should do `total = width + height` and `return 2 * total`."
ISSUE = "Title: wrong results from minilib\n\nI called a helper and got a wrong value; I expected the documented one."


def answer(body: dict) -> str:
    """The scripted teacher: a reply chosen by what the prompt asks about."""
    prompt = first_user_text(body)
    if "Rewrite it so that it contains one subtle bug" in prompt:
        name = re.search(r"^def (\w+)\(", prompt, re.M).group(1)
        return {"mean": GOOD_REWRITE, "area": BROKEN_REWRITE}.get(name, "Sorry, I would rather not.")
    if "harder debugging exercises" in prompt:
        if "`minilib/shapes.py` — `perimeter`" in prompt:
            return json.dumps(GOOD_VARIANT)
        if "`minilib/shapes.py` — `area`" in prompt:
            return json.dumps(UNKNOWN_VARIANT)
        return "no JSON here, sorry"
    if "test_perimeter" in prompt:
        return LEAKING
    return ISSUE


TEACHER_SETS = ("synth.families=[procedural,lm_rewrite,evolve]", "synth.strategies=[py_op_change_v1]",
                "teacher.model=tiny-teacher", "teacher.api_key_env=DATAGEN_TEST_KEY", "teacher.max_retries=1",
                "teacher.backoff_base_s=0.01", "teacher.max_reasks=1")


@pytest.fixture(scope="module")
def teacher_build(minilib, synth_cache, tmp_path_factory):
    with FakeOpenAI(answer=answer) as server:
        out = tmp_path_factory.mktemp("teacher") / "out"
        built = cli_build([minilib], out, synth_cache, *TEACHER_SETS, f"teacher.base_url={server.base_url}")
        return built, server.total_calls


def _candidates(out, family: str) -> list[tuple]:
    return sql(out, f"SELECT entity, status, reason, stage, teacher_tokens, parent_ids FROM candidates "
               f"WHERE family = '{family}' ORDER BY entity, reason")


def test_lm_rewrite_answers(teacher_build):
    built, _ = teacher_build
    rows = {r[0]: r for r in _candidates(built.out, "lm_rewrite")}
    assert rows["minilib/core.py::mean"][1:4] == ("kept", None, "kept")
    assert rows["minilib/shapes.py::area"][1:3] == ("dropped", "teacher_code_invalid")
    assert rows["minilib/core.py::count_words"][1:3] == ("dropped", "teacher_code_invalid")  # prose: no code
    assert all(r[4] > 0 for r in rows.values())  # every answer's tokens are counted
    (task,) = [t for t in read_tasks(built.out) if t["strategy"] == "lm_rewrite_v1"]
    assert task["FAIL_TO_PASS"] == ["tests/test_core.py::test_mean"]
    assert "+    return sum(values) / len(values)" in task["patch"]


def test_evolve_answers(teacher_build):
    built, _ = teacher_build
    rows = _candidates(built.out, "evolve")
    reasons = {r[2] for r in rows if r[1] == "dropped"}
    assert {"teacher_unknown_entity", "teacher_invalid"} <= reasons, reasons  # invalid: no JSON after re-asks
    good = [r for r in rows if r[1] == "kept"]
    assert good and all(r[5] for r in good)  # a variant names its parent task
    tasks = {t["instance_id"]: t for t in read_tasks(built.out)}
    variant = next(t for t in tasks.values() if t["strategy"] == "evolve_v1")
    assert "-    return 2 * total - 1" in variant["patch"] and variant["parent_ids"][0] in tasks


def test_statements_kept_or_replaced(teacher_build):
    built, _ = teacher_build
    notes = dict(sql(built.out, "SELECT instance_id, statement_note FROM tasks"))
    for t in read_tasks(built.out):
        if "tests/test_shapes.py::test_perimeter" in t["FAIL_TO_PASS"]:
            assert t["statement_style"] == "template" and notes[t["instance_id"]] == "quotes_fix_line"
            assert "total = width + height" not in t["problem_statement"]
        else:
            assert t["statement_style"] in ("issue", "terse") and t["problem_statement"] == ISSUE + "\n"
            assert notes[t["instance_id"]] == ""


def test_teacher_accounting(teacher_build):
    built, calls = teacher_build
    (tokens,) = sql(built.out, "SELECT sum(teacher_tokens) FROM candidates WHERE status = 'kept'")[0]
    assert tokens > 0
    rows = sql(built.out, "SELECT custom_id, status, prompt_tokens + completion_tokens, attempts "
               "FROM teacher_calls")
    assert len(rows) >= 6 and sum(r[3] for r in rows) == calls  # every server call is accounted for
    assert {r[1] for r in rows} >= {"ok"} and all(r[2] > 0 for r in rows if r[1] == "ok")


def test_transformers_backend_end_to_end(minilib, synth_cache, tmp_path, tiny_model):  # noqa: F811
    """Plumbing only: the build finishes with a local model, and every task has a statement."""
    built = cli_build([minilib], tmp_path / "out", synth_cache, "synth.families=[procedural]",
                      "synth.strategies=[py_op_change_v1]", "teacher.backend=transformers",
                      f"teacher.model={tiny_model}", "teacher.sampling.max_tokens=16",
                      "teacher.transformers.device=cpu")
    tasks = read_tasks(built.out)
    assert tasks and all(t["problem_statement"].strip() for t in tasks)
    assert sql(built.out, "SELECT count(*) FROM teacher_calls")[0][0] >= len(tasks)


def test_rebuild_takes_teacher_answers_from_the_cache(teacher_build, minilib, synth_cache, tmp_path):
    """Same recipe, another folder: the same tasks; every answer comes from the cache."""
    built, _ = teacher_build
    with FakeOpenAI(answer=answer) as server:
        again = cli_build([minilib], tmp_path / "out", synth_cache, *TEACHER_SETS,
                          f"teacher.base_url={server.base_url}")
        asked = [first_user_text(b)[:300] for b in server.bodies]
    # answers that stayed invalid (no JSON after the re-ask) are cached too: nothing is asked again
    assert not asked, asked
    assert (again.out / "tasks.jsonl").read_bytes() == (built.out / "tasks.jsonl").read_bytes()
    rows = sql(again.out, "SELECT status, bool_and(cached) FROM teacher_calls GROUP BY status ORDER BY status")
    assert rows == [("invalid", True), ("ok", True)]


REQUEST = ("Please implement the number helpers in minilib/core.py: clamp should keep a value within its "
           "bounds, mean should average a list and refuse an empty one, and count_words should count words "
           "case-insensitively, as the tests in tests/test_core.py check.")


def feature_answer(body: dict) -> str:
    """Feature requests: a good one for the core helpers, one quoting a removed line for shapes."""
    prompt = first_user_text(body)
    assert "implement a feature" in prompt, prompt[:300]
    return REQUEST if "tests/test_core.py" in prompt else LEAKING


def test_feature_tasks_get_a_request_or_the_feature_template(minilib, synth_cache, tmp_path):
    with FakeOpenAI(answer=feature_answer) as server:
        built = cli_build([minilib], tmp_path / "out", synth_cache, "synth.families=[feature]",
                          "synth.feature_lines=[4,400]", "synth.feature_entities=[1,40]",
                          *TEACHER_SETS[2:], f"teacher.base_url={server.base_url}")
        prompts = [first_user_text(b) for b in server.bodies]
    tasks = {("core" if "minilib/core.py" in t["patch"] else "shapes"): t for t in read_tasks(built.out)}
    assert set(tasks) == {"core", "shapes"}, tasks.keys()
    notes = dict(sql(built.out, "SELECT instance_id, statement_note FROM tasks"))
    core, shapes = tasks["core"], tasks["shapes"]
    assert core["statement_style"] == "request" and core["problem_statement"] == REQUEST + "\n"
    assert shapes["statement_style"] == "template" and notes[shapes["instance_id"]] == "quotes_fix_line"
    assert "def perimeter(width, height)" in shapes["problem_statement"]
    assert "total = width + height" not in shapes["problem_statement"]
    # the prompt shows the interface and the tests, never a removed line
    core_prompt = next(p for p in prompts if "tests/test_core.py" in p)
    assert "def clamp(value, low, high)" in core_prompt and "return sum(values)" not in core_prompt
