"""A local OpenAI-compatible ``/v1/completions`` server (stdlib ``http.server`` on
127.0.0.1) that scores prompts with the tiny test model, answering ``echo`` + ``logprobs``
requests the way ``vllm serve`` does: ``token_logprobs`` covers the prompt tokens (first
null) and then the generated token; ``usage.prompt_tokens`` is the prompt's length."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.score.lm import ReferenceLM


class CompletionsServer:
    """Context manager; ``base_url`` ends in ``/v1``; ``requests`` keeps every body."""

    def __init__(self, model_path: str, served_name: str = "tiny-scorer"):
        self.lm = ReferenceLM(model_path)
        self.served_name = served_name
        self.requests: list[dict] = []
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)

    def __enter__(self) -> CompletionsServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def complete(self, body: dict) -> dict:
        tok = self.lm.tokenizer
        ids = tok(body["prompt"])["input_ids"]
        lps, nxt, nxt_lp = self.lm.prompt_logprobs(ids)
        echo = bool(body.get("echo"))
        tokens = [tok.convert_ids_to_tokens(i) for i in (ids if echo else [])] + [tok.convert_ids_to_tokens(nxt)]
        token_lps = (lps if echo else []) + [nxt_lp]
        text = tok.decode([nxt])
        choice = {"index": 0, "text": (body["prompt"] + text) if echo else text,
                  "finish_reason": "length",
                  "logprobs": {"tokens": tokens, "token_logprobs": token_lps,
                               "top_logprobs": None, "text_offset": [0] * len(tokens)}
                  if body.get("logprobs") is not None else None}
        usage = {"prompt_tokens": len(ids), "completion_tokens": 1, "total_tokens": len(ids) + 1}
        return {"id": f"cmpl-{len(self.requests)}", "object": "text_completion",
                "created": 1_700_000_000, "model": body["model"], "choices": [choice], "usage": usage}


def _handler(state: CompletionsServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, status: int, payload: dict) -> None:
            raw = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            state.requests.append(body)
            if self.path.rstrip("/") != "/v1/completions":
                self._send(404, {"error": {"message": f"no route {self.path}"}})
            elif body.get("model") != state.served_name:
                self._send(404, {"error": {"message": f"model {body.get('model')!r} not found"}})
            else:
                self._send(200, state.complete(body))

    return Handler
