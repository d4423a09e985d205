import pytest

from tinyhttp.request import BadRequest, parse_request


def test_parse_simple_get():
    request = parse_request(b"GET /search?q=tiny&page=2 HTTP/1.1\r\nHost: example.test\r\n\r\n")
    assert request.method == "GET"
    assert request.path == "/search"
    assert request.query == {"q": ["tiny"], "page": ["2"]}
    assert request.headers.get("host") == "example.test"
    assert request.keep_alive


def test_body_is_cut_to_content_length():
    raw = b"POST /items HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello world"
    assert parse_request(raw).body == b"hello"


def test_http10_closes_by_default():
    request = parse_request(b"GET / HTTP/1.0\r\n\r\n")
    assert not request.keep_alive


@pytest.mark.parametrize(
    "raw",
    [
        b"GET / HTTP/1.1\r\n",
        b"GET /\r\n\r\n",
        b"G(T / HTTP/1.1\r\n\r\n",
        b"GET / HTTP/2\r\n\r\n",
        b"GET / HTTP/1.1\r\nno colon here\r\n\r\n",
        b"POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\nshort",
    ],
)
def test_malformed_requests_are_rejected(raw):
    with pytest.raises(BadRequest):
        parse_request(raw)
