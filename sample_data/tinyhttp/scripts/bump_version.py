#!/usr/bin/env python3
"""Bump the `version = "X.Y.Z"` line of a TOML manifest (pyproject.toml, Cargo.toml).

Usage: scripts/bump_version.py FILE {major,minor,patch}

Only the first top-level `version` key is touched, so dependency tables that
pin their own versions are left alone.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

VERSION_LINE = re.compile(r'^version\s*=\s*"(\d+)\.(\d+)\.(\d+)"\s*$', re.MULTILINE)
PARTS = ("major", "minor", "patch")


def bump(version: tuple[int, int, int], part: str) -> tuple[int, int, int]:
    major, minor, patch = version
    if part == "major":
        return major + 1, 0, 0
    if part == "minor":
        return major, minor + 1, 0
    return major, minor, patch + 1


def rewrite(text: str, part: str) -> tuple[str, str]:
    match = VERSION_LINE.search(text)
    if match is None:
        raise SystemExit("no top-level version line found")
    old = tuple(int(group) for group in match.groups())
    new = ".".join(str(n) for n in bump(old, part))  # type: ignore[arg-type]
    line = f'version = "{new}"'
    return text[: match.start()] + line + text[match.end() :], new


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[2] not in PARTS:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    path = Path(argv[1])
    text, new = rewrite(path.read_text(encoding="utf-8"), argv[2])
    path.write_text(text, encoding="utf-8")
    print(f"{path}: {new}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
