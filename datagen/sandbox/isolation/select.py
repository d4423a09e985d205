"""Pick a back end.

- ``get_sandbox(name)``: ``bwrap`` where it starts, else the subprocess fallback (for
  datagen's own commands, e.g. ``sandbox check`` probing the fallback).
- ``untrusted_sandbox(name)``: for code datagen did not write (``validate``, ``sandbox
  run``, the task and pool builds). Closed by default: ``auto`` without a working
  bubblewrap is a one-line ``UserError`` that says how to install it or how to opt in to
  the subprocess back end by name (unsafe: resource limits only, no isolation).
"""

from __future__ import annotations

import functools
import subprocess

from datagen.config.sandbox import BACKENDS
from datagen.errors import UserError
from datagen.sandbox.isolation.base import Sandbox
from datagen.sandbox.isolation.bwrap import BwrapSandbox, bwrap_path
from datagen.sandbox.isolation.subprocess_backend import SubprocessSandbox


@functools.cache
def bwrap_works() -> tuple[bool, str]:
    """Whether bwrap can build a sandbox here (being installed is not enough: the host may
    refuse it namespaces). Returns (ok, reason)."""
    path = bwrap_path()
    if path is None:
        return False, "bwrap not found on PATH (Debian package bubblewrap)"
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


INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)"
OPT_IN = "--set sandbox.backend=subprocess"


def untrusted_policy() -> str:
    """One line: what a command that runs untrusted code does on this host (``auto``)."""
    ok, reason = bwrap_works()
    if ok:
        return "untrusted code (validate, task and pool builds): runs in bwrap"
    return (f"untrusted code (validate, task and pool builds): REFUSED with backend auto ({reason}); "
            f"{INSTALL_HINT}, or opt in with {OPT_IN} (unsafe: resource limits only)")


def untrusted_sandbox(name: str = "auto") -> Sandbox:
    """The back end for code datagen did not write: bwrap, or ``subprocess`` only when it
    is named explicitly. ``auto`` without a working bwrap is refused (``UserError``)."""
    if name == "auto":
        ok, reason = bwrap_works()
        if not ok:
            raise UserError(f"refusing to run untrusted code without isolation: {reason}; "
                            f"{INSTALL_HINT}, or opt in with {OPT_IN} (unsafe: resource limits only)")
    return get_sandbox(name)
