"""The toy runner's report: one JSON object per line, ``{"test": <script>, "exit": <code>}``.

What a new runner's parser is: a pure function of the report's text that returns
``{test_id: status}`` and raises ``ReportError`` when the text is not its format."""

from __future__ import annotations

import json

from datagen.sandbox.harness.parsers import ReportError, TestResults


def parse_shtest_jsonl(text: str) -> TestResults:
    results: TestResults = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            results[row["test"]] = "pass" if row["exit"] == 0 else "fail"
        except (ValueError, KeyError, TypeError) as exc:
            raise ReportError(f"line {n} is not a shtest result: {exc}") from None
    return results
