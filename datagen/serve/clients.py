"""Trainer-side clients of the two servers: standard library only, so they import in any
trainer's environment (verl, SkyRL, prime-rl workers) without datagen's server stack.

- ``compute_score(data_source, solution_str, ground_truth, extra_info)``: a verl reward
  function (``custom_reward_function.path`` = this file, ``name`` = ``compute_score``)
  that grades the policy's answer on the grader (``$DATAGEN_GRADER_URL``);
- ``PoolClient`` (claim / commit / release / split / status) and ``PoolDataSource``, an
  iterator of instruction batches that commits each batch once the trainer asks for the next;
- ``PoolIndexSampler``: dataset indices in the pool's order, committed by ``update()``
  after the step that used them, with ``state_dict`` / ``load_state_dict`` for torchdata's
  checkpoints (verl's class around it: ``datagen.serve.verl_sampler``).

Both send ``$DATAGEN_SERVE_TOKEN`` as the bearer token when it is set, and wait and retry
when a server answers 503 (``Retry-After``) or cannot be reached for a moment.
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

GRADER_URL_ENV = "DATAGEN_GRADER_URL"
POOL_URL_ENV = "DATAGEN_POOL_URL"
TOKEN_ENV = "DATAGEN_SERVE_TOKEN"
DEFAULT_GRADER = "http://127.0.0.1:8765"
DEFAULT_POOL = "http://127.0.0.1:8766"
log = logging.getLogger("datagen.serve.clients")


class ServeError(RuntimeError):
    """A server answered with an error (``status`` and its JSON ``body``)."""

    def __init__(self, status: int, body: object):
        super().__init__(f"HTTP {status}: {body}")
        self.status = status
        self.body = body


class InfraError(RuntimeError):
    """The grader could not grade (environment or sandbox failure): mask the sample."""


def call(url: str, path: str, body: dict | None = None, token: str | None = None, timeout: float = 600.0,
         retries: int = 60, method: str | None = None) -> object:
    """One JSON request; 503 and connection errors are retried (``retries`` times, waiting
    ``Retry-After`` or 1 s); any other HTTP error raises ``ServeError``."""
    token = token if token is not None else os.environ.get(TOKEN_ENV)
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
    for attempt in range(retries + 1):
        request = urllib.request.Request(url.rstrip("/") + path, data=data, headers=headers,
                                         method=method or ("GET" if body is None else "POST"))
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                return json.loads(answer.read() or b"null")
        except urllib.error.HTTPError as exc:
            payload = exc.read()
            try:
                parsed = json.loads(payload or b"null")
            except ValueError:
                parsed = payload.decode(errors="replace")
            if exc.code != 503 or attempt == retries:
                raise ServeError(exc.code, parsed) from None
            time.sleep(float(exc.headers.get("Retry-After") or 1))
        except (TimeoutError, urllib.error.URLError, ConnectionError, http.client.HTTPException):
            if attempt == retries:
                raise
            time.sleep(1.0)
    raise AssertionError("unreachable")


# -- the grader ---------------------------------------------------------------------------
def instance_id_of(ground_truth: object, extra_info: dict | None) -> str:
    """The task id: the verl ``ground_truth`` (the reward spec JSON holds ``instance_id``),
    else ``extra_info['task_id']``."""
    if isinstance(ground_truth, str) and ground_truth.strip().startswith("{"):
        ground_truth = json.loads(ground_truth)
    if isinstance(ground_truth, dict) and ground_truth.get("instance_id"):
        return str(ground_truth["instance_id"])
    if extra_info and extra_info.get("task_id"):
        return str(extra_info["task_id"])
    if isinstance(ground_truth, str) and ground_truth.strip():
        return ground_truth.strip()
    raise ValueError("no instance id in ground_truth or extra_info['task_id']")


def grade(instance_id: str, patch: str, url: str | None = None, timeout_s: float | None = None,
          token: str | None = None) -> dict:
    """``POST /v1/grade``: the grader's full answer (status, reward, tests, hint)."""
    body: dict = {"instance_id": instance_id, "patch": patch}
    if timeout_s is not None:
        body["timeout_s"] = timeout_s
    return call(url or os.environ.get(GRADER_URL_ENV, DEFAULT_GRADER), "/v1/grade", body, token)


def compute_score(data_source: str, solution_str: str, ground_truth: object, extra_info: dict | None = None,
                  **kwargs: object) -> dict:
    """verl's reward function: grade ``solution_str`` (the policy's answer, a diff in it)
    on the task named by ``ground_truth``. Returns ``{score, resolved, status, hint}``
    (verl keeps the extra keys as metrics). An ``infra_error`` raises ``InfraError``
    (never a 0 in disguise); set ``DATAGEN_GRADER_INFRA=zero`` to score it 0 instead,
    with ``infra_error: 1`` so the sample can be masked."""
    result = grade(instance_id_of(ground_truth, extra_info), solution_str or "",
                   url=kwargs.get("url") or None)  # type: ignore[arg-type]
    if result["status"] == "infra_error":
        if os.environ.get("DATAGEN_GRADER_INFRA", "raise") != "zero":
            raise InfraError(f"{result['instance_id']}: {result.get('hint')}")
        return {"score": 0.0, "resolved": 0.0, "infra_error": 1.0, "status": "infra_error",
                "hint": result.get("hint", "")}
    return {"score": float(result["reward"]), "resolved": float(result["resolved"]), "infra_error": 0.0,
            "status": result["status"], "hint": result.get("hint", "")}


