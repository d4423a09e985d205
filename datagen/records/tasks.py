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
        "resolved against the folder of the JSONL file"
    )
    runner: Literal["pytest", "node"] = "pytest"
    test_files: list[str] = Field(default_factory=list, description="empty = whole suite")

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
