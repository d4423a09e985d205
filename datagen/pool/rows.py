"""Tasks -> RL pool rows: chat prompts from Jinja templates, reward specs, lineage.

The pool reads the tasks build's output (a folder holding ``tasks.jsonl``, or the file
itself), never synth code. Prompts are data: ``datagen/pool/prompts/system.jinja`` and
``user.jinja`` (or a folder of your own with the same two files); the auxiliary checks
come from the rule pack ``filters/pool_checks.yaml``.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from functools import lru_cache
from pathlib import Path

import jinja2

from datagen.config.base import canonical_json, load_yaml_pack
from datagen.errors import UserError
from datagen.records.pool import AuxCheck, ChatMessage, PoolRow, PoolTaskInput
from datagen.records.tasks import interface_text
from datagen.sandbox.harness.profiles.registry import get_profile
from datagen.sandbox.harness.protect import guard_lines
from datagen.sandbox.harness.task_store import read_tasks, source_dir

PROMPTS = Path(__file__).parent / "prompts"
CHECKS_PACK = "pool_checks.yaml"
_DIFF_FILE = re.compile(r"^diff --git a/(\S+) b/(\S+)$", re.MULTILINE)


def read_pool_tasks(path: str | Path) -> list[tuple[PoolTaskInput, Path]]:
    """Tasks (with the optional extra keys) and their base folders from a tasks build
    folder (its ``tasks.jsonl``; else every ``*.jsonl`` under it) or one JSONL file."""
    path = Path(path)
    if path.is_dir() and (path / "tasks.jsonl").is_file():
        path = path / "tasks.jsonl"
    return read_tasks(path, record=PoolTaskInput)


@lru_cache(maxsize=8)
def _environment(folder: str) -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(folder), undefined=jinja2.StrictUndefined,
                             autoescape=False, keep_trailing_newline=False)
    env.filters["shell_quote"] = shlex.quote
    return env


def render(template: str, folder: Path = PROMPTS, **context: object) -> str:
    """Render one template of ``folder`` (missing variables are errors, not blanks)."""
    try:
        return _environment(str(folder)).get_template(template).render(**context).strip() + "\n"
    except jinja2.TemplateNotFound:
        raise UserError(f"prompt template not found: {Path(folder) / template}") from None


def prompt_messages(task: PoolTaskInput, checks: list[AuxCheck], folder: Path = PROMPTS) -> list[ChatMessage]:
    """The system message (the agent task and its rules) and the user message (the problem
    statement with the repository and base commit)."""
    context = {**task.model_dump(), "lint_commands": [c.command for c in checks if c.kind == "lint"],
               "interface": interface_text(task.interface)}
    return [ChatMessage(role="system", content=render("system.jinja", folder, **context)),
            ChatMessage(role="user", content=render("user.jinja", folder, **context))]


def instruction_id(task_id: str, prompt: list[ChatMessage]) -> str:
    """Stable id of an instruction: the same task and prompt give the same id in every build,
    so the ledger stays valid across rebuilds."""
    payload = task_id + "\0" + canonical_json([m.model_dump() for m in prompt])
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def aux_checks_for(runner: str, pack: str | Path = CHECKS_PACK, lint_command: str | None = None) -> list[AuxCheck]:
    """The auxiliary checks of a runner from the rule pack; ``lint_command`` overrides the
    pack's lint command for that runner."""
    data = load_yaml_pack(pack) or {}
    checks = []
    if globs := (data.get("no_test_deletion") or {}).get(runner):
        checks.append(AuxCheck(kind="no_test_deletion", patterns=list(globs)))
    if regexes := (data.get("no_test_skip") or {}).get(runner):
        checks.append(AuxCheck(kind="no_test_skip", patterns=list(regexes)))
    if data.get("no_network"):
        checks.append(AuxCheck(kind="no_network"))
    if lint := lint_command or (data.get("lint") or {}).get(runner):
        checks.append(AuxCheck(kind="lint", command=lint))
    return checks


