"""The few error classes datagen raises (a user error, a skipped item, bugs).

- ``UserError``: bad input or recipe, or a failure the user can act on; the CLI prints the
  message alone on one line (exit 2), no traceback (``--debug`` shows it).
- ``StageIncomplete``: a ``UserError`` for a build stage whose tasks did not all finish;
  the message says where the task logs are, and running the build again resumes it.
- ``JobsSubmitted``: a stage went to a cluster scheduler (``--executor slurm``); not an
  error: the build resumes in a job that depends on it.
- ``SkipItem``: one file/candidate/instruction cannot be processed; the caller records
  the reason in the manifest and carries on.
- ``Interrupted``: the build got SIGINT or SIGTERM (a ``KeyboardInterrupt``); the run is
  marked failed and the CLI exits ``128 + signal``.
- ``EmptyBuild``: a ``UserError`` for a build that would keep nothing (an empty input
  folder, every file dropped); ``--allow-empty`` writes it anyway.
- ``DiskFull``: a ``UserError`` for a write that found the disk full; one line says where
  and how much to free.
- Anything else is a bug and surfaces with its traceback under ``--debug``.

Transient failures (a teacher endpoint's 5xx) are retried where they happen
(``datagen.teachers``), so they need no class of their own.
"""


class DatagenError(Exception):
    """Base class of datagen's own errors."""


class UserError(DatagenError):
    """Bad input, recipe or flag: the message is shown to the user as is."""


class StageIncomplete(UserError):
    """Some tasks of a build stage did not complete (their logs say why)."""


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM stopped the build (``signum`` says which)."""

    def __init__(self, signum: int, name: str):
        super().__init__(f"interrupted by {name}")
        self.signum = signum
        self.name = name


class EmptyBuild(UserError):
    """A build's inputs gave nothing to keep (and ``--allow-empty`` was not given)."""


class DiskFull(UserError):
    """A write found no space left on the device."""


class JobsSubmitted(DatagenError):
    """A build stage was submitted to a cluster scheduler and runs later: the build stops
    here (its run stays ``running``, its work folder kept) and is resumed by a job that
    depends on the submitted one."""

    def __init__(self, stage: str, job_id: str, tasks: int, total: int):
        super().__init__(f"{stage}: {tasks} of {total} tasks submitted as job {job_id}")
        self.stage, self.job_id, self.tasks, self.total = stage, job_id, tasks, total
        self.continuation: str | None = None  # the job that resumes the build


class SkipItem(DatagenError):
    """One item cannot be processed; ``reason`` goes to the manifest."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


def install_hint(package: str, extra: str) -> str:
    return f"{package} is not installed; install it with: pip install 'datagen[{extra}]'"
