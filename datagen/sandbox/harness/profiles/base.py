"""The ecosystem profile: everything datagen needs to know to run one kind of test suite.

A profile is one class (registered in ``registry.py``) that says, for its ecosystem:

- ``detect``: whether a repo's suite is its kind (``package.json`` test script, ``go.mod``, ...);
- ``plan``: the ``EnvPlan`` (toolchain the repo asks for, install steps, test command) read
  from the repo's own files;
- ``ensure_env``: the environment built from that plan, once per repo + plan key, in the
  sandbox with the network ON (the only step that gets it); test runs are offline;
- ``test_command``: the suite (or a subset of it) as an argv that writes a machine-readable
  report into the working copy; ``parse``: that report to ``{test_id: status}``;
- ``setup_script`` / ``eval_script``: the same steps as plain bash, so a task replays
  outside datagen (a fresh clone, the setup, then the chosen tests; exit 0 only when all pass).

The runner name a task stores (``TaskRecord.runner``) is the profile's ``name``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, ClassVar

from datagen.errors import SkipItem, UserError
from datagen.records.env import EnvPlan
from datagen.sandbox.envs.tools import tool_stamp
from datagen.sandbox.harness import protect

if TYPE_CHECKING:
    from datagen.config.sandbox import EnvConfig, SandboxLimits
    from datagen.records.tasks import RunResult, TestStatus
    from datagen.sandbox.envs.docker import ImageSetup
    from datagen.sandbox.isolation.base import Sandbox

TestResults = dict[str, "TestStatus"]
REPORT = ".datagen-report"  # report files of test runs start with this (one per profile's suffix)


class ToolchainMissing(SkipItem):
    """A tool the profile needs is not on this machine; the repo is skipped with the reason
    ``toolchain_missing: go (Debian package golang-go)``."""

    def __init__(self, tool: str, package: str):
        self.tool, self.package = tool, package
        super().__init__(f"toolchain_missing: {tool} (Debian package {package})")


@dataclass(frozen=True)
class EnvContext:
    """What a profile's ``ensure_env`` may use: the sandbox, the setup limits (network on)
    and the env options and cache folder of the recipe."""

    sandbox: Sandbox
    limits: SandboxLimits  # already with network=True and the setup timeout
    config: EnvConfig
    cache_dir: Path
    retry_failed: bool = False


@dataclass(frozen=True)
class ProfileEnv:
    """A ready environment for one repo's tests: what a sandboxed test run needs.

    ``env`` are the variables of every run; ``ro_paths`` the host folders the sandbox must
    see read-only (the env folder, the toolchain); ``links`` are symlinks made in every
    working copy before a run (name in the copy -> target), e.g. ``node_modules``;
    ``extra`` holds what one profile keeps for itself (the pytest profile's ``PythonEnv``).
    """

    profile: str
    plan: EnvPlan
    path: Path | None = None
    env: dict[str, str] = field(default_factory=dict)
    ro_paths: tuple[Path, ...] = ()
    links: dict[str, str] = field(default_factory=dict)
    extra: object = None


class Profile:
    """One ecosystem's way to set up, run and read a repo's test suite (subclass it)."""

    name: ClassVar[str] = ""  # the runner name stored in records: pytest, node, jest, go, cargo, ...
    language: ClassVar[str] = ""  # the task's language label: python, javascript, typescript, go, rust, ...
    source_langs: ClassVar[tuple[str, ...]] = ()  # crawl languages (ListedFile.lang) strategies may target
    tools: ClassVar[dict[str, str]] = {}  # executable -> Debian package that provides it
    env_tools: ClassVar[tuple[str, ...]] = ()  # executables an env build uses where present (in its key)
    priority: ClassVar[int] = 100  # detection order: lower is asked first (ties: by name)
    report: ClassVar[str] = REPORT + ".xml"  # where a test run writes its report, in the working copy
    covers_lines: ClassVar[bool] = False  # per-test line coverage (``coverage``) is implemented
    env_version: ClassVar[int] = 1  # raise it when ``ensure_env`` starts writing a different env folder
    # The teacher's env repair (``synth/env_repair.py``) knows how to change this profile's plans.
    repairable: ClassVar[bool] = False
    # A test run needs the env ``ensure_env`` built (no run on the profile's defaults).
    needs_built_env: ClassVar[bool] = False
    # The Dockerfile's base image (``dockerfile``): the ecosystem's official image, ``{version}``
    # the plan's toolchain (major.minor), and the image when the plan names no version.
    image: ClassVar[str] = ""
    image_default: ClassVar[str] = ""

    # --- detection -------------------------------------------------------------------------
    def detect(self, src: Path, paths: list[str]) -> bool:
        """Whether the repo at ``src`` (its snapshot's ``paths``) runs its suite this way."""
        raise NotImplementedError

    def is_test_file(self, path: str) -> bool:
        """Test code by this ecosystem's conventions (strategies never target it): the one rule
        of ``datagen/sandbox/harness/protect.py``, which a profile may only narrow."""
        return protect.is_test_file(path)

    def looks_for(self) -> str:
        """What ``detect`` looks for, in a few words (a repo no profile claims says so)."""
        return (self.__doc__ or self.name).strip().splitlines()[0].rstrip(".")

    def missing_tool(self) -> ToolchainMissing | None:
        """The first tool of ``tools`` not on PATH here, or None when all are."""
        for tool, package in self.tools.items():
            if shutil.which(tool) is None:
                return ToolchainMissing(tool, package)
        return None

    def task_language(self, src: Path | None = None) -> str:
        """The language label of this repo's tasks (``language`` unless the repo says otherwise,
        e.g. a TypeScript project under a JS runner)."""
        return self.language

    # --- environment -----------------------------------------------------------------------
    def plan(self, src: Path) -> EnvPlan:
        """The repo's environment plan, by rules over its own files."""
        raise NotImplementedError

    def plan_stub(self) -> EnvPlan:
        """The plan of a repo datagen cannot read (a task from elsewhere): the profile's defaults."""
        return EnvPlan(profile=self.name)

    def env_key(self, src: Path, plan: EnvPlan) -> str:
        """The env cache key: the plan, the dependency files' content, the tools that build
        the env (``build_tools``, name and version: an env built while Composer was missing is
        not reused once it is installed), the files datagen writes into it (``env_files``)
        and, once a profile changes what its env folder holds, its ``env_version``."""
        version = f"v{self.env_version}\0" if self.env_version > 1 else ""
        h = hashlib.sha256(f"{self.name}\0{plan.key_material()}\0{version}".encode())
        if written := self.env_files():
            h.update(b"files\0" + written.encode() + b"\0")
        h.update(tool_stamp(self.build_tools(plan)).encode() + b"\0")
        for rel in self.dependency_files(src):
            h.update(rel.encode() + b"\0" + (src / rel).read_bytes() + b"\0")
        return h.hexdigest()[:16]

    def env_files(self) -> str:
        """The text of files ``ensure_env`` writes into every env of this profile from
        datagen's own code (stand-ins, helper scripts): in the env key, so an env built
        before they changed is not reused. '' when there is none."""
        return ""

    def build_tools(self, plan: EnvPlan) -> tuple[str, ...]:
        """The executables whose presence and version shape the env ``plan`` builds: the
        profile's ``tools`` and ``env_tools``, and the one each of the plan's command steps
        starts (``composer``; a repo's own script, ``./gradlew``, is no tool)."""
        commands = [s.args[0] for s in plan.install if s.kind == "command" and s.args]
        return (*self.tools, *self.env_tools, *commands)

    def env_name(self, src: Path, plan: EnvPlan, config: EnvConfig) -> str:
        """The env's folder under the env cache: ``<profile>-<key>`` (the recipe's mirrors in it)."""
        from datagen.sandbox.envs.mirrors import keyed

        return f"{self.name}-{keyed(self.env_key(src, plan), config.mirrors)}"

    def configured_plan(self, src: Path, config: EnvConfig, name: str = "") -> EnvPlan:
        """The plan the recipe's ``env`` section gives the repo ``name`` at ``src`` (what the
        tasks build and ``datagen env`` use): the rules' (``plan``) unless the profile reads
        user plans from it."""
        return self.plan(src)

    def dependency_files(self, src: Path) -> list[str]:
        """Repo-relative files whose content decides the environment (lock files, manifests)."""
        return []

    def ensure_env(self, src: Path, plan: EnvPlan, ctx: EnvContext) -> ProfileEnv:
        """The environment of ``plan`` for the repo at ``src``, built on first use
        (raises ``datagen.sandbox.envs.cache.EnvSetupError`` when it cannot be)."""
        return ProfileEnv(self.name, plan)

    def wrap_env(self, env: object, plan: EnvPlan) -> ProfileEnv:
        """An env this profile's builder made outside ``ensure_env`` (or one named by hand)
        as a ``ProfileEnv`` (only a profile whose builder hands out its own env kind has one)."""
        raise TypeError(f"{self.name}: no env of type {type(env).__name__}")

    def run_env(self, env: ProfileEnv, workdir: Path) -> dict[str, str]:
        """Variables of one test run in ``workdir``."""
        return dict(env.env)

    # --- running and reading -----------------------------------------------------------------
    def test_command(self, env: ProfileEnv, workdir: Path, tests: list[str] | None) -> list[str]:
        """The argv that runs ``tests`` (ids as ``parse`` gives them; None: the whole suite)
        in ``workdir`` and writes the report to ``workdir / self.report``."""
        raise NotImplementedError

    def parse(self, text: str) -> TestResults:
        """The report's text -> ``{test_id: status}`` (raises ``ReportError`` when it is not
        the format); a pure function of the text."""
        raise NotImplementedError

    def log_text(self, report: str) -> str:
        """The human-readable test output held in the report, for a profile whose command sends
        the runner's output into it ('' when the run's own stdout/stderr already show it):
        what failure messages and problem statements quote."""
        return ""

    def read_report(self, workdir: Path, run: RunResult) -> str | None:
        """The report text of a finished run (None when it wrote none)."""
        try:
            return (workdir / self.report).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    def coverage(self, env: ProfileEnv, sandbox: Sandbox, workdir: Path, limits: SandboxLimits,
                 ro_paths: tuple[Path, ...] = ()) -> dict[str, dict[int, list[str]]]:
        """path -> line -> ids of the tests that execute it, from one run in ``workdir`` (a
        fresh copy the caller removes); {} where the profile has no per-test coverage
        (``covers_lines`` False): then every candidate is checked with the whole suite."""
        return {}

    def finished_files(self, run: RunResult) -> list[str]:
        """The test files a whole-suite run stopped by its time limit had finished, in the
        order it ran them, from its output ([] where the runner's output does not say): the
        subset the baseline falls back to when the suite does not fit its budget."""
        return []

    def test_group(self, test: str) -> str:
        """The group a test id belongs to (its file, class, ``describe`` block or family): the
        id up to its last ``" > "``, ``"::"`` or ``"#"`` part; an id without one is its own group.
        The ``feature`` family removes what one group reaches and the others reach least."""
        for sep in (" > ", "#", "::"):
            if sep in test:
                return test.rsplit(sep, 1)[0]
        return test

    def marked_flaky(self, src: Path, tests: list[str]) -> set[str]:
        """The ids of ``tests`` that the repo's own code marks as flaky (timing-dependent
        tests its authors let fail): the baseline leaves them out of every task."""
        return set()

    def budget_vars(self, env: ProfileEnv) -> dict[str, str]:
        """Variables that run the same tests for less time, for a suite that does not fit its
        budget whole ({} where the profile knows none): the baseline's runs, every candidate's
        and the task's eval script then get them (they go into the plan's ``env``)."""
        return {}

    def grading_targets(self, tests: list[str]) -> list[str]:
        """What a grading run is given for ``tests`` (default: the ids themselves)."""
        return list(dict.fromkeys(tests))

    def test_files(self, tests: list[str]) -> list[str]:
        """The files that hold ``tests`` (ids), where ids name them; sorted."""
        return sorted({t.split("::", 1)[0] for t in tests if "::" in t})

    # --- replay outside datagen --------------------------------------------------------------
    def setup_commands(self, plan: EnvPlan) -> list[str]:
        """Bash lines that install what the tests need, in the repo's checkout (network allowed)."""
        return [shlex.join(step.args) for step in plan.install if step.kind == "command"]

    def eval_commands(self, plan: EnvPlan, tests: list[str]) -> list[str]:
        """Bash lines that run ``tests`` offline with the repo's own tools and exit non-zero
        unless every one of them passed."""
        raise NotImplementedError

    def docker_image(self, plan: EnvPlan) -> str:
        """The Dockerfile's base image for ``plan`` ('' when the profile names none)."""
        from datagen.sandbox.envs.docker import image_version

        version = image_version(plan)
        return self.image.format(version=version) if version and self.image else self.image_default

    def image_tools(self, plan: EnvPlan) -> list[str]:
        """Dockerfile lines after ``FROM`` that add the tools the base image lacks."""
        return []

    def image_setup(self, plan: EnvPlan, workdir: str = "/repo") -> ImageSetup:
        """What a task's image holds (``datagen/sandbox/envs/docker.py``), the source in
        ``workdir``: the base image, the tools it lacks, the task's ``setup_script`` as one RUN."""
        from datagen.sandbox.envs.docker import ImageSetup, setup_heredoc

        return ImageSetup(self.docker_image(plan), self.image_tools(plan),
                          install=setup_heredoc(plan, self.setup_script(plan)), cmd=list(plan.test_command))

    def dockerfile(self, plan: EnvPlan, repo: str = "repo") -> str:
        """``plan`` as a Dockerfile (build context: the repo's working copy): the base image,
        the plan's variables and the setup (``image_setup``)."""
        from datagen.sandbox.envs.docker import repo_dockerfile

        if not self.docker_image(plan):
            raise UserError(f"profile {self.name!r} names no base image for a Dockerfile")
        return repo_dockerfile(self.image_setup(plan), plan, repo)

    def pins_of(self, setup_script: str) -> list[str]:
        """The exact versions (``EnvPlan.pins``) a ``setup_script`` of this profile installs
        under; [] when it pins nothing (the profile's scripts carry no pins)."""
        return []

    def setup_script(self, plan: EnvPlan) -> str:
        """A bash script run in the repo's checkout (``$REPO_DIR``, default the current
        folder): installs what the tests need; may use the network."""
        return _script("Installs what the task's tests need (may use the network).", plan,
                       self.setup_commands(plan))

    def eval_script(self, plan: EnvPlan, tests: list[str], base_commit: str = "") -> str:
        """A bash script run in the repo's checkout: runs ``tests`` (FAIL_TO_PASS +
        PASS_TO_PASS) with the repo's own tools, offline; exit 0 only when all of them pass.
        With the task's ``base_commit`` it first fails (exit 3) a checkout whose test files
        or test config differ from the task's (``sandbox.protect``)."""
        guard = protect.guard_lines(base_commit) if base_commit else []
        return _script("Runs the task's FAIL_TO_PASS and PASS_TO_PASS tests; exit 0 only when all pass.",
                       plan, [*guard, *self.eval_commands(plan, sorted(set(tests)))])


def _script(what: str, plan: EnvPlan, lines: list[str]) -> str:
    env = [f"export {k}={shlex.quote(v)}" for k, v in sorted(plan.env.items())]
    head = ["#!/bin/bash", f"# {what}", f"# profile: {plan.profile}"
            + (f"; toolchain: {plan.toolchain}" if plan.toolchain else ""),
            "set -uo pipefail", 'cd "${REPO_DIR:-.}" || exit 2',
            # the locale and time zone of the sandboxed runs that validated the task
            "export LANG=C.UTF-8 LC_ALL=C.UTF-8 TZ=UTC"]
    return "\n".join([*head, *env, *lines]) + "\n"


# --- test selections that fit any argument limit ---------------------------------------------
# The most bytes the test selection of one command line may take, in datagen's runs and in the
# eval scripts alike: under Linux's limit for a single argument or variable (MAX_ARG_STRLEN,
# 128 KiB: one runner's regex of 1,700 test names passed it, and the command failed with
# "Argument list too long") and far under ARG_MAX (2 MiB, shared with the environment). A
# selection that does not fit runs wider (its whole test files, or the whole suite; the report
# is still read per id), and the ids an eval script checks are a here-document (``ids_file``),
# never an argument or a variable in the environment.
ARGS_BUDGET = 100_000
IDS_FILE = ".datagen-eval-ids"  # the eval scripts' ids, one a line, in the checkout


def args_bytes(args: list[str]) -> int:
    """The bytes ``args`` take on a command line (each with its terminating NUL)."""
    return sum(len(a.encode()) + 1 for a in args)


def fitting(*selections: list[str]) -> list[str]:
    """The first of ``selections`` (the narrowest first) whose arguments fit ``ARGS_BUDGET``;
    the last one (the widest: whole files, or nothing for the whole suite) when none does."""
    for selection in selections[:-1]:
        if args_bytes(selection) <= ARGS_BUDGET:
            return selection
    return selections[-1]


def chunks(items: list[str], budget: int | None = None) -> list[list[str]]:
    """``items`` in order, cut into runs whose shell-quoted words take at most ``budget`` bytes
    (default ``ARGS_BUDGET``): the parts of a selection a runner is given one run at a time."""
    budget = ARGS_BUDGET if budget is None else budget
    out: list[list[str]] = [[]]
    size = 0
    for item in items:
        n = len(shlex.quote(item).encode()) + 1
        if out[-1] and size + n > budget:
            out.append([])
            size = 0
        out[-1].append(item)
        size += n
    return out


def ids_file(tests: list[str], path: str = IDS_FILE) -> list[str]:
    """Bash lines that write ``tests`` (ids, one a line) into ``path`` in the checkout: a quoted
    here-document, so any number of ids fits (no argument and no variable holds them)."""
    return [f"cat > {path} <<'DATAGEN_IDS_EOF'", *tests, "DATAGEN_IDS_EOF"]


def read_json(path: Path) -> object:
    """A JSON file's content, or None when it is missing or not JSON."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def under(path: str, folders: tuple[str, ...]) -> bool:
    """Whether ``path`` lies in any folder named in ``folders`` (at any depth)."""
    return any(part in folders for part in PurePosixPath(path).parts[:-1])


def repo_files(src: Path, keep: Callable[[str], bool], limit: int) -> list[Path]:
    """Up to ``limit`` files of the repo at ``src`` whose repo-relative path ``keep`` accepts,
    in name order, none under ``node_modules`` or ``.git`` (not even walked)."""
    out: list[Path] = []
    for root, dirs, files in os.walk(src):
        dirs[:] = sorted(d for d in dirs if d not in ("node_modules", ".git"))
        for name in sorted(files):
            path = Path(root) / name
            if keep(path.relative_to(src).as_posix()):
                out.append(path)
                if len(out) >= limit:
                    return out
    return out


def links_into(workdir: Path, links: Mapping[str, str]) -> None:
    """Make the env's symlinks in a working copy (an existing entry of the same name stays)."""
    for name, target in links.items():
        link = workdir / name
        if not link.exists() and not link.is_symlink():
            link.parent.mkdir(parents=True, exist_ok=True)
            link.symlink_to(target)
