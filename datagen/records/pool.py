"""Records of the RL instruction pool: pool rows, dropped instructions and the ledger.

A ``PoolRow`` is one instruction a trainer samples ``group_size`` attempts for: the chat
prompt, where its environment comes from (repo, base commit, source folder), how it is
rewarded (runner, the two test lists, the test patch, auxiliary checks), what the scorers
said about it (pass rate, difficulty band, perplexity) and where it came from (task id,
source files, strategy). The same model is the manifest table ``pool`` and the row type of
the pool shards (``data/<split>-*.parquet``).
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import Field

from datagen.records.base import Record
from datagen.records.tasks import TaskRecord

Split = Literal["train", "validation"]
CheckKind = Literal["lint", "no_test_deletion", "no_test_skip", "no_network"]


class ChatMessage(Record):
    """One chat message of a prompt (the ``{role, content}`` shape verl and SkyRL read)."""

    role: Literal["system", "user", "assistant"]
    content: str


class AuxCheck(Record):
    """An auxiliary reward check beside the tests.

    - ``lint``: run ``command`` in the repository root after the attempt; passes on exit 0.
    - ``no_test_deletion``: the attempt's diff deletes no file matching ``patterns`` (globs).
    - ``no_test_skip``: no added line of the diff matches ``patterns`` (regexes such as
      ``pytest.mark.skip``).
    - ``no_network``: the attempt runs without network access (the sandbox enforces it).
    """

    kind: CheckKind
    command: str | None = Field(None, description="lint: the command to run (exit 0 = pass)")
    patterns: list[str] = Field(default_factory=list, description="globs or regexes, by kind")
    required: bool = Field(True, description="a failed required check zeroes the reward")


# The pool reads tasks.jsonl rows as they are: TaskRecord carries the tasks build's fields.
PoolTaskInput = TaskRecord

class PoolRow(Record):
    """One RL instruction (manifest table ``pool``; a row of ``data/<split>-*.parquet``)."""

    __table__ = "pool"
    __primary_key__ = ("instruction_id",)

    instruction_id: str = Field(description="sha256(task_id + prompt)[:16]; stable across builds")
    task_id: str = Field(description="the task's instance_id (lineage)")
    split: Split = "train"
    prompt: list[ChatMessage]
    repo: str
    base_commit: str
    repo_path: str = Field(description="git repo or snapshot folder holding the source (absolute)")
    problem_statement: str
    patch: str = Field(description="the reference fix (SWE-bench convention); never in the prompt")
    test_patch: str = Field("", description="applied before the tests are graded")
    runner: str = Field("pytest", description="the ecosystem profile that runs its tests (pytest, node, jest, go, "
                        "cargo, ...)")
    test_files: list[str] = Field(default_factory=list, description="empty = whole suite")
    fail_to_pass: list[str]
    pass_to_pass: list[str]
    aux_checks: list[AuxCheck] = Field(default_factory=list)
    group_size: int = Field(description="attempts sampled per instruction (K)")
    pass_rate: float | None = Field(None, description="policy pass rate over K attempts; null = unknown")
    difficulty_band: str = Field("unknown", description="e.g. 'unknown', 'in_band', 'too_easy'")
    perplexity: float | None = Field(None, description="of the statement; null = not scored")
    scorer: str | None = Field(None, description="versioned difficulty scorer, e.g. difficulty_v1")
    perplexity_scorer: str | None = Field(None, description="versioned scorer, e.g. perplexity_v1")
    policy_id: str | None = Field(None, description="the policy the pass rate was measured with")
    source_files: list[str] = Field(default_factory=list, description="files the fix touches")
    strategy: str | None = None
    statement_style: str | None = None
    parent_ids: list[str] = Field(default_factory=list)
    hints_text: str = ""
    created_at: str = ""
    version: str = ""
    environment_setup_commit: str = ""
    env_pins: list[str] = Field(default_factory=list, description="the exact versions (name==version) the "
                                "task's validating env held (its setup_script's pins; empty when it has none): "
                                "the Harbor Dockerfile installs under them")
    interface: str = Field("", description="what the solution implements or changes, as text (the task's "
                           "`interface`: per file, signatures and doc comments); '' when the task has none")
    soundness_flags: list[str] = Field(default_factory=list, description="the soundness flags it was kept with "
                                       "(soundness.action: keep); see the manifest table `soundness`")


class PoolDropRow(Record):
    """An instruction left out of the pool, with the reason (nothing is dropped silently)."""

    __table__ = "pool_drops"
    __primary_key__ = ("instruction_id",)

    instruction_id: str
    task_id: str
    repo: str
    reason: str = Field(description="near_duplicate, contaminated, eval_repo, out_of_band, ...")
    detail: str | None = Field(None, description="duplicate_of id, benchmark:row and span, ...")


class LedgerRow(Record):
    """One hand-out of an instruction (manifest table ``ledger``, mirrored from the pool's
    journal ``ledger/journal.jsonl``, which is the source of truth)."""

    __table__ = "ledger"

    instruction_id: str
    consumer: str
    run: str | None = None
    taken_at: dt.datetime
    returned_at: dt.datetime | None = Field(None, description="set when `pool return` gave it back")
