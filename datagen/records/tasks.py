"""Records of sandboxed execution and verified agent tasks.

``TaskRecord`` is one stored task: a SWE-bench row (``patch`` is the FIX, the two test
lists are real JSON lists; readers also accept SWE-bench's JSON-encoded strings) plus
where its source lives (``repo_path``) and how its tests run (``runner``).
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import Field, field_validator

from datagen.records.base import Record

LimitName = Literal["timeout", "memory", "cpu", "processes", "file_size", "disk"]
TestStatus = Literal["pass", "fail", "error", "skip"]


class RunResult(Record):
    """What one sandboxed command did."""

    backend: str
    exit_code: int = Field(description="the command's code; 128+N when killed by signal N")
    stdout: str = Field(description="capped: head and tail kept, the middle marked as cut")
    stderr: str
    stdout_bytes: int = Field(description="bytes the command wrote, before the cap")
    stderr_bytes: int
    duration_s: float
    limit_hit: LimitName | None = Field(None, description="which limit stopped it, if any")
    limit_evidence: str | None = Field(None, description="how that was detected")
    memory_peak_mb: float | None = Field(None, description="peak of the whole tree, if measured")

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and self.limit_hit is None


class InterfaceItem(Record):
    """One entity a task's solution implements or changes: where it is, its signature, its
    doc comment (a feature task: a stubbed function; a bug task: a function the fix changes
    that the failing tests call)."""

    path: str
    name: str = Field(description="qualified name, e.g. 'Router.add'")
    signature: str = Field(description="its first line(s) as the tree shows them, e.g. 'def add(self, route):'")
    doc: str = Field("", description="its doc comment or docstring, '' when none")


def interface_text(items: list[InterfaceItem]) -> str:
    """The interface as plain text (what the SWE-bench row's ``interface`` and a prompt hold):
    per file, each signature, with its doc comment indented under it."""
    out: list[str] = []
    for path in sorted({i.path for i in items}):
        out.append(f"{path}:")
        for i in (i for i in items if i.path == path):
            out.append(f"    {i.signature}")
            out += [f"        {line}" for line in i.doc.splitlines() if line.strip()]
    return "\n".join(out) + ("\n" if out else "")


class TaskRecord(Record):
    """One stored task (a row of ``tasks.jsonl``)."""

    instance_id: str
    repo: str = Field(description="owner/name or a local name")
    base_commit: str = Field(description="commit the task starts from ('' for a snapshot dir)")
    patch: str = Field(description="the FIX (SWE-bench convention), a unified git diff")
    test_patch: str = Field("", description="diff adding the tests that prove the fix")
    problem_statement: str = ""
    hints_text: str = ""
    created_at: str = ""
    version: str = ""
    environment_setup_commit: str = ""
    FAIL_TO_PASS: list[str] = Field(default_factory=list)
    PASS_TO_PASS: list[str] = Field(default_factory=list)
    repo_path: str = Field(
        description="git repo or snapshot folder holding the source; relative paths are "
        "resolved against the folder of the JSONL file (datagen's tasks: the sealed "
        "environment envs/<env_id>.git, one root commit and nothing else)"
    )
    runner: str = Field("pytest", description="the ecosystem profile that runs its tests (pytest, node, jest, "
                        "vitest, mocha, ava, go, cargo, ...; `datagen/sandbox/harness/profiles/`)")
    test_files: list[str] = Field(default_factory=list, description="empty = whole suite")
    language: str = Field("", description="python, javascript, typescript, go, rust, ... ('' when unknown)")
    setup_script: str = Field("", description="bash run in a fresh checkout at base_commit: installs what the "
                              "tests need (may use the network)")
    eval_script: str = Field("", description="bash run in the checkout after setup_script: runs FAIL_TO_PASS and "
                             "PASS_TO_PASS with the repo's own tools, offline; exit 0 only when all pass")
    # Written by ``datagen build tasks`` (optional for tasks from elsewhere).
    bug_patch: str = Field("", description="the reverse of `patch`: the diff that introduces the bug "
                           "(SWE-smith's `patch`)")
    strategy: str = Field("", description="versioned name of the strategy that made the task")
    parent_ids: list[str] = Field(default_factory=list, description="tasks this one was made from "
                                  "(combine, evolve)")
    statement_style: str = Field("", description="'issue', 'terse', 'request' (a feature task's, by a "
                                 "teacher) or 'template'")
    relevant_files: list[str] = Field(default_factory=list, description="files the fix and the "
                                      "failing tests touch (retrieval labels)")
    changed_files: int = Field(0, description="files the fix changes")
    changed_lines: int = Field(0, description="lines the fix adds plus lines it removes")
    long_horizon: bool = Field(False, description="the fix spans 5 or more files")
    interface: list[InterfaceItem] = Field(default_factory=list, description="what the solution implements or "
                                           "changes (a feature task: the stubbed functions; a bug task: the "
                                           "functions the fix changes that the failing tests call)")

    @field_validator("FAIL_TO_PASS", "PASS_TO_PASS", mode="before")
    @classmethod
    def _decode_json_list(cls, value: object) -> object:
        # SWE-bench stores the lists as JSON-encoded strings; SWE-smith as real lists.
        return json.loads(value) if isinstance(value, str) else value


class ValidationRow(Record):
    """One replayed task: did it still prove itself?"""

    __table__ = "validations"
    __primary_key__ = ("run_id", "instance_id")

    run_id: str
    instance_id: str
    status: Literal["valid", "invalid", "error"]
    reason: str | None = Field(None, description="why not valid, e.g. 'f2p_mismatch'")
    backend: str
    fail_to_pass: list[str]
    pass_to_pass: list[str]
    flaky: list[str]
    missing_f2p: list[str] = Field(description="stored FAIL_TO_PASS tests that no longer flip")
    missing_p2p: list[str] = Field(description="stored PASS_TO_PASS tests that no longer pass")
    notes: list[str] = Field(description="runs whose results may be incomplete, and why")
    duration_s: float


CandidateStatus = Literal["kept", "dropped"]


class CandidateRow(Record):
    """EVERY candidate patch a strategy proposed, kept or not, with the reason."""

    __table__ = "candidates"
    __primary_key__ = ("run_id", "candidate_id")

    run_id: str
    candidate_id: str = Field(description="hash of repo, strategy, entity, seed and the change")
    repo: str
    strategy: str
    family: str = Field(description="procedural, removal, feature_removal, feature, history, combine, lm_rewrite, "
                        "evolve")
    entity: str = Field(description="path::qualname of the targeted entity ('' when none)")
    seed: int
    status: CandidateStatus
    reason: str | None = Field(None, description="why dropped, e.g. 'no_test_breaks', 'entity_quota', "
                               "'duplicate_break', 'duplicate_statement', 'fix_in_environment'")
    detail: str = Field("", description="the evidence of the reason, where there is more to say")
    duplicate_of: str | None = Field(None, description="the kept task this one repeats (duplicate_break: same "
                                     "failing tests and first error; duplicate_statement: same statement)")
    stage: str = Field(description="furthest stage reached: generated, applied, broke_tests, valid, kept")
    instance_id: str | None = Field(None, description="the task it became, when kept")
    fail_to_pass: int = 0
    pass_to_pass: int = 0
    changed_lines: int = Field(0, description="lines the kept task's fix adds plus lines it removes")
    changed_files: int = Field(0, description="files the kept task's fix changes")
    entities: int = Field(0, description="functions the kept task's fix changes (a feature task: those it "
                          "removed)")
    sandbox_s: float = Field(0.0, description="sandbox wall seconds spent validating it")
    teacher_tokens: int = Field(0, description="teacher tokens spent on it (rewrite, statement)")
    parent_ids: list[str] = Field(default_factory=list)


class TaskRow(Record):
    """One emitted task (the full record is a line of ``tasks.jsonl``)."""

    __table__ = "tasks"
    __primary_key__ = ("run_id", "instance_id")

    run_id: str
    instance_id: str
    candidate_id: str
    repo: str
    strategy: str
    family: str = Field("", description="the strategy family that made it (procedural, removal, feature, "
                        "history, combine, ...)")
    base_commit: str
    fail_to_pass: int
    pass_to_pass: int
    changed_files: int
    changed_lines: int
    hunks: int = Field(0, description="places (diff hunks) the fix changes")
    entities: int = Field(0, description="functions the fix changes (a feature task: those it removed)")
    entity: str = Field("", description="the function(s) the fix changes, path::qualname (';'-joined for a "
                        "combined task; '' for a mined commit)")
    env_path: str = Field("", description="the sealed environment a trainer clones (envs/<env_id>.git)")
    statement_style: str
    statement_chars: int
    statement_note: str = Field("", description="why the teacher's statement was not used "
                                "(the template replaced it), e.g. 'quotes_fix_line'")
    long_horizon: bool


class RepoBaselineRow(Record):
    """One input repo's test suite as the tasks build found it."""

    __table__ = "repo_baselines"
    __primary_key__ = ("run_id", "repo")

    run_id: str
    repo: str
    runner: str | None = Field(None, description="the profile that runs its suite (pytest, node, jest, go, cargo, "
                               "...); null when none was found")
    language: str = Field("", description="its tasks' language label")
    toolchain: str = Field("", description="the toolchain its env uses, e.g. go1.19.8")
    toolchain_mismatch: str | None = Field(None, description="why the toolchain here does not fit what the repo "
                                           "asks for (the build goes on with it)")
    status: Literal["ok", "skipped"]
    reason: str | None = Field(None, description="why the repo gives no tasks, e.g. 'no_tests'")
    detail: str = Field("", description="what the failing step said, e.g. 'toolchain_missing: composer "
                        "(Debian package composer)' under reason env_setup_failed")
    tests: int = Field(0, description="tests that passed in every baseline run")
    flaky_tests: list[str] = Field(default_factory=list, description="tests whose result changed between runs")
    failing_tests: int = Field(0, description="tests that failed in every baseline run (left out)")
    suite_s: float = Field(0.0, description="median wall seconds of one whole-suite run")
    source_lines: int = Field(0, description="non-blank lines of non-test source files")
    entities: int = Field(0, description="functions, methods and classes found")
    covered_entities: int = Field(0, description="entities at least one passing test reaches")
    feature_detail: str = Field("", description="why the feature family proposed no candidate for the repo (no "
                                "share of the budget, no test group, no function whose stub compiles, no feature "
                                "of synth.feature_lines / feature_entities); '' when it proposed some or is off")
    clean_commit: str = Field("", description="commit of the clean source in the build's store (never published)")
