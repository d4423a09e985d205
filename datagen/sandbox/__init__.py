"""Sandboxed execution: run a repo's tests in isolation, parse per-test results, grade.

``get_sandbox("auto")`` gives the bubblewrap back end where it works and the plain
subprocess fallback (resource limits only, loudly) elsewhere.
"""

from datagen.sandbox.base import Sandbox
from datagen.sandbox.select import get_sandbox

__all__ = ["Sandbox", "get_sandbox"]