def changed_files(diff: str) -> list[str]:
    """Files a unified git diff touches (new names), sorted."""
    return sorted({m.group(2) for m in _DIFF_FILE.finditer(diff)})


def env_pins(task: PoolTaskInput) -> list[str]:
    """The versions the task's validating env held, read by its runner's profile from its
    ``setup_script`` ([] for a script without pins or a runner no profile knows)."""
    if not task.setup_script:
        return []
    try:
        return get_profile(task.runner).pins_of(task.setup_script)
    except UserError:
        return []


def to_pool_row(task: PoolTaskInput, base: Path, group_size: int, checks: list[AuxCheck] | None = None,
                prompts: Path = PROMPTS) -> PoolRow:
    """One pool row of a task: prompt, environment reference, reward spec and lineage.
    Scores (pass rate, perplexity) start unknown; the scorers fill them in later."""
    checks = aux_checks_for(task.runner) if checks is None else checks
    prompt = prompt_messages(task, checks, prompts)
    return PoolRow(
        instruction_id=instruction_id(task.instance_id, prompt), task_id=task.instance_id, prompt=prompt,
        repo=task.repo, base_commit=task.base_commit, repo_path=str(source_dir(task, base)),
        problem_statement=task.problem_statement, patch=task.patch, test_patch=task.test_patch,
        runner=task.runner, test_files=task.test_files, fail_to_pass=task.FAIL_TO_PASS,
        pass_to_pass=task.PASS_TO_PASS, aux_checks=checks, group_size=group_size,
        source_files=task.relevant_files or changed_files(task.patch), strategy=task.strategy or None,
        statement_style=task.statement_style or None, parent_ids=task.parent_ids, hints_text=task.hints_text,
        created_at=task.created_at, version=task.version, environment_setup_commit=task.environment_setup_commit,
        env_pins=env_pins(task), interface=interface_text(task.interface),
    )


def rows_from_tasks(path: str | Path, group_size: int, lint_command: str | None = None,
                    prompts: Path = PROMPTS) -> list[PoolRow]:
    """Pool rows of every task of a tasks build output (see ``read_pool_tasks``), one per
    task, in input order. Two tasks with the same id are a ``UserError``."""
    rows, seen = [], set()
    for task, base in read_pool_tasks(path):
        if task.instance_id in seen:
            raise UserError(f"{path}: task {task.instance_id!r} appears twice")
        seen.add(task.instance_id)
        rows.append(to_pool_row(task, base, group_size, aux_checks_for(task.runner, lint_command=lint_command),
                                prompts))
    return rows


def reward_spec(row: PoolRow) -> str:
    """The reward's ground truth as one canonical JSON string (verl's ``ground_truth``):
    everything a grader needs, but not the reference fix."""
    return json.dumps({
        "instance_id": row.task_id, "repo": row.repo, "base_commit": row.base_commit, "runner": row.runner,
        "test_patch": row.test_patch, "test_files": row.test_files, "FAIL_TO_PASS": row.fail_to_pass,
        "PASS_TO_PASS": row.pass_to_pass, "aux_checks": [c.model_dump() for c in row.aux_checks],
    }, sort_keys=True, ensure_ascii=False)


def eval_script(row: PoolRow, prompts: Path = PROMPTS) -> str:
    """A bash script that grades an attempt in the checkout (``$REPO_DIR``, default
    ``/testbed``): refuses a checkout whose test files differ from ``base_commit``'s
    (``sandbox.protect``), applies the test patch, runs the graded tests with the commands of the
    runner's profile (``Profile.eval_commands``); exit 0 = resolved."""
    tests = sorted({*row.fail_to_pass, *row.pass_to_pass})
    profile = get_profile(row.runner)
    commands = "\n".join(profile.eval_commands(profile.plan_stub(), tests))
    guard = "\n".join(guard_lines(row.base_commit)) if row.base_commit else ""
    return render("eval.sh.jinja", prompts, runner=row.runner, commands=commands, guard=guard,
                  test_patch=row.test_patch.rstrip("\n"))
