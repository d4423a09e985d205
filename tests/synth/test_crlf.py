"""A repo with Windows line endings: a task's fix patch touches only the mutated line."""

from __future__ import annotations

import random
from pathlib import Path

from datagen.builds.tasks.stages import _texts
from datagen.synth.emit import patch_size
from datagen.synth.entities import extract_entities
from datagen.synth.gitrepo import TaskRepo
from datagen.synth.strategies.registry import get_strategy


def test_crlf_files_keep_their_line_endings_and_the_patch_stays_minimal(tmp_path: Path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "m.py").write_bytes(b"def f(a, b):\r\n    x = 1\r\n    y = 2\r\n    return a + b + x + y\r\n")
    texts = _texts(src, ["m.py"])
    assert texts["m.py"].count("\r\n") == 4
    [entity] = extract_entities("m.py", texts["m.py"], "python")
    buggy = get_strategy("py_op_change_v1").transform(texts["m.py"], entity, random.Random(0))
    assert buggy is not None and buggy.count("\r\n") == 4
    repo = TaskRepo(tmp_path / "out.git")
    clean = repo.commit_folder(src, "clean")
    base = repo.commit_changes(clean, {"m.py": buggy}, "task")
    assert patch_size(repo.diff(base, clean)) == (1, 2)  # one line removed, one added
