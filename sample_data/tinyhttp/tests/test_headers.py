from tinyhttp import Headers
from tinyhttp.utils.strings import slugify, split_csv, truncate


def test_lookup_ignores_case():
    headers = Headers([("Content-Type", "text/html")])
    assert headers.get("content-type") == "text/html"
    assert "CONTENT-TYPE" in headers


def test_repeated_headers_keep_order():
    headers = Headers()
    headers.add("Set-Cookie", "a=1")
    headers.add("Set-Cookie", "b=2")
    assert headers.get_all("set-cookie") == ["a=1", "b=2"]
    headers.set("Set-Cookie", "c=3")
    assert headers.get_all("Set-Cookie") == ["c=3"]


def test_values_are_squashed():
    headers = Headers([("Accept", "  text/html,\t application/json ")])
    assert headers.get("Accept") == "text/html, application/json"


def test_string_helpers():
    assert split_csv("gzip, deflate,, br") == ["gzip", "deflate", "br"]
    assert slugify("Héllo, Wörld!") == "hello-world"
    assert truncate("abcdefgh", 6) == "abc..."
    assert truncate("abc", 6) == "abc"
