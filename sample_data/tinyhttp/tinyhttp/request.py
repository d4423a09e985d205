"""Parsing of raw HTTP/1.1 request bytes into a Request object."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

from tinyhttp.headers import Headers
from tinyhttp.utils.strings import is_token


class BadRequest(ValueError):
    """Raised when the bytes on the wire are not a well-formed request."""


@dataclass
class Request:
    method: str
    target: str
    version: str = "HTTP/1.1"
    headers: Headers = field(default_factory=Headers)
    body: bytes = b""
    params: dict[str, str] = field(default_factory=dict)

    @property
    def path(self) -> str:
        return urlsplit(self.target).path or "/"

    @property
    def query(self) -> dict[str, list[str]]:
        return parse_qs(urlsplit(self.target).query)

    @property
    def keep_alive(self) -> bool:
        connection = (self.headers.get("Connection") or "").lower()
        if self.version == "HTTP/1.0":
            return connection == "keep-alive"
        return connection != "close"

    def text(self, encoding: str = "utf-8") -> str:
        return self.body.decode(encoding)


def parse_request(raw: bytes) -> Request:
    """Parse a complete request (head and body) received from a client."""
    head, sep, body = raw.partition(b"\r\n\r\n")
    if not sep:
        raise BadRequest("request head is not terminated by an empty line")
    lines = head.decode("latin-1").split("\r\n")
    try:
        method, target, version = lines[0].split(" ")
    except ValueError as exc:
        raise BadRequest(f"malformed request line: {lines[0]!r}") from exc
    if not is_token(method):
        raise BadRequest(f"invalid method: {method!r}")
    if not version.startswith("HTTP/1."):
        raise BadRequest(f"unsupported version: {version!r}")

    headers = Headers()
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon or not is_token(name):
            raise BadRequest(f"malformed header line: {line!r}")
        headers.add(name, value)

    length = int(headers.get("Content-Length") or 0)
    if length > len(body):
        raise BadRequest("body is shorter than Content-Length")
    return Request(method, target, version, headers, body[:length])
