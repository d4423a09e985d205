"""Feature tasks of the compiled languages' sample repos (the checks: test_feature_build.py):
C, C++ and Go here, Java and Rust in test_feature_build_jvm_rust.py (each of the two longest
builds, geom-cpp's and fraction-java's, on its own xdist worker)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.synth.test_feature_build import COMPILED, check_feature_task

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("repo", COMPILED)
def test_feature_task_of_a_compiled_sample_repo(repo: str, tmp_path: Path, synth_cache: Path) -> None:
    check_feature_task(repo, tmp_path, synth_cache)
