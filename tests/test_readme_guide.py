"""The README stays a guide: at most 450 lines, no section twice, and every relative link of
the README and docs/ leads to a file that exists and, with a `#fragment`, to a heading of it
(GitHub's anchor rule), so moving a section to docs/ cannot leave a dead link behind."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").rglob("*.md"))]  # docs/reports/ too
MAX_README_LINES = 450
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def _prose_lines(text: str) -> list[str]:
    """The lines outside fenced code blocks (a `# comment` in a bash block is no heading)."""
    out, fence = [], None
    for line in text.splitlines():
        stripped = line.lstrip()
        if fence is None and stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
        elif fence is not None and stripped.startswith(fence):
            fence = None
        elif fence is None:
            out.append(line)
    return out


def headings(text: str) -> list[str]:
    return [m.group(2).strip() for line in _prose_lines(text)
            if (m := re.match(r"(#{1,6})\s+(.*?)\s*#*\s*$", line))]


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but `-` and `_` gone, spaces to `-`."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text only
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    seen: Counter[str] = Counter()
    found = set()
    for heading in headings(text):
        base = slug(heading)
        found.add(base if not seen[base] else f"{base}-{seen[base]}")
        seen[base] += 1
    return found


def test_slug_follows_githubs_rule():
    assert slug("Past one machine: `--executor slurm | ray`") == "past-one-machine---executor-slurm--ray"
    assert slug("The default build of `sample_data/` (2026-12-03)") == "the-default-build-of-sample_data-2026-12-03"
    assert anchors("# A\n## A\n```\n# not a heading\n```\n") == {"a", "a-1"}


def test_readme_is_a_guide_of_at_most_450_lines():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines; move details to docs/"


def test_readme_has_no_section_twice():
    counts = Counter(h.lower() for h in headings(README.read_text(encoding="utf-8")))
    assert [h for h, n in counts.items() if n > 1] == []


def _links() -> list[tuple[str, str]]:
    """(document, target) of every link outside code blocks; a link's text may wrap a line."""
    return [(doc.relative_to(ROOT).as_posix(), m.group(1)) for doc in DOCS
            for m in LINK.finditer("\n".join(_prose_lines(doc.read_text(encoding="utf-8"))))
            if not re.match(r"[a-z]+:", m.group(1))]


@pytest.mark.parametrize(("doc", "target"), _links())
def test_every_relative_link_resolves(doc, target):
    path, _, fragment = target.partition("#")
    file = (ROOT / doc).parent / path if path else ROOT / doc
    assert file.resolve().exists(), f"{doc}: {target} names a missing file"
    if fragment:
        assert file.suffix == ".md", f"{doc}: {target}: an anchor into a file that is not markdown"
        assert fragment in anchors(file.read_text(encoding="utf-8")), f"{doc}: {target}: no such heading"


def test_the_link_check_sees_the_readmes_links_into_docs():
    targets = {t for d, t in _links() if d == "README.md"}
    assert "docs/curation.md#drop-reasons" in targets and "docs/layout.md" in targets


def test_the_readmes_counts_are_the_registries():
    """The tour's "15 runners: ..." and "N strategies" are the registries' sizes."""
    from datagen.sandbox.harness.profiles.registry import profile_names
    from datagen.synth.strategies.registry import strategy_names

    text = README.read_text(encoding="utf-8")
    runners = re.search(r"\((\d+) runners: ([^)]+)\)", text)
    assert runners and int(runners.group(1)) == len(runners.group(2).split(", ")) == len(profile_names())
    strategies = re.search(r"seeded bugs from (\d+) strategies", text)
    assert strategies and int(strategies.group(1)) == len(strategy_names())
