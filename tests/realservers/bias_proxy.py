"""A loopback proxy in front of the real vLLM that makes every answer carry a line separator (U+2028,
U+2029 or U+0085) by adding `logit_bias` to each request: what agents and doctor read is then a real
vLLM stream with that character in its JSON strings, though none of them can ask for it.

    with SeparatorProxy(peers.vllm, token, eos) as proxy:
        ... point a profile at proxy.url ...
        assert proxy.separators_seen > 0   # the streams really carried it

Chat completions: the separator and the end-of-turn token both +100, `min_tokens` 3, so exactly three
separators, then a normal stop. /responses has no `min_tokens`: the separator alone, with the output
capped (else it would run to the window). Other paths (/v1/models, /metrics, Anthropic's
/v1/messages, whose request vLLM would reject with extra fields) pass through untouched.

LongAnswerProxy forbids the special tokens on /responses instead: the model answers at length, as a reasoning
model does, in a real vLLM stream far longer than doctor reads."""

from __future__ import annotations

import http.client
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

RESPONSES_CAP = 4  # output tokens for /responses: a few separators, then status "incomplete"
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}


def separator_tokens(model_dir: Path) -> tuple[dict[str, int], int]:
    """The tiny model's token id of each separator (tiny_model.py) and its end-of-turn token."""
    tokens = json.loads((model_dir / "separator_tokens.json").read_text())
    eos = json.loads((model_dir / "generation_config.json").read_text())["eos_token_id"]
    return tokens, eos


def biased(path: str, body: dict[str, Any], token: int, eos: int) -> dict[str, Any]:
    if path.split("?")[0].endswith("/chat/completions"):
        return {**body, "logit_bias": {str(token): 100, str(eos): 100}, "min_tokens": 3}
    if path.split("?")[0].endswith("/responses"):
        cap = min(int(body.get("max_output_tokens") or RESPONSES_CAP), RESPONSES_CAP)
        return {**body, "logit_bias": {str(token): 100}, "max_output_tokens": cap}
    return body


def special_tokens(model_dir: Path) -> list[int]:
    """The token ids of the tiny model's special tokens: end of text and of turn, and hermes' tool-call tags."""
    tokenizer = json.loads((model_dir / "tokenizer.json").read_text())
    return [token["id"] for token in tokenizer["added_tokens"]]


class SeparatorProxy:
    def __init__(self, upstream: str, token: int, eos: int, char: str = "\u2028") -> None:
        self.upstream = urlsplit(upstream)
        self.token, self.eos, self.char = token, eos, char.encode()
        self.separators_seen = 0  # raw separators in upstream answers (vLLM writes them unescaped)
        self.paths: list[str] = []
        self.relayed: dict[str, int] = {}  # bytes of each path's answers passed on, counted as they go
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def rewrite(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """The request as the proxy sends it on."""
        return biased(path, body, self.token, self.eos)

    def __enter__(self) -> SeparatorProxy:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            # HTTP/1.0: the answer ends when the connection closes, so a stream is relayed as it comes
            def _relay(self) -> None:
                data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if data and "json" in (self.headers.get("Content-Type") or ""):
                    try:
                        body = json.loads(data)
                    except ValueError:
                        body = None
                    if isinstance(body, dict):
                        data = json.dumps(proxy.rewrite(self.path, body)).encode()
                headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
                upstream = http.client.HTTPConnection(proxy.upstream.hostname, proxy.upstream.port, timeout=300)
                try:
                    upstream.request(self.command, self.path, body=data or None, headers=headers)
                    answer = upstream.getresponse()
                    self.send_response(answer.status, answer.reason)
                    for key, value in answer.getheaders():
                        if key.lower() not in HOP_BY_HOP:
                            self.send_header(key, value)
                    self.end_headers()
                    seen, tail = 0, b""
                    while chunk := answer.read1(65536):
                        with proxy._lock:
                            proxy.relayed[self.path] = proxy.relayed.get(self.path, 0) + len(chunk)
                        self.wfile.write(chunk)
                        self.wfile.flush()
                        seen += (tail + chunk).count(proxy.char)
                        tail = chunk[1 - len(proxy.char) :]  # a separator split across two reads
                    with proxy._lock:
                        proxy.separators_seen += seen
                        proxy.paths.append(self.path)
                finally:
                    upstream.close()

            do_GET = do_POST = _relay

            def log_message(self, *args: object) -> None:
                pass

        return Handler


class LongAnswerProxy(SeparatorProxy):
    """/responses with every special token forbidden: the real vLLM answers text until `max_output_tokens`, in
    text deltas of its own, more than doctor reads (~1.6 MB at 8,192 tokens, ~200 bytes each; 10 to 75 KB/s on two
    busy cores). `<tool_call>` too: after it, vLLM's hermes parser holds the text back and the stream goes quiet.
    Doctor closes the connection when it stops reading, and vLLM drops the request with it."""

    OUTPUT = 8192

    def __init__(self, upstream: str, forbidden: list[int]) -> None:
        super().__init__(upstream, forbidden[0], forbidden[0])
        self.forbidden = forbidden

    def rewrite(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        if path.split("?")[0].endswith("/responses"):
            bias = {str(token): -100 for token in self.forbidden}
            return {**body, "logit_bias": bias, "max_output_tokens": self.OUTPUT}
        return body
