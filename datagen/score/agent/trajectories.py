"""Agent runs as data: OpenAI chat rows for SFT (each action a ``bash`` tool call), Harbor's
ATIF trajectories, and the segments of self-summarized runs as SQL rows.

A run's trajectory is mini-swe-agent's own (``AgentRun.trajectory``, written as ``.traj.json``);
``info.segments`` (``agent.SummarizingAgent``) says where each segment starts. A segment is a
training row of its own: the messages from its start (the task, or the task and the summary it
continues from) to its end, carrying the run's final reward.
"""

from __future__ import annotations

import json
import re

from datagen.records.agent import TrajectorySegmentRow
from datagen.score.agent.model import ACTION_REGEX
from datagen.score.agent.runner import AgentRun

BASH_TOOL = {"type": "function", "function": {
    "name": "bash", "description": "Run a shell command in the repository's root; its output is returned.",
    "parameters": {"type": "object", "properties": {"command": {"type": "string", "description": "the command"}},
                   "required": ["command"]}}}
ATIF_VERSION = "ATIF-v1.6"


def segment_messages(run: AgentRun) -> list[list[dict]]:
    """The trajectory's messages cut into its segments (one list for a run never summarized)."""
    messages = [m for m in run.trajectory.get("messages", []) if m.get("role") != "exit"]
    return [messages[s["start"]:s["start"] + s["messages"]] for s in run.segments]


def _is_observation(message: dict) -> bool:
    return message.get("role") == "user" and "returncode" in (message.get("extra") or {})


def _thought(message: dict) -> str:
    """An assistant message's text without its command block."""
    return re.sub(ACTION_REGEX, "", str(message.get("content") or ""), flags=re.DOTALL).strip()


def _call_id(n: int) -> str:
    return f"call_{n}"


def chat_messages(messages: list[dict]) -> list[dict]:
    """mini-swe-agent messages as OpenAI chat: an action becomes an assistant ``tool_calls``
    entry, its observation the ``tool`` message that answers it."""
    out: list[dict] = []
    calls = 0
    for m in messages:
        actions = (m.get("extra") or {}).get("actions") or []
        if m.get("role") == "assistant" and actions:
            ids = [_call_id(calls + i) for i in range(len(actions))]
            calls += len(actions)
            out.append({"role": "assistant", "content": _thought(m), "tool_calls": [
                {"id": i, "type": "function", "function": {"name": "bash", "arguments": json.dumps(
                    {"command": a["command"]})}} for i, a in zip(ids, actions, strict=True)]})
        elif _is_observation(m) and out and out[-1].get("tool_calls"):
            answered = sum(1 for x in out if x.get("role") == "tool")
            out.append({"role": "tool", "tool_call_id": _call_id(answered), "content": str(m.get("content") or "")})
        else:
            out.append({"role": m["role"], "content": str(m.get("content") or "")})
    return out


def sft_rows(runs: list[AgentRun], policy_id: str, resolved_only: bool = True) -> list[dict]:
    """One row per segment of every resolved (or every unmasked) run, in run order:
    ``{"messages", "tools", "reward", "trajectory_id", "segment", "continues", "instance_id", ...}``."""
    rows = []
    for run in runs:
        if run.masked or (resolved_only and not run.passed):
            continue
        for n, messages in enumerate(segment_messages(run)):
            rows.append({"messages": chat_messages(messages), "tools": [BASH_TOOL], "reward": run.reward,
                         "trajectory_id": run.trajectory_id, "segment": n, "continues": n - 1 if n else None,
                         "instance_id": run.instance_id, "repo": run.repo, "policy_id": policy_id,
                         "exit_status": run.exit_status})
    return rows


def segment_rows(runs: list[AgentRun], run_id: str) -> list[TrajectorySegmentRow]:
    """Every segment of every run, each pointing at the one it continues."""
    rows = []
    for run in runs:
        for n, (seg, messages) in enumerate(zip(run.segments, segment_messages(run), strict=True)):
            usage = [(m.get("extra") or {}).get("usage") or {} for m in messages if m.get("role") == "assistant"]
            rows.append(TrajectorySegmentRow(
                run_id=run_id, trajectory_id=run.trajectory_id, segment=n, continues=n - 1 if n else None,
                summary=seg.get("summary"), messages=len(messages),
                prompt_tokens=int(usage[-1].get("prompt_tokens", 0)) if usage else 0, reward=run.reward))
    return rows


def atif_name(run: AgentRun, segment: int) -> str:
    """The file name of a segment's ATIF trajectory."""
    return re.sub(r"[^\w.-]", "_", run.trajectory_id) + f".{segment}.atif.json"


def atif(run: AgentRun, policy_id: str) -> list[dict]:
    """The run as Harbor ATIF trajectories, one per segment; a segment continued after a
    summary names the next in ``continued_trajectory_ref``."""
    parts = segment_messages(run)
    out = []
    for n, messages in enumerate(parts):
        steps = _atif_steps(messages, policy_id)
        prompt = sum((s.get("metrics") or {}).get("prompt_tokens", 0) for s in steps)
        completion = sum((s.get("metrics") or {}).get("completion_tokens", 0) for s in steps)
        doc = {"schema_version": ATIF_VERSION, "session_id": run.trajectory_id,
               "trajectory_id": f"{run.trajectory_id}#{n}",
               "agent": {"name": "mini-swe-agent",
                         "version": str(run.trajectory.get("info", {}).get("mini_version", "")),
                         "model_name": policy_id, "tool_definitions": [BASH_TOOL]},
               "steps": steps,
               "final_metrics": {"total_prompt_tokens": prompt, "total_completion_tokens": completion,
                                 "total_steps": len(steps)},
               "extra": {"instance_id": run.instance_id, "repo": run.repo, "exit_status": run.exit_status,
                         "reward": run.reward, "segment": n}}
        if n + 1 < len(parts):
            doc["continued_trajectory_ref"] = atif_name(run, n + 1)
        out.append(doc)
    return out


def _atif_steps(messages: list[dict], policy_id: str) -> list[dict]:
    steps: list[dict] = []
    calls = 0
    for m in messages:
        extra = m.get("extra") or {}
        if _is_observation(m) and steps and steps[-1].get("tool_calls"):
            call = steps[-1]["tool_calls"][0]["tool_call_id"]
            steps[-1]["observation"] = {"results": [{"source_call_id": call, "content": str(m.get("content") or "")}]}
            continue
        step = {"step_id": len(steps) + 1, "source": {"assistant": "agent"}.get(m["role"], m["role"]),
                "message": str(m.get("content") or "") if m["role"] != "assistant" else _thought(m)}
        if m["role"] == "assistant":
            usage = extra.get("usage") or {}
            step.update(model_name=policy_id, metrics={"prompt_tokens": int(usage.get("prompt_tokens", 0)),
                                                       "completion_tokens": int(usage.get("completion_tokens", 0))})
            if extra.get("actions"):
                step["tool_calls"] = [{"tool_call_id": _call_id(calls + i), "function_name": "bash",
                                       "arguments": {"command": a["command"]}} for i, a in enumerate(extra["actions"])]
                calls += len(extra["actions"])
        steps.append(step)
    return steps
