"""The grader's HTTP app: the native routes, one route per trainer adapter, the errors."""

from __future__ import annotations

from dataclasses import asdict

from starlette.requests import Request  # module level: FastAPI resolves the routes' annotations here

from datagen.score.grading import GradeResult, UnknownTask
from datagen.serve.grader.adapters import ADAPTERS, Adapter, GradeBody, aggregate, aggregate_request, seed_session
from datagen.serve.grader.core import Busy, ClientGone, Grader, Item
from datagen.serve.http import Guard, base_app


def grader_app(grader: Grader, token: str | None = None, max_patch_kb: int = 512):
    """The ASGI app of a ``Grader`` (routes: see ``datagen.serve.grader``)."""
    from fastapi import Body

    app = base_app("datagen grader", on_shutdown=grader.close)
    _errors(app)

    @app.get("/health")
    def health() -> dict:
        return grader.health()

    @app.post("/v1/grade")
    async def grade(body: GradeBody, request: Request) -> dict:
        (result,) = await _graded(grader, request, [(body.instance_id, body.patch, body.timeout_s)], adapter=False)
        return asdict(result)

    @app.post("/seed_session")
    async def seed(body: dict = Body(default_factory=dict)) -> dict:
        return seed_session(body)

    @app.post("/aggregate_metrics")
    async def aggregate_metrics(body: dict = Body(...)) -> dict:
        return aggregate(aggregate_request(body))

    for adapter in ADAPTERS:
        _adapter_route(app, grader, adapter)
    return Guard(app, token, max_patch_kb * 1024)


def _errors(app) -> None:
    """An unknown task is 404, a full grader 503 with ``Retry-After``, a gone client 499."""
    from fastapi.responses import JSONResponse, Response

    @app.exception_handler(UnknownTask)
    async def _unknown(request: Request, exc: UnknownTask):
        return JSONResponse({"detail": str(exc)}, status_code=404)

    @app.exception_handler(Busy)
    async def _busy(request: Request, exc: Busy):
        return JSONResponse({"detail": str(exc)}, status_code=503, headers={"Retry-After": str(exc.retry_after)})

    @app.exception_handler(ClientGone)
    async def _gone(request: Request, exc: ClientGone):
        return Response(status_code=499)  # nobody reads it: the client has closed its connection


def _adapter_route(app, grader: Grader, adapter: Adapter) -> None:
    """``POST adapter.route``: the body's grades, the trainer's answer; an infra_error the
    format cannot mask is 502 (the trainer's client retries or fails, never reads a 0)."""
    from fastapi import Body
    from fastapi.responses import JSONResponse

    async def route(request: Request, body: dict = Body(...)):
        results = await _graded(grader, request, adapter.items(body), adapter=True)
        bad = [asdict(r) for r in results if r.status == "infra_error"] if not adapter.masks else []
        if bad:
            return JSONResponse({"detail": "infra_error: mask these samples", "results": bad}, 502)
        return adapter.answer(body, results)

    app.post(adapter.route)(route)


async def _graded(grader: Grader, request: Request, items: list[Item], adapter: bool) -> list[GradeResult]:
    """Grade for one request: the adapters' clients do not retry a 503, so they wait for a
    place (``--queue-wait-s``); any client that closes its connection stops its grade."""
    return await grader.grade_async(items, wait_s=grader.queue_wait_s if adapter else 0.0,
                                    gone=request.is_disconnected)
