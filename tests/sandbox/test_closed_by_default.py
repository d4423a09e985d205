"""Untrusted code is refused, not run unisolated, where bubblewrap does not work; and the
sandbox commands appear in the manifest's ``runs``."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from datagen.cli.app import app
from datagen.errors import UserError
from datagen.manifest import query
from datagen.sandbox.isolation.select import bwrap_works, untrusted_sandbox

runner = CliRunner()


@pytest.fixture
def no_bwrap(tmp_path, monkeypatch):
    """A host without bubblewrap: an empty PATH folder with only what the probes need."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))
    bwrap_works.cache_clear()
    yield
    bwrap_works.cache_clear()


def test_auto_without_bwrap_refuses_with_both_ways_out(no_bwrap):
    with pytest.raises(UserError) as err:
        untrusted_sandbox("auto")
    message = str(err.value)
    assert "\n" not in message
    assert "apt-get install bubblewrap" in message and "--set sandbox.backend=subprocess" in message
    assert untrusted_sandbox("subprocess").name == "subprocess"  # named explicitly: allowed


@pytest.mark.slow
def test_sandbox_run_and_check_say_so_without_bwrap(no_bwrap, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    r = runner.invoke(app, ["sandbox", "run", "-C", str(work), "--", "touch", "ran"])
    assert r.exit_code == 2 and "apt-get install bubblewrap" in r.stderr  # one line
    assert not (work / "ran").exists()
    r = runner.invoke(app, ["sandbox", "check", "--backend", "subprocess"])
    assert "untrusted code (validate, task and pool builds): REFUSED" in r.stdout


@pytest.mark.slow
def test_check_says_untrusted_code_runs_in_bwrap(bwrap):
    r = runner.invoke(app, ["sandbox", "check", "--backend", "bwrap"])
    assert "untrusted code (validate, task and pool builds): runs in bwrap" in r.stdout


def test_sandbox_run_is_recorded_in_runs(bwrap, workdir, tmp_path):
    out = tmp_path / "out"
    r = runner.invoke(app, ["sandbox", "run", "-C", str(workdir), "-o", str(out), "--", "sh", "-c", "exit 3"])
    assert r.exit_code == 3
    _, rows = query(out, "SELECT command, status, run_id FROM runs")
    assert [(c, s) for c, s, _ in rows] == [("sandbox run", "finished")]
    assert rows[0][2].startswith("sandbox-run-")
