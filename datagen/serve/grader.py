"""``datagen serve grader``: a policy's patch in, a reward out, graded in the sandbox.

The grading is the difficulty scorer's (``datagen.score.difficulty``): the same answer
parsing (a fenced or raw diff), the same forbidden-edit checks, the same working copy
(source at ``base_commit``, the patch, then the task's ``test_patch``), the same test run
in the sandbox on the repo's environment and the same hint for a failed attempt. This
module only keeps the environments warm (``environment``: the one place that reaches a
task's environment), bounds the work (``-w`` sandboxes at once, a queue behind them, 503
with ``Retry-After`` when it is full; the adapters' requests wait for a place instead, up
to ``queue_wait_s``), cancels a grade whose clients have all closed their connections
(its sandbox killed), lets an identical request join a running grade, and speaks the
trainers' wire formats:

- ``POST /v1/grade {instance_id, patch, timeout_s?}`` -> ``GradeResult``;
- ``POST /seed_session``, ``POST /aggregate_metrics``: NeMo-Gym's session seed (nothing
  to keep) and its metrics over the ``/verify`` answers (``aggregate``);
- ``POST /verify``: NeMo-Gym's verify body (``responses_create_params``, ``response``)
  answered with the body plus ``reward`` and ``resolved`` (``mask_sample`` on an
  ``infra_error``);
- ``POST /slime/remote_rm``: slime's ``remote_rm`` body (``prompt, response, label``),
  answered with the reward as a bare number;
- ``POST /openrlhf/reward``: OpenRLHF's reward-URL batch (``query, prompts, labels``),
  answered with ``{rewards, scores, extra_logs}``.

``infra_error`` (the environment or the sandbox failed, not the patch) has no reward: the
native route says so with ``reward: null``, NeMo-Gym's with ``mask_sample``, slime's and
OpenRLHF's (whose formats have no way to mask a sample) answer 502 so the trainer's client
retries or fails loudly, never a 0.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import math
import re
import shutil
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import Request  # module level: FastAPI resolves the routes' annotations here

from datagen.config.sandbox import EnvConfig, SandboxLimits
from datagen.config.score import DifficultyConfig
from datagen.errors import SkipItem, UserError
from datagen.records.tasks import TaskRecord
from datagen.sandbox.isolation.base import CancelScope, Sandbox
from datagen.score.difficulty import DifficultyScorer
from datagen.serve.http import Guard, base_app
from datagen.teachers.types import TeacherResult

PATCH_FAILED = {"empty_answer", "no_diff", "patch_does_not_apply", "test_patch_does_not_apply"}
INFRA = {"no_required_tests", "repo_missing", "bad_base_commit"}


class Busy(Exception):
    """Every sandbox slot and queue place is taken."""

    def __init__(self, retry_after: int):
        super().__init__(f"grader busy, retry after {retry_after} s")
        self.retry_after = retry_after


class ClientGone(Exception):
    """The client closed its connection: its grade was cancelled (or left to others)."""


@dataclass
class _Flight:
    """One grade running on a worker, and how many requests wait for it."""

    future: asyncio.Future
    scope: CancelScope
    waiters: int = 0


class UnknownTask(UserError):
    """No task with that instance (or instruction) id."""


@dataclass
class GradeResult:
    """One graded patch (the ``/v1/grade`` answer)."""

    instance_id: str
    status: str  # resolved | unresolved | patch_failed | timeout | infra_error
    reward: float | None
    resolved: bool
    fail_to_pass: dict[str, str] = field(default_factory=dict)
    pass_to_pass: dict[str, str] = field(default_factory=dict)
    hint: str = ""
    reason: str | None = None
    seconds: float = 0.0


def load_tasks(path: str | Path) -> tuple[dict[str, tuple[TaskRecord, Path]], dict[str, str]]:
    """Tasks by instance id, from a tasks build folder, a ``tasks.jsonl`` or a pool folder;
    and, for a pool, instruction id -> instance id (a trainer may send either)."""
    from datagen.pool.rows import read_pool_tasks

    path = Path(path)
    aliases: dict[str, str] = {}
    if path.is_dir() and (path / "data").is_dir() and not (path / "tasks.jsonl").exists():
        pairs = []
        for shard in sorted((path / "data").glob("*.parquet")):
            for row in pq.read_table(shard).to_pylist():
                aliases[row["instruction_id"]] = row["task_id"]
                pairs.append((_task_of(row), path))
    else:
        pairs = read_pool_tasks(path)
    tasks = {t.instance_id: (t, base) for t, base in pairs}
    if not tasks:
        raise UserError(f"no tasks in {path}")
    return tasks, aliases


def _task_of(row: dict) -> TaskRecord:
    """A pool row as the task it came from (what grading needs; not the prompt)."""
    return TaskRecord(instance_id=row["task_id"], repo=row["repo"], base_commit=row["base_commit"],
                      patch=row["patch"], test_patch=row["test_patch"], problem_statement=row["problem_statement"],
                      FAIL_TO_PASS=row["fail_to_pass"], PASS_TO_PASS=row["pass_to_pass"],
                      repo_path=row["repo_path"], runner=row["runner"], test_files=row["test_files"],
                      relevant_files=row["source_files"])


def status_of(reason: str | None, passed: bool) -> str:
    """The grade status of an attempt's reason (see ``AttemptResult``)."""
    if passed:
        return "resolved"
    if reason in PATCH_FAILED:
        return "patch_failed"
    if reason == "timeout":
        return "timeout"
    if reason in INFRA or reason == "policy_error":
        return "infra_error"
    return "unresolved"  # tests_failed, no_report, another limit, forbidden_* edits


