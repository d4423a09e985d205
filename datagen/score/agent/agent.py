"""mini-swe-agent's ``DefaultAgent``, with self-summarization: past a context budget the agent
is asked for a summary of its work and continues from the task and that summary.

The loop is mini-swe-agent's own; this subclass only hooks ``query`` (before a step, is the
context past the budget?) and keeps the segments a summarized run is made of. The trajectory
(``serialize``) holds every message of every segment in order, and ``info.segments`` says
where each segment starts and which summary it continues from.
"""

from __future__ import annotations

import functools
import importlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from datagen.score.agent.model import TeacherModel

PROMPTS = Path(__file__).resolve().parent / "prompts"


def template(name: str) -> str:
    """One of the agent's prompt templates (``score/agent/prompts/<name>.jinja``)."""
    return (PROMPTS / f"{name}.jinja").read_text(encoding="utf-8")


def require_minisweagent():
    """The ``minisweagent`` package (quiet: no start-up banner), or an install hint."""
    os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")
    try:
        importlib.import_module("minisweagent.agents.default")
    except ImportError as exc:
        from datagen.errors import UserError

        raise UserError("difficulty.mode 'agent' needs mini-swe-agent: pip install 'datagen[agent]'") from exc
    return importlib.import_module("minisweagent")


@dataclass
class Segment:
    """Part of a run: its messages, and the summary it starts from (None for the first)."""

    messages: list[dict] = field(default_factory=list)
    summary: str | None = None
    prompt_tokens: int = 0


@functools.cache
def _agent_class():
    DefaultAgent = require_minisweagent().agents.default.DefaultAgent

    class SummarizingAgent(DefaultAgent):
        """``DefaultAgent`` plus segments (see the module docstring)."""

        def __init__(self, model: TeacherModel, env, *, context_budget: int | None = None,
                     summary_max_tokens: int = 1024, max_segments: int = 1, **kwargs):
            super().__init__(model, env, **kwargs)
            self.context_budget = context_budget
            self.summary_max_tokens = summary_max_tokens
            self.max_segments = max_segments
            self.done_segments: list[Segment] = []
            self.summary: str | None = None

        def query(self) -> dict:
            model = self.model
            if (self.context_budget is not None and model.usage.last_prompt > self.context_budget
                    and len(self.done_segments) + 1 < self.max_segments):
                self.summarize()
            return super().query()

        def summarize(self) -> None:
            """Ask for a summary, close the segment, start the next from task + summary."""
            ask = {"role": "user", "content": self._render_template(template("summary_request"))}
            result = self.model.ask([*self.messages, ask], self.summary_max_tokens, "summary")
            summary = (result.text or "").strip()
            answer = {"role": "assistant", "content": summary, "extra": {"summary": True}}
            closed = Segment([*self.messages, ask, answer], self.summary, self.model.usage.last_prompt)
            self.done_segments.append(closed)
            self.summary = summary
            self.messages = []
            self.add_messages(
                self.model.format_message(role="system", content=self._render_template(self.config.system_template)),
                self.model.format_message(role="user", content=self._render_template(template("continue"))))

        def get_template_vars(self, **kwargs) -> dict:
            return super().get_template_vars(summary=self.summary, **kwargs)

        def segments(self) -> list[Segment]:
            """Every segment, the current one last."""
            return [*self.done_segments, Segment(list(self.messages), self.summary, self.model.usage.last_prompt)]

        def serialize(self, *extra_dicts) -> dict:
            data = super().serialize(*extra_dicts)
            parts = self.segments()
            data["messages"] = [m for s in parts for m in s.messages]
            starts, n = [], 0
            for s in parts:
                starts.append({"start": n, "messages": len(s.messages), "summary": s.summary})
                n += len(s.messages)
            data["info"]["segments"] = starts
            return data

    return SummarizingAgent


def make_agent(model: TeacherModel, env, **kwargs):
    """A ``SummarizingAgent`` (mini-swe-agent is imported here, not at import time)."""
    return _agent_class()(model, env, **kwargs)
