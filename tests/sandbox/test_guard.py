"""Which working copies the sandbox refuses, and what a run leaves of the copy's modes."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from datagen.errors import UserError
from datagen.sandbox.isolation.guard import workdir_problem


@pytest.fixture
def home(tmp_path: Path, monkeypatch) -> Path:
    """A home folder of our own, with the env cache in its default place."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("DATAGEN_CACHE", raising=False)
    monkeypatch.chdir(tmp_path)
    return home


@pytest.mark.parametrize("path", [
    "/", "/usr", "/usr/lib", "/usr/lib/python3/dist-packages", "/etc/ssl", "/bin", "/lib64/x",
    "/libx32", "/sbin/x", "/boot/grub", "/proc/1", "/sys/kernel", "/dev/shm", "/run/user/0",
    "/var", "/var/lib/apt", "/var/tmp", "/tmp", "/home", "/root", "/opt",
])
def test_system_folders_and_their_insides_are_refused(home, path):
    assert workdir_problem(Path(path)) is not None


def test_home_its_dot_folders_and_parents_of_cwd_are_refused(home, tmp_path, monkeypatch):
    assert "home folder" in workdir_problem(home)
    assert "dot-folder" in workdir_problem(home / ".ssh")
    assert "dot-folder" in workdir_problem(home / ".config" / "app")
    assert "contains the home folder" in workdir_problem(tmp_path)
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    assert "contains the current folder" in workdir_problem(tmp_path / "a")


def test_ordinary_working_copies_are_accepted(home, tmp_path, monkeypatch):
    repo = home / "src" / "repo"
    repo.mkdir(parents=True)
    monkeypatch.chdir(repo)
    assert workdir_problem(repo) is None  # `-w .` in a repo is the usual case
    assert workdir_problem(home / "src") is not None  # ...but not a parent of it
    assert workdir_problem(Path("/var/tmp/build/repo")) is None
    assert workdir_problem(tmp_path / "elsewhere") is None
    # datagen builds envs inside its cache, which by default is under ~/.cache
    assert workdir_problem(home / ".cache" / "datagen" / "envs" / "0123abcd") is None


def test_run_refuses_a_parent_of_the_current_folder_before_touching_it(
        any_sandbox, limits, tmp_path, monkeypatch):
    inner = tmp_path / "outer" / "inner"
    inner.mkdir(parents=True)
    monkeypatch.chdir(inner)
    with pytest.raises(UserError, match="contains the current folder"):
        any_sandbox.run(["touch", "ran"], tmp_path / "outer", limits)
    assert not (tmp_path / "outer" / "ran").exists()
    assert inner.stat().st_uid == os.geteuid()


@pytest.fixture
def root_bwrap(bwrap):
    if os.geteuid() != 0:
        pytest.skip("the hand-over to a sandbox uid happens only as root")
    return bwrap


def test_run_refuses_a_working_copy_with_too_many_files(root_bwrap, workdir, limits):
    for i in range(10):
        (workdir / f"f{i}").write_text("x")
    with pytest.raises(UserError, match="more than 5 files"):
        root_bwrap.run(["true"], workdir, limits.model_copy(update={"max_files": 5}))
    assert {p.stat().st_uid for p in workdir.iterdir()} == {0}
    assert root_bwrap.run(["true"], workdir, limits).exit_code == 0


def test_modes_come_back_as_they_were(root_bwrap, workdir, limits):
    modes = {"private": 0o600, "group": 0o640, "script": 0o755, "sticky_dir": 0o1777,
             "setgid_dir": 0o2775}
    for name, mode in modes.items():
        path = workdir / name
        path.mkdir() if name.endswith("_dir") else path.write_text("x")
        os.chmod(path, mode)
    r = root_bwrap.run(["sh", "-c", "touch setgid_dir/new && test -w private"], workdir, limits)
    assert r.exit_code == 0, r.stderr
    after = {name: stat.S_IMODE((workdir / name).stat().st_mode) for name in modes}
    assert after == modes
    assert {(p.stat().st_uid, p.stat().st_gid) for p in workdir.rglob("*")} == {(0, 0)}


def test_setuid_files_are_refused_not_stripped(root_bwrap, workdir, limits):
    tool = workdir / "tool"
    tool.write_text("#!/bin/sh\n")
    os.chmod(tool, 0o6755)
    with pytest.raises(UserError, match="setuid/setgid"):
        root_bwrap.run(["true"], workdir, limits)
    assert stat.S_IMODE(tool.stat().st_mode) == 0o6755
    assert (tool.stat().st_uid, workdir.stat().st_uid) == (0, 0)


def test_a_setuid_bit_set_by_the_run_does_not_survive(root_bwrap, workdir, limits):
    r = root_bwrap.run(["sh", "-c", "cp /bin/true mine && chmod 6755 mine"], workdir, limits)
    assert r.exit_code == 0, r.stderr
    st = (workdir / "mine").stat()
    assert st.st_uid == 0 and not st.st_mode & (stat.S_ISUID | stat.S_ISGID)
