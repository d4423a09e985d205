"""``datagen build all`` (three stages, one folder each), ``datagen runs``, the lineage
SQL of the README and ``datagen report`` on one real build (``all_built``,
tests/builds/allkit.py), in one file so that one xdist worker builds it once.

The report tests come last (they take from the pool): the report of each stage is
rendered in headless Chromium (Debian package ``chromium``): every chart image decodes, no
console message, no network reference; skipped where no Chromium is installed."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest

from datagen.config.all import route_overrides
from datagen.manifest.report_builds import ALL_CHARTS
from tests.builds.allkit import invoke
from tests.test_cli import cli

pytestmark = pytest.mark.slow
README = Path(__file__).resolve().parents[2] / "README.md"


def lineage_sql() -> str:
    text = README.read_text()
    return re.search(r"<!-- lineage-sql[^\n]*\n```sql\n(.*?)```", text, re.S).group(1)


def test_each_stage_has_its_folder_and_manifest_and_one_summary(all_built):
    for stage in ("cpt-corpus", "tasks", "rl-pool"):
        assert (all_built.stage(stage) / "manifest.duckdb").is_file(), stage
    assert (all_built.stage("tasks") / "tasks.jsonl").is_file()
    assert list((all_built.stage("rl-pool") / "data").glob("*.parquet"))
    summary = all_built.stdout[all_built.stdout.index("all →"):]
    for stage in ("cpt-corpus", "tasks", "rl-pool"):
        assert re.search(rf"{stage}\s+│\s+built", summary), summary
    assert "instructions pooled" in summary and "datagen runs out/all" in summary


def test_a_second_run_does_nothing_and_reports_the_same_counts(all_built):
    again = invoke(all_built.root, all_built.args)  # the policy server is gone: nothing may call it
    table = again[again.index("all →"):]
    assert table.count("already built") == 3
    first = all_built.stdout[all_built.stdout.index("all →"):]
    assert [line.split("│")[4] for line in table.splitlines() if "│" in line] == \
           [line.split("│")[4] for line in first.splitlines() if "│" in line]  # the counts column


def test_runs_lists_every_stage(all_built):
    proc = cli("runs", str(all_built.out), "-f", "json")
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["stage"] for r in rows] == ["cpt-corpus", "tasks", "rl-pool"]
    assert [r["command"] for r in rows] == ["build cpt-corpus", "build tasks", "build rl-pool"]
    assert all(r["status"] == "finished" and r["seconds"] >= 0 and len(r["recipe_hash"]) == 16 for r in rows)
    one = cli("runs", str(all_built.stage("tasks")))
    assert one.returncode == 0 and "build tasks" in one.stdout and "build rl-pool" not in one.stdout
    missing = cli("runs", str(all_built.root / "nowhere"))
    assert missing.returncode == 2 and "no manifest" in missing.stderr and "Traceback" not in missing.stderr


def test_the_readme_lineage_sql_follows_every_instruction_to_its_source_file(all_built, monkeypatch):
    monkeypatch.chdir(all_built.root)
    con = duckdb.connect()
    cur = con.execute(lineage_sql())
    cols = [d[0] for d in cur.description]
    rows = [dict(zip(cols, r)) for r in cur.fetchall()]
    pooled = {r for (r,) in duckdb.connect(str(all_built.stage("rl-pool") / "manifest.duckdb"), read_only=True)
              .execute("SELECT instruction_id FROM pool").fetchall()}
    assert pooled and {r["instruction_id"] for r in rows} == pooled
    for r in rows:
        assert r["repo"] == "minilib" and r["path"] in ("minilib/core.py", "minilib/shapes.py")
        assert r["decision"] == "kept" and r["shard"].startswith("data/")
        assert r["entity"].startswith(r["path"] + "::") and 0 < r["pass_rate"] < 1


def test_stage_overrides_are_routed():
    own, stages = route_overrides(["tasks.synth.scale=3", "tasks.enabled=false", "workers=2",
                                   "rl_pool.difficulty.k=8", "cpt_corpus.inputs=[a]"])
    assert own == ["tasks.enabled=false", "workers=2", "cpt_corpus.inputs=[a]"]
    assert stages == {"cpt_corpus": [], "tasks": ["synth.scale=3"], "rl_pool": ["difficulty.k=8"]}


def test_a_submitted_tasks_stage_leaves_the_pool_stage_for_the_next_run(tmp_path):
    """--set tasks.executor.kind=slurm: the tasks stage is submitted (the stand-in queue is
    held, then cancelled), and the pool stage does not read a tasks.jsonl that is not there."""
    import fcntl
    import subprocess
    import sys

    from tests.builds.executorkit import jobs, slurm_env
    from tests.synth.buildkit import SITE, make_minilib

    minilib = make_minilib(tmp_path / "minilib")
    state = tmp_path / "state"
    env = slurm_env(state, "", DATAGEN_CACHE=str(tmp_path / "cache"))
    sets = ["cpt_corpus.enabled=false", "tasks.executor.kind=slurm", f"tasks.env.inherit_site_packages=[{SITE}]",
            "tasks.synth.families=[procedural]"]
    cmd = [sys.executable, "-m", "datagen.cli.app", "build", "all", "-i", str(minilib), "-o", "out",
           *sum((["--set", s] for s in sets), [])]
    state.mkdir()
    with open(state / "lock.queue", "w") as held:  # nothing runs while the test holds the queue
        fcntl.flock(held, fcntl.LOCK_EX)
        proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        subprocess.run(["scancel", *(str(j["id"]) for j in jobs(state))], env=env, check=True)
    assert proc.returncode == 0, proc.stderr
    summary = " ".join(proc.stdout.split())
    assert "tasks │ submitted: job" in summary and "rl-pool │ waits for tasks" in summary, proc.stdout
    assert not (tmp_path / "out" / "rl-pool").exists()


# datagen report on the same build

BROWSER = next((b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
needs_browser = pytest.mark.skipif(BROWSER is None, reason="no headless Chromium (apt-get install chromium)")
STAGES = ("cpt-corpus", "tasks", "rl-pool")


def browse(page: Path, profile: Path, *mode: str) -> subprocess.CompletedProcess:
    """Chromium on ``page``: ``--dump-dom`` (the DOM after load) or ``--screenshot=...``."""
    return subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", *mode,
                           page.as_uri()], capture_output=True, text=True, timeout=120)


def console_lines(proc: subprocess.CompletedProcess) -> list[str]:
    return [line for line in proc.stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


@pytest.fixture(scope="module")
def reports(all_built) -> dict[str, Path]:
    pool = all_built.stage("rl-pool")
    assert cli("pool", "take", str(pool), "--n", "1", "--consumer", "run-1").returncode == 0
    assert cli("pool", "status", str(pool)).returncode == 0  # mirrors the ledger into the manifest
    proc = cli("report", str(all_built.out))
    assert proc.returncode == 0, proc.stderr
    return {stage: all_built.stage(stage) / "report" / "report.html" for stage in STAGES}


def drawn_keys(page: Path) -> list[str]:
    return re.findall(r'<h2 id="([a-z_]+)">', page.read_text())


def test_every_chart_of_the_three_builds_is_drawn_somewhere(reports):
    drawn = {key for page in reports.values() for key in drawn_keys(page)}
    assert drawn == {spec.key for spec in ALL_CHARTS}
    assert set(drawn_keys(reports["tasks"])) == {"repo_outcomes", "candidate_outcomes", "task_yield", "task_sizes"}
    text = reports["tasks"].read_text()
    assert "Files kept and dropped, by reason: skipped, `files` has no rows." in text
    assert not re.search(r"(src|href)=\"(https?:)?//", text)  # nothing is fetched to view it


@needs_browser
@pytest.mark.parametrize("stage", STAGES)
def test_the_page_draws_in_a_real_browser_without_console_errors(reports, stage, tmp_path):
    page = reports[stage]
    proc = browse(page, tmp_path / "profile", "--dump-dom")
    assert proc.returncode == 0, proc.stderr[-2000:]
    body = re.search(r"<body([^>]*)>", proc.stdout).group(1)
    assert f'data-charts-drawn="{len(drawn_keys(page))}"' in body and 'data-charts-failed="0"' in body, body
    assert console_lines(proc) == []


@needs_browser
def test_a_chart_that_does_not_decode_is_caught(reports, tmp_path):
    broken = tmp_path / "broken.html"
    broken.write_text(re.sub(r'src="data:image/png;base64,[^"]{40}', 'src="data:image/png;base64,AAAA',
                             reports["tasks"].read_text(), count=1))
    proc = browse(broken, tmp_path / "profile", "--dump-dom")
    assert 'data-charts-failed="1"' in proc.stdout
    assert any("chart did not draw" in line for line in console_lines(proc))


@needs_browser
def test_screenshot(reports, tmp_path):
    shot = tmp_path / "report.png"
    proc = browse(reports["rl-pool"], tmp_path / "profile", "--window-size=1200,1600", f"--screenshot={shot}")
    assert proc.returncode == 0 and shot.read_bytes().startswith(b"\x89PNG") and shot.stat().st_size > 20_000