# -- the pool -----------------------------------------------------------------------------
class PoolClient:
    """``datagen serve pool``'s routes as methods."""

    def __init__(self, url: str | None = None, token: str | None = None, timeout: float = 120.0):
        self.url = url or os.environ.get(POOL_URL_ENV, DEFAULT_POOL)
        self.token = token
        self.timeout = timeout

    def _post(self, path: str, body: dict) -> dict:
        return call(self.url, path, body, self.token, self.timeout)  # type: ignore[return-value]

    def claim(self, consumer: str, n: int, split: str = "train", lease_s: float = 3600.0,
              run: str | None = None) -> dict:
        return self._post("/v1/claim", {"consumer": consumer, "n": n, "split": split, "lease_s": lease_s,
                                        "run": run})

    def commit(self, lease_id: str) -> dict:
        return self._post("/v1/commit", {"lease_id": lease_id})

    def release(self, lease_id: str, instruction_ids: list[str] | None = None) -> dict:
        return self._post("/v1/release", {"lease_id": lease_id, "instruction_ids": instruction_ids})

    def split(self, lease_id: str, instruction_ids: list[str]) -> dict:
        return self._post("/v1/split", {"lease_id": lease_id, "instruction_ids": instruction_ids})

    def status(self) -> dict:
        return call(self.url, "/v1/status", None, self.token, self.timeout)  # type: ignore[return-value]


class PoolDataSource:
    """Batches of pool rows, each instruction once across every trainer process.

    Iterating claims ``batch_size`` instructions (a lease of ``lease_s``); asking for the
    next batch commits the previous one (the trainer used it), so a trainer that dies
    mid-batch leaves its lease to end and the instructions go back to the pool. Ends when
    the pool is dry. ``close()`` releases a batch that was claimed but not used.
    """

    def __init__(self, consumer: str, batch_size: int = 256, split: str = "train", lease_s: float = 3600.0,
                 url: str | None = None, token: str | None = None, run: str | None = None):
        self.client = PoolClient(url, token)
        self.consumer, self.batch_size, self.split = consumer, batch_size, split
        self.lease_s, self.run = lease_s, run
        self.pending: str | None = None
        self.conflicts: list[str] = []

    def __iter__(self) -> Iterator[list[dict]]:
        while True:
            self.commit()
            answer = self.client.claim(self.consumer, self.batch_size, self.split, self.lease_s, self.run)
            if not answer["instructions"]:
                self.client.release(answer["lease_id"])
                return
            self.pending = answer["lease_id"]
            yield answer["instructions"]

    def commit(self) -> None:
        """Mark the batch handed out last as used (also done by asking for the next). A 409
        (its lease ended and someone else holds some of it) is logged and counted in
        ``conflicts``: the trainer goes on, those instructions are someone else's now."""
        if self.pending is not None:
            lease, self.pending = self.pending, None
            try:
                self.client.commit(lease)
            except ServeError as exc:
                if exc.status != 409:
                    raise
                log.warning("%s: lease %s not committed: %s", self.consumer, lease, exc.body)
                self.conflicts.append(lease)

    def close(self) -> None:
        """Give an unused batch back."""
        if self.pending is not None:
            self.client.release(self.pending)
            self.pending = None


