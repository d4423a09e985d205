"""A scripted policy behind a real OpenAI-compatible HTTP server on 127.0.0.1, for agent runs.

``ScriptedPolicy`` answers each chat request with mini-swe-agent's text format (a THOUGHT and
one ```mswea_bash_command block): the script is a function of the task it is working on (found
by its statement in the first user turn) and the step (assistant turns so far). The scripts:

- ``solve``: explores (``ls``, ``grep``, ``cat``), writes the gold fix with shell commands
  (a heredoc and ``git apply``), checks ``git diff --stat`` and submits;
- ``give_up``: looks around and submits nothing;
- ``edit_tests``: writes the fix, then empties a test file, then submits;
- ``loop``: ``ls`` for ever (the step limit stops it);
- ``summarize``: like ``solve`` but slow to start, for self-summarization: any request whose
  last turn asks for a summary is answered with one that names the task.

``drops``: the first N requests are dropped (the connection closed unanswered).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from datagen.records.tasks import TaskRecord
from datagen.score.agent.env import SUBMIT
from tests.teachers.fake_server import FakeOpenAI, first_user_text

MODEL = "stand-in-policy"
SUMMARY_WORDS = "SUMMARY OF MY WORK"


def reply(thought: str, command: str) -> str:
    return f"THOUGHT: {thought}\n\n```mswea_bash_command\n{command}\n```"


def apply_fix(task: TaskRecord) -> str:
    """Shell commands that write the gold fix: the diff in a heredoc, then ``git apply``."""
    patch = task.patch if task.patch.endswith("\n") else task.patch + "\n"  # its last line may be a blank context line
    return f"cat > /tmp/fix.diff <<'DATAGEN_FIX_EOF'\n{patch}DATAGEN_FIX_EOF\ngit apply /tmp/fix.diff"


def first_path(task: TaskRecord) -> str:
    return re.search(r"^\+\+\+ b/(\S+)", task.patch, re.M).group(1)


def solve(task: TaskRecord, step: int) -> str:
    path = first_path(task)
    steps = [reply("Let me look at the repository.", "ls && git log --oneline | head"),
             reply("Where is the code?", f"grep -rn . -e '' --include='{path.rsplit('/', 1)[-1]}' | head -40"),
             reply("Read the file.", f"cat {path}"),
             reply("Write the fix.", apply_fix(task)),
             reply("Check the change.", "git diff --stat"),
             reply("Done.", f"echo {SUBMIT}")]
    return steps[min(step, len(steps) - 1)]


def give_up(task: TaskRecord, step: int) -> str:
    steps = [reply("Let me look.", "ls"), reply("I cannot solve this.", f"echo {SUBMIT}")]
    return steps[min(step, len(steps) - 1)]


def edit_tests(task: TaskRecord, step: int) -> str:
    find = "git ls-files | grep -iE '(^|/)(tests?|spec)/|_test\\.|\\.test\\.|_spec\\.' | head -1"
    steps = [reply("Write the fix.", apply_fix(task)),
             reply("The tests are in my way.", f'f=$({find}); : > "$f"; echo "emptied $f"'),
             reply("Done.", f"echo {SUBMIT}")]
    return steps[min(step, len(steps) - 1)]


def loop(task: TaskRecord, step: int) -> str:
    return reply("Let me look again.", "ls")


def slow_solve(task: TaskRecord, step: int) -> str:
    """Three looks around, then ``solve`` from its fix on (a continued segment starts there)."""
    if step < 3:
        return reply("Looking around first.", "ls; cat calc.py README* 2>/dev/null | head -20; true")
    return solve(task, step)


Script = Callable[[TaskRecord, int], str]


class ScriptedPolicy(FakeOpenAI):
    """The stand-in server (``FakeOpenAI``) with an agent script per task."""

    def __init__(self, tasks: list[TaskRecord], script: Script | list[Script], drops: int = 0):
        """``script``: one for every run, or one per sample (picked by the request's seed,
        which is ``difficulty.seed + sample``)."""
        self.tasks = tasks
        self.scripts = script if isinstance(script, list) else [script]
        self.drops = drops
        super().__init__(models=(MODEL,), answer=self._answer)

    def task_of(self, body: dict) -> TaskRecord:
        text = first_user_text(body)
        for task in self.tasks:
            if task.problem_statement.strip() in text:
                return task
        raise AssertionError("no task's statement in the request")

    def pick_fault(self, body: dict) -> str:
        with self.lock:
            if self.drops > 0:
                self.drops -= 1
                return "drop"
        return "ok"

    def _answer(self, body: dict) -> str:
        messages = body.get("messages") or []
        if SUMMARY_WORDS.lower() in str(messages[-1].get("content", "")).lower() or \
                "write a summary" in str(messages[-1].get("content", "")).lower():
            return f"{SUMMARY_WORDS}: I looked around; the fix is still to be written."
        task = self.task_of(body)
        step = sum(1 for m in messages if m.get("role") == "assistant")
        if "<summary>" in first_user_text(body):
            step += 3  # a continued segment picks up where the summary says
        return self.scripts[int(body.get("seed") or 0) % len(self.scripts)](task, step)
