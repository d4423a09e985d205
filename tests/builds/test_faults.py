"""The corpus build under faults: odd file names, Ctrl-C, two writers, full disk, kills.

The signal, lock and disk cases run the real CLI in a subprocess, as a user would.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from datagen.builds.cpt_corpus.build import run_cpt_corpus
from tests.builds.test_cpt_corpus import _corpus, shard_digest
from tests.conftest import MIT, git

QUIET = {**os.environ, "DATAGEN_NO_PROGRESS": "1"}


def _cmd(roots, out, *extra: str) -> list[str]:
    return [sys.executable, "-m", "datagen.cli.app", "build", "cpt-corpus", *map(str, roots), "-o", str(out),
            "--set", "crawl.files_per_task=10", *extra]


def _start(cmd, ignore_sigint: bool = False) -> subprocess.Popen:
    """The build in its own process group; ``ignore_sigint`` as a shell starts ``cmd &``."""
    pre = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if ignore_sigint else None
    return subprocess.Popen(cmd, env=QUIET, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=pre)


def _wait_mid_crawl(out: Path, proc: subprocess.Popen, done: int = 3) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if len(list(out.glob(".work/*/logs/crawl/completions/*"))) >= done:
            return
        time.sleep(0.005)
    pytest.fail("the build never got mid-crawl")


def _live(pgid: int) -> list[str]:
    """Processes of the group that are still running (zombies are dead, only unreaped)."""
    out = []
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{name}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            out.append(f"{name} {stat[:stat.rfind(')') + 1]}")
    return out


def _none_left(pgid: int, within_s: float = 15) -> None:
    deadline = time.monotonic() + within_s
    while (left := _live(pgid)) and time.monotonic() < deadline:
        time.sleep(0.1)
    if left:
        os.killpg(pgid, signal.SIGKILL)
        pytest.fail(f"processes of the build outlived it: {left}")


def _runs(out: Path) -> list[tuple[str, str]]:
    con = duckdb.connect(str(out / "manifest.duckdb"), read_only=True)
    try:
        return con.execute("SELECT command, status FROM runs ORDER BY started_at").fetchall()
    finally:
        con.close()


def _odd_tree(root):
    """A repo whose one Python file has a name with the byte 0xff (not UTF-8)."""
    os.makedirs(root)
    (root / "LICENSE").write_text(MIT)
    with open(os.path.join(os.fsencode(root), b"a\xff.py"), "wb") as fh:
        fh.write(f"x = 1\ny = 2\nprint('{root.name}', x + y)\n".encode())
    return root


def test_a_file_name_that_is_not_utf8_is_read_and_kept_losslessly(tmp_path):
    plain = _odd_tree(tmp_path / "plain")
    tree = _odd_tree(tmp_path / "tree")
    git(tree, "init", "-q", "-b", "main")
    git(tree, "add", "-A")
    git(tree, "commit", "-q", "-m", "init")
    out = tmp_path / "out"
    result = run_cpt_corpus(inputs=[str(plain), str(tree)], output=out)
    assert result.kept == 2
    con = duckdb.connect(str(out / "manifest.duckdb"), read_only=True)
    rows = con.execute("SELECT repo, path, path_raw, decision FROM files WHERE path LIKE 'a%' "
                       "ORDER BY repo").fetchall()
    con.close()
    assert rows == [(r, "a\\xff.py", b"a\xff.py".hex(), "kept") for r in ("plain", "tree")]
    assert bytes.fromhex(rows[0][2]) == b"a\xff.py"  # the name as the file system knows it
    texts = pq.read_table(next((out / "data").glob("*.parquet"))).column("text").to_pylist()
    assert sorted(t for t in texts if t.startswith("x = 1")) == [
        f"x = 1\ny = 2\nprint('{r}', x + y)\n" for r in ("plain", "tree")]


@pytest.mark.slow
@pytest.mark.parametrize("sig, group, ignored", [
    (signal.SIGINT, True, True),     # Ctrl-C in a terminal, build started as `cmd &` by a script
    (signal.SIGINT, False, False),   # kill -INT PID
    (signal.SIGTERM, False, False),  # kill PID
    (signal.SIGTERM, True, False),   # kill -- -PGID: a supervisor stopping the whole group
])
def test_ctrl_c_and_sigterm_stop_the_build_mark_it_failed_and_a_rerun_resumes(tmp_path, sig, group, ignored):
    roots = _corpus(tmp_path)
    out = tmp_path / "out"
    proc = _start(_cmd(roots, out, "-w", "2"), ignore_sigint=ignored)
    _wait_mid_crawl(out, proc)
    (os.killpg if group else os.kill)(proc.pid, sig)
    try:
        _, err = proc.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("the build did not stop within 15 s of the signal")
    assert proc.returncode == 128 + sig, err
    assert f"interrupted by {signal.Signals(sig).name}" in err and "Traceback" not in err, err
    line = next(x for x in err.splitlines() if x.startswith("interrupted by"))  # what is kept, how to resume
    assert "kept the finished tasks (crawl " in line and "run the same command again to resume from there" in line
    _none_left(proc.pid)
    assert _runs(out) == [("build cpt-corpus", "failed")]
    assert not list(out.glob(".work/*/crawl/*.tmp"))
    if sig == signal.SIGTERM:  # one rerun is enough to show the resume
        rerun = subprocess.run(_cmd(roots, out), env=QUIET, capture_output=True, text=True)
        assert rerun.returncode == 0, rerun.stderr
        assert _runs(out) == [("build cpt-corpus", "finished")] and not (out / ".work").exists()
        assert (out / "logs" / "crawl" / "stats.json").is_file()  # the stage logs stay after success
        assert len(list((out / "logs" / "crawl" / "logs").glob("task_*.log"))) > 1


@pytest.mark.slow
def test_sigkill_leaves_no_process_and_the_rerun_cleans_up_after_it(tmp_path):
    roots = _corpus(tmp_path)
    out = tmp_path / "out"
    proc = _start(_cmd(roots, out, "-w", "2"))
    _wait_mid_crawl(out, proc)
    os.kill(proc.pid, signal.SIGKILL)  # the build process alone: its children must follow
    proc.communicate()
    _none_left(proc.pid)
    assert _runs(out) == [("build cpt-corpus", "running")]
    stale = out / ".work" / "0123456789abcdef"  # a work folder of a run that will never resume
    stale.mkdir()
    rerun = subprocess.run(_cmd(roots, out, "--set", "quality.enabled=false"), env=QUIET,
                           capture_output=True, text=True)
    assert rerun.returncode == 0, rerun.stderr
    assert _runs(out) == [("build cpt-corpus", "failed"), ("build cpt-corpus", "finished")]
    assert not (out / ".work").exists()


@pytest.mark.slow
def test_a_second_build_on_the_same_output_fails_at_once_naming_the_first(tmp_path):
    roots = _corpus(tmp_path)
    out = tmp_path / "out"
    first = _start(_cmd(roots, out))
    _wait_mid_crawl(out, first, done=1)
    # held mid-build (its whole group stopped), so it cannot finish before the second one
    # starts on a loaded machine; a stopped build still holds the lock
    os.killpg(first.pid, signal.SIGSTOP)
    try:
        # "at once": about as long as the CLI takes to start and stop here, however loaded
        t0 = time.monotonic()
        subprocess.run([sys.executable, "-m", "datagen.cli.app", "runs", str(out)], env=QUIET, capture_output=True)
        startup = time.monotonic() - t0
        t0 = time.monotonic()
        second = subprocess.run(_cmd(roots, out, "--force"), env=QUIET, capture_output=True, text=True)
    finally:
        os.killpg(first.pid, signal.SIGCONT)
    assert time.monotonic() - t0 < 3 * startup + 5, (time.monotonic() - t0, startup)
    assert second.returncode == 2
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1 and f"pid {first.pid}" in lines[0] and "started" in lines[0], second.stderr
    _, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    assert _runs(out) == [("build cpt-corpus", "finished")]


def test_the_manifest_write_waits_for_a_reader_then_says_so_in_one_line(tmp_path, monkeypatch):
    from datagen.errors import UserError
    from datagen.manifest import Manifest, db

    Manifest(tmp_path).close()
    reader = subprocess.Popen(
        [sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1], read_only=True); "
         "print('open', flush=True); time.sleep(float(sys.argv[2]))", str(tmp_path / "manifest.duckdb"), "1.5"],
        stdout=subprocess.PIPE, text=True)
    assert reader.stdout.readline().strip() == "open"
    t0 = time.monotonic()
    with Manifest(tmp_path) as m:  # waits until the reader lets go
        m.execute("SELECT 1")
    assert 0.5 < time.monotonic() - t0 < 10
    reader.wait()
    monkeypatch.setattr(db, "LOCK_WAIT_S", 0.5)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1], read_only=True); "
         "print('open', flush=True); time.sleep(30)", str(tmp_path / "manifest.duckdb")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        with pytest.raises(UserError, match=r"manifest.duckdb: it is open in another process \(pid \d+\)"):
            Manifest(tmp_path)
    finally:
        holder.kill()
        holder.wait()


@pytest.fixture
def small_disk(tmp_path):
    """A 6 MB tmpfs: a full disk that a test can fill (skipped where it cannot be mounted)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=6m", "tmpfs", str(disk)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def _noisy_repo(root: Path, files: int, seed: int) -> Path:
    """Python files that do not compress (random names), so the crawl output is big."""
    import random

    rng = random.Random(seed)
    os.makedirs(root / "pkg")
    (root / "LICENSE").write_text(MIT)
    for i in range(files):
        names = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(12)) for _ in range(600)]
        (root / "pkg" / f"m{i}.py").write_text("".join(f"{n} = {rng.randrange(10**9)}\n" for n in names))
    return root


