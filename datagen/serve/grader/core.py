"""The grader's core: tasks loaded from a built output, graded ``workers`` at a time.

``Grader`` is a ``TaskGrader`` (``datagen.score.grading``: one patch on one task, the
environments kept warm) that bounds the work: ``workers`` sandboxes at once and a queue
behind them; a request that finds no place is ``Busy`` (the app answers 503 with
``Retry-After``), or waits up to ``wait_s`` for one (the adapters' clients do not retry a
503). An identical request (same task, patch hash and timeout) joins the grade in flight
instead of queueing another, and a grade whose clients have all gone is cancelled (its
sandbox killed, the worker free again).
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from datagen.config.sandbox import EnvConfig, SandboxLimits
from datagen.errors import UserError
from datagen.records.tasks import TaskRecord
from datagen.sandbox.isolation.base import CancelScope, Sandbox
from datagen.score.grading import GradeResult, TaskGrader

Item = tuple[str, str, float | None]  # (instance or instruction id, patch, timeout_s)


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


class Grader(TaskGrader):
    """Grades patches on the tasks of a built output, ``workers`` sandboxes at a time."""

    def __init__(self, tasks: str | Path, sandbox: Sandbox, *, workers: int = 2, queue: int = 8,
                 timeout_s: float = 300.0, limits: SandboxLimits | None = None, env: EnvConfig | None = None,
                 ro_paths: tuple[Path, ...] = (), work_root: Path | None = None, queue_wait_s: float = 100.0):
        loaded, aliases = load_tasks(tasks)
        super().__init__(loaded, sandbox, aliases=aliases, timeout_s=timeout_s, limits=limits, env=env,
                         ro_paths=ro_paths, work_root=work_root, workers=workers)
        self.workers, self.capacity = max(1, workers), max(1, workers) + max(0, queue)
        self.pool = ThreadPoolExecutor(self.workers, thread_name_prefix="grade")
        self.active = 0
        self.busy_answers = 0
        self.queue_wait_s = queue_wait_s
        self.waiting = 0  # requests waiting for a place (the adapters' routes)
        self.cancelled = 0  # grades cancelled because every client waiting for them had gone
        self.joined = 0  # requests answered by a grade another identical request started
        self._flights: dict[tuple, _Flight] = {}  # touched on the event loop only

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)
        super().close()

    def warm(self) -> None:
        """Build every task's environment now (the first grade then costs no setup)."""
        list(self.pool.map(self.environment, list(self.tasks)))

    # -- places: the workers and the queue behind them -------------------------------------
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

    # -- flights: grades on the workers, shared by identical requests ----------------------
    def _graded(self, scope: CancelScope, iid: str, patch: str, timeout_s: float | None) -> GradeResult:
        with scope:  # the sandbox runs of this grade die when the scope is cancelled
            return self.grade(iid, patch, timeout_s)

    async def grade_async(self, items: list[Item], wait_s: float = 0.0, gone=None) -> list[GradeResult]:
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
        late = self._start(keys, fresh, items)
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

    def _start(self, keys: list[tuple], fresh: list[tuple], items: list[Item]) -> int:
        """Start a flight for each fresh key (one place each, taken by ``admit``); returns
        how many requests found theirs started by an identical request while they waited."""
        loop = asyncio.get_running_loop()
        started = set()
        late = 0
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
        return late

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
