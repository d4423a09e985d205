"""Feature tasks of the Java and Rust sample repos (the checks: test_feature_build.py; the
other compiled languages: test_feature_build_compiled.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.synth.test_feature_build import JVM_RUST, check_feature_task

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("repo", JVM_RUST)
def test_feature_task_of_a_compiled_sample_repo(repo: str, tmp_path: Path, synth_cache: Path) -> None:
    check_feature_task(repo, tmp_path, synth_cache)
