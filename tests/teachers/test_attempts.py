"""A reported attempt is a request the server received: a server that fails each prompt
twice with 500 and then answers sees exactly the attempts the teacher reports."""

from __future__ import annotations

import json
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from datagen.teachers import TeacherRequest, make_teacher
from tests.teachers.helpers import MODEL, fast_config

PROMPTS = [f"prompt {i}" for i in range(12)]


class TwiceFailing(ThreadingHTTPServer):
    """Answers each prompt's third request; the first two get a 500. ``seen`` counts the
    requests it received per prompt, taken from the body it read."""

    daemon_threads = True

    def __init__(self, protocol: str, retry_after: str | None):
        self.seen: Counter[str] = Counter()
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = protocol

            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                prompt = body["messages"][0]["content"]
                with server.lock:
                    server.seen[prompt] += 1
                    nth = server.seen[prompt]
                if nth <= 2:
                    extra = {"Retry-After": retry_after} if retry_after is not None else {}
                    self._reply(500, {"error": {"message": "try again", "type": "server"}}, extra)
                else:
                    self._reply(200, {
                        "id": f"c-{prompt}", "object": "chat.completion", "created": 0,
                        "model": MODEL, "usage": {"prompt_tokens": 2, "completion_tokens": 2,
                                                  "total_tokens": 4},
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": f"ok {prompt}"}}],
                    })

            def _reply(self, status: int, payload: dict, headers: dict | None = None) -> None:
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(raw)

        super().__init__(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.serve_forever, args=(0.02,), daemon=True)

    def __enter__(self) -> TwiceFailing:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown()
        self.server_close()


# keep-alive and close-per-response servers, with and without Retry-After on the 500s,
# one call at a time and every prompt at once
@pytest.mark.parametrize("protocol, retry_after, concurrency", [
    ("HTTP/1.1", None, 1), ("HTTP/1.1", "0", 4), ("HTTP/1.0", None, 12), ("HTTP/1.0", "0", 4),
])
def test_attempts_are_the_requests_the_server_received(tmp_path, protocol, retry_after,
                                                        concurrency):
    with TwiceFailing(protocol, retry_after) as srv:
        base_url = f"http://127.0.0.1:{srv.server_address[1]}/v1"
        teacher = make_teacher(fast_config(base_url, tmp_path / "cache", max_retries=2,
                                           timeout_s=10, max_concurrency=concurrency))
        results = teacher.generate(
            [TeacherRequest(messages=[{"role": "user", "content": p}]) for p in PROMPTS])
    assert [r.error for r in results if r.status != "ok"] == []
    assert {p: r.attempts for p, r in zip(PROMPTS, results)} == dict(srv.seen)
    assert set(srv.seen.values()) == {3}
