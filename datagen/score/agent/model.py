"""mini-swe-agent's ``Model`` over datagen's teacher client: every call is a ``TeacherRequest``
(so it is cached by content, retried, journaled and counted like any teacher call), seeded
with the run's seed so a resumed build finds each step of a run in the cache.

The model speaks mini-swe-agent's text format (one ```mswea_bash_command block per reply,
parsed by its own ``parse_regex_actions``); the trajectory exports turn each action into an
OpenAI tool call. Limits the agent loop does not know are raised here as mini-swe-agent's
exit messages: the run's token budget, the policy's context window, an unanswered call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from datagen.teachers.base import Teacher
from datagen.teachers.types import Message, SamplingParams, TeacherRequest, TeacherResult

ACTION_REGEX = r"```mswea_bash_command\s*\n(.*?)\n```"
_CONTEXT_ERROR = re.compile(r"context.{0,20}(length|window)|maximum context|too many tokens|prompt is too long", re.I)


class TeacherModelConfig(BaseModel):
    """What the trajectory records of the model (mini-swe-agent serializes ``config``)."""

    model_name: str
    seed: int
    temperature: float
    max_tokens: int
    action_regex: str = ACTION_REGEX
    format_error_template: str
    observation_template: str


@dataclass
class Usage:
    """What a run spent: calls, tokens in and out, calls answered from the cache."""

    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cached: int = 0
    last_prompt: int = 0  # prompt tokens of the last call: the size of the context

    def add(self, result: TeacherResult) -> None:
        self.calls += 1
        self.tokens_in += result.usage.prompt_tokens
        self.tokens_out += result.usage.completion_tokens
        self.cached += int(result.cached)
        self.last_prompt = result.usage.prompt_tokens


def _exit(status: str, content: str) -> dict:
    return {"role": "exit", "content": content, "extra": {"exit_status": status, "submission": ""}}


class TeacherModel:
    """mini-swe-agent's ``Model`` protocol (``query``, ``format_message``,
    ``format_observation_messages``, ``get_template_vars``, ``serialize``)."""

    def __init__(self, teacher: Teacher, config: TeacherModelConfig, *, request_id: str,
                 token_limit: int, context_limit: int | None = None):
        self.teacher = teacher
        self.config = config
        self.request_id = request_id
        self.token_limit = token_limit
        self.context_limit = context_limit
        self.usage = Usage()

    # -- calls ---------------------------------------------------------------------------
    def ask(self, messages: list[dict], max_tokens: int, what: str) -> TeacherResult:
        """One call through the teacher client; ``what`` names it in the request id."""
        from minisweagent.exceptions import LimitsExceeded

        if self.usage.tokens_in + self.usage.tokens_out >= self.token_limit:
            raise LimitsExceeded(_exit("TokenLimitExceeded", f"{self.token_limit} tokens spent"))
        request = TeacherRequest(
            id=f"{self.request_id}/{what}-{self.usage.calls}",
            messages=[Message(role=m["role"], content=str(m.get("content") or "")) for m in messages],
            sampling=SamplingParams(temperature=self.config.temperature, max_tokens=max_tokens),
            seed=self.config.seed)
        (result,) = self.teacher.generate([request])
        self.usage.add(result)
        self._check(result)
        return result

    def _check(self, result: TeacherResult) -> None:
        from minisweagent.exceptions import InterruptAgentFlow, LimitsExceeded

        if result.status == "error":
            error = result.error or "no answer"
            if _CONTEXT_ERROR.search(error):
                raise LimitsExceeded(_exit("ContextLimitExceeded", error))
            raise InterruptAgentFlow(_exit("ModelError", error))
        if self.context_limit is not None and result.usage.prompt_tokens > self.context_limit:
            raise LimitsExceeded(_exit("ContextLimitExceeded",
                                       f"prompt of {result.usage.prompt_tokens} tokens > {self.context_limit}"))

    def query(self, messages: list[dict], **kwargs) -> dict:
        """The next assistant message and its one action (mini-swe-agent's ``FormatError``
        when the reply holds none or several)."""
        from minisweagent.models.utils.actions_text import parse_regex_actions

        result = self.ask(messages, self.config.max_tokens, "step")
        content = result.text or ""
        reason = result.finish_reasons[0] if result.finish_reasons else None
        actions = parse_regex_actions(content, action_regex=self.config.action_regex,
                                      format_error_template=self.config.format_error_template,
                                      template_kwargs={"finish_reason": reason})
        return {"role": "assistant", "content": content,
                "extra": {"actions": actions, "cost": 0.0, "cached": result.cached,
                          "usage": result.usage.model_dump(), "request_id": result.request_id}}

    # -- the protocol's formatting -------------------------------------------------------
    def format_message(self, **kwargs) -> dict:
        return dict(kwargs)

    def format_observation_messages(self, message: dict, outputs: list[dict],
                                    template_vars: dict | None = None) -> list[dict]:
        from minisweagent.models.utils.actions_text import format_observation_messages

        return format_observation_messages(outputs, observation_template=self.config.observation_template,
                                           template_vars=template_vars)

    def get_template_vars(self, **kwargs) -> dict[str, Any]:
        return {**self.config.model_dump(), **kwargs}

    def serialize(self) -> dict:
        return {"info": {"config": {"model": self.config.model_dump(mode="json"),
                                    "model_type": f"{type(self).__module__}.{type(self).__name__}"},
                         "datagen_usage": {"calls": self.usage.calls, "tokens_in": self.usage.tokens_in,
                                           "tokens_out": self.usage.tokens_out, "cached": self.usage.cached}}}
