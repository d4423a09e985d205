"""The once-only ledger under real concurrency: 8 taker processes drain a pool, one of
them killed with SIGKILL mid-take; return, dry pool, torn and damaged journals, status."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import datagen
from datagen.errors import UserError
from datagen.manifest import query
from datagen.pool import ledger
from tests.pool.conftest import build_pool

ROOT = Path(datagen.__file__).resolve().parents[1]
# One taker process: `datagen pool take` (the CLI app, in-process) in a loop until a take
# comes back empty; every batch goes to its own file.
TAKER = """
import pathlib, sys
from datagen.cli.app import app
pool, consumer, outdir, n = sys.argv[1:5]
for k in range(10_000):
    out = pathlib.Path(outdir) / f"{consumer}-{k:04d}.jsonl"
    app(["pool", "take", pool, "--n", n, "--consumer", consumer, "--run", "r1", "--out", str(out)],
        standalone_mode=False)
    if not out.read_text():
        break
"""


def env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), **extra}


def cli(*args: str, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "datagen.cli.app", *args], capture_output=True, text=True,
                          env=env(**extra), cwd=ROOT)


def start_taker(pool: Path, consumer: str, outdir: Path, n: int = 3, **extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", TAKER, str(pool), consumer, str(outdir), str(n)],
                            env=env(**extra), cwd=ROOT, stderr=subprocess.PIPE, text=True)


def pool_ids(pool: Path) -> list[str]:
    return [i for f in ledger.shard_files(pool) for i in pq.read_table(f)["instruction_id"].to_pylist()]


def delivered(outdir: Path) -> Counter:
    """How often each instruction id was handed to a taker (printed in its output)."""
    ids = [json.loads(line)["instruction_id"] for f in sorted(outdir.glob("*.jsonl"))
           for line in f.read_text().splitlines()]
    return Counter(ids)


def journal(pool: Path) -> list[ledger.Entry]:
    return ledger.read_journal(pool / "ledger" / "journal.jsonl")


def wait_for(predicate, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError("timed out")
        time.sleep(0.02)


@pytest.mark.slow
def test_eight_takers_hand_out_every_instruction_exactly_once(tmp_path):
    pool = build_pool(tmp_path, 96)
    outdir = tmp_path / "batches"
    outdir.mkdir()
    procs = [start_taker(pool, f"t{k}", outdir) for k in range(8)]
    for p in procs:
        assert p.wait(timeout=180) == 0, p.stderr.read()
    got = delivered(outdir)
    assert sorted(got) == sorted(pool_ids(pool))  # none lost
    assert set(got.values()) == {1}  # none twice
    held = ledger.holders(journal(pool))
    assert {i: e.consumer for i, e in held.items()} == {
        json.loads(line)["instruction_id"]: f.name.split("-")[0]
        for f in outdir.glob("*.jsonl") for line in f.read_text().splitlines()}
    assert ledger.status(pool).left == 0


@pytest.mark.slow
@pytest.mark.parametrize("stage", ["locked", "written"])
def test_taker_killed_mid_take_loses_nothing(tmp_path, stage):
    """The victim is killed while it holds the lock: before its journal write (its batch
    stays free) or after it (its batch is recorded as its own and handed to nobody else)."""
    pool = build_pool(tmp_path, 60)
    outdir = tmp_path / "batches"
    outdir.mkdir()
    victim = start_taker(pool, "victim", outdir, n=5, **{ledger.PAUSE_ENV: f"{stage}:120"})
    lock = pool / "ledger" / "lock"
    if stage == "written":
        wait_for(lambda: any(e.consumer == "victim" for e in journal(pool)))
    else:
        wait_for(lock.exists)
        time.sleep(1.0)  # it holds the lock now (a taker started later blocks on it)
    others = [start_taker(pool, f"t{k}", outdir) for k in range(7)]
    time.sleep(0.5)
    assert not list(outdir.glob("t*"))  # the others wait: the victim holds the lock
    victim.send_signal(signal.SIGKILL)
    assert victim.wait(timeout=30) == -signal.SIGKILL
    for p in others:
        assert p.wait(timeout=180) == 0, p.stderr.read()

    got = delivered(outdir)
    victims = {e.instruction_id for e in journal(pool) if e.consumer == "victim"}
    assert not list(outdir.glob("victim-*"))  # it printed nothing
    assert set(got.values()) == {1}
    assert set(got) | victims == set(pool_ids(pool)) and not set(got) & victims
    assert len(victims) == (5 if stage == "written" else 0)

    # asked to, the ledger gives the victim's batch back, and a new taker gets exactly it
    assert sorted(ledger.give_back(pool, "victim")) == sorted(victims)
    again = ledger.take(pool, 100, "rerun")
    assert {r["instruction_id"] for r in again} == victims


def test_return_then_take_hands_out_the_returned_ones(pool_dir):
    first = ledger.take(pool_dir, 5, "run-17")
    other = ledger.take(pool_dir, 5, "run-18")
    proc = cli("pool", "return", str(pool_dir), "--consumer", "run-17")
    assert proc.returncode == 0 and "returned 5" in proc.stderr
    rest = ledger.take(pool_dir, 100, "run-19")
    ids = {r["instruction_id"] for r in rest}
    assert {r["instruction_id"] for r in first} <= ids
    assert not ids & {r["instruction_id"] for r in other}
    assert len(rest) == 40 - 5


def test_dry_pool_says_so_on_stderr_and_exits_0(pool_dir):
    proc = cli("pool", "take", str(pool_dir), "--n", "30", "--consumer", "a")
    assert proc.returncode == 0 and len(proc.stdout.splitlines()) == 30
    assert proc.stderr == ""
    proc = cli("pool", "take", str(pool_dir), "--n", "30", "--consumer", "b")
    assert proc.returncode == 0 and len(proc.stdout.splitlines()) == 10
    assert "pool dry: handed out 10 of 30" in proc.stderr
    proc = cli("pool", "take", str(pool_dir), "--n", "30", "--consumer", "c")
    assert proc.returncode == 0 and proc.stdout == "" and "handed out 0 of 30" in proc.stderr


def test_taken_rows_are_full_pool_rows(pool_dir, tmp_path):
    out = tmp_path / "batch.jsonl"
    proc = cli("pool", "take", str(pool_dir), "--n", "2", "--consumer", "a", "--out", str(out))
    assert proc.returncode == 0 and proc.stdout == ""
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["instruction_id"] for r in rows] == pool_ids(pool_dir)[:2]  # pool order
    assert rows[0]["prompt"][0]["role"] == "system" and rows[0]["group_size"] == 8


def test_torn_last_line_is_cut_and_its_instruction_stays_free(pool_dir):
    ledger.take(pool_dir, 2, "a")
    path = pool_dir / "ledger" / "journal.jsonl"
    with open(path, "ab") as fh:  # what a writer killed inside write() can leave
        fh.write(b'{"op":"take","id":"' + pool_ids(pool_dir)[2].encode() + b'","consu')
    assert len(ledger.holders(journal(pool_dir))) == 2
    rows = ledger.take(pool_dir, 1, "b")
    assert rows[0]["instruction_id"] == pool_ids(pool_dir)[2]
    assert path.read_bytes().endswith(b"\n") and len(path.read_text().splitlines()) == 3


def test_damaged_line_in_the_middle_is_an_error_not_a_skip(pool_dir):
    ledger.take(pool_dir, 2, "a")
    path = pool_dir / "ledger" / "journal.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text(lines[0] + "garbage\n" + lines[1])
    with pytest.raises(UserError, match="journal is damaged"):
        ledger.take(pool_dir, 1, "b")


def test_status_by_split_and_band_and_mirror(pool_dir):
    ledger.take(pool_dir, 7, "run-1", run="r")
    ledger.take(pool_dir, 3, "run-2")
    ledger.give_back(pool_dir, "run-2")
    proc = cli("pool", "status", str(pool_dir), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    st = json.loads(proc.stdout)
    assert st["groups"] == [{"split": "train", "difficulty_band": "unknown", "total": 40, "taken": 7, "left": 33}]
    assert st["consumers"] == {"run-1": 7}
    cols, rows = query(pool_dir, "SELECT consumer, count(*), count(returned_at) FROM ledger GROUP BY 1 ORDER BY 1")
    assert rows == [("run-1", 7, 0), ("run-2", 3, 3)]
    table = cli("pool", "status", str(pool_dir))
    assert "unknown" in table.stdout and "held by run-1: 7" in table.stdout


def test_bad_arguments_are_one_line_errors(pool_dir, tmp_path):
    proc = cli("pool", "take", str(tmp_path / "nope"), "--n", "1", "--consumer", "a")
    assert proc.returncode == 2 and proc.stderr.startswith("error: no pool shards")
    proc = cli("pool", "take", str(pool_dir), "--n", "1", "--consumer", " ")
    assert proc.returncode == 2 and "consumer" in proc.stderr


@pytest.mark.parametrize("args", [["pool"], ["pool", "take"], ["pool", "status"], ["pool", "return"]])
def test_help_shows_examples(args):
    proc = cli(*args, "--help", COLUMNS="200")
    assert proc.returncode == 0 and "Usage" in proc.stdout
    assert "Examples" in proc.stdout or "Commands" in proc.stdout
