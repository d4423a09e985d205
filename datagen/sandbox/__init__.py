"""Sandboxed execution: run a repo's tests in isolation, parse per-test results, grade.

``untrusted_sandbox("auto")`` gives the bubblewrap back end where it works and refuses
elsewhere (the subprocess back end only when named: resource limits only, unsafe);
``get_sandbox("auto")`` falls back to the subprocess back end, loudly, for datagen's own
commands (``sandbox check``).
"""

from datagen.sandbox.isolation.base import Sandbox
from datagen.sandbox.isolation.select import get_sandbox, untrusted_sandbox

__all__ = ["Sandbox", "get_sandbox", "untrusted_sandbox"]
