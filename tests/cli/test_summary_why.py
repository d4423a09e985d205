"""The tasks build's summary says why each repo that gives nothing gave nothing: its reason
and the detail (the runner's or installer's own words), on one line, cut to ``WHY_CHARS``."""

from __future__ import annotations

from types import SimpleNamespace

from rich.console import Console

from datagen.cli.summary import WHY_CHARS, print_tasks_summary
from datagen.records.tasks import RepoBaselineRow


def test_the_summary_says_why_a_repo_gave_nothing(tmp_path):
    rows = [
        RepoBaselineRow(run_id="r", repo="d3-format", runner="vitest", status="skipped", reason="no_tests",
                        detail="no report written: failed to load config from ./vitest.config.js | Error: "
                               "ENOENT: no such file or directory, mkdir './node_modules/.vite-temp'"),
        RepoBaselineRow(run_id="r", repo="natsort", runner="pytest", status="skipped", reason="no_passing_tests",
                        detail="1 failing, 0 flaky: tests\n   E   ModuleNotFoundError: " + "x" * 2000),
        RepoBaselineRow(run_id="r", repo="fine", runner="go", status="ok", tests=3),
    ]
    result = SimpleNamespace(output=tmp_path, repos=rows, candidates=[], tasks=[], seconds=1.0, notes=[])
    console = Console(record=True, width=200)
    print_tasks_summary(result, console)
    text = console.export_text()
    line = next(x for x in text.splitlines() if x.strip().startswith("d3-format: no_tests:"))
    assert "mkdir './node_modules/.vite-temp'" in line
    long = next(x for x in text.splitlines() if x.strip().startswith("natsort: no_passing_tests:"))
    assert "E ModuleNotFoundError" in long and long.endswith("...") and len(long.strip()) < WHY_CHARS + 40
    assert not any(x.strip().startswith("fine:") for x in text.splitlines())
