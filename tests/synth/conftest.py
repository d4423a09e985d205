"""Session fixtures of the tasks-build tests: one cache (environments, teacher answers), the
tiny ``minilib`` git repo, and one uninterrupted build of it that several tests read."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from datagen.cli.app import app
from tests.synth.buildkit import build_args, make_minilib


@dataclass
class Built:
    out: Path
    stdout: str


@pytest.fixture(scope="session")
def synth_cache(tmp_path_factory) -> Path:
    """Shared by every build of the session: the repo environment is built once."""
    return tmp_path_factory.mktemp("datagen-cache")


@pytest.fixture(scope="session")
def minilib(tmp_path_factory) -> Path:
    return make_minilib(tmp_path_factory.mktemp("inputs") / "minilib")


def cli_build(inputs: list[Path], out: Path, cache: Path, *sets: str) -> Built:
    """``datagen build tasks`` through the typer app, as a user runs it."""
    result = CliRunner().invoke(app, build_args(inputs, out, cache, *sets), env={"DATAGEN_CACHE": str(cache)},
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return Built(out, result.output)


@pytest.fixture(scope="session")
def built(minilib, synth_cache, tmp_path_factory) -> Built:
    """The reference build of ``minilib`` (procedural + history + combine, no teacher)."""
    return cli_build([minilib], tmp_path_factory.mktemp("build") / "out", synth_cache)
