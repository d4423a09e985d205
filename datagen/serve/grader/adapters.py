"""The trainers' wire formats: what each trainer's reward call sends, and the answer it reads.

One ``Adapter`` per trainer route: ``items(body)`` reads the grades the body asks for
(``(instance id, patch, timeout_s)``; a ``UserError`` when it holds none), ``answer(body,
results)`` writes the trainer's answer. ``masks`` says whether the format can mark an
``infra_error`` (no reward: the environment or the sandbox failed, not the patch) as not a
measurement: NeMo-Gym's can (``mask_sample``); slime's and OpenRLHF's cannot, so the app
answers 502 for them and the trainer's client retries or fails loudly, never a 0. A new
trainer is one adapter here and one line in ``ADAPTERS``.

verl's reward function (``datagen.serve.clients``) speaks the native ``/v1/grade`` body
(``GradeBody``) and reads the ``GradeResult`` itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass

from pydantic import BaseModel, ConfigDict, Field

from datagen.errors import UserError
from datagen.score.grading import GradeResult
from datagen.serve.grader.core import Item


@dataclass(frozen=True)
class Adapter:
    """One trainer's reward route."""

    route: str
    items: Callable[[dict], list[Item]]
    answer: Callable[[dict, list[GradeResult]], object]
    masks: bool  # the format marks an infra_error sample itself; else the app answers 502


class GradeBody(BaseModel):
    """The native ``POST /v1/grade`` body (verl's reward function sends it)."""

    model_config = ConfigDict(extra="forbid")

    instance_id: str = Field(min_length=1)
    patch: str
    timeout_s: float | None = Field(None, gt=0)


def instance_from_label(label: object) -> str | None:
    """The instance id in a dataset label: a reward spec (JSON string or dict holding
    ``instance_id``, the verl ``ground_truth``), the pool's verl ``reward_model`` dict
    (``{style, ground_truth}``: slime's label when the verl export is its data), or the id
    itself."""
    if isinstance(label, dict):
        value = label.get("instance_id") or label.get("task_id") or label.get("instruction_id")
        if not value and "ground_truth" in label:
            return instance_from_label(label["ground_truth"])
        return str(value) if value else None
    if isinstance(label, str) and label.strip():
        text = label.strip()
        if text.startswith("{"):
            try:
                return instance_from_label(json.loads(text))
            except ValueError:
                return None
        return text
    return None


# -- NeMo-Gym: /seed_session, /verify, /aggregate_metrics --------------------------------
def responses_text(response: object) -> str:
    """The assistant text of an OpenAI Responses object (NeMo-Gym's ``response``): every
    ``output_text`` of its message items, joined."""
    if not isinstance(response, dict):
        return ""
    parts = []
    for item in response.get("output") or []:
        if isinstance(item, dict) and item.get("type", "message") == "message":
            content = item.get("content")
            if isinstance(content, str):
                parts.append(content)
            for c in content if isinstance(content, list) else []:
                if isinstance(c, dict) and c.get("type") in ("output_text", "text"):
                    parts.append(c.get("text") or "")
    return "\n".join(parts)


def seed_session(body: object) -> dict:
    """NeMo-Gym seeds a session before ``/verify``; grading keeps no per-session state, so
    the answer is its empty one (or the session id an Environment Server assigned)."""
    session = body.get("resources_session_id") if isinstance(body, dict) else None
    return {"resources_session_id": session} if session else {}


def _nemo_instance(body: dict) -> str | None:
    for where in (body, body.get("verifier_metadata") or {}, (body.get("responses_create_params") or {})
                  .get("metadata") or {}):
        if isinstance(where, dict) and (found := instance_from_label(where)):
            return found
    return None


def _verify_items(body: dict) -> list[Item]:
    iid = _nemo_instance(body)
    if not iid:
        raise UserError("no instance_id in the verify body (top level, verifier_metadata, or "
                        "responses_create_params.metadata)")
    return [(iid, responses_text(body.get("response")), None)]


def _verify_answer(body: dict, results: list[GradeResult]) -> dict:
    """The verify body back, with ``reward`` and ``resolved`` (``mask_sample`` on an infra_error)."""
    (result,) = results
    answer = {**body, "reward": result.reward if result.reward is not None else 0.0,
              "resolved": result.resolved, "datagen": asdict(result)}
    if result.status == "infra_error":  # NeMo-Gym's own way to say "not a measurement"
        answer.update(mask_sample=True, failure_kind="datagen:infra_error", failure_reason=result.hint)
    return answer


