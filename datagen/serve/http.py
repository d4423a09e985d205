"""What both servers share: who may call, how big a body may be, where they listen.

``Guard`` is a plain ASGI middleware in front of the FastAPI app: a token on every route
but ``/health`` (when one is set), and a body cap that answers 413 as soon as the
declared ``Content-Length`` or the bytes read so far pass it (the body is never read
whole). The token comes as ``Authorization: Bearer <token>`` or, for clients that send
no headers of their own (slime, OpenRLHF, NeMo-Gym), in the URL path:
``/t/<token>/slime/remote_rm`` is ``/slime/remote_rm``. Both are compared in constant
time, and the server logs no request line, so the token never reaches a log. ``serve``
refuses to bind a non-loopback address without a token unless told the network is
trusted (``--trusted-network``, off by default).
"""

from __future__ import annotations

import hmac
import json
import os
import sys
from pathlib import Path

from datagen.errors import UserError

TOKEN_ENV = "DATAGEN_SERVE_TOKEN"
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
OPEN_PATHS = frozenset({"/health"})


def read_token(token_file: Path | None) -> str | None:
    """The bearer token: the file's first line, else ``$DATAGEN_SERVE_TOKEN``, else None."""
    if token_file is not None:
        try:
            token = Path(token_file).read_text(encoding="utf-8").strip().splitlines()[0].strip()
        except (OSError, IndexError):
            raise UserError(f"cannot read a token from {token_file}") from None
        if not token:
            raise UserError(f"{token_file} holds no token")
        return token
    return os.environ.get(TOKEN_ENV) or None


def check_bind(host: str, token: str | None, trusted_network: bool = False) -> None:
    """Only loopback without a token (anyone who can reach the port could otherwise call),
    unless the caller says the network is trusted."""
    if host not in LOOPBACK and not token and not trusted_network:
        raise UserError(f"refusing to listen on {host} without a token (--token-file or ${TOKEN_ENV}; "
                        "--trusted-network if every host that can reach it may call)")


async def _send_json(send, status: int, body: dict, headers: list[tuple[bytes, bytes]] = ()) -> None:
    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
                            *headers]})
    await send({"type": "http.response.body", "body": data})


class Guard:
    """ASGI middleware: bearer token and body cap (see the module docstring)."""

    def __init__(self, app, token: str | None, max_body: int):
        self.app = app
        self.token = token
        self.max_body = max_body

    def _same(self, given: str) -> bool:
        return self.token is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def _authorized(self, scope) -> tuple[bool, dict]:
        """Whether the request may pass, and its scope (a path token taken out of the path)."""
        path = scope["path"]
        if path.startswith("/t/"):
            given, _, rest = path[3:].partition("/")
            scope = {**scope, "path": "/" + rest, "raw_path": ("/" + rest).encode(), "root_path": ""}
            return (not self.token or self._same(given)), scope
        if not self.token or path in OPEN_PATHS:
            return True, scope
        header = dict(scope.get("headers") or []).get(b"authorization", b"").decode("latin-1")
        scheme, _, given = header.partition(" ")
        return scheme.lower() == "bearer" and self._same(given.strip()), scope

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        allowed, scope = self._authorized(scope)
        if not allowed:
            return await _send_json(send, 401, {"detail": "missing or wrong token"},
                                    [(b"www-authenticate", b"Bearer")])
        too_big = {"detail": f"request body over {self.max_body} bytes"}
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body:
            return await _send_json(send, 413, too_big)
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.max_body:
                return await _send_json(send, 413, too_big)
            more = message.get("more_body", False)
        body, replayed = b"".join(chunks), False

        async def replay():
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        return await self.app(scope, replay, send)


def base_app(title: str, on_shutdown=None):
    """A FastAPI app whose malformed bodies are 400 (not FastAPI's 422) and whose
    ``UserError``s are 400 with their message; ``on_shutdown()`` runs when the server
    stops (SIGINT / SIGTERM: uvicorn re-raises the signal after, so no ``finally`` would)."""
    from contextlib import asynccontextmanager

    from fastapi import FastAPI, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse

    @asynccontextmanager
    async def lifespan(app):
        try:
            yield
        finally:
            if on_shutdown is not None:
                on_shutdown()

    app = FastAPI(title=title, docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)

    @app.exception_handler(RequestValidationError)
    async def _malformed(request: Request, exc: RequestValidationError):
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()))
        return JSONResponse({"detail": f"malformed body: {where}: {first.get('msg', 'invalid')}"}, status_code=400)

    @app.exception_handler(UserError)
    async def _user_error(request: Request, exc: UserError):
        return JSONResponse({"detail": str(exc)}, status_code=400)

    return app


def serve(app, host: str, port: int, token: str | None, what: str, trusted_network: bool = False) -> None:
    """Run ``app`` with uvicorn until SIGINT / SIGTERM (loopback only without a token,
    unless ``trusted_network``). No access log: a path may carry the token."""
    import uvicorn

    check_bind(host, token, trusted_network)
    mode = "required" if token else "off (trusted network)" if host not in LOOPBACK else "off"
    print(f"datagen serve {what}: http://{host}:{port} (token {mode})", file=sys.stderr, flush=True)
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False, timeout_graceful_shutdown=5)
