"""The pool sampler as verl and torchdata drive it, against a real `datagen serve pool`:
a verl-style loop SIGKILLed twice mid-epoch and resumed from its checkpoints trains on each
of 200 instructions exactly once; in process: update() commits the batch just handed out,
a mid-batch state_dict resumes without drawing, a 409 is logged, rows the dataset lacks
are set aside, len() is what the pool has left."""

from __future__ import annotations

import json
import logging
import signal
import subprocess
import sys
import time
from collections import Counter

import pyarrow.parquet as pq
import pytest

from datagen.pool import ledger
from datagen.serve.clients import PoolClient, PoolDataSource, PoolIndexSampler
from tests.pool.conftest import build_pool
from tests.serve.conftest import ROOT, Server, env

pytest.importorskip("torchdata.stateful_dataloader", reason="torchdata: pip install -e '.[rl-clients]'")
pytestmark = pytest.mark.slow  # real servers and trainer processes: seconds each

POOL, BATCH = 200, 20  # ten steps: room for a kill at step 3 and one at step 7
try:
    import verl.trainer.main_ppo  # noqa: F401 - verl 0.7.1 (`.ci/run` installs it)
    VERL = True
except ImportError:
    VERL = False


def journal(pool) -> list[ledger.Entry]:
    return ledger.read_journal(pool / "ledger" / "journal.jsonl")


def run_loop(pool, ckpt, url: str, pause: str = "") -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tests.serve.verl_loop", "--data",
                             str(pool / "exports/verl/train.parquet"), "--ckpt", str(ckpt), "--url", url,
                             "--batch", str(BATCH), "--lease-s", "4", *(["--pause", pause] if pause else [])],
                            cwd=ROOT, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def kill_when_paused(proc: subprocess.Popen, pause: str) -> None:
    line = proc.stdout.readline()
    assert line.split() == ["paused", *pause.split(":")], (line, proc.stderr.read() if proc.poll() else "")
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)


def test_killed_and_resumed_loop_uses_each_instruction_once(tmp_path):
    pool = build_pool(tmp_path, POOL)
    ckpt = tmp_path / "ckpt.pt"
    with Server("pool", str(pool)) as server:
        url = f"http://127.0.0.1:{server.port}"
        # killed after step 3's checkpoint, before its update(): the resumed run commits it
        kill_when_paused(run_loop(pool, ckpt, url, "3:saved"), "3:saved")
        # killed after step 7 trained, before its checkpoint: that batch was never learned
        kill_when_paused(run_loop(pool, ckpt, url, "7:trained"), "7:trained")
        last = run_loop(pool, ckpt, url)
        out, err = last.communicate(timeout=300)
        assert last.returncode == 0, err[-3000:]
        status = PoolClient(url).status()
    result = json.loads(out.splitlines()[-1])
    all_ids = pq.read_table(pool / "exports/verl/train.parquet").column("extra_info").to_pylist()
    all_ids = sorted(e["instruction_id"] for e in all_ids)
    assert sorted(result["trained"]) == all_ids  # every instruction trained on exactly once
    assert result["steps"] == POOL // BATCH and not result["conflicts"]
    assert result["factory"] == ("verl" if VERL else "replay")  # verl's create_rl_sampler built it when installed
    entries = journal(pool)
    committed = Counter(e.instruction_id for e in entries if e.op == "commit")
    assert sorted(committed) == all_ids and set(committed.values()) == {1}
    # nothing drawn to fast-forward: only the batch of step 7 was taken twice (it came back when its lease ended)
    assert sum(e.op == "take" for e in entries) == POOL + BATCH
    assert (status["used"], status["free"], status["leased"]) == (POOL, 0, 0)


def test_update_state_conflict_aside_and_len(tmp_path, caplog):
    pool = build_pool(tmp_path, 50)
    rows = pq.read_table(pool / "exports/verl/train.parquet").column("extra_info").to_pylist()
    ids = [e["instruction_id"] for e in rows]
    with Server("pool", str(pool)) as server:
        url = f"http://127.0.0.1:{server.port}"
        client = PoolClient(url)
        missing = set(ids[3:5])  # the dataset lacks these (verl filtered them out, say)
        dataset = [i for i in ids if i not in missing]
        sampler = PoolIndexSampler(dataset, "s", batch_size=10, url=url, lease_s=60)
        assert len(sampler) == 50
        it = iter(sampler)
        first = [next(it) for _ in range(10)]
        assert [dataset[n] for n in first] == [i for i in ids[:12] if i not in missing]
        assert client.status()["used"] == 0 and len(sampler.handed) == 2  # handed out in full at the 10th index
        sampler.update()
        assert client.status()["used"] == 10 and sampler.committed == [dataset[n] for n in first]
        assert client.status()["leased"] == 2  # set aside, not committed, not handed out again
        part = [next(it) for _ in range(4)]  # a checkpoint in the middle of a batch
        state = json.loads(json.dumps(sampler.state_dict()))  # as plain as torch.save needs
        takes = sum(e.op == "take" for e in journal(pool))
        resumed = PoolIndexSampler(dataset, "s", batch_size=10, url=url, lease_s=60)
        resumed.load_state_dict(state)
        assert len(resumed) == 50 - 10 - 2 - 4
        rest = list(resumed)
        assert [dataset[n] for n in part + rest[:6]] == ids[12:22]  # the batch goes on where it stopped
        assert sum(e.op == "take" for e in journal(pool)) == takes + 28  # 10, 10, the short 8: no fast-forward
        used = [dataset[n] for n in first + part + rest]
        assert len(set(used)) == len(used) == 48 - 8  # drop_last: the last 8 (a short batch) are released
        resumed.update()
        status = client.status()
        assert (status["used"], status["leased"], status["free"]) == (40, 0, 10)  # aside released when dry

        # a 409 is logged and counted, never raised
        short = PoolIndexSampler(dataset, "t", batch_size=8, url=url, lease_s=0.2, drop_last=False)
        batch = list(short)
        assert len(batch) == 8
        time.sleep(0.4)
        thief = client.claim("thief", 8, lease_s=60)
        with caplog.at_level(logging.WARNING, logger="datagen.serve.clients"):
            short.update()
        assert len(short.conflicts) == 1 and "not committed" in caplog.text

        # the batch source likewise: a lease that ended and went elsewhere is logged, the loop goes on
        client.release(thief["lease_id"])
        source = PoolDataSource("u", batch_size=2, url=url, lease_s=0.2)
        batches = iter(source)
        first = next(batches)
        time.sleep(0.4)
        taken = client.claim("thief2", 10, lease_s=60)["instructions"]
        assert {r["instruction_id"] for r in first} <= {r["instruction_id"] for r in taken}
        with caplog.at_level(logging.WARNING, logger="datagen.serve.clients"):
            assert list(batches) == []  # the pool is dry now; asking for more committed the first batch
        assert len(source.conflicts) == 1
