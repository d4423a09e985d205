"""The one build template (``datagen.builds.base``): every build takes its flags under the
same rule, so ``--workers 0`` is refused by each command alike, before any work."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from datagen.builds.base import recipe_with_flags
from datagen.config.tasks import TasksRecipe
from datagen.errors import UserError

REFUSED = "error: command line: bad value for 'workers': Input should be greater than or equal to 1"


@pytest.mark.parametrize("command", ["cpt-corpus", "tasks", "rl-pool", "all"])
def test_workers_0_is_refused_by_every_build_in_one_line_before_any_work(tmp_path, command):
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "datagen.cli.app", "build", command, "-w", "0", "-o", str(out)],
                          capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "DATAGEN_NO_PROGRESS": "1"})
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [REFUSED]
    assert not out.exists()  # refused before the build touched its folder


def test_a_flag_given_replaces_the_recipe_and_one_not_given_leaves_it():
    recipe, _ = recipe_with_flags(TasksRecipe, None, "tasks", ["workers=3"], {})
    assert recipe.workers == 3
    given, _ = recipe_with_flags(TasksRecipe, None, "tasks", ["workers=3"],
                                 {"workers": 2, "inputs": [], "output": None})
    assert given.workers == 2 and given.inputs == recipe.inputs and given.output == recipe.output
    with pytest.raises(UserError, match="workers"):
        recipe_with_flags(TasksRecipe, None, "tasks", ["workers=3"], {"workers": 0})