class PoolIndexSampler:
    """Dataset indices in the order the pool server hands instructions out: the sampler
    a trainer that reads a fixed dataset plugs in (verl: ``datagen.serve.verl_sampler``).

    ``ids`` is the instruction id of each dataset row (verl: ``extra_info.instruction_id``
    of the pool's verl export). Iterating gathers one batch (``batch_size`` rows: a claim,
    and more claims while rows the dataset lacks are set aside) and yields its indices;
    ``update()`` (verl calls it after each step) commits every lease handed out in full,
    i.e. the batch the trainer just used. A commit refused with 409 (the lease ended and
    someone else holds some of its rows) is logged and counted in ``conflicts``, not
    raised. Rows the dataset lacks go to a lease of their own (``/v1/split``), released
    when the pool is dry or on ``close()``. With ``drop_last`` (verl's data loader drops a
    short last batch), a short last batch is released instead of handed out.

    ``state_dict()`` / ``load_state_dict()`` (torchdata's ``StatefulDataLoader`` saves and
    restores them) keep the consumer, the open leases and what was committed: a restored
    sampler commits the leases handed out before the checkpoint (the trainer used them),
    hands out the rest of a batch it was in the middle of, and never draws through the pool
    to fast-forward. ``len()`` is what the pool has left for the split plus what this
    sampler holds and has not handed out.
    """

    def __init__(self, ids: list[str], consumer: str, batch_size: int = 256, split: str = "train",
                 lease_s: float = 3600.0, url: str | None = None, token: str | None = None,
                 drop_last: bool = True, run: str | None = None):
        self.ids = list(ids)
        self.index = {iid: n for n, iid in enumerate(self.ids)}
        self.client = PoolClient(url, token)
        self.consumer, self.batch_size, self.split, self.lease_s = consumer, max(1, batch_size), split, lease_s
        self.drop_last, self.run = drop_last, run
        self.batch: list[dict] = []  # the batch being handed out: [{lease_id, indices}]
        self.yielded = 0  # indices of ``batch`` handed out so far
        self.handed: list[dict] = []  # leases handed out in full, not yet committed
        self.aside: list[str] = []  # leases of rows the dataset lacks
        self.committed: list[str] = []  # instruction ids committed by this sampler
        self.conflicts: list[str] = []  # leases refused at commit (409)
        self.unknown = 0

    def __len__(self) -> int:
        groups = self.client.status()["groups"]
        return sum(g["free"] for g in groups if g["split"] == self.split) + self._held()

    def _held(self) -> int:
        return sum(len(lease["indices"]) for lease in self.batch) - self.yielded

    def __iter__(self) -> Iterator[int]:
        while True:
            if not self.batch:
                self.batch, self.yielded = self._gather(), 0
                if not self.batch:
                    self._release_aside()
                    return
            flat = [n for lease in self.batch for n in lease["indices"]]
            for k in range(self.yielded, len(flat)):
                self.yielded = k + 1
                if k + 1 == len(flat):  # the last index: the batch is handed out now, not at the next
                    self.handed.extend(self.batch)
                    self.batch, self.yielded = [], 0
                yield flat[k]

    def _gather(self) -> list[dict]:
        """Claim one batch of rows the dataset holds; [] when the pool is dry (or, with
        ``drop_last``, has less than a batch left)."""
        leases: list[dict] = []
        want = self.batch_size
        while want > 0:
            answer = self.client.claim(self.consumer, want, self.split, self.lease_s, self.run)
            rows = [r["instruction_id"] for r in answer["instructions"]]
            if not rows:
                self.client.release(answer["lease_id"])
                break
            strangers = [iid for iid in rows if iid not in self.index]
            if strangers:
                self.unknown += len(strangers)
                log.warning("%s: %d instructions of lease %s are not in the dataset; set aside", self.consumer,
                            len(strangers), answer["lease_id"])
                self.aside.append(self.client.split(answer["lease_id"], strangers)["lease_id"])
            known = [self.index[iid] for iid in rows if iid in self.index]
            if known:
                leases.append({"lease_id": answer["lease_id"], "indices": known})
                want -= len(known)
        if want > 0 and self.drop_last and leases:
            for lease in leases:  # the data loader would drop this short batch: give it back
                self.client.release(lease["lease_id"])
            return []
        return leases

    def update(self, batch: object = None) -> None:
        """Commit the leases handed out in full (the batch the trainer just used)."""
        while self.handed:
            lease = self.handed[0]
            try:
                self.client.commit(lease["lease_id"])
                self.committed.extend(self.ids[n] for n in lease["indices"])
            except ServeError as exc:
                if exc.status != 409:
                    raise
                log.warning("%s: lease %s not committed: %s", self.consumer, lease["lease_id"], exc.body)
                self.conflicts.append(lease["lease_id"])
            self.handed.pop(0)

    def _release_aside(self) -> None:
        while self.aside:
            self.client.release(self.aside.pop())

    def close(self) -> None:
        """Give back what is held and not handed out (the batch in progress, rows set aside)."""
        for lease in self.batch:
            self.client.release(lease["lease_id"])
        self.batch, self.yielded = [], 0
        self._release_aside()

    def state_dict(self) -> dict:
        return {"consumer": self.consumer, "split": self.split, "batch": self.batch, "yielded": self.yielded,
                "handed": self.handed, "aside": self.aside, "committed": self.committed,
                "conflicts": self.conflicts, "unknown": self.unknown}

    def load_state_dict(self, state: dict) -> None:
        """Take a checkpoint's state: the leases it had handed out are committed now (the
        checkpointed trainer used them; a commit the dead process already made is answered
        200 again), the batch it was handing out continues where it stopped."""
        if state.get("consumer") != self.consumer:
            raise ValueError(f"checkpoint of consumer {state.get('consumer')!r}, this sampler is {self.consumer!r}")
        self.batch = [dict(lease) for lease in state["batch"]]
        self.yielded = int(state["yielded"])
        self.handed = [dict(lease) for lease in state["handed"]]
        self.aside = list(state["aside"])
        self.committed = list(state["committed"])
        self.conflicts = list(state["conflicts"])
        self.unknown = int(state["unknown"])
        self.update()
