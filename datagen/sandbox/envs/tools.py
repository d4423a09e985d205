"""The part of an env's cache key that records the tools that built it.

An env built while a tool was missing (or at another version) must not be reused once the
tool is installed (or upgraded): a PHP env cached as ok without Composer kept failing after
``apt-get install composer``. Every env key (``Profile.env_key``, ``EnvManager.key``) hashes
``tool_stamp`` of the tools its build runs: each one's name and the line it prints about its
version, so machines with the same tools (a build's Slurm nodes) share one key.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from pathlib import Path

# how a tool says its version where ``--version`` is not the way
_VERSION_ARGS = {"go": ("version",), "java": ("-version",), "javac": ("-version",)}
_COLOURS = re.compile(r"\x1b\[[0-9;]*m")


def tool_stamp(tools: list[str] | tuple[str, ...]) -> str:
    """``name=version`` of each of ``tools`` (names on PATH, or absolute paths), sorted; a
    repo's own script (``./gradlew``) is no tool of the machine's and is left out."""
    kept = sorted({t for t in tools if "/" not in t or os.path.isabs(t)})
    return "tools:" + ";".join(f"{Path(tool).name}={tool_version(tool)}" for tool in kept)


def tool_version(tool: str) -> str:
    """The line a tool prints about its version ('absent' when it is not here)."""
    path = shutil.which(tool)
    if path is None:
        return "absent"
    # by the name on PATH (a rustup proxy answers for the tool it is called as), asked again
    # when the file it resolves to changes
    st = Path(path).resolve().stat()
    return _version_of(path, (st.st_size, st.st_mtime_ns), _VERSION_ARGS.get(Path(tool).name, ("--version",)))


@functools.cache
def _version_of(path: str, stamp: tuple[int, int], args: tuple[str, ...]) -> str:
    """What the executable at ``path`` says of its version: its first output line with a
    digit in it, colours taken out (asked once per process and ``stamp``)."""
    try:
        out = subprocess.run([path, *args], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unknown ({type(exc).__name__})"
    text = _COLOURS.sub("", f"{out.stdout}\n{out.stderr}")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return next((line for line in lines if any(c.isdigit() for c in line)), f"exit {out.returncode}")[:200]