@pytest.mark.slow
def test_a_full_disk_is_one_line_the_run_failed_and_the_previous_output_intact(tmp_path, small_disk):
    from datagen.builds.cpt_corpus.manifest import outputs_intact

    out = small_disk / "out"
    small = [_noisy_repo(tmp_path / "small", 2, 0)]
    first = subprocess.run(_cmd(small, out), env=QUIET, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    before = shard_digest(out)
    free = os.statvfs(small_disk).f_bavail * os.statvfs(small_disk).f_frsize
    (small_disk / "filler").write_bytes(b"\0" * (free - 900_000))  # ~0.9 MB left
    big = [_noisy_repo(tmp_path / f"big{i}", 40, i) for i in range(2)]  # ~2.5 MB of crawl output
    full = subprocess.run(_cmd(big, out, "--set", "crawl.files_per_task=1000"), env=QUIET,
                          capture_output=True, text=True)
    assert full.returncode == 2, full.stderr
    lines = [x for x in full.stderr.strip().splitlines() if not x.startswith("packing off:")]  # a note, one line
    assert len(lines) == 1 and lines[0].startswith("error: no space left on device while writing "), full.stderr
    assert "MB and run again" in lines[0], lines[0]
    assert [s for _, s in _runs(out)] == ["finished", "failed"]
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]
    assert shard_digest(out) == before  # the previous good output, whole
    con = duckdb.connect(str(out / "manifest.duckdb"), read_only=True)
    first_run = con.execute("SELECT run_id FROM runs WHERE status = 'finished'").fetchone()[0]
    assert outputs_intact(out, first_run, con)
    con.close()
    (small_disk / "filler").unlink()
    again = subprocess.run(_cmd(big, out, "--set", "crawl.files_per_task=1000"), env=QUIET,
                           capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert [s for _, s in _runs(out)] == ["finished", "finished"]  # the same run, resumed
