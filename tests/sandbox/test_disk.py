"""What a run writes into its working copy is capped (``disk_mb``), and what it writes
within the cap still lands in the copy, exactly as if the copy were bound directly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from datagen.sandbox.isolation import disk
from datagen.sandbox.isolation.bwrap import UID_BASE, UID_SLOTS

REPO = Path(__file__).resolve().parents[2]
# Four 3 MB files, each under file_size_mb (4): 12 MB into a working copy capped at 8 MB.
# The errors are swallowed: the run exits 0 and says nothing, as the 3 GB run did.
FILL_QUIETLY = ("for i in range(4):\n"
                "    try:\n"
                "        open(f'fill{i}', 'wb').write(b'x' * 3 * 2**20)\n"
                "    except OSError:\n"
                "        pass\n")


@pytest.fixture
def capped(bwrap):
    """The bwrap back end where it mounts the capped overlay (root, overlayfs)."""
    if os.geteuid() != 0:
        pytest.skip("only a root run mounts the capped overlay")
    ok, reason = disk.support()
    if not ok:
        pytest.skip(reason)
    return bwrap


def test_writing_past_disk_mb_is_stopped_and_reported_even_when_the_run_exits_0(
        capped, py, workdir, limits):
    python, ro = py
    result = capped.run([python, "-c", FILL_QUIETLY], workdir,
                        limits.model_copy(update={"disk_mb": 8}), ro_paths=ro)
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.limit_hit == "disk"
    assert "ENOSPC" in result.limit_evidence
    kept = sum(p.stat().st_size for p in workdir.iterdir())
    assert 0 < kept <= 8 * 2**20


def test_writes_within_the_cap_land_in_the_working_copy(capped, workdir, limits, tmp_path):
    host = tmp_path / "host.txt"
    host.write_text("host")
    for name in ("keep.txt", "change.txt", "gone.txt"):
        (workdir / name).write_text(name)
    (workdir / "gonedir").mkdir()
    (workdir / "gonedir" / "old").write_text("old")
    (workdir / "link").symlink_to("/etc")
    os.link(host, workdir / "hard.txt")  # a planted hard link to a host file
    script = ("echo changed > change.txt && chmod 600 change.txt && rm gone.txt && "
              "rm -r gonedir && mkdir gonedir && echo new > gonedir/new && "
              "rm link && mkdir link && echo mine > link/passwd && "
              "rm hard.txt && echo sandbox > hard.txt && "
              "mkdir -p new/deep && echo f > new/deep/f && ln -s deep new/sym && mkfifo pipe")
    result = capped.run(["sh", "-c", script], workdir, limits)
    assert (result.exit_code, result.limit_hit) == (0, None), result.stderr
    files = {str(p.relative_to(workdir)) for p in workdir.rglob("*")}
    assert files == {"keep.txt", "change.txt", "gonedir", "gonedir/new", "link", "link/passwd",
                     "hard.txt", "new", "new/deep", "new/deep/f", "new/sym", "pipe"}
    assert (workdir / "change.txt").read_text() == "changed\n"
    assert (workdir / "change.txt").stat().st_mode & 0o777 == 0o600
    assert (workdir / "link").is_dir() and not (workdir / "link").is_symlink()
    assert os.readlink(workdir / "new" / "sym") == "deep"
    assert host.read_text() == "host"  # the link's name was replaced, not written through
    owner = os.stat(workdir.parent)
    for path in [workdir, *workdir.rglob("*")]:
        assert (os.lstat(path).st_uid, os.lstat(path).st_gid) == (owner.st_uid, owner.st_gid), path


SLEEP = b"sleep\x0060.5\x00"  # the killed run's command, as /proc/PID/cmdline has it


def _overlay_on(workdir: Path) -> bool:
    """An overlay whose lower layer is ``workdir`` is mounted (a run's, live or stale)."""
    text = Path("/proc/self/mountinfo").read_text()
    return any(" overlay " in line and f"lowerdir={workdir}" in line for line in text.splitlines())


def _sandboxed(cmdline: bytes) -> list[int]:
    """Pids of processes running ``cmdline`` (NUL-separated) as a sandbox uid."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if (entry / "cmdline").read_bytes() == cmdline and _leased_uid(entry):
                pids.append(int(entry.name))
        except (OSError, ValueError):
            continue
    return pids


def _leased_uid(proc: Path) -> bool:
    uid_line = next(line for line in (proc / "status").read_text().splitlines()
                    if line.startswith("Uid:"))
    return UID_BASE <= int(uid_line.split()[1]) < UID_BASE + UID_SLOTS


def test_a_run_killed_with_datagen_is_undone_by_the_next_run(capped, workdir, limits, tmp_path,
                                                              monkeypatch):
    # uid leases and mounts in a private temp folder: no other datagen takes the slot
    private = tmp_path / "tmp"
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    (workdir / "a.py").write_text("x = 1\n")
    env = {**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(private)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "datagen.cli.app", "sandbox", "run", "-C", str(workdir), "--",
         "sleep", "60.5"], cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # killed mid-run: once its command runs, not while datagen is still forking it
        deadline = time.monotonic() + 60
        while not _sandboxed(SLEEP) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _overlay_on(workdir) and _sandboxed(SLEEP), "the run never started"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    # the run dies with datagen (it would hold its uid slot and mounts, unowned)
    deadline = time.monotonic() + 10
    while _sandboxed(SLEEP) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _sandboxed(SLEEP), "the sandboxed command outlived datagen"
    # what the kill leaves: the copy owned by a sandbox uid, the overlay still mounted
    assert UID_BASE <= os.stat(workdir).st_uid < UID_BASE + UID_SLOTS
    assert _overlay_on(workdir)
    result = capped.run(["true"], workdir, limits)
    assert result.exit_code == 0, result.stderr
    assert not _overlay_on(workdir)
    owner = os.stat(workdir.parent)
    for path in (workdir, workdir / "a.py"):
        assert (os.lstat(path).st_uid, os.lstat(path).st_gid) == (owner.st_uid, owner.st_gid)
