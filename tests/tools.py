"""The machine's tools the tests use, each with the Debian package that brings it.

One list for two readers: ``tests/run`` installs the packages of the tools that are missing
(``python3 tests/tools.py`` prints them), and a test that needs a tool skips with a reason
naming the tool and its package (``needs("go")``), so that a run's skip summary says what to
install. Runs without pytest or datagen installed (``tests/run`` calls it before the venv).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

# A command on PATH, or an absolute path for a file-only package (JUnit's jars).
TOOLS: dict[str, str] = {
    "bwrap": "bubblewrap",                # the sandbox's real isolation
    "chromium": "chromium",               # `datagen report`'s browser test
    "go": "golang-go",
    "javac": "default-jdk-headless",
    "mvn": "maven",
    "/usr/share/java/junit-jupiter-api.jar": "junit5",
    "ruby": "ruby",
    "rspec": "ruby-rspec",
    "php": "php-cli",
    "phpunit": "phpunit",
    "composer": "composer",               # a PHP project's own autoloader without Packagist
    "cmake": "cmake",
    "ctest": "cmake",
    "g++": "g++",
    "c++": "g++",
    "cc": "gcc",
    "gcov": "gcc",
    "make": "make",
    "curl": "curl",
    "node": "nodejs",
    "npm": "npm",
    "cargo": "cargo",
    "/usr/include/gtest/gtest.h": "libgtest-dev",  # GoogleTest for the ctest profile's case ids
}


def present(tool: str) -> bool:
    return Path(tool).exists() if tool.startswith("/") else shutil.which(tool) is not None


def missing(*tools: str) -> list[str]:
    return [t for t in tools if not present(t)]


def why(tools: list[str]) -> str:
    """``needs go, ruby (apt-get install golang-go ruby)``: the skip summary's reason."""
    names = ", ".join(Path(t).name for t in tools)
    return f"needs {names} (apt-get install {' '.join(dict.fromkeys(TOOLS.get(t, t) for t in tools))})"


def needs(*tools: str):
    """A skipif mark for a test (or ``pytestmark``) that runs the given tools."""
    import pytest

    gone = missing(*tools)
    return pytest.mark.skipif(bool(gone), reason=why(gone) if gone else "")


def skip_unless(*tools: str) -> None:
    """Inside a test or fixture: skip, naming the tools and packages, unless all are here."""
    import pytest

    if gone := missing(*tools):
        pytest.skip(why(gone))


if __name__ == "__main__":
    wanted = sys.argv[1:] or list(TOOLS)
    print(" ".join(dict.fromkeys(TOOLS[t] for t in missing(*wanted))))
