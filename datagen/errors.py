"""The few error classes datagen raises (see STYLE.md, point 6).

- ``UserError``: bad input or recipe; the CLI prints the message alone, no traceback.
- ``SkipItem``: one file/candidate/instruction cannot be processed; the caller records
  the reason in the manifest and carries on.
- ``RetryableError``: a transient failure (network, 5xx); callers may retry.
- Anything else is a bug and surfaces with its traceback under ``--debug``.
"""


class DatagenError(Exception):
    """Base class of datagen's own errors."""


class UserError(DatagenError):
    """Bad input, recipe or flag: the message is shown to the user as is."""


class SkipItem(DatagenError):
    """One item cannot be processed; ``reason`` goes to the manifest."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


class RetryableError(DatagenError):
    """A transient failure worth retrying."""


def install_hint(package: str, extra: str) -> str:
    return f"{package} is not installed; install it with: pip install 'datagen[{extra}]'"
