"""tinyhttp: a very small HTTP/1.1 toolkit for learning and for tests.

The package has no dependencies outside the standard library. The public
surface is re-exported here so that users can write ``from tinyhttp import App``.
"""

from tinyhttp.headers import Headers
from tinyhttp.request import Request, parse_request
from tinyhttp.response import Response
from tinyhttp.router import Router, RouteNotFound
from tinyhttp.server import App

__all__ = [
    "App",
    "Headers",
    "Request",
    "Response",
    "RouteNotFound",
    "Router",
    "parse_request",
]

__version__ = "0.3.0"
