"""Environment plans: how one repo's tests get what they need, as data a person can read and fix.

An ``EnvPlan`` is made by the repo's ecosystem profile (``datagen/sandbox/profiles/``) from
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
    project_install: Literal["editable", "plain", "none"] = "none"
    notes: list[str] = Field(default_factory=list, description="fallbacks taken and guesses made")

    def key_material(self) -> str:
        """What decides the built env (the cache key hashes this with the dependency files)."""
        return self.model_dump_json(include={"profile", "toolchain", "install", "env", "project_install"})
