"""A tiny notes service built on tinyhttp. Run: python examples/app.py"""

import itertools
import logging

from tinyhttp import App, Request, Response, Router
from tinyhttp.utils import slugify

router = Router()
notes: dict[str, str] = {}
_ids = itertools.count(1)


@router.route("GET", "/notes")
def list_notes(request: Request) -> Response:
    return Response.json(sorted(notes))


@router.route("POST", "/notes")
def add_note(request: Request) -> Response:
    text = request.text()
    key = f"{next(_ids)}-{slugify(text, max_length=24)}"
    notes[key] = text
    return Response.json({"id": key}, status=201)


@router.route("GET", "/notes/{key}")
def show_note(request: Request) -> Response:
    key = request.params["key"]
    if key not in notes:
        return Response.text("no such note", status=404)
    return Response.text(notes[key])


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    App(router).serve()
