"""The teacher judge of soundness: one batched request per task (``prompts/judge.jinja``, a
rubric in the style of SWE-rebench V2 and SWE-bench Verified) under a JSON schema; the
teacher client caches every answer, so a re-run pays nothing.

An answer that fails the schema after the client's re-asks, is cut short, or never comes is
a ``JudgeRow`` with status ``skipped`` and its reason: it is never read as a pass.
"""

from __future__ import annotations

from pathlib import Path

from datagen.config.rl_pool import ISSUES, JudgeConfig
from datagen.pool.rows import render
from datagen.records.pool import PoolTaskInput
from datagen.records.soundness import JudgeRow
from datagen.records.tasks import interface_text
from datagen.synth.soundness import TaskView
from datagen.teachers import Message, SamplingParams, TeacherRequest, TeacherResult

PROMPTS = Path(__file__).parent / "prompts"
BUCKETS = ["<15m", "15m-1h", ">1h"]
SCHEMA = {
    "type": "object",
    "properties": {
        "solvable": {"type": "boolean"},
        "issues": {"type": "array", "items": {"type": "string", "enum": ISSUES}, "uniqueItems": True},
        "intent_completeness": {"type": "integer", "minimum": 0, "maximum": 3},
        "time_bucket": {"type": "string", "enum": BUCKETS},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "reasoning": {"type": "string", "maxLength": 400},
    },
    "required": ["solvable", "issues", "intent_completeness", "time_bucket", "confidence", "reasoning"],
    "additionalProperties": False,
}


def _trim(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit // 2] + "\n...\n" + text[-limit // 2:]


def judge_request(task: PoolTaskInput, view: TaskView, cfg: JudgeConfig) -> TeacherRequest:
    """The request for one task: statement, interface, failing tests and their source, the fix."""
    tests = "\n\n".join(f"# {p}\n{t}" for p, t in sorted(view.tests.items()))
    prompt = render("judge.jinja", PROMPTS, repo=task.repo, statement=task.problem_statement,
                    interface=interface_text(task.interface), failing=task.FAIL_TO_PASS[:20],
                    tests=_trim(tests, cfg.max_chars), patch=_trim(task.patch, cfg.max_chars))
    return TeacherRequest(id=task.instance_id, json_schema=SCHEMA, messages=[Message(role="user", content=prompt)],
                          sampling=SamplingParams(max_tokens=cfg.max_tokens, temperature=0.0))


def judge_row(run_id: str, task_id: str, teacher: str, result: TeacherResult) -> JudgeRow:
    """The verdict of one answer, or a skip with the reason (never a pass)."""
    parsed = (result.parsed or [None])[0] if result.status == "ok" else None
    if not isinstance(parsed, dict):
        why = result.error or ("the answer is not a JSON object" if result.status == "ok" else "")
        return JudgeRow(run_id=run_id, task_id=task_id, teacher=teacher, status="skipped",
                        reason=f"{result.status}: {why}"[:500], cached=result.cached)
    return JudgeRow(run_id=run_id, task_id=task_id, teacher=teacher, status="ok", solvable=parsed["solvable"],
                    issues=sorted(parsed["issues"], key=ISSUES.index),
                    intent_completeness=parsed["intent_completeness"], time_bucket=parsed["time_bucket"],
                    confidence=float(parsed["confidence"]), reasoning=" ".join(parsed["reasoning"].split()),
                    cached=result.cached)


def judge_tasks(run_id: str, tasks: list[tuple[PoolTaskInput, TaskView]], cfg: JudgeConfig,
                teacher) -> list[JudgeRow]:
    """One ``JudgeRow`` per task, asked in one batch."""
    if not tasks:
        return []
    results = teacher.generate([judge_request(t, v, cfg) for t, v in tasks])
    model = cfg.teacher.model_id or cfg.teacher.model
    return [judge_row(run_id, t.instance_id, model, r) for (t, _), r in zip(tasks, results, strict=True)]
