"""The report as one self-contained HTML page: every chart a PNG embedded as a base64 data
URI, its numbers in a table beside it, the runs on top, skipped charts listed at the end with why.

Nothing is fetched when the page is viewed (no scripts, fonts or styles from a network).
A small inline script checks on load that every chart image decoded, sets
``data-charts-drawn`` / ``data-charts-failed`` on ``<body>`` and logs a console error for each
failure, so a headless browser can prove the page drew (tests/builds/test_all.py).
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from pathlib import Path

STYLE = """
body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1500px}
h1{margin:0 0 4px}h2{margin:28px 0 4px;font-size:1.2em}p.note{margin:0 0 8px;color:#555}
section.chart{display:flex;gap:20px;align-items:flex-start;flex-wrap:wrap;border-top:1px solid #ddd;padding-top:6px}
section.chart img{max-width:900px;width:100%;flex:0 1 900px}
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:2px 6px}
td.num{text-align:right;font-variant-numeric:tabular-nums}th{background:#f3f3f3}
div.numbers{max-height:520px;overflow:auto}
"""
CHECK = """
window.addEventListener("load", function () {
  var imgs = document.querySelectorAll("img.chart"), drawn = 0, failed = 0;
  imgs.forEach(function (img) {
    if (img.complete && img.naturalWidth > 0) { drawn++; }
    else { failed++; console.error("chart did not draw: " + img.alt); }
  });
  document.body.dataset.chartsDrawn = drawn;
  document.body.dataset.chartsFailed = failed;
});
"""


def _cell(value: object) -> str:
    if value is None:
        return ""
    if hasattr(value, "isoformat"):
        return value.isoformat(sep=" ", timespec="seconds")
    return str(value)


def _table(columns: Sequence[str], rows: Sequence[tuple]) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f'<td class="num">{html.escape(_cell(v))}</td>' if isinstance(v, int | float)
                         else f"<td>{html.escape(_cell(v))}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def render_html(report, manifest: Path, images: dict[str, bytes], run_columns: Sequence[str]) -> str:
    """The page for ``report`` (a ``manifest.report.Report``); ``images`` = chart key -> PNG."""
    e = html.escape
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>datagen report: {e(manifest.parent.name)}</title><style>{STYLE}</style></head>",
             "<body>", f"<h1>Build report: {e(manifest.parent.name)}</h1>",
             f'<p class="note">Manifest <code>{e(manifest.name)}</code> (read-only): {len(report.drawn)} chart(s) '
             f"drawn, {len(report.charts) - len(report.drawn)} skipped.</p>", "<h2>Runs</h2>",
             _table(run_columns, report.runs) if report.runs else "<p>No <code>runs</code> rows.</p>"]
    for chart in report.drawn:
        uri = "data:image/png;base64," + base64.b64encode(images[chart.key]).decode("ascii")
        parts += [f'<h2 id="{e(chart.key)}">{e(chart.title)}</h2>', f'<p class="note">{e(chart.note)}</p>',
                  f'<section class="chart"><img class="chart" alt="{e(chart.title)}" src="{uri}">',
                  f'<div class="numbers">{_table(chart.columns, chart.rows)}</div></section>']
    skipped = [c for c in report.charts if c.skipped]
    if skipped:
        parts += ['<h2>Skipped charts</h2><ul id="skipped">',
                  *(f"<li>{e(c.title)}: skipped, {e(c.skipped)}.</li>" for c in skipped), "</ul>"]
    parts += [f"<script>{CHECK}</script>", "</body></html>", ""]
    return "\n".join(parts)


__all__ = ["render_html"]
