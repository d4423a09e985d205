"""Pick a back end: ``bwrap`` where it starts, else the subprocess fallback."""

from __future__ import annotations

import functools
import subprocess

from datagen.config.sandbox import BACKENDS
from datagen.errors import UserError
from datagen.sandbox.base import Sandbox
from datagen.sandbox.bwrap import BwrapSandbox, bwrap_path
from datagen.sandbox.subprocess_backend import SubprocessSandbox


@functools.cache
def bwrap_works() -> tuple[bool, str]:
    """Whether bwrap can build a sandbox here (being installed is not enough: the host may
    refuse it namespaces). Returns (ok, reason)."""
    path = bwrap_path()
    if path is None:
        return False, "bwrap not found on PATH (Debian: apt-get install bubblewrap)"
    try:
        BwrapSandbox(path)
    except RuntimeError as exc:
        return False, str(exc)
    try:
        proc = subprocess.run(
            [path, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "true"],
            capture_output=True, text=True, timeout=30,
        )
    except subprocess.TimeoutExpired:
        return False, "bwrap timed out creating namespaces"
    if proc.returncode != 0:
        return False, f"bwrap cannot create namespaces: {proc.stderr.strip()[:200]}"
    return True, "ok"


def get_sandbox(name: str = "auto", warn: bool = True) -> Sandbox:
    """The back end called ``name`` ('auto', 'bwrap' or 'subprocess').

    Any other name is refused: silently falling back to ``auto`` would turn a typo such as
    ``bwarp`` into an unisolated run on a host without bubblewrap.
    """
    if name not in BACKENDS:
        raise UserError(f"unknown sandbox back end {name!r}; choose one of {', '.join(BACKENDS)}")
    if name == "subprocess":
        return SubprocessSandbox(warn=warn)
    ok, reason = bwrap_works()
    if ok:
        return BwrapSandbox()
    if name == "bwrap":
        raise UserError(f"sandbox back end 'bwrap' is unavailable: {reason}")
    return SubprocessSandbox(warn=warn)
