"""Progress bars: rate and ETA, counts that move while ranks run, logs kept after success."""

from __future__ import annotations

import io
import json
import time

from rich.console import Console

from datagen.runtime import rank_progress as prog
from datagen.runtime.progress import RankProgress, items_done, progress_bar
from datagen.runtime.run import finished_tasks, keep_logs


def test_bars_show_rate_elapsed_and_eta(monkeypatch):
    monkeypatch.delenv("DATAGEN_NO_PROGRESS", raising=False)
    buf = io.StringIO()
    console = Console(file=buf, width=140, force_terminal=False)
    with progress_bar(console, "crawling", 100) as advance:
        for _ in range(5):
            advance(10)
            time.sleep(0.05)
    text = buf.getvalue()
    assert "50/100" in text and "/s" in text and "eta" in text


def test_rank_progress_is_written_while_the_rank_runs_and_removed_at_its_end(tmp_path, monkeypatch):
    monkeypatch.setattr(prog, "PROGRESS_EVERY_S", 0.05)
    rank = RankProgress(tmp_path, 3)
    rank.add(7)
    rank.add(1)  # a burst, then nothing for a while: the count is still shown
    deadline = time.monotonic() + 5
    while not (tmp_path / "00003.progress").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert (tmp_path / "00003.progress").read_text() == "8"
    assert items_done(tmp_path, files_per_task=10, total=35) == 8
    rank.close()
    assert not (tmp_path / "00003.progress").exists()


def test_items_done_counts_finished_ranks_and_running_ones(tmp_path):
    for r in (0, 1, 3):  # finished: 10 + 10 + 5 (the last rank holds the rest)
        (tmp_path / f"{r:05d}.parquet").write_bytes(b"")
    (tmp_path / "00002.progress").write_text("4")  # running
    (tmp_path / "00001.progress").write_text("9")  # a stale one beside its finished file: not twice
    (tmp_path / "00004.parquet.tmp").write_bytes(b"")  # a half-written rank: not done
    assert items_done(tmp_path, files_per_task=10, total=35) == 29


def test_items_done_of_a_missing_folder_is_zero(tmp_path):
    assert items_done(tmp_path / "gone", 10, 35) == 0


def _stage(work, rel: str, completed: int) -> None:
    folder = work / rel
    (folder / "logs").mkdir(parents=True)
    (folder / "completions").mkdir()
    (folder / "executor.json").write_text("{}")
    (folder / "stats.json").write_text(json.dumps([{"name": rel}]))
    (folder / "logs" / "task_00000.log").write_text("log line\n")
    for r in range(completed):
        (folder / "completions" / f"{r:05d}").write_text("")


def test_keep_logs_copies_each_stage_without_its_markers_and_replaces_old_ones(tmp_path):
    work = tmp_path / "out" / ".work" / "run1"
    _stage(work, "logs/crawl", 3)
    _stage(work, "near_dedup/logs/signatures", 1)
    (work / "stages.log").write_text("1\tstart\tcrawl\n")
    logs = tmp_path / "out" / "logs"
    (logs / "slurm").mkdir(parents=True)
    (logs / "slurm" / "job.out").write_text("kept")
    (logs / "old-stage").mkdir()
    assert finished_tasks(work) == {"crawl": 3, "near_dedup/signatures": 1}
    keep_logs(work, logs)
    assert sorted(p.name for p in logs.iterdir()) == ["crawl", "near_dedup", "slurm", "stages.log"]
    assert (logs / "crawl" / "logs" / "task_00000.log").read_text() == "log line\n"
    assert json.loads((logs / "near_dedup" / "signatures" / "stats.json").read_text()) == [
        {"name": "near_dedup/logs/signatures"}]
    assert not (logs / "crawl" / "completions").exists()
    assert (logs / "slurm" / "job.out").read_text() == "kept"


def test_a_rank_that_keeps_its_count_leaves_it_when_finished_not_when_failed(tmp_path):
    from datagen.runtime.rank_progress import progress_sum

    with RankProgress(tmp_path, 0, keep=True) as done:
        done.add(5)
    try:
        with RankProgress(tmp_path, 1, keep=True) as failed:
            failed.add(3)
            raise RuntimeError("rank died")
    except RuntimeError:
        pass
    assert (tmp_path / "00000.progress").read_text() == "5" and not (tmp_path / "00001.progress").exists()
    assert progress_sum(tmp_path) == 5 and progress_sum(tmp_path / "gone") == 0


def test_near_dedup_signatures_count_files_for_the_bar(tmp_path):
    """The signature stage's bar follows files signed (its ranks' kept counts), not ranks."""
    import random

    from datagen.config.curate import NearDedupConfig
    from datagen.curate.near_dedup import SignatureStep, near_dedup
    from datagen.runtime.rank_progress import progress_sum
    from tests.curate.helpers import crawl_row, synthetic_python, write_crawl

    rng = random.Random(0)
    rows = [crawl_row("r", f"m{i}.py", synthetic_python(rng)) for i in range(12)]
    crawl = write_crawl(tmp_path / "c.parquet", rows)
    near_dedup([crawl], tmp_path / "w", NearDedupConfig(), total=12)
    (stage,) = [p for p in (tmp_path / "w").iterdir() if p.is_dir()]
    assert progress_sum(stage / "progress") == 12
    bar = SignatureStep([crawl], stage, NearDedupConfig(), None, progress_total=12).progress_bar()
    assert bar["total_files"] == 12 and bar["count"]() == 12
    assert SignatureStep([crawl], stage, NearDedupConfig(), None).progress_bar() is None
