import json

from tinyhttp import App, Response, Router


def make_app() -> App:
    router = Router()

    @router.route("GET", "/users/{user_id}")
    def show_user(request):
        return Response.json({"id": request.params["user_id"]})

    @router.route("POST", "/users")
    def create_user(request):
        return Response.text("created", status=201)

    @router.route("GET", "/boom")
    def boom(request):
        raise RuntimeError("handler bug")

    return App(router)


def test_path_parameters_reach_the_handler():
    response = make_app().handle(b"GET /users/42 HTTP/1.1\r\n\r\n")
    assert response.status == 200
    assert json.loads(response.body) == {"id": "42"}


def test_unknown_path_is_404():
    assert make_app().handle(b"GET /nope HTTP/1.1\r\n\r\n").status == 404


def test_wrong_method_is_405_with_allow_header():
    response = make_app().handle(b"DELETE /users HTTP/1.1\r\n\r\n")
    assert response.status == 405
    assert response.headers.get("Allow") == "POST"


def test_handler_errors_become_500():
    assert make_app().handle(b"GET /boom HTTP/1.1\r\n\r\n").status == 500


def test_serialized_response_has_length():
    wire = Response.text("hi").to_bytes()
    assert wire.startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"Content-Length: 2\r\n" in wire
    assert wire.endswith(b"\r\n\r\nhi")
