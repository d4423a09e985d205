"""A small OpenAI-compatible HTTP server on 127.0.0.1 for tests and benchmarks.

Serves ``/v1/chat/completions``, ``/v1/completions`` (``logprobs``, ``echo``), ``/v1/models``
and ``/health`` with scripted answers, and injects faults on demand: ``500``, ``503``,
``429`` (with ``Retry-After``), ``400``, ``hang`` (no answer until the client gives up),
``malformed`` (a 200 whose body is not JSON), ``empty`` (a 200 without choices),
``truncate`` (``finish_reason: length``) and ``drop`` (the connection closes unanswered).

Each request is keyed by the sha256 of its JSON body, so a client's retries of one request
share a key. ``calls[key]`` counts every call; ``paid[key]`` counts well-formed completions
the server produced (what a hosted API would bill), which lets tests check "none paid twice";
``served_completion_tokens`` sums their completion tokens.

Run as a script for benchmarks: ``python fake_server.py [--port 0] [--fault-rate 0.2]``
prints the port on its first line and serves until killed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import socket
import struct
import threading
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

RETRYABLE_FAULTS = ("500", "503", "429", "hang", "malformed", "empty", "drop")


def request_key(body: dict) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def last_user_text(body: dict) -> str:
    for msg in reversed(body.get("messages") or []):
        if msg.get("role") == "user":
            content = msg.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return str(body.get("prompt", ""))


def first_user_text(body: dict) -> str:
    """What scripts and fault plans are keyed by: re-asks append turns after it."""
    for msg in body.get("messages") or []:
        if msg.get("role") == "user":
            return str(msg.get("content"))
    return str(body.get("prompt", ""))


def default_answer(body: dict) -> str:
    """Deterministic answer: echoes the last user message (and the seed, if any)."""
    seed = body.get("seed")
    return f"answer to: {last_user_text(body)}" + (f" [seed={seed}]" if seed is not None else "")


class FakeOpenAI:
    """The server's state and its thread. Use as a context manager; ``base_url`` ends in /v1.

    ``script``: first user text -> answer text (or a list of answers, one per call).
    ``faults``: first user text -> list of fault names consumed one per call ("ok" = answer).
    ``fault_rate``/``fault_kinds``: otherwise, inject a random fault with this probability.
    """

    def __init__(
        self,
        *,
        port: int = 0,
        script: dict[str, str | list[str]] | None = None,
        faults: dict[str, list[str]] | None = None,
        fault_rate: float = 0.0,
        fault_kinds: tuple[str, ...] = RETRYABLE_FAULTS,
        retry_after: str = "0",
        hang_s: float = 30.0,
        seed: int = 0,
        models: tuple[str, ...] = ("tiny-teacher",),
        answer: Callable[[dict], str] = default_answer,
        reject_response_format: bool = False,
        delay_s: float = 0.0,
    ):
        self.script = {k: list(v) if isinstance(v, list) else v for k, v in (script or {}).items()}
        self.faults = {k: list(v) for k, v in (faults or {}).items()}
        self.fault_rate = fault_rate
        self.fault_kinds = fault_kinds
        self.retry_after = retry_after
        self.hang_s = hang_s
        self.models = models
        self.answer = answer
        self.reject_response_format = reject_response_format
        self.delay_s = delay_s
        self.inflight = 0
        self.max_inflight = 0
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.calls: Counter[str] = Counter()
        self.paid: Counter[str] = Counter()
        self.served_completion_tokens = 0
        self.bodies: list[dict] = []
        self.stopping = threading.Event()
        self.httpd = _QuietServer(("127.0.0.1", port), _make_handler(self))
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def total_calls(self) -> int:
        return sum(self.calls.values())

    def reset_counts(self) -> None:
        with self.lock:
            self.calls.clear()
            self.paid.clear()
            self.served_completion_tokens = 0
            self.bodies.clear()

    def pick_fault(self, body: dict) -> str:
        text = first_user_text(body)
        with self.lock:
            planned = self.faults.get(text)
            if planned:
                return planned.pop(0)
            if self.fault_rate and self.rng.random() < self.fault_rate:
                return self.rng.choice(self.fault_kinds)
        return "ok"

    def pick_text(self, body: dict) -> str:
        text = first_user_text(body)
        with self.lock:
            scripted = self.script.get(text)
            if isinstance(scripted, list):
                return scripted.pop(0) if len(scripted) > 1 else scripted[0]
            if scripted is not None:
                return scripted
        return self.answer(body)


class _QuietServer(ThreadingHTTPServer):
    """Clients that give up (timeouts, the client's side of a drop) are not server errors."""

    request_queue_size = 1024  # like uvicorn's backlog: 64+ clients connect at once

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def _make_handler(state: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # keep test output clean
            pass

        def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(raw)

        def do_GET(self) -> None:
            if self.path.rstrip("/") in ("/health", "/v1/health"):
                self._send(200, {"status": "ok"})
            elif self.path.rstrip("/") == "/v1/models":
                data = [{"id": m, "object": "model", "owned_by": "fake"} for m in state.models]
                self._send(200, {"object": "list", "data": data})
            else:
                self._send(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError:
                self._send(400, {"error": {"message": "body is not JSON", "type": "invalid"}})
                return
            route = self.path.rstrip("/")
            if route not in ("/v1/chat/completions", "/v1/completions"):
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            key = request_key(body)
            with state.lock:
                state.calls[key] += 1
                state.bodies.append(body)
            if body.get("model") not in state.models:
                self._send(404, {"error": {"message": f"model {body.get('model')!r} not found"}})
                return
            if state.reject_response_format and "response_format" in body:
                self._send(400, {"error": {"message": "response_format is not supported"}})
                return
            with state.lock:
                state.inflight += 1
                state.max_inflight = max(state.max_inflight, state.inflight)
            try:
                self._answer(body, route, key)
            finally:
                with state.lock:
                    state.inflight -= 1

        def _answer(self, body: dict, route: str, key: str) -> None:
            if state.delay_s:
                state.stopping.wait(state.delay_s)
            fault = state.pick_fault(body)
            if fault in ("500", "503", "400"):
                self._send(int(fault), {"error": {"message": f"injected {fault}", "type": "fault"}})
            elif fault == "429":
                self._send(
                    429, {"error": {"message": "slow down", "type": "rate_limit"}},
                    {"Retry-After": state.retry_after},
                )
            elif fault == "malformed":
                self._send(200, b'{"id": "chatcmpl-x", "choices": [ {"mess')
            elif fault == "empty":  # valid JSON, but not a completion
                self._send(200, {"id": "chatcmpl-x", "object": "chat.completion"})
            elif fault == "drop":
                # linger 0: close with a reset, as a crashed proxy or server would
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.close_connection = True
                self.connection.close()
            elif fault == "hang":
                state.stopping.wait(state.hang_s)
                self.close_connection = True
            else:
                payload = self._complete(body, route, truncated=fault == "truncate")
                with state.lock:
                    state.paid[key] += 1
                    state.served_completion_tokens += payload["usage"]["completion_tokens"]
                self._send(200, payload, {"x-request-id": f"req-{key[:12]}"})

        def _complete(self, body: dict, route: str, truncated: bool) -> dict:
            n = int(body.get("n") or 1)
            texts, reasons = [], []
            for i in range(n):
                text = state.pick_text(body) + (f" #{i}" if n > 1 else "")
                max_tokens = body.get("max_tokens") or body.get("max_completion_tokens")
                words = text.split(" ")
                if truncated or (max_tokens and len(words) > max_tokens):
                    keep = max(1, min(len(words) // 2, max_tokens or len(words)))
                    texts.append(" ".join(words[:keep]))
                    reasons.append("length")
                else:
                    texts.append(text)
                    reasons.append("stop")
            prompt_tokens = len(json.dumps(body.get("messages") or body.get("prompt")).split())
            usage = {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": sum(len(t.split()) for t in texts),
            }
            usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
            common = {"id": "cmpl-" + request_key(body)[:16], "created": 1_700_000_000,
                      "model": body["model"], "usage": usage}
            if route == "/v1/chat/completions":
                choices = [
                    {"index": i, "message": {"role": "assistant", "content": t},
                     "finish_reason": r, "logprobs": None}
                    for i, (t, r) in enumerate(zip(texts, reasons, strict=True))
                ]
                return {**common, "object": "chat.completion", "choices": choices}
            choices = []
            for i, (t, r) in enumerate(zip(texts, reasons, strict=True)):
                choice: dict[str, Any] = {"index": i, "text": t, "finish_reason": r}
                if body.get("logprobs") is not None:
                    prompt = str(body.get("prompt", ""))
                    toks = (prompt.split(" ") if body.get("echo") else []) + t.split(" ")
                    lps = [-0.1 * (j + 1) for j in range(len(toks))]
                    if body.get("echo") and toks:
                        lps[0] = None  # the first prompt token has no logprob
                    choice["logprobs"] = {"tokens": toks, "token_logprobs": lps}
                    if body.get("echo"):
                        choice["text"] = prompt + t
                choices.append(choice)
            return {**common, "object": "text_completion", "choices": choices}

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--fault-rate", type=float, default=0.0)
    parser.add_argument("--model", action="append", default=None)
    args = parser.parse_args()
    models = tuple(args.model) if args.model else ("tiny-teacher",)
    server = FakeOpenAI(port=args.port, fault_rate=args.fault_rate, models=models)
    print(server.port, flush=True)
    try:
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
