"""``datagen report`` on the three stages of a real ``datagen build all``, rendered in
headless Chromium (Debian package ``chromium``): every chart image decodes, no console
message, no network reference. Skipped where no Chromium is installed."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from datagen.manifest.report_builds import ALL_CHARTS
from tests.test_cli import cli

pytestmark = pytest.mark.slow
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
