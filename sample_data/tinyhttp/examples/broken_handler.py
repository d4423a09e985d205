"""Work in progress: a handler that streams a file in chunks.

This file does not parse yet (the author stopped mid-edit).
"""

from pathlib import Path

from tinyhttp import Request, Response


def serve_file(request: Request) -> Response
    path = Path("static") / request.params["name"]
    if not path.is_file():
        return Response.text("missing", status=404)
    chunks = [chunk for chunk in read_chunks(path, 8192)
    return Response(200, b"".join(chunks))


def read_chunks(path, size):
    with path.open("rb") as handle:
        while block := handle.read(size):
            yield block
