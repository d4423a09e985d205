"""A blocking, single-threaded server that drives a Router.

Good enough for examples and tests; use a real server in production.
"""

from __future__ import annotations

import logging
import socket

from . import config
from .request import BadRequest, parse_request
from .response import Response
from .router import MethodNotAllowed, RouteNotFound, Router

log = logging.getLogger("tinyhttp")


class App:
    def __init__(self, router: Router | None = None) -> None:
        self.router = router or Router()

    def handle(self, raw: bytes) -> Response:
        """Turn raw request bytes into a response; never raises."""
        try:
            request = parse_request(raw)
        except BadRequest as exc:
            return Response.text(f"bad request: {exc}", status=400)
        try:
            handler = self.router.resolve(request)
        except RouteNotFound:
            return Response.text("not found", status=404)
        except MethodNotAllowed as exc:
            response = Response.text("method not allowed", status=405)
            response.headers.set("Allow", ", ".join(exc.allowed))
            return response
        try:
            return handler(request)
        except Exception:
            log.exception("handler failed for %s %s", request.method, request.path)
            return Response.text("internal server error", status=500)

    def serve(self, host: str = config.HOST, port: int = config.PORT) -> None:
        with socket.create_server((host, port)) as listener:
            log.info("listening on http://%s:%d", host, port)
            while True:
                conn, _ = listener.accept()
                with conn:
                    raw = _read_request(conn)
                    if raw:
                        conn.sendall(self.handle(raw).to_bytes())


def _read_request(conn: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(config.RECV_CHUNK)
        if not chunk:
            return data
        data += chunk
        if len(data) > config.MAX_HEAD_BYTES:
            return data
    head, _, body = data.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            missing = int(line.split(b":", 1)[1]) - len(body)
            while missing > 0:
                chunk = conn.recv(min(missing, config.RECV_CHUNK))
                if not chunk:
                    break
                data += chunk
                missing -= len(chunk)
    return data
