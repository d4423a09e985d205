"""Line coverage from V8's own counters: what node writes under ``NODE_V8_COVERAGE``.

Each process node starts (the runner and every test file's child) writes one
``coverage-*.json``: per script, its functions, each with block ranges
``{startOffset, endOffset, count}``. Ranges nest (a function's body, then its blocks), so
applying them from the outermost in gives every character its count. A line is covered
when its last non-blank character ran: ``export function f() {`` starts in the module's
body, which ran, and ends in ``f``'s, which may not have. Offsets count UTF-16 code units, as JS strings do.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import unquote, urlparse


def covered_lines(folder: Path, workdir: Path) -> dict[str, set[int]]:
    """Repo-relative path -> 1-based lines that ran, over every coverage file in ``folder``
    (scripts outside ``workdir`` or under ``node_modules`` are left out)."""
    ranges: dict[str, list[tuple[int, int, int]]] = {}
    for report in sorted(folder.glob("coverage-*.json")):
        try:
            scripts = json.loads(report.read_text(encoding="utf-8")).get("result", [])
        except (OSError, ValueError):
            continue  # a process killed while writing it
        for script in scripts:
            rel = _repo_path(script.get("url", ""), workdir)
            if rel is None:
                continue
            ranges.setdefault(rel, []).extend(
                (r["startOffset"], r["endOffset"], r["count"])
                for fn in script.get("functions", []) for r in fn.get("ranges", []))
    out: dict[str, set[int]] = {}
    for rel, spans in ranges.items():
        try:
            text = (workdir / rel).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if lines := _lines_run(text, spans):
            out[rel] = lines
    return out


def _repo_path(url: str, workdir: Path) -> str | None:
    parsed = urlparse(url)
    if parsed.scheme != "file":
        return None  # node:internal, data: URLs, evaluated code
    try:
        rel = Path(unquote(parsed.path)).relative_to(workdir).as_posix()
    except ValueError:
        return None
    return None if "node_modules" in rel.split("/") else rel


def _lines_run(text: str, spans: list[tuple[int, int, int]]) -> set[int]:
    units = _utf16_starts(text)
    counts = [0] * (len(text.encode("utf-16-le")) // 2)  # 0: no range ran it
    # outermost first: a range that starts earlier, or at the same place and ends later
    for start, end, count in sorted(spans, key=lambda s: (s[0], -s[1])):
        start, end = max(0, start), min(len(counts), end)
        if start < end:
            counts[start:end] = [count] * (end - start)
    lines, at = set(), 0
    for number, line in enumerate(text.split("\n"), 1):
        last = len(line.rstrip()) - 1
        if last >= 0 and counts[units[at + last]] > 0:
            lines.add(number)
        at += len(line) + 1
    return lines


def _utf16_starts(text: str) -> list[int]:
    """The UTF-16 offset of each character of ``text`` (V8's offsets count those)."""
    if text.isascii():
        return list(range(len(text)))
    starts, at = [], 0
    for ch in text:
        starts.append(at)
        at += 2 if ord(ch) > 0xFFFF else 1
    return starts
