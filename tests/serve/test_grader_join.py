"""Identical grade requests share one grade, and the count says so, even when the second
one had to wait for a place while the first was still waiting too (a CI run under load
answered both but counted no join)."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from datagen.score.grading import GradeResult
from datagen.serve.grader import Grader

SECONDS = {"a": 0.3, "c": 0.9, "b": 1.5}  # how long each task's grade takes


class TimedGrader(Grader):
    """The grader's admission and flights as they are; a grade is a sleep (the sandbox run
    it stands for is tested in test_grader_cluster.py)."""

    def __init__(self, workers: int):
        self.workers = self.capacity = workers
        self.pool = ThreadPoolExecutor(workers)
        self._lock = threading.Lock()
        self.active = self.done = self.busy_answers = self.waiting = self.cancelled = self.joined = 0
        self.total_seconds = 0.0
        self._flights = {}
        self.calls: list[str] = []

    def resolve(self, instance_id: str) -> str:
        return instance_id

    def grade(self, instance_id: str, patch: str, timeout_s: float | None = None) -> GradeResult:
        self.calls.append(instance_id)
        time.sleep(SECONDS[instance_id])
        return GradeResult(instance_id, "resolved", 1.0, True)


def test_a_request_that_waited_for_a_place_joins_the_identical_grade_in_flight():
    grader = TimedGrader(workers=2)

    async def scenario() -> list:
        async def ask(iid: str, after: float):
            await asyncio.sleep(after)
            return await grader.grade_async([(iid, "the same patch", None)], wait_s=10)

        # a and c take both places; b1 and b2 (identical) wait; a ends: b1 starts b's grade;
        # c ends while b's grade runs: b2 gets a place and finds b's grade in flight
        return await asyncio.gather(ask("a", 0), ask("c", 0.05), ask("b", 0.1), ask("b", 0.15))

    try:
        results = asyncio.run(scenario())
    finally:
        grader.pool.shutdown()
    assert [r[0].reward for r in results] == [1.0] * 4
    assert sorted(grader.calls) == ["a", "b", "c"]  # one grade of b for both requests
    assert grader.joined == 1 and grader.active == 0
