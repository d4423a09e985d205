"""``datagen serve pool``: the pool's sampler over HTTP, on the once-only ledger.

Routes (JSON): ``POST /v1/claim {consumer, n, split, lease_s, run?}`` -> ``{lease_id,
expires_at, instructions}``; ``POST /v1/commit {lease_id}`` (409: the lease ended and its
instructions went elsewhere); ``POST /v1/release {lease_id, instruction_ids?}`` (the
whole lease, or only those instructions); ``POST /v1/split {lease_id, instruction_ids}``
-> a new lease of those (set aside: see ``LeaseIndex.split``); ``GET /v1/status``;
``GET /health``. Every
claim, commit and release is written to the journal and synced before it is answered
(``datagen.pool.leases``), so a server killed at any point and started again knows every
commit and live lease; ``datagen pool take`` keeps working beside it (both hold the
ledger's lock and read each other's lines).
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from datagen.pool.leases import Claim, LeaseConflict, LeaseIndex, LeaseNotFound
from datagen.serve.http import Guard, base_app

MAX_CLAIM = 100_000


class ClaimBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    consumer: str = Field(min_length=1, max_length=200)
    n: int = Field(1, ge=0, le=MAX_CLAIM)
    split: str = "train"
    lease_s: float = Field(3600.0, gt=0, le=30 * 86400)
    run: str | None = None


class LeaseBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    lease_id: str = Field(min_length=1, max_length=100)


class ReleaseBody(LeaseBody):
    instruction_ids: list[str] | None = Field(None, max_length=MAX_CLAIM)


class SplitBody(LeaseBody):
    instruction_ids: list[str] = Field(min_length=1, max_length=MAX_CLAIM)


def claim_answer(claim: Claim) -> bytes:
    """The claim's JSON body, the rows put in as the JSON they are kept as (decoding 256
    rows only to encode them again was most of a claim's cost)."""
    head = json.dumps({"lease_id": claim.lease.lease_id, "expires_at": claim.lease.until})
    return f'{head[:-1]}, "instructions": [{",".join(claim.encoded)}]}}'.encode()


def pool_app(pool_dir: str | Path, token: str | None = None, max_body_kb: int = 64):
    """The ASGI app of one pool folder (the index is read from its journal now)."""
    from fastapi import Request
    from fastapi.responses import JSONResponse, Response

    index = LeaseIndex(pool_dir)
    app = base_app("datagen pool")

    @app.exception_handler(LeaseNotFound)
    async def _missing(request: Request, exc: LeaseNotFound):
        return JSONResponse({"detail": str(exc)}, status_code=404)

    @app.exception_handler(LeaseConflict)
    async def _conflict(request: Request, exc: LeaseConflict):
        return JSONResponse({"detail": str(exc)}, status_code=409)

    @app.get("/health")
    def health() -> dict:
        return {"ok": True, "pool": str(index.pool_dir), "instructions": len(index.ids)}

    @app.post("/v1/claim")
    def claim(body: ClaimBody) -> Response:
        answer = index.claim(body.consumer, body.n, body.split, body.lease_s, body.run)
        return Response(claim_answer(answer), media_type="application/json")

    @app.post("/v1/commit")
    def commit(body: LeaseBody) -> dict:
        return {"committed": True, **index.commit(body.lease_id).as_dict()}

    @app.post("/v1/release")
    def release(body: ReleaseBody) -> dict:
        return {"released": True, **index.release(body.lease_id, body.instruction_ids).as_dict()}

    @app.post("/v1/split")
    def split(body: SplitBody) -> dict:
        return index.split(body.lease_id, body.instruction_ids).as_dict()

    @app.get("/v1/status")
    def status() -> dict:
        return index.status()

    return Guard(app, token, max_body_kb * 1024)
