"""Runs an eval script's report check (awk) the way the scripts do: the report on stdin, the
ids (and any other list) each in a file of one item a line, named by ``<NAME>_FILE``."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path


def run_awk(program: str, text: str, **env: str | list[str]) -> tuple[int, list[str]]:
    """(exit status, the ids it printed as NOT PASSED) of ``awk program`` over ``text``; a list
    value ``IDS=[...]`` is written to a file and given as ``IDS_FILE``, a string passes as it is."""
    with tempfile.TemporaryDirectory() as tmp:
        variables = {}
        for name, value in env.items():
            if isinstance(value, list):
                path = Path(tmp) / name
                path.write_text("".join(f"{v}\n" for v in value))
                variables[f"{name}_FILE"] = str(path)
            else:
                variables[name] = value
        proc = subprocess.run(["awk", program], input=text, capture_output=True, text=True,
                              env={**os.environ, **variables})
    return proc.returncode, [m.strip() for m in proc.stdout.split("NOT PASSED: ")[1:]]
