"""Ordinary mistakes give one line naming the path and what to do, exit 2 (no traceback).

Each case runs the real command through typer's CliRunner (in-process; the same click
tree the console script runs) against real files in a temp folder.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from datagen.cli.app import app
from datagen.cli.errors import os_error_line


@pytest.fixture(autouse=True)
def _no_debug(monkeypatch):
    monkeypatch.delenv("DATAGEN_DEBUG", raising=False)
    monkeypatch.setenv("DATAGEN_NO_PROGRESS", "1")


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def one_line(result, *needles: str) -> str:
    """The single stderr line of a failed command, which must contain every needle."""
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def readonly_dir(tmp_path) -> Path:
    """A folder this process cannot write: mode 0555 for a normal user; as root (who
    writes anywhere) a sysfs path, where mkdir is refused; else skip."""
    if os.geteuid() != 0:
        folder = tmp_path / "ro"
        folder.mkdir()
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)
        return
    try:
        os.mkdir("/sys/datagen-probe")
    except OSError:
        yield Path("/sys")
        return
    os.rmdir("/sys/datagen-probe")
    pytest.skip("root and a writable /sys: no read-only folder to write into here")


def test_output_folder_that_is_a_file(tmp_path):
    target = tmp_path / "afile"
    target.write_text("x")
    line = one_line(run("build", "cpt-corpus", "-o", str(target)), str(target), "is a file, not a folder",
                    "give a folder path")
    assert target.read_text() == "x", line  # the file is left alone


def test_output_under_a_file(tmp_path):
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    one_line(run("build", "cpt-corpus", "-o", str(blocker / "sub" / "out")), f"{blocker} is a file")


def test_read_only_output_path(readonly_dir):
    out = readonly_dir / "out"
    line = one_line(run("build", "cpt-corpus", "-o", str(out)), str(out))
    assert "permission denied" in line or "read-only" in line


def test_report_dest_on_an_existing_file(tmp_path, two_repos):
    from datagen.builds.cpt_corpus.build import run_cpt_corpus

    out = tmp_path / "out"
    run_cpt_corpus(inputs=[str(p) for p in two_repos], output=out)
    dest = tmp_path / "report.html"
    dest.write_text("mine")
    one_line(run("report", str(out), "--dest", str(dest)), str(dest), "is a file, not a folder")
    assert dest.read_text() == "mine"


def test_missing_recipe_names_the_bundled_ones(tmp_path):
    one_line(run("build", "cpt-corpus", "-r", str(tmp_path / "nope.yaml")), "recipe not found",
             "nope.yaml", "cpt-corpus, ", "give the path of a YAML file")


def test_recipe_that_is_a_folder(tmp_path):
    one_line(run("build", "cpt-corpus", "-r", str(tmp_path)), f"cannot read recipe {tmp_path}")


def test_missing_input(tmp_path):
    one_line(run("build", "cpt-corpus", "-i", str(tmp_path / "gone"), "-o", str(tmp_path / "o")),
             str(tmp_path / "gone"))


def test_sql_on_a_missing_folder(tmp_path):
    one_line(run("sql", str(tmp_path / "gone"), "SELECT 1"), "no manifest", str(tmp_path / "gone"))


def test_sandbox_run_without_a_workdir_folder(tmp_path):
    one_line(run("sandbox", "run", "-C", str(tmp_path / "nope"), "--backend", "subprocess", "--", "true"),
             "--workdir", "is not a folder")


def test_debug_shows_the_traceback(tmp_path, monkeypatch):
    """``--debug``: the error is raised, not formatted (CliRunner keeps it as the exception)."""
    target = tmp_path / "afile"
    target.write_text("x")
    monkeypatch.setenv("DATAGEN_DEBUG", "1")
    result = run("build", "cpt-corpus", "-o", str(target))
    assert isinstance(result.exception, OSError)


@pytest.mark.parametrize(("code", "expected"), [
    (errno.EISDIR, "is a folder, not a file"),
    (errno.EROFS, "read-only file system"),
    (errno.ENOSPC, "no space left"),
    (errno.EACCES, "permission denied"),
    (errno.ENOTEMPTY, "not empty"),
])
def test_os_error_lines_name_the_path_and_what_to_do(tmp_path, code, expected):
    path = tmp_path / "x"
    line = os_error_line(OSError(code, os.strerror(code), str(path)))
    assert expected in line and str(path) in line and ";" in line


def test_missing_parent_folder_is_named(tmp_path):
    path = tmp_path / "a" / "b" / "c.txt"
    line = os_error_line(FileNotFoundError(errno.ENOENT, "No such file", str(path)))
    assert f"folder {tmp_path / 'a'} does not exist" in line


def test_an_os_error_without_a_path_still_is_one_line():
    assert os_error_line(ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused")) == (
        "Connection refused (run with --debug for the traceback)")


@pytest.mark.parametrize("build", ["tasks", "all"])
def test_other_builds_with_an_output_that_is_a_file(tmp_path, build):
    target = tmp_path / "afile"
    target.write_text("x")
    one_line(run("build", build, "-o", str(target)), f"{target} is a file, not a folder")


def test_rl_pool_without_its_tasks_names_them(tmp_path):
    one_line(run("build", "rl-pool", "-i", str(tmp_path / "gone"), "-o", str(tmp_path / "o")),
             f"no such task file or folder: {tmp_path / 'gone'}")


def test_validate_an_empty_task_file_is_not_a_pass(tmp_path):
    empty = tmp_path / "tasks.jsonl"
    empty.write_text("")
    one_line(run("validate", str(empty)), f"no task in {empty}: nothing to validate")
