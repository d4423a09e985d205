"""Fixtures of the agent tests: the tasks (one per language, built once per module), a
scorer factory against a scripted stand-in policy on 127.0.0.1."""

from __future__ import annotations

import os

import pytest

from tests.isolation import private_cache_root  # noqa: F401 (autouse)

os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")


@pytest.fixture(scope="module")
def lang_tasks(tmp_path_factory):
    """``get(language) -> (task, base, folder)``: each language's task, made on first use and shared
    by the module's tests (a skip is remembered too)."""
    pytest.importorskip("minisweagent")
    from tests.agent.tasks import make_task

    made: dict[str, object] = {}
    root = tmp_path_factory.mktemp("agent-tasks")

    def get(language: str):
        if language not in made:
            folder = root / language
            folder.mkdir()
            try:
                made[language] = (make_task(folder, language), folder / "out", folder)
            except pytest.skip.Exception as exc:
                made[language] = exc
        if isinstance(made[language], BaseException):
            pytest.skip(str(made[language]))
        return made[language]

    return get
