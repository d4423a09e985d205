"""The part of an env's cache key that records the tools that built it.

An env built while a tool was missing (or at another version) must not be reused once the
tool is installed (or upgraded): a PHP env cached as ok without Composer kept failing after
``apt-get install composer``. Every env key (``Profile.env_key``, ``EnvManager.key``) hashes
``tool_stamp`` of the tools its build runs.
"""

from __future__ import annotations

import os
import shutil


def tool_stamp(tools: list[str]) -> str:
    """Which of ``tools`` (names on PATH, or absolute paths) are here and which build of each
    (its real path, size and modification time, so an upgrade changes it too). A repo's own
    script (``./gradlew``) is no tool of the machine's and is left out."""
    out = []
    for tool in sorted({t for t in tools if "/" not in t or os.path.isabs(t)}):
        found = tool if os.path.isabs(tool) and os.path.exists(tool) else shutil.which(tool)
        if found is None:
            out.append(f"{tool}=-")
            continue
        real = os.path.realpath(found)
        st = os.stat(real)
        out.append(f"{tool}={real}:{st.st_size}:{st.st_mtime_ns}")
    return "tools:" + ";".join(out)