class Grader:
    """Grades patches on a fixed set of tasks, ``workers`` sandboxes at a time."""

    def __init__(self, tasks: str | Path, sandbox: Sandbox, *, workers: int = 2, queue: int = 8,
                 timeout_s: float = 300.0, limits: SandboxLimits | None = None, env: EnvConfig | None = None,
                 ro_paths: tuple[Path, ...] = (), work_root: Path | None = None, queue_wait_s: float = 100.0):
        self.tasks, self.aliases = load_tasks(tasks)
        self.workers, self.capacity = max(1, workers), max(1, workers) + max(0, queue)
        self.timeout_s = timeout_s
        cfg = DifficultyConfig(k=1, workers=self.workers, test_timeout_s=timeout_s)
        self.scorer = DifficultyScorer(cfg, None, sandbox, limits=limits, env=env, ro_paths=ro_paths,
                                       work_root=work_root)
        self.root = Path(tempfile.mkdtemp(prefix="datagen-grader-", dir=work_root))
        self.pool = ThreadPoolExecutor(self.workers, thread_name_prefix="grade")
        self._prepared: dict[str, object] = {}
        self._env_locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()
        self.active = 0
        self.done = 0
        self.busy_answers = 0
        self.total_seconds = 0.0
        self.queue_wait_s = queue_wait_s
        self.waiting = 0  # requests waiting for a place (the adapters' routes)
        self.cancelled = 0  # grades cancelled because every client waiting for them had gone
        self.joined = 0  # requests answered by a grade another identical request started
        self._flights: dict[tuple, _Flight] = {}  # touched on the event loop only

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)
        shutil.rmtree(self.root, ignore_errors=True)

    # -- tasks and environments --------------------------------------------------------
    def resolve(self, instance_id: str) -> str:
        key = self.aliases.get(instance_id, instance_id)
        if key not in self.tasks:
            raise UnknownTask(f"no task {instance_id!r}")
        return key

    def environment(self, instance_id: str):
        """The task laid out for grading: its environment built (or reused from the env
        cache) once per task and kept warm. The one place grading reaches a task's
        environment (per-ecosystem environments plug in here)."""
        with self._lock:
            lock = self._env_locks.setdefault(instance_id, threading.Lock())
        with lock:
            if instance_id in self._prepared:
                return self._prepared[instance_id]
            task, base = self.tasks[instance_id]
            scratch = self.root / re.sub(r"[^\w.-]", "_", instance_id)
            prep = self.scorer.lay_out(task, base, scratch)
            scope = CancelScope.current()
            if scope is None or not scope.cancelled:  # a build cut short by a cancel is not kept
                self._prepared[instance_id] = prep
            return prep

    def warm(self) -> None:
        """Build every task's environment now (the first grade then costs no setup)."""
        list(self.pool.map(self.environment, list(self.tasks)))

    # -- grading -------------------------------------------------------------------------
    def grade(self, instance_id: str, patch: str, timeout_s: float | None = None) -> GradeResult:
        """Grade one patch on one task (blocking; call from a worker)."""
        start = time.monotonic()
        key = self.resolve(instance_id)
        task = self.tasks[key][0]
        try:
            prep = self.environment(key)
            if prep.error is not None:
                return self._result(key, "infra_error", start, reason=prep.error, hint=f"environment: {prep.error}")
            scorer = self.scorer
            if timeout_s is not None:
                scorer = copy.copy(scorer)
                scorer.limits = scorer.limits.model_copy(update={"timeout_s": min(timeout_s, self.timeout_s)})
            answer = TeacherResult(key=key, status="ok", texts=[patch])
            attempt = scorer.grade(prep, 0, answer)
        except SkipItem as exc:
            return self._result(key, "infra_error", start, reason=exc.reason, hint=str(exc))
        except Exception as exc:  # noqa: BLE001 - any other failure is the grader's, not the patch's
            return self._result(key, "infra_error", start, reason="grader_error", hint=f"{type(exc).__name__}: {exc}")
        status = status_of(attempt.reason, attempt.passed)
        return self._result(
            key, status, start, reason=attempt.reason, hint=attempt.hint or "",
            fail_to_pass={t: attempt.results.get(t, "missing") for t in task.FAIL_TO_PASS},
            pass_to_pass={t: attempt.results.get(t, "missing") for t in task.PASS_TO_PASS})

    def _result(self, key: str, status: str, start: float, **kw) -> GradeResult:
        reward = None if status == "infra_error" else float(status == "resolved")
        seconds = round(time.monotonic() - start, 3)
        with self._lock:
            self.done += 1
            self.total_seconds += seconds
        return GradeResult(key, status, reward, status == "resolved", seconds=seconds, **kw)

    def retry_after(self) -> int:
        """Seconds until a slot is likely free: the queue ahead, at the mean grade time."""
        mean = self.total_seconds / self.done if self.done else 5.0
        return max(1, math.ceil(mean * max(1, self.active - self.workers + 1) / self.workers))

    def admit(self, n: int = 1) -> None:
        """Take ``n`` places in the queue, or raise ``Busy`` (nothing taken)."""
        with self._lock:
            if n > self.capacity:
                raise UserError(f"{n} grades in one request; this grader holds at most {self.capacity} "
                                "(raise --queue)")
            if self.active + n > self.capacity:
                self.busy_answers += 1
                raise Busy(self.retry_after())
            self.active += n

    def leave(self, n: int = 1) -> None:
        with self._lock:
            self.active -= n

    async def admit_waiting(self, n: int, wait_s: float, gone=None) -> None:
        """``admit(n)``, waiting up to ``wait_s`` for places (for clients that do not retry
        a 503); at most ``capacity`` requests wait, more are ``Busy`` at once. ``gone()``
        (an awaitable check) ends the wait with ``ClientGone``."""
        deadline = time.monotonic() + wait_s
        while True:
            try:
                return self.admit(n)
            except Busy:
                if time.monotonic() >= deadline or self.waiting >= self.capacity:
                    raise
            self.waiting += 1
            try:
                await asyncio.sleep(0.1)
                if gone is not None and await gone():
                    raise ClientGone()
            finally:
                self.waiting -= 1

    def _graded(self, scope: CancelScope, iid: str, patch: str, timeout_s: float | None) -> GradeResult:
        with scope:  # the sandbox runs of this grade die when the scope is cancelled
            return self.grade(iid, patch, timeout_s)

    async def grade_async(self, items: list[tuple[str, str, float | None]], wait_s: float = 0.0,
                          gone=None) -> list[GradeResult]:
        """Grade several patches at once on the worker threads (admitted as a whole).

        A request identical to one in flight (same task, patch hash and timeout) waits for
        that grade instead of queueing another. ``wait_s``: how long to wait for a place
        (0: ``Busy`` at once). ``gone()``: an awaitable check, asked every 0.25 s, that the
        client closed its connection; then this request stops waiting, and a grade nobody
        waits for any more is cancelled (its sandbox killed, the worker free again)."""
        keys = []
        for iid, patch, t in items:
            key = self.resolve(iid)  # 404 before taking a place
            keys.append((key, hashlib.sha256(patch.encode()).hexdigest(), t))
        fresh = list(dict.fromkeys(k for k in keys if k not in self._flights))
        await self.admit_waiting(len(fresh), wait_s, gone)
        loop = asyncio.get_running_loop()
        started = set()
        late = 0  # keys an identical request started while this one waited for a place
        for key, (iid, patch, t) in zip(keys, items, strict=True):
            if key in started or key not in fresh:
                continue
            started.add(key)
            if key in self._flights:  # an identical request started it while we waited for a place
                self.leave(1)
                late += keys.count(key)
                continue
            scope = CancelScope()
            flight = self._flights[key] = _Flight(loop.run_in_executor(self.pool, self._graded, scope, iid, patch, t),
                                                  scope)
            flight.future.add_done_callback(lambda _, key=key, flight=flight: self._landed(key, flight))
        self.joined += sum(1 for k in keys if k not in fresh) + late
        flights = [self._flights[k] for k in keys]
        for flight in flights:
            flight.waiters += 1
        try:
            return await self._wait(flights, gone)
        finally:
            for key, flight in zip(keys, flights, strict=True):
                flight.waiters -= 1
                if flight.waiters == 0 and not flight.future.done():
                    flight.scope.cancel()
                    self.cancelled += 1
                    if self._flights.get(key) is flight:
                        del self._flights[key]  # a new identical request starts afresh

    def _landed(self, key: tuple, flight: _Flight) -> None:
        """A grade's worker is done (graded, failed or cancelled): its place is free."""
        if self._flights.get(key) is flight:
            del self._flights[key]
        self.leave(1)

    @staticmethod
    async def _wait(flights: list[_Flight], gone) -> list[GradeResult]:
        waiting = asyncio.gather(*[asyncio.shield(f.future) for f in flights])  # shielded: others may wait too
        if gone is None:
            return list(await waiting)
        try:
            while True:
                done, _ = await asyncio.wait({waiting}, timeout=0.25)
                if done:
                    return list(waiting.result())
                if await gone():
                    raise ClientGone()
        finally:
            if not waiting.done():
                waiting.cancel()

    def health(self) -> dict:
        with self._lock:
            return {"ok": True, "tasks": len(self.tasks), "workers": self.workers, "capacity": self.capacity,
                    "active": self.active, "waiting": self.waiting, "graded": self.done,
                    "busy_answers": self.busy_answers, "cancelled": self.cancelled, "joined": self.joined,
                    "sandbox": self.scorer.sandbox.name}


