"""Map (method, path) pairs to handler functions.

Patterns use ``{name}`` segments, e.g. ``/users/{user_id}/posts``. A segment
captures everything up to the next slash; captured values land in
``Request.params``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .request import Request
from .response import Response

Handler = Callable[[Request], Response]

_SEGMENT = re.compile(r"\{([a-zA-Z_][a-zA-Z0-9_]*)\}")


class RouteNotFound(LookupError):
    """No route matches the request path."""


class MethodNotAllowed(LookupError):
    """The path matches, but not for this method."""

    def __init__(self, allowed: list[str]) -> None:
        super().__init__(", ".join(allowed))
        self.allowed = allowed


@dataclass(frozen=True)
class Route:
    method: str
    pattern: str
    regex: re.Pattern[str]
    handler: Handler


def compile_pattern(pattern: str) -> re.Pattern[str]:
    """Turn ``/items/{item_id}`` into an anchored regular expression."""
    parts = []
    position = 0
    for match in _SEGMENT.finditer(pattern):
        parts.append(re.escape(pattern[position : match.start()]))
        parts.append(f"(?P<{match.group(1)}>[^/]+)")
        position = match.end()
    parts.append(re.escape(pattern[position:]))
    return re.compile("^" + "".join(parts) + "$")


class Router:
    def __init__(self) -> None:
        self._routes: list[Route] = []

    def add(self, method: str, pattern: str, handler: Handler) -> None:
        regex = compile_pattern(pattern)
        self._routes.append(Route(method.upper(), pattern, regex, handler))

    def route(self, method: str, pattern: str) -> Callable[[Handler], Handler]:
        """Decorator form of :meth:`add`."""

        def register(handler: Handler) -> Handler:
            self.add(method, pattern, handler)
            return handler

        return register

    def resolve(self, request: Request) -> Handler:
        allowed: list[str] = []
        for route in self._routes:
            match = route.regex.match(request.path)
            if match is None:
                continue
            if route.method != request.method:
                allowed.append(route.method)
                continue
            request.params = match.groupdict()
            return route.handler
        if allowed:
            raise MethodNotAllowed(sorted(set(allowed)))
        raise RouteNotFound(request.path)
