"""``test_runs.py``'s scripted runs for the other half of the languages (a file of its own,
so that CI's workers, one test file each, run the two halves at once)."""

from __future__ import annotations

import pytest

from tests.agent.tasks import CASES
from tests.agent.test_runs import HERE, check_scripted_runs

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("language", sorted(set(CASES) - set(HERE)))
def test_scripted_runs_in_every_language(language, lang_tasks, tmp_path):
    check_scripted_runs(language, lang_tasks, tmp_path)