# -- wire formats ------------------------------------------------------------------------
class GradeBody(BaseModel):
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


def _nemo_instance(body: dict) -> str | None:
    for where in (body, body.get("verifier_metadata") or {}, (body.get("responses_create_params") or {})
                  .get("metadata") or {}):
        if isinstance(where, dict) and (found := instance_from_label(where)):
            return found
    return None


def aggregate(responses: list[dict]) -> dict:
    """NeMo-Gym's ``/aggregate_metrics`` answer (``AggregateMetrics``: ``group_level_metrics``,
    ``agent_metrics``, ``key_metrics``) over the ``/verify`` answers it sends back: pass
    rate (mean reward of the measured ones), resolved share, mean grade seconds, a count
    per status and the masked (``infra_error``) count; per task (``_ng_task_index``, else
    the instance id) the same."""
    def metrics(rows: list[dict]) -> dict:
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

    groups: dict[object, list[dict]] = {}
    for r in responses:
        groups.setdefault(r.get("_ng_task_index", (r.get("datagen") or {}).get("instance_id")), []).append(r)
    overall = metrics(responses)
    per_task = [{"_ng_task_index": k, **metrics(v)} for k, v in groups.items()]
    return {"group_level_metrics": per_task, "agent_metrics": overall,
            "key_metrics": {k: overall[k] for k in ("pass_rate", "resolved_share", "mean_seconds")}}


