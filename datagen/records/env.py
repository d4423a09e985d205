"""Environment plans: how one repo's tests get what they need, as data a person can read and fix.

An ``EnvPlan`` is made by the repo's ecosystem profile (``datagen/sandbox/harness/profiles/``) from
the repo's own files, repaired by the teacher when the rules fail, or given by the user. It is
kept in the manifest (``repo_envs``) and rendered as a task's ``setup_script`` /
``eval_script`` and as a Dockerfile, so a consumer outside datagen builds the same env.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from datagen.records.base import Record

StepSource = Literal["rule", "teacher", "user"]


class InstallStep(Record):
    """One install step of a plan, with where it came from."""

    name: str = Field(description="short label, e.g. 'dependencies', 'test extras', 'npm ci'")
    kind: Literal["requirements", "project", "command"] = Field(
        description="requirements: install `args` (requirement specs, or `-r FILE`); project: install "
        "the repo itself (`args`: extras); command: run `args` as one argv in the repo's copy")
    args: list[str] = Field(default_factory=list)
    origin: str = Field("", description="the file and table it was read from, e.g. "
                        "'pyproject.toml [project.optional-dependencies] test'")
    source: StepSource = "rule"
    optional: bool = Field(False, description="a failure is recorded and the build goes on")


class EnvPlan(Record):
    """Everything needed to build one repo's test environment and run its suite."""

    profile: str = Field(description="the ecosystem profile that made it: pytest, node, go, cargo, ...")
    toolchain: str = Field("", description="the interpreter or toolchain used, e.g. 'python3.11', 'go1.19'")
    toolchain_request: str = Field("", description="what the repo asks for, e.g. '>=3.9' (requires-python), "
                                   "'1.21' (go.mod); '' when it says nothing")
    toolchain_mismatch: str | None = Field(None, description="why no toolchain found here fits the request")
    install: list[InstallStep] = Field(default_factory=list, description="in order")
    env: dict[str, str] = Field(default_factory=dict, description="variables for setup and test runs")
    test_command: list[str] = Field(default_factory=list, description="the suite's command, as a person "
                                    "would type it in the repo (without datagen's report flags)")
    test_paths: list[str] = Field(default_factory=list, description="where the tests live (empty: runner default)")
    build: list[str] = Field(default_factory=list, description="the argv that builds the project before every "
                             "test run, after every patch, in datagen's runs and the eval script (a JS package "
                             "whose tests load its build output: its own build script); a failed build is "
                             "reported and the tests run anyway (not part of the env's key)")
    project_install: Literal["editable", "plain", "none"] = "none"
    notes: list[str] = Field(default_factory=list, description="fallbacks taken and guesses made")
    write_files: dict[str, str] = Field(default_factory=dict, description="files the build backend would "
                                        "generate in the working copy (e.g. a VCS version file), path -> text; "
                                        "written into the source before tests run when missing")
    fallback: str = Field("", description="where the built env went on past a failed optional step, in its "
                          "profile's words (rspec / minitest 'system': bundle install failed, the tests ran on the "
                          "machine's gems; phpunit 'autoload': composer install failed, the project's autoloader "
                          "and the machine's PHPUnit); the replay scripts go on the same way and say so; '' when "
                          "no step failed (not part of the env's key)")
    pins: list[str] = Field(default_factory=list, description="the exact versions (name==version) the built "
                            "env held when it validated the tasks; the setup_script installs under them as "
                            "constraints, so a replay gets the same test tools (not part of the env's key)")

    def key_material(self) -> str:
        """What decides the built env (the cache key hashes this with the dependency files)."""
        return self.model_dump_json(include={"profile", "toolchain", "install", "env", "project_install",
                                             "write_files"})


EnvOutcome = Literal["yielded", "no_tasks", "env_failed", "no_tests", "no_passing_tests", "suite_failed",
                     "no_test_runner", "skipped"]


class RepoEnvRow(Record):
    """One input repo's environment as a build made it: the plan used, how it went, and why
    the repo yields nothing when it does not (``datagen report`` groups repos by ``outcome``)."""

    __table__ = "repo_envs"
    __primary_key__ = ("run_id", "repo")

    run_id: str
    repo: str
    env_key: str = Field("", description="the env's folder under env.cache_dir ('' when none was built)")
    profile: str = Field("", description="the ecosystem profile: pytest, node, ...")
    plan: str = Field("", description="the EnvPlan used, as JSON (edit it and pass it as env.overrides[repo])")
    plan_source: str = Field("", description="rule | teacher | user: who made the plan that was kept")
    step_sources: str = Field("", description="JSON list of {name, origin, source} per install step")
    toolchain: str = Field("", description="the interpreter used")
    toolchain_mismatch: str | None = None
    installer: str = Field("", description="uv or pip")
    attempts: int = Field(0, description="plans built: 1 for the rules' plan, plus one per teacher round")
    seconds: float = Field(0.0, description="env build seconds (all attempts)")
    outcome: EnvOutcome
    reason: str | None = Field(None, description="the repo_baselines reason, when it yields nothing")
    failed_step: str = Field("", description="the install step that failed")
    log_tail: str = Field("", description="the failing step's log tail")
    tasks: int = Field(0, description="tasks the repo yielded")
    notes: list[str] = Field(default_factory=list)