def aggregate_request(body: dict) -> list[dict]:
    """The ``/verify`` answers in an ``/aggregate_metrics`` body."""
    responses = body.get("verify_responses")
    if not isinstance(responses, list) or not all(isinstance(r, dict) for r in responses):
        raise UserError("verify_responses must be a list of /verify answers")
    return responses


def aggregate(responses: list[dict]) -> dict:
    """NeMo-Gym's ``/aggregate_metrics`` answer (``AggregateMetrics``: ``group_level_metrics``,
    ``agent_metrics``, ``key_metrics``) over the ``/verify`` answers it sends back: pass
    rate (mean reward of the measured ones), resolved share, mean grade seconds, a count
    per status and the masked (``infra_error``) count; per task (``_ng_task_index``, else
    the instance id) the same."""
    groups: dict[object, list[dict]] = {}
    for r in responses:
        groups.setdefault(r.get("_ng_task_index", (r.get("datagen") or {}).get("instance_id")), []).append(r)
    overall = _metrics(responses)
    per_task = [{"_ng_task_index": k, **_metrics(v)} for k, v in groups.items()]
    return {"group_level_metrics": per_task, "agent_metrics": overall,
            "key_metrics": {k: overall[k] for k in ("pass_rate", "resolved_share", "mean_seconds")}}


def _metrics(rows: list[dict]) -> dict:
    grades = [r.get("datagen") or {} for r in rows]
    measured = [r for r in rows if not r.get("mask_sample")]
    rewards = [float(r.get("reward") or 0.0) for r in measured]
    seconds = [float(g["seconds"]) for g in grades if g.get("seconds") is not None]
    out = {"n": len(rows), "masked": len(rows) - len(measured),
           "pass_rate": sum(rewards) / len(rewards) if rewards else None,
           "resolved_share": sum(1 for r in measured if r.get("resolved")) / len(measured) if measured else None,
           "mean_seconds": sum(seconds) / len(seconds) if seconds else None}
    for status in sorted({g.get("status") or "unknown" for g in grades}):
        out[f"status/{status}"] = sum(1 for g in grades if (g.get("status") or "unknown") == status)
    return out


# -- slime: remote_rm ----------------------------------------------------------------------
def _slime_items(body: dict) -> list[Item]:
    """slime's ``remote_rm`` body (``prompt, response, label``)."""
    iid = instance_from_label(body.get("label")) or instance_from_label(body.get("metadata"))
    if not iid:
        raise UserError("no instance id in label (the reward spec JSON, the verl reward_model dict, or the id)")
    return [(iid, str(body.get("response") or ""), None)]


def _slime_answer(body: dict, results: list[GradeResult]) -> float | None:
    """The reward as a bare number."""
    return results[0].reward


# -- OpenRLHF: the reward URL --------------------------------------------------------------
def _openrlhf_items(body: dict) -> list[Item]:
    """OpenRLHF's reward-URL batch (``query, prompts, labels``): each response is its query
    after its prompt."""
    queries, prompts, labels = body.get("query") or [], body.get("prompts") or [], body.get("labels") or []
    if not isinstance(queries, list) or len(labels) != len(queries):
        raise UserError("query and labels must be lists of the same length")
    items = []
    for n, query in enumerate(queries):
        prompt = prompts[n] if n < len(prompts) else ""
        text = query[len(prompt):] if prompt and query.startswith(prompt) else query
        if not (iid := instance_from_label(labels[n])):
            raise UserError(f"labels[{n}] holds no instance id")
        items.append((iid, text, None))
    return items


def _openrlhf_answer(body: dict, results: list[GradeResult]) -> dict:
    return {"rewards": [r.reward for r in results], "scores": [r.reward for r in results],
            "extra_logs": {"resolved": [float(r.resolved) for r in results]}}


ADAPTERS = (
    Adapter("/verify", _verify_items, _verify_answer, masks=True),
    Adapter("/slime/remote_rm", _slime_items, _slime_answer, masks=False),
    Adapter("/openrlhf/reward", _openrlhf_items, _openrlhf_answer, masks=False),
)
