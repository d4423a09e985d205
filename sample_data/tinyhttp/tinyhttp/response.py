"""HTTP responses and their serialization."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

from .headers import Headers


@dataclass
class Response:
    status: int = 200
    body: bytes = b""
    headers: Headers = field(default_factory=Headers)

    @classmethod
    def text(cls, text: str, status: int = 200) -> Response:
        response = cls(status, text.encode("utf-8"))
        response.headers.set("Content-Type", "text/plain; charset=utf-8")
        return response

    @classmethod
    def json(cls, payload: Any, status: int = 200) -> Response:
        body = json.dumps(payload, separators=(",", ":"), sort_keys=True)
        response = cls(status, body.encode("utf-8"))
        response.headers.set("Content-Type", "application/json")
        return response

    @classmethod
    def redirect(cls, location: str, permanent: bool = False) -> Response:
        response = cls(308 if permanent else 307)
        response.headers.set("Location", location)
        return response

    @property
    def reason(self) -> str:
        try:
            return HTTPStatus(self.status).phrase
        except ValueError:
            return "Unknown"

    def to_bytes(self) -> bytes:
        """Serialize the status line, headers and body for the wire."""
        self.headers.set("Content-Length", str(len(self.body)))
        status_line = f"HTTP/1.1 {self.status} {self.reason}\r\n".encode("latin-1")
        return status_line + self.headers.to_bytes() + b"\r\n" + self.body