def grader_app(grader: Grader, token: str | None = None, max_patch_kb: int = 512):
    """The ASGI app of a ``Grader`` (routes: see the module docstring)."""
    from fastapi import Body
    from fastapi.responses import JSONResponse, Response

    app = base_app("datagen grader", on_shutdown=grader.close)

    @app.exception_handler(UnknownTask)
    async def _unknown(request: Request, exc: UnknownTask):
        return JSONResponse({"detail": str(exc)}, status_code=404)

    @app.exception_handler(Busy)
    async def _busy(request: Request, exc: Busy):
        return JSONResponse({"detail": str(exc)}, status_code=503, headers={"Retry-After": str(exc.retry_after)})

    @app.exception_handler(ClientGone)
    async def _gone(request: Request, exc: ClientGone):
        return Response(status_code=499)  # nobody reads it: the client has closed its connection

    def _infra(results: list[GradeResult]) -> JSONResponse | None:
        bad = [asdict(r) for r in results if r.status == "infra_error"]
        return JSONResponse({"detail": "infra_error: mask these samples", "results": bad}, 502) if bad else None

    async def graded(request: Request, items: list[tuple[str, str, float | None]], adapter: bool):
        """Grade for one request: the adapters' clients do not retry a 503, so they wait
        for a place (``--queue-wait-s``); any client that closes its connection stops its grade."""
        return await grader.grade_async(items, wait_s=grader.queue_wait_s if adapter else 0.0,
                                        gone=request.is_disconnected)

    @app.get("/health")
    def health() -> dict:
        return grader.health()

    @app.post("/v1/grade")
    async def grade(body: GradeBody, request: Request) -> dict:
        (result,) = await graded(request, [(body.instance_id, body.patch, body.timeout_s)], adapter=False)
        return asdict(result)

    @app.post("/seed_session")
    async def seed_session(body: dict = Body(default_factory=dict)) -> dict:
        # NeMo-Gym seeds a session before /verify; grading keeps no per-session state, so
        # the answer is its empty one (or the session id an Environment Server assigned)
        session = body.get("resources_session_id") if isinstance(body, dict) else None
        return {"resources_session_id": session} if session else {}

    @app.post("/verify")
    async def verify(request: Request, body: dict = Body(...)):
        iid = _nemo_instance(body)
        if not iid:
            raise UserError("no instance_id in the verify body (top level, verifier_metadata, or "
                            "responses_create_params.metadata)")
        (result,) = await graded(request, [(iid, responses_text(body.get("response")), None)], adapter=True)
        answer = {**body, "reward": result.reward if result.reward is not None else 0.0,
                  "resolved": result.resolved, "datagen": asdict(result)}
        if result.status == "infra_error":  # NeMo-Gym's own way to say "not a measurement"
            answer.update(mask_sample=True, failure_kind="datagen:infra_error", failure_reason=result.hint)
        return answer

    @app.post("/aggregate_metrics")
    async def aggregate_metrics(body: dict = Body(...)) -> dict:
        responses = body.get("verify_responses")
        if not isinstance(responses, list) or not all(isinstance(r, dict) for r in responses):
            raise UserError("verify_responses must be a list of /verify answers")
        return aggregate(responses)

    @app.post("/slime/remote_rm")
    async def slime(request: Request, body: dict = Body(...)):
        iid = instance_from_label(body.get("label")) or instance_from_label(body.get("metadata"))
        if not iid:
            raise UserError("no instance id in label (the reward spec JSON, the verl reward_model dict, or the id)")
        (result,) = await graded(request, [(iid, str(body.get("response") or ""), None)], adapter=True)
        return _infra([result]) or JSONResponse(result.reward)

    @app.post("/openrlhf/reward")
    async def openrlhf(request: Request, body: dict = Body(...)):
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
        results = await graded(request, items, adapter=True)
        return _infra(results) or {"rewards": [r.reward for r in results], "scores": [r.reward for r in results],
                                   "extra_logs": {"resolved": [float(r.resolved) for r in results]}}

    return Guard(app, token, max_patch_kb * 1024)
